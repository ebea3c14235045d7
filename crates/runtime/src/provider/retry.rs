//! Transport retries (runtime.md §1.6). Only rate limits, server errors, timeouts, transport
//! failures and empty replies are retried; a decision is never retried because of what it
//! said. Backoff doubles from `initial` up to `max`, with jitter; a server's `Retry-After` is
//! used as given, and one longer than `max` ends the attempts at once.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::Duration;

use super::error::ProviderError;
use super::{DecisionProvider, Request, Response};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    pub initial: Duration,
    pub max: Duration,
    /// 0.2 spreads each delay over ±20 %.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 3, initial: Duration::from_millis(300), max: Duration::from_secs(5), jitter: 0.2 }
    }
}

/// One retry about to happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    pub who: String,
    pub code: String,
    /// 1-based retry number.
    pub attempt: u32,
    pub delay: Duration,
    /// The delay is the server's `Retry-After`.
    pub from_server: bool,
}

impl std::fmt::Display for RetryNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, retrying in {}ms", self.code, self.delay.as_millis())?;
        if self.from_server {
            f.write_str(" (the server asked for it)")?;
        }
        Ok(())
    }
}

impl RetryPolicy {
    /// The delay before retry `attempt` (1-based), or `None` to give up now.
    pub fn delay(&self, attempt: u32, error: &ProviderError, random: f64) -> Option<(Duration, bool)> {
        if attempt > self.max_retries || !error.code.is_retryable() {
            return None;
        }
        if let Some(wait) = error.retry_after {
            return (wait <= self.max).then_some((wait, true));
        }
        let base = self.initial.saturating_mul(1u32 << (attempt.saturating_sub(1)).min(16)).min(self.max);
        let spread = (1.0 - self.jitter + 2.0 * self.jitter * random.clamp(0.0, 1.0)).max(0.0);
        Some((base.mul_f64(spread).min(self.max), false))
    }
}

/// A provider with transport retries.
pub struct Retrying<P> {
    inner: P,
    policy: RetryPolicy,
}

impl<P: DecisionProvider> Retrying<P> {
    pub fn new(inner: P, policy: RetryPolicy) -> Self {
        Retrying { inner, policy }
    }
}

/// A uniform number in [0, 1) without a random-number crate: `RandomState` is seeded from
/// the operating system's randomness.
fn uniform() -> f64 {
    let bits = RandomState::new().hash_one(0u8) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

impl<P: DecisionProvider> DecisionProvider for Retrying<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let mut notices = Vec::new();
        let mut attempt = 0;
        loop {
            match self.inner.decide(request) {
                Ok(mut response) => {
                    if !notices.is_empty() {
                        notices.append(&mut response.warnings);
                        response.warnings = notices;
                    }
                    return Ok(response);
                }
                Err(error) => {
                    attempt += 1;
                    let Some((delay, from_server)) = self.policy.delay(attempt, &error, uniform()) else {
                        return Err(error);
                    };
                    let notice = RetryNotice {
                        who: error.who.clone(),
                        code: error.code.as_string(),
                        attempt,
                        delay,
                        from_server,
                    };
                    notices.push(notice.to_string());
                    std::thread::sleep(delay);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ErrorCode;

    #[test]
    fn delays_double_up_to_the_cap_and_honour_retry_after() {
        let policy = RetryPolicy {
            max_retries: 5,
            initial: Duration::from_millis(100),
            max: Duration::from_millis(350),
            jitter: 0.0,
        };
        let server = ProviderError::new("x", ErrorCode::Server, "boom");
        let delays: Vec<_> = (1..=6).map(|a| policy.delay(a, &server, 0.5).map(|d| d.0.as_millis())).collect();
        assert_eq!(delays, [Some(100), Some(200), Some(350), Some(350), Some(350), None]);
        let mut limited = ProviderError::new("x", ErrorCode::RateLimit, "429");
        limited.retry_after = Some(Duration::from_millis(300));
        assert_eq!(policy.delay(1, &limited, 0.5), Some((Duration::from_millis(300), true)));
        limited.retry_after = Some(Duration::from_secs(1));
        assert_eq!(policy.delay(1, &limited, 0.5), None, "a Retry-After beyond the cap gives up");
        assert_eq!(policy.delay(1, &ProviderError::new("x", ErrorCode::Auth, "401"), 0.5), None);
        let jittered = RetryPolicy { jitter: 0.2, ..policy };
        assert_eq!(jittered.delay(1, &server, 0.0).unwrap().0, Duration::from_millis(80));
        assert_eq!(jittered.delay(1, &server, 1.0).unwrap().0, Duration::from_millis(120));
        assert!((0.0..1.0).contains(&uniform()));
    }
}
