//! Human rendering of diagnostics with the source line and the span underlined (miette).

use decision_core::diag::{Diagnostic, Severity};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report};

/// Render one diagnostic like rustc: code, message, `path:line:column`, the source line
/// with the span underlined, and the help line.
pub fn diagnostic(path: &str, source: &str, d: &Diagnostic) -> String {
    let severity = match d.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    };
    let len = d.span.end.saturating_sub(d.span.start);
    let start = d.span.start.min(source.len());
    let label = match &d.block {
        Some(block) => format!("{} layer, block `{block}`", d.layer.as_str()),
        None => format!("{} layer", d.layer.as_str()),
    };
    let mut diagnostic = MietteDiagnostic::new(format!("{} ({path}:{}:{})", d.message, d.span.line, d.span.column))
        .with_code(d.code)
        .with_severity(severity)
        .with_label(LabeledSpan::at(start..start + len.min(source.len() - start), label));
    if let Some(help) = &d.help {
        diagnostic = diagnostic.with_help(help.clone());
    }
    let report = Report::new(diagnostic).with_source_code(NamedSource::new(path, source.to_string()));
    let mut out = String::new();
    let handler = GraphicalReportHandler::new_themed(theme());
    if handler.render_report(&mut out, report.as_ref()).is_err() {
        out = format!(
            "{}[{}]: {} at {path}:{}:{}\n",
            if d.is_error() { "error" } else { "warning" },
            d.code,
            d.message,
            d.span.line,
            d.span.column
        );
    }
    out
}

fn theme() -> GraphicalTheme {
    if std::env::var_os("NO_COLOR").is_some() || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        GraphicalTheme::unicode_nocolor()
    } else {
        GraphicalTheme::unicode()
    }
}
