//! `decision outcomes check|validate|report --format json`.

use serde_json::{Value, json};

use decision_outcomes::{
    self as outcome, ContractSet, LintError, Outcome, OutcomesReport, OutcomesReportError, ToolContract, Validated,
    ValidationVerdict,
};

/// One lint error: `line`, `column`, `pointer`, `message`.
pub fn lint_error_json(error: &LintError) -> Value {
    json!({"line": error.line, "column": error.column, "pointer": error.pointer, "message": error.message})
}

/// Lints a contracts file's text: `{"path", "ok", "contracts", "errors"}`.
pub fn check_document(path: &str, text: &str) -> Value {
    match outcome::load_contracts(text) {
        Ok(set) => json!({"path": path, "ok": true, "contracts": set.len(), "errors": []}),
        Err(errors) => {
            let list: Vec<Value> = errors.0.iter().map(lint_error_json).collect();
            json!({"path": path, "ok": false, "contracts": 0, "errors": list})
        }
    }
}

/// One outcome validated against the contract of its tool and method.
#[derive(Debug, Clone)]
pub struct Validation {
    /// What `validate --format json` prints: the outcome exactly as given when it holds (or
    /// is not validated), the typed `contract_violation` outcome when it does not.
    pub document: Value,
    /// Whether the outcome held its contract, breached it, or had nothing to check.
    pub verdict: ValidationVerdict,
}

impl Validation {
    /// Whether the outcome breaches its deliverable contract.
    pub fn violated(&self) -> bool {
        matches!(self.verdict, ValidationVerdict::Violated(_))
    }
}

/// The contract of `tool`'s `method` in `set`; `contracts` names the file in the message.
pub fn contract_for<'a>(
    set: &'a ContractSet,
    contracts: &str,
    tool: &str,
    method: &str,
) -> Result<&'a ToolContract, String> {
    set.get(tool, method).ok_or_else(|| format!("{contracts} has no contract for tool `{tool}` method `{method}`"))
}

/// Validates the outcome `document` of `tool`'s `method` against its `contract`; `shown`
/// names the outcome in messages. An error is an input problem: not an outcome, or an
/// outcome naming another tool or method.
pub fn validate(
    contract: &ToolContract,
    tool: &str,
    method: &str,
    shown: &str,
    document: &Value,
) -> Result<Validation, String> {
    let parsed = Outcome::from_json(document).map_err(|error| {
        let at = if error.pointer.is_empty() { String::new() } else { format!(" (at {})", error.pointer) };
        format!("{shown}: not an outcome: {error}{at}")
    })?;
    for (field, declared, given) in [("tool", &parsed.tool, tool), ("method", &parsed.method, method)] {
        if let Some(declared) = declared
            && declared != given
        {
            return Err(format!("{shown}: the outcome's {field} is `{declared}` but --{field} is `{given}`"));
        }
    }
    let Validated { outcome, verdict } = contract.validate(parsed);
    let document = match &verdict {
        ValidationVerdict::Violated(_) => outcome.to_json(),
        // The outcome is printed exactly as given: validation never rewrites it.
        _ => document.clone(),
    };
    Ok(Validation { document, verdict })
}

/// The advisory report over a log of outcome events given as text.
pub fn report(text: &[u8]) -> Result<Value, OutcomesReportError> {
    outcome::report(text).map(|report| report_json(&report))
}

/// A report as `decision outcomes report --format json` prints it.
pub fn report_json(report: &OutcomesReport) -> Value {
    report.to_json()
}
