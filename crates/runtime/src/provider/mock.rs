//! The reference's mock provider (runtime.md §1.4): deterministic placeholder answers, always
//! marked degraded. `noul` is 0.5; a choice picks the first option with uniform
//! probabilities; a score is the middle of the scale with uniform probabilities.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::error::ProviderError;
use super::{DecisionProvider, Request, Response};
use crate::clock::Instant;
use decision_protocol::ask::WireQuestion;

/// The fixed warning every mock response carries.
pub const MOCK_WARNING: &str = "mock provider: placeholder answers, not decisions";

/// The deterministic mock.
#[derive(Debug, Clone)]
pub struct MockProvider {
    latency: Duration,
}

impl Default for MockProvider {
    fn default() -> Self {
        MockProvider { latency: Duration::from_millis(3) }
    }
}

impl MockProvider {
    /// A mock that answers after `latency` (the reference default is 3 ms).
    pub fn with_latency(latency: Duration) -> MockProvider {
        MockProvider { latency }
    }

    /// The mock's answer to one question.
    pub fn answer(question: &WireQuestion) -> Value {
        match question {
            WireQuestion::Noul { .. } => json!({"type": "noul", "noul": 0.5}),
            WireQuestion::Choice { criteria, .. } => {
                let n = criteria.len().max(1) as f64;
                let probabilities: Map<String, Value> =
                    criteria.iter().map(|(id, _)| (id.clone(), json!(1.0 / n))).collect();
                let choice = criteria.first().map(|(id, _)| id.clone()).unwrap_or_default();
                json!({"type": "choice", "choice": choice, "probabilities": probabilities, "confidence": 1.0 / n})
            }
            WireQuestion::Score { criteria, .. } => {
                let n = criteria.len().max(1);
                let uniform = 1.0 / n as f64;
                let probabilities: Map<String, Value> = (0..n).map(|k| (k.to_string(), json!(uniform))).collect();
                let legend: Map<String, Value> =
                    criteria.iter().enumerate().map(|(k, text)| (k.to_string(), json!(text))).collect();
                json!({"type": "score", "score": (n - 1) as f64 / 2.0, "legend": legend, "probabilities": probabilities, "confidence": uniform})
            }
        }
    }
}

impl DecisionProvider for MockProvider {
    fn name(&self) -> &str {
        "mock"
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        if !self.latency.is_zero() {
            std::thread::sleep(self.latency);
        }
        let answers = request.questions.iter().map(|(id, q)| (id.to_string(), MockProvider::answer(q))).collect();
        Ok(Response {
            answers,
            provider: "mock".into(),
            model: Some("mock".into()),
            latency: started.elapsed(),
            usage: None,
            degraded: true,
            warnings: vec![MOCK_WARNING.into()],
        })
    }
}
