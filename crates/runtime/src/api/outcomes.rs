//! `decision outcomes check|validate|report --format json`.

use serde::Serialize;
use serde_json::Value;

use super::error::{Code, Error};

use decision_outcomes::{
    self as outcome, ContractSet, LintError, LintErrors, Outcome, OutcomesReport, OutcomesReportError, ToolContract,
    Validated, ValidationVerdict,
};

/// One lint error: `line`, `column`, `pointer`, `message`.
pub fn lint_error_json(error: &LintError) -> Value {
    // Strings and numbers only: serialising cannot fail.
    serde_json::to_value(LintErrorDocument::of(error)).unwrap_or_default()
}

/// Lints a contracts file's text: `{"path", "ok", "contracts", "errors"}`.
pub fn check_document(path: &str, text: &str) -> Value {
    let loaded = outcome::load_contracts(text);
    let document = match &loaded {
        Ok(set) => CheckDocument { path, ok: true, contracts: set.len(), errors: Vec::new() },
        Err(errors) => CheckDocument {
            path,
            ok: false,
            contracts: 0,
            errors: errors.0.iter().map(LintErrorDocument::of).collect(),
        },
    };
    // Strings and numbers only: serialising cannot fail.
    serde_json::to_value(document).unwrap_or_default()
}

/// The document `decision outcomes check --format json` prints, member by member in that
/// order.
#[derive(Debug, Clone, Serialize)]
pub struct CheckDocument<'a> {
    /// The contracts file's name.
    pub path: &'a str,
    /// Whether it lints clean.
    pub ok: bool,
    /// How many contracts it holds (0 when it does not lint clean).
    pub contracts: usize,
    /// Its lint errors.
    pub errors: Vec<LintErrorDocument<'a>>,
}

/// One lint error of a contracts file.
#[derive(Debug, Clone, Serialize)]
pub struct LintErrorDocument<'a> {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The JSON pointer of what is wrong.
    pub pointer: &'a str,
    /// What is wrong.
    pub message: &'a str,
}

impl LintErrorDocument<'_> {
    /// The document of `error`.
    pub fn of(error: &LintError) -> LintErrorDocument<'_> {
        LintErrorDocument { line: error.line, column: error.column, pointer: &error.pointer, message: &error.message }
    }
}

/// A lint-clean contracts file, or [`Code::Contracts`] at its first lint error with every
/// one in `diagnostics`; `path` names the file (it is never opened).
pub fn load_contracts(path: &str, text: &str) -> Result<ContractSet, Error> {
    outcome::load_contracts(text).map_err(|errors| contracts_error(path, &errors))
}

/// The refusal of a contracts file with lint `errors`: [`Code::Contracts`] at the first one,
/// every one in `diagnostics`; `path` names the file.
pub fn contracts_error(path: &str, errors: &LintErrors) -> Error {
    let first = errors.0.first();
    let message = match first {
        Some(error) => format!("{path}:{error}"),
        None => format!("{path}: not a valid contracts file"),
    };
    Error {
        code: Code::Contracts,
        message,
        path: Some(path.to_owned()),
        line: first.map(|e| u32::try_from(e.line).unwrap_or(u32::MAX)),
        column: first.map(|e| u32::try_from(e.column).unwrap_or(u32::MAX)),
        diagnostics: errors.0.iter().map(lint_error_json).collect(),
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
) -> Result<&'a ToolContract, Error> {
    set.get(tool, method)
        .ok_or_else(|| Error::usage(format!("{contracts} has no contract for tool `{tool}` method `{method}`")))
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
) -> Result<Validation, Error> {
    let parsed = Outcome::from_json(document).map_err(|error| {
        let at = if error.pointer.is_empty() { String::new() } else { format!(" (at {})", error.pointer) };
        Error::new(Code::Outcome, format!("{shown}: not an outcome: {error}{at}"))
    })?;
    for (field, declared, given) in [("tool", &parsed.tool, tool), ("method", &parsed.method, method)] {
        if let Some(declared) = declared
            && declared != given
        {
            let message = format!("{shown}: the outcome's {field} is `{declared}` but --{field} is `{given}`");
            return Err(Error::new(Code::Outcome, message));
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

/// The advisory report over a log of outcome events given as text; `shown` names the log.
pub fn report(shown: &str, text: &[u8]) -> Result<Value, Error> {
    outcome::report(text).map(|report| report_json(&report)).map_err(|e| report_error(shown, &e))
}

/// A log whose outcomes cannot be reported, as [`Code::Report`] naming it.
pub fn report_error(shown: &str, error: &OutcomesReportError) -> Error {
    Error::new(Code::Report, format!("{shown}: {error}")).at_path(shown)
}

/// A report as `decision outcomes report --format json` prints it.
pub fn report_json(report: &OutcomesReport) -> Value {
    report.to_json()
}
