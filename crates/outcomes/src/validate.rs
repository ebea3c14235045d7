//! Validation that never rewrites intent.
//!
//! The only way an ok outcome becomes an error is a declared deliverable constraint that the
//! value does not meet; that yields a `contract_violation` (not retriable). No status string,
//! message or other content of the value is interpreted here. An ok value that holds is
//! returned unchanged — the same `Outcome`, moved through — and error outcomes are never
//! validated.

use super::contracts::{ContractSet, ToolContract};
use super::deliverable::{AliasUse, Violation};
use super::types::{Outcome, OutcomeResult, ToolError, error_type};

/// What validation decided.
#[derive(Debug, Clone, PartialEq)]
pub enum ValidationVerdict {
    /// The outcome is an error: tool-authored failures are never validated.
    ErrorNotValidated,
    /// No contract, or a contract without a deliverable: nothing to check.
    NoDeliverable,
    /// The value meets its deliverable; any declared aliases used are listed.
    Held {
        /// Each declared alias the value used in place of a canonical key, in checking order;
        /// empty when the value used canonical keys only.
        aliases_used: Vec<AliasUse>,
    },
    /// The value does not meet its deliverable.
    Violated(Box<Violation>),
}

impl ValidationVerdict {
    /// The short name recorded in outcome events (`held`, `violated`, `not_applied`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ValidationVerdict::Held { .. } => "held",
            ValidationVerdict::Violated(_) => "violated",
            ValidationVerdict::ErrorNotValidated | ValidationVerdict::NoDeliverable => "not_applied",
        }
    }
}

/// An outcome after validation, with the verdict that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    /// The outcome to use from here on: the original one, unchanged, unless the verdict is
    /// `Violated`, in which case it is the `contract_violation` error outcome.
    pub outcome: Outcome,
    /// What validation decided.
    pub verdict: ValidationVerdict,
}

impl ToolContract {
    /// Validate one outcome of this contract's tool and method.
    pub fn validate(&self, outcome: Outcome) -> Validated {
        let checked = match (&outcome.result, &self.deliverable) {
            (OutcomeResult::Error(_), _) => Err(ValidationVerdict::ErrorNotValidated),
            (OutcomeResult::Ok(_), None) => Err(ValidationVerdict::NoDeliverable),
            (OutcomeResult::Ok(value), Some(deliverable)) => Ok(deliverable.check(value)),
        };
        match checked {
            Err(verdict) => Validated { outcome, verdict },
            Ok(Ok(aliases_used)) => Validated { outcome, verdict: ValidationVerdict::Held { aliases_used } },
            Ok(Err(violation)) => {
                let tool = outcome.tool.clone().unwrap_or_else(|| self.tool.clone());
                let method = outcome.method.clone().unwrap_or_else(|| self.method.clone());
                let violated = violation_outcome(&violation, tool, method);
                Validated { outcome: violated, verdict: ValidationVerdict::Violated(violation) }
            }
        }
    }
}

impl ContractSet {
    /// Validate an outcome against the contract of its tool and method (`NoDeliverable` when
    /// the file has no contract for them).
    pub fn validate(&self, tool: &str, method: &str, outcome: Outcome) -> Validated {
        match self.get(tool, method) {
            Some(contract) => contract.validate(outcome),
            None if outcome.is_ok() => Validated { outcome, verdict: ValidationVerdict::NoDeliverable },
            None => Validated { outcome, verdict: ValidationVerdict::ErrorNotValidated },
        }
    }
}

/// The typed `contract_violation` outcome for a violation.
pub fn violation_outcome(violation: &Violation, tool: String, method: String) -> Outcome {
    let message = format!(
        "outcome of {tool}.{method} does not satisfy its deliverable contract ({}): {}",
        violation.mismatch.as_str(),
        violation.describe()
    );
    Outcome {
        tool: Some(tool),
        method: Some(method),
        result: OutcomeResult::Error(ToolError {
            error_type: error_type::CONTRACT_VIOLATION.to_owned(),
            message,
            retriable: false,
            metadata: violation.metadata(),
        }),
    }
}
