//! `decision check --format json`: one file's object and the whole document.

use decision_core::Diagnostic;
use decision_core::check::{self, Capabilities, CheckOptions, Report};
use decision_core::diag::Severity;
use serde_json::{Value, json};

/// Checks a contract's bytes against `capabilities` (none: the adapter layer is skipped);
/// with `deny_warnings` every warning becomes an error.
pub fn check_source(source: &[u8], capabilities: Option<&Capabilities>, deny_warnings: bool) -> Report {
    let mut report = check::check(source, CheckOptions { capabilities });
    if deny_warnings {
        for d in &mut report.diagnostics {
            d.severity = Severity::Error;
        }
    }
    report
}

/// One file's object: `path`, `ok`, `schema`, `summary`, `diagnostics`. `path` is `null`
/// when the text came from no file.
pub fn file_json(path: Option<&str>, report: &Report) -> Value {
    json!({
        "path": path,
        "ok": !report.has_errors(),
        "schema": report.contract.schema.as_ref().map(|s| s.value.clone()),
        "summary": report.summary(),
        "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

/// The whole document: `{"files": [...]}`.
pub fn document(files: Vec<Value>) -> Value {
    json!({ "files": files })
}

/// One diagnostic: code, severity, layer, message, line, column, byte range, block, help.
pub fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "code": d.code,
        "severity": d.severity,
        "layer": d.layer,
        "message": d.message,
        "line": d.span.line,
        "column": d.span.column,
        "start": d.span.start,
        "end": d.span.end,
        "block": d.block,
        "help": d.help,
    })
}
