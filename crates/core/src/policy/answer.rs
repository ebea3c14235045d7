//! Answers as the policy reads them (already validated; see the runtime for validation).

use std::collections::BTreeMap;

use serde::Serialize;

/// A typed answer to one question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Answer {
    /// A yes/no answer.
    Noul {
        /// P(true) in [0, 1].
        noul: f64,
    },
    /// A choice among named options.
    Choice {
        /// The chosen option.
        choice: String,
        /// The probability of each offered option.
        probabilities: BTreeMap<String, f64>,
        /// The provider's confidence, if it gave one.
        confidence: Option<f64>,
    },
    /// A level on an ordered scale.
    Score {
        /// The expected level (may be fractional).
        score: f64,
        /// The probability of each level, by level index.
        probabilities: BTreeMap<String, f64>,
        /// The provider's confidence, if it gave one.
        confidence: Option<f64>,
    },
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
