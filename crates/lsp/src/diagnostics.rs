//! A check report as the protocol's diagnostics: the same codes, ranges, messages and help
//! as `decision check`.

use decision::check::Report;
use decision::diag::{Diagnostic, MAX_DIAGNOSTICS, Severity};
use lsp_types::{self as lsp, DiagnosticSeverity, NumberOrString, Position, Range};
use serde_json::json;

use crate::text::LineIndex;

/// The `source` of every diagnostic the server publishes.
pub const SOURCE: &str = "decision";

/// One checker diagnostic. The message is the checker's, followed by its help on a line
/// `help: …` as `decision check` prints it; `data` carries `help`, `layer` and `block` apart
/// for the quick fixes.
pub fn diagnostic(text: &str, index: &LineIndex, d: &Diagnostic) -> lsp::Diagnostic {
    let message = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.clone(),
    };
    lsp::Diagnostic {
        range: index.range(text, d.span.start, d.span.end),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some(SOURCE.to_string()),
        message,
        data: Some(json!({"help": d.help, "layer": d.layer.as_str(), "block": d.block})),
        ..lsp::Diagnostic::default()
    }
}

/// Every diagnostic of a report, and, when the report left some out, one more at the top of
/// the document that says how many and of which codes (as `decision check` does).
pub fn diagnostics(text: &str, index: &LineIndex, report: &Report) -> Vec<lsp::Diagnostic> {
    let mut out: Vec<lsp::Diagnostic> = report.diagnostics.iter().map(|d| diagnostic(text, index, d)).collect();
    if !report.omitted.is_empty() {
        let codes: Vec<String> =
            report.omitted.most_frequent().iter().map(|(code, n)| format!("{code} ×{n}")).collect();
        out.push(at_top(
            DiagnosticSeverity::INFORMATION,
            format!(
                "{} more diagnostics not shown (at most {MAX_DIAGNOSTICS} are shown per file): {}",
                report.omitted.total(),
                codes.join(", ")
            ),
        ));
    }
    out
}

/// A diagnostic of the document as a whole, at its first character.
pub fn at_top(severity: DiagnosticSeverity, message: String) -> lsp::Diagnostic {
    let start = Position { line: 0, character: 0 };
    lsp::Diagnostic {
        range: Range { start, end: start },
        severity: Some(severity),
        source: Some(SOURCE.to_string()),
        message,
        ..lsp::Diagnostic::default()
    }
}
