//! The coding host's own run events, typed: their members, in the order the log writes them,
//! are the fields below (serde writes a struct's fields in declaration order), and an optional
//! member is left out when it has no value.

use serde::Serialize;
use serde_json::{Map, Value};

/// `run:start`: what the run was asked to do, with which limits and by whom.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunStart<'a> {
    pub task: &'a str,
    /// The work directory's canonical path.
    pub cwd: String,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
    pub max_steps: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_budget_seconds: Option<f64>,
    pub allow_write: bool,
    pub allow_delete: bool,
    /// The decision provider's name.
    pub provider: &'a str,
    /// How the contract is named in the log (a path, or the bundled one).
    pub contract: &'a str,
    /// The step a resumed run starts at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_at_step: Option<u64>,
    /// The approval a resumed run was continued with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_approval: Option<&'a str>,
}

/// `run:end`: how the run stopped, its answer and its counts.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunEnd<'a> {
    pub halt: &'a str,
    pub steps: u64,
    pub answer: &'a str,
    pub stats: RunStats,
    /// Why the run failed, when it did; then no `haltDetail` is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt_detail: Option<&'a str>,
}

/// The counts of `run:end`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunStats {
    pub decisions: u64,
    pub requests: u64,
    pub decision_ms: u64,
    pub model_calls: u64,
    pub model_ms: u64,
    pub audits: u64,
    pub transitions: u64,
    pub code_decisions: u64,
    pub contract_violations: u64,
}

/// An event's members as the sink takes them.
pub(crate) fn members(event: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(event) {
        Ok(Value::Object(members)) => members,
        // A struct of these fields always serialises to an object.
        _ => Map::new(),
    }
}
