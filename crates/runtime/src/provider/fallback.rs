//! A fallback chain: try each provider in turn; an answer from any but the first is marked
//! degraded. When every provider fails, the last error is returned.

use super::error::ProviderError;
use super::{DecisionProvider, Request, Response};

/// Providers tried in turn until one answers; see the module documentation.
pub struct FallbackChain {
    name: String,
    providers: Vec<Box<dyn DecisionProvider>>,
}

impl FallbackChain {
    /// The chain's name is its members' names joined by `→`.
    pub fn new(providers: Vec<Box<dyn DecisionProvider>>) -> FallbackChain {
        let name = providers.iter().map(|p| p.name()).collect::<Vec<_>>().join("→");
        FallbackChain { name, providers }
    }
}

impl DecisionProvider for FallbackChain {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let mut failures: Vec<String> = Vec::new();
        let mut last_error = None;
        for (position, provider) in self.providers.iter().enumerate() {
            match provider.decide(request) {
                Ok(mut response) => {
                    if position > 0 {
                        response.degraded = true;
                        failures.push(format!("primary provider failed, degraded to {}", provider.name()));
                        failures.append(&mut response.warnings);
                        response.warnings = failures;
                    }
                    return Ok(response);
                }
                Err(error) => {
                    failures.push(format!("{} failed ({}): {}", provider.name(), error.code, error.message));
                    last_error = Some(error);
                }
            }
        }
        Err(last_error.unwrap_or_else(|| {
            ProviderError::new(&self.name, super::ErrorCode::Config, "the fallback chain has no providers")
        }))
    }
}
