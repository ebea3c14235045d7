//! Tool outcomes in the coding host: every call's result becomes a tool outcome (tool role
//! [`TOOL_ROLE`], method = the tool's name), validated against the deliverable contract for
//! that tool and method when one is configured, and recorded as a `tool:outcome` event with the
//! weak-success flags observed beside it.
//!
//! A `contract_violation` is a deterministic step result: the step's result text says so, and
//! the run takes the `stop` path of `step_ok` without asking the model to re-judge what code has
//! decided. Validation never turns a tool's success into a failure by reading its text: only a
//! declared constraint does, and a tool's own failure is never validated.

use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};

use decision_outcomes::{ContractSet, LintErrors, Outcome, ToolError, Validated, error_type, load_contracts};

/// The tool role the host's file tools report under.
pub(crate) const TOOL_ROLE: &str = "files";

/// The bundled contracts for the host's own tools (`examples/coding-agent/outcomes.json`):
/// `list_dir` delivers at least one entry, the other tools a non-empty text.
pub(crate) const BUNDLED_OUTCOME_CONTRACTS: &str = include_str!("../../../examples/coding-agent/outcomes.json");

static BUNDLED: LazyLock<Result<Arc<ContractSet>, LintErrors>> =
    LazyLock::new(|| load_contracts(BUNDLED_OUTCOME_CONTRACTS).map(Arc::new));

/// The bundled contracts, loaded once.
pub(crate) fn bundled_contracts() -> Result<Arc<ContractSet>, LintErrors> {
    BUNDLED.clone()
}

/// The contracts a run validates its tool outcomes against: a configured set first, and the
/// bundled one for every tool and method the configured set has no contract for. (A configured
/// contract without a deliverable therefore switches the bundled check off for its method.)
#[derive(Debug, Clone)]
pub(crate) struct ToolContracts {
    configured: Option<Arc<ContractSet>>,
    bundled: Arc<ContractSet>,
}

impl ToolContracts {
    /// The bundled contracts, under `configured` when given.
    pub(crate) fn new(configured: Option<Arc<ContractSet>>) -> Result<ToolContracts, LintErrors> {
        Ok(ToolContracts { configured, bundled: bundled_contracts()? })
    }

    /// Validate the outcome of one call of `method` (a tool name).
    pub(crate) fn validate(&self, method: &str, outcome: Outcome) -> Validated {
        let set = match &self.configured {
            Some(configured) if configured.get(TOOL_ROLE, method).is_some() => configured,
            _ => &self.bundled,
        };
        set.validate(TOOL_ROLE, method, outcome)
    }
}

/// The outcome of one call of `tool`: `list_dir` and `list_files` deliver their entries as an
/// array of names,
/// the other tools their output text; a failed call is an `execution` error (not retriable),
/// which validation leaves alone.
pub(crate) fn tool_outcome(tool: &str, result: Result<String, String>) -> Outcome {
    let outcome = match result {
        Ok(listing) if tool == "list_dir" => {
            Outcome::ok(Value::Array(listing.split('\n').filter(|l| !l.is_empty()).map(Value::from).collect()))
        }
        // The closing `[…]` line says what was left out; it is not an entry.
        Ok(listing) if tool == "list_files" => Outcome::ok(Value::Array(
            listing.split('\n').filter(|l| !l.is_empty() && !l.starts_with('[')).map(Value::from).collect(),
        )),
        Ok(text) => Outcome::ok(Value::String(text)),
        Err(message) => Outcome::error(ToolError {
            error_type: error_type::EXECUTION.to_owned(),
            message,
            retriable: false,
            metadata: Map::new(),
        }),
    };
    outcome.with_identity(TOOL_ROLE, tool)
}

/// The step's result text when its outcome broke the contract: the violation first, then any
/// output the tool returned.
pub(crate) fn violation_result(message: &str, output: &str) -> String {
    let mut text = format!("contract_violation: {message}");
    if !output.is_empty() {
        text.push('\n');
        text.push_str(output);
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use decision_outcomes::ValidationVerdict;

    fn contracts() -> ToolContracts {
        ToolContracts::new(None).unwrap()
    }

    #[test]
    fn the_bundled_file_loads_and_covers_every_tool_that_delivers() {
        let set = bundled_contracts().unwrap();
        for tool in ["list_dir", "read_file", "write_file", "move_file", "delete_file"] {
            assert!(set.get(TOOL_ROLE, tool).is_some_and(|c| c.deliverable.is_some()), "{tool}");
        }
    }

    #[test]
    fn an_empty_listing_violates_and_a_listing_holds() {
        let empty = contracts().validate("list_dir", tool_outcome("list_dir", Ok(String::new())));
        let ValidationVerdict::Violated(violation) = &empty.verdict else { panic!("{:?}", empty.verdict) };
        assert_eq!(violation.mismatch.as_str(), "min_items_violation");
        assert_eq!(empty.outcome.error_type(), Some(error_type::CONTRACT_VIOLATION));
        let listed = contracts().validate("list_dir", tool_outcome("list_dir", Ok("a.py\nsub/".into())));
        assert!(matches!(listed.verdict, ValidationVerdict::Held { .. }));
        assert_eq!(listed.outcome.value(), Some(&json!(["a.py", "sub/"])), "a holding outcome is unchanged");
    }

    #[test]
    fn an_empty_file_violates_and_text_holds() {
        let empty = contracts().validate("read_file", tool_outcome("read_file", Ok(String::new())));
        let ValidationVerdict::Violated(violation) = &empty.verdict else { panic!("{:?}", empty.verdict) };
        assert_eq!(violation.mismatch.as_str(), "empty_value");
        let text = contracts().validate("read_file", tool_outcome("read_file", Ok("x".into())));
        assert!(matches!(text.verdict, ValidationVerdict::Held { .. }));
    }

    #[test]
    fn a_failed_call_is_never_validated_and_text_is_never_read_as_failure() {
        let failed = contracts().validate("read_file", tool_outcome("read_file", Err("cannot read a.py".into())));
        assert_eq!(failed.verdict, ValidationVerdict::ErrorNotValidated);
        assert_eq!(failed.outcome.error_type(), Some(error_type::EXECUTION));
        // Output that merely looks like a failure is still a success.
        let looks = contracts().validate("read_file", tool_outcome("read_file", Ok("error: not really".into())));
        assert!(matches!(looks.verdict, ValidationVerdict::Held { .. }));
    }

    #[test]
    fn a_configured_contract_comes_first_and_the_bundled_ones_fill_in() {
        let configured = load_contracts(
            r#"{"contracts": [
                {"tool": "files", "method": "read_file", "deliverable": {"type": "string"}},
                {"tool": "files", "method": "write_file", "purpose": "no deliverable: nothing is checked"}
            ]}"#,
        )
        .unwrap();
        let layered = ToolContracts::new(Some(Arc::new(configured))).unwrap();
        let empty_read = layered.validate("read_file", tool_outcome("read_file", Ok(String::new())));
        assert!(matches!(empty_read.verdict, ValidationVerdict::Held { .. }), "the configured contract allows it");
        let write = layered.validate("write_file", tool_outcome("write_file", Ok(String::new())));
        assert_eq!(write.verdict, ValidationVerdict::NoDeliverable);
        let listing = layered.validate("list_dir", tool_outcome("list_dir", Ok(String::new())));
        assert!(matches!(listing.verdict, ValidationVerdict::Violated(_)), "the bundled contract still applies");
    }
}
