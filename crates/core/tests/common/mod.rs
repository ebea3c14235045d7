//! Helpers shared by the core's integration tests.

use decision_core::diag::Diagnostic;

/// One line per diagnostic, for assertion messages.
pub fn dump(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            format!(
                "{:?} {:?} {} L{}:{} {} (help: {:?})",
                d.layer, d.severity, d.code, d.span.line, d.span.column, d.message, d.help
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
