//! `decision check --format json`: one file's object and the whole document.

use decision_core::Diagnostic;
use decision_core::check::{self, Capabilities, CheckOptions, Report};
use serde_json::{Map, Value, json};

/// Checks a contract's bytes against `capabilities` (none: the adapter layer is skipped);
/// with `deny_warnings` every warning becomes an error.
pub fn check_source(source: &[u8], capabilities: Option<&Capabilities>, deny_warnings: bool) -> Report {
    let mut report = check::check(source, CheckOptions { capabilities });
    if deny_warnings {
        report.deny_warnings();
    }
    report
}

/// One file's object: `path`, `ok`, `schema`, `summary`, `diagnostics`. `path` is `null`
/// when the text came from no file. When the report left diagnostics out (past
/// [`decision_core::diag::MAX_DIAGNOSTICS`]), also `omitted`, how many, and
/// `omitted_by_code`, how many of each code; an ordinary file's object has neither key.
pub fn file_json(path: Option<&str>, report: &Report) -> Value {
    let mut file = Map::new();
    file.insert("path".into(), json!(path));
    file.insert("ok".into(), json!(!report.has_errors()));
    file.insert("schema".into(), json!(report.contract.schema.as_ref().map(|s| s.value.clone())));
    file.insert("summary".into(), json!(report.summary()));
    file.insert("diagnostics".into(), report.diagnostics.iter().map(diagnostic_json).collect());
    if !report.omitted.is_empty() {
        let by_code = report.omitted.by_code.iter().map(|(code, n)| ((*code).to_string(), json!(n))).collect();
        file.insert("omitted".into(), json!(report.omitted.total()));
        file.insert("omitted_by_code".into(), Value::Object(by_code));
    }
    Value::Object(file)
}

/// The object of a file that could not be read: `path`, `ok` (false) and `error`, the reason
/// (the other keys of [`file_json`] are absent: nothing was checked).
pub fn unreadable_file_json(path: &str, error: &str) -> Value {
    json!({ "path": path, "ok": false, "error": error })
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
