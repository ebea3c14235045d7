//! Turning the answers to all heads into at most one observation.
//!
//! The operation head is validated first. Only the selected operation's target head is then
//! validated and mapped back to a host identity; every other head is kept for audit and can
//! cause nothing, even when malformed. Anything wrong yields no observation and a typed reason.

use std::hash::Hash;

use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use super::table::{DecisionState, OPERATION_HEAD};
use crate::ask::{AnswerProblem, validate_answer};
use decision_core::policy::Answer;

/// The keys a head's answer may carry. Anything else (a path, a selector, an approval, a
/// free parameter) is refused: the answer schema has no free-form field.
pub const HEAD_ANSWER_KEYS: [&str; 4] = ["type", "choice", "probabilities", "confidence"];

/// Who and what produced the answers. Every field must be present and non-empty.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Evidence {
    /// The request digest of the request that was answered.
    pub request_digest: String,
    /// The model that answered, as the provider names it.
    pub model: String,
    /// The provider that carried the request.
    pub provider: String,
    /// The policy (or contract) identity the observation will be judged by.
    pub policy: String,
}

impl Evidence {
    fn missing(&self) -> Vec<&'static str> {
        [
            ("request_digest", &self.request_digest),
            ("model", &self.model),
            ("provider", &self.provider),
            ("policy", &self.policy),
        ]
        .into_iter()
        .filter(|(_, v)| v.trim().is_empty())
        .map(|(k, _)| k)
        .collect()
    }
}

/// Why no observation was produced. Serialised with the variant in `rejection` (snake
/// case) beside its fields.
#[derive(Debug, Clone, PartialEq, Error, Serialize)]
#[serde(tag = "rejection", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SpaceRejection {
    /// The answers are for another snapshot than this state: the host changed in between.
    #[error("the answer is for revision `{answered}`, the state is revision `{current}`")]
    StaleRevision {
        /// This state's revision.
        current: String,
        /// The revision the request carried.
        answered: String,
    },
    /// Some [`Evidence`] field is empty.
    #[error("the evidence is incomplete: {missing:?} missing")]
    IncompleteEvidence {
        /// The empty fields' names.
        missing: Vec<&'static str>,
    },
    /// The operation head, or the chosen operation's target head, failed validation.
    #[error("head `{head}`: {problem}")]
    InvalidHead {
        /// The head's question id.
        head: String,
        /// Why its answer was rejected.
        problem: AnswerProblem,
    },
    /// A used head's answer carries a key outside [`HEAD_ANSWER_KEYS`].
    #[error("head `{head}`: field `{field}` is not part of the answer schema")]
    FreeFormField {
        /// The head's question id.
        head: String,
        /// The key that is not allowed.
        field: String,
    },
    /// The chosen target is a row past the candidate cap.
    #[error("head `{head}`: `{choice}` names a row past the candidate cap, which is never selectable")]
    TruncatedRow {
        /// The target head's question id.
        head: String,
        /// The id as answered.
        choice: String,
    },
}

/// What the model picked, mapped back to the host. The only thing that can cause an action.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation<Id> {
    /// The snapshot revision the observation is about.
    pub revision: String,
    /// An offered operation, a control, `ABSTAIN` or `NO_ACTION`.
    pub operation: String,
    /// The probability the operation head gave the chosen operation, in [0, 1].
    pub operation_probability: f64,
    /// The operation head's confidence, in [0, 1].
    pub operation_confidence: f64,
    /// The row the operation acts on; `None` for controls, `ABSTAIN` and `NO_ACTION`.
    pub target: Option<ObservedTarget<Id>>,
    /// Who and what produced the answers.
    pub evidence: Evidence,
    /// The heads that were not used, as received (audit only).
    pub unused_heads: Map<String, Value>,
}

/// The row an observed operation acts on, mapped back to the host's identity.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedTarget<Id> {
    /// The offered id, `row` or `row:option`.
    pub target_id: String,
    /// The row's 1-based index.
    pub row: usize,
    /// The host identity of the row.
    pub id: Id,
    /// The enumerated value chosen, for `row:option` targets.
    pub option_value: Option<String>,
    /// The probability the target head gave this id, in [0, 1].
    pub probability: f64,
    /// The target head's confidence, in [0, 1].
    pub confidence: f64,
}

impl<Id: Clone + Eq + Hash> DecisionState<Id> {
    /// Interpret the answers to this state's heads. `answered_revision` is the revision the
    /// request carried.
    pub fn interpret(
        &self,
        answered_revision: &str,
        answers: &Map<String, Value>,
        evidence: &Evidence,
    ) -> Result<Observation<Id>, SpaceRejection> {
        if answered_revision != self.revision {
            return Err(SpaceRejection::StaleRevision {
                current: self.revision.clone(),
                answered: answered_revision.to_string(),
            });
        }
        let missing = evidence.missing();
        if !missing.is_empty() {
            return Err(SpaceRejection::IncompleteEvidence { missing });
        }
        let (operation, operation_probability, operation_confidence) = self.head_choice(OPERATION_HEAD, answers)?;
        let head = self.heads.iter().find(|h| h.operation == operation);
        let target = match head {
            None => None,
            Some(head) => {
                let (target_id, probability, confidence) = self.head_choice(&head.head, answers)?;
                let not_offered = || invalid(&head.head, AnswerProblem::NotOffered { choice: target_id.clone() });
                let position = self.target_ids(&head.head).iter().position(|id| *id == target_id);
                let target = position.and_then(|p| head.targets.get(p)).ok_or_else(not_offered)?;
                let row = self.rows.get(target.row).map(|r| r.index).unwrap_or_default();
                let id = self.identities.get(target.row).cloned().ok_or_else(not_offered)?;
                let option_value =
                    target.option.and_then(|k| self.option(target.row, &operation, k)).map(|o| o.value.clone());
                Some(ObservedTarget { target_id, row, id, option_value, probability, confidence })
            }
        };
        let used = [Some(OPERATION_HEAD), head.map(|h| h.head.as_str())];
        let unused_heads = answers
            .iter()
            .filter(|(k, _)| !used.contains(&Some(k.as_str())))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Observation {
            revision: self.revision.clone(),
            operation,
            operation_probability,
            operation_confidence,
            target,
            evidence: evidence.clone(),
            unused_heads,
        })
    }

    /// Validate one head: its choice, the probability of the choice, the confidence.
    fn head_choice(&self, head: &str, answers: &Map<String, Value>) -> Result<(String, f64, f64), SpaceRejection> {
        let question = self.questions.get(head).ok_or_else(|| invalid(head, AnswerProblem::NothingOffered))?;
        let raw = answers.get(head);
        if let Some(Value::Object(entry)) = raw
            && let Some(field) = entry.keys().find(|k| !HEAD_ANSWER_KEYS.contains(&k.as_str()))
        {
            return Err(SpaceRejection::FreeFormField { head: head.to_string(), field: field.clone() });
        }
        match validate_answer(question, raw) {
            Ok(Answer::Choice { choice, probabilities, confidence }) => {
                let p = probabilities.get(&choice).copied().unwrap_or_default();
                Ok((choice, p, confidence.unwrap_or(p)))
            }
            Ok(_) => Err(invalid(head, AnswerProblem::NothingOffered)),
            Err(AnswerProblem::NotOffered { choice }) if self.is_truncated_id(&choice) => {
                Err(SpaceRejection::TruncatedRow { head: head.to_string(), choice })
            }
            Err(problem) => Err(invalid(head, problem)),
        }
    }

    /// `n` or `n:k` where row `n` was truncated.
    fn is_truncated_id(&self, id: &str) -> bool {
        let row = id.split(':').next().unwrap_or(id);
        row.parse::<usize>().is_ok_and(|n| self.truncated.iter().any(|t| t.index == n))
    }
}

fn invalid(head: &str, problem: AnswerProblem) -> SpaceRejection {
    SpaceRejection::InvalidHead { head: head.to_string(), problem }
}
