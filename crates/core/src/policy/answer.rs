//! Answers as the policy reads them (already validated; see the runtime for validation).

use std::collections::BTreeMap;

use serde::Serialize;

/// A typed answer to one question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Answer {
    /// P(true) in [0, 1].
    Noul { noul: f64 },
    /// The chosen option, the probability of each offered option, and a confidence.
    Choice { choice: String, probabilities: BTreeMap<String, f64>, confidence: Option<f64> },
    /// The expected level (may be fractional), probabilities per level index, confidence.
    Score { score: f64, probabilities: BTreeMap<String, f64>, confidence: Option<f64> },
}

/// Answers by question id.
pub type Answers = BTreeMap<String, Answer>;

impl Answer {
    /// The `top` probe: choice → probability of the chosen option (0 if absent);
    /// noul → max(p, 1−p); score → confidence (0 if absent).
    pub fn top(&self) -> f64 {
        match self {
            Answer::Noul { noul } => noul.max(1.0 - noul),
            Answer::Choice { choice, probabilities, .. } => probabilities.get(choice).copied().unwrap_or(0.0),
            Answer::Score { confidence, .. } => confidence.unwrap_or(0.0),
        }
    }
}
