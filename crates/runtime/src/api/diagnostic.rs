//! A diagnostic as every document shows it: `check`'s files, and the refusal of a contract
//! that does not parse (`api::Error`'s `diagnostics`).

use decision_core::{Diagnostic, Layer, Severity};
use serde::Serialize;
use serde_json::Value;

/// One diagnostic as every document shows it.
#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticDocument<'a> {
    /// Its stable code.
    pub code: &'static str,
    /// `error` or `warning`.
    pub severity: Severity,
    /// `parse`, `schema`, `policy`, `adapter` or `lint`.
    pub layer: Layer,
    /// What is wrong.
    pub message: &'a str,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Byte offset of the start.
    pub start: usize,
    /// Byte offset of the end.
    pub end: usize,
    /// The block it is in, if any.
    pub block: Option<&'a str>,
    /// How to fix it, if known.
    pub help: Option<&'a str>,
}

impl DiagnosticDocument<'_> {
    /// The document of `d`.
    pub fn of(d: &Diagnostic) -> DiagnosticDocument<'_> {
        DiagnosticDocument {
            code: d.code,
            severity: d.severity,
            layer: d.layer,
            message: &d.message,
            line: d.span.line,
            column: d.span.column,
            start: d.span.start,
            end: d.span.end,
            block: d.block.as_deref(),
            help: d.help.as_deref(),
        }
    }
}

/// One diagnostic: code, severity, layer, message, line, column, byte range, block, help.
pub fn diagnostic_json(d: &Diagnostic) -> Value {
    // Strings and numbers only: serialising cannot fail.
    serde_json::to_value(DiagnosticDocument::of(d)).unwrap_or_default()
}
