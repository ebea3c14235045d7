//! Located diagnostics: a stable code, a severity, the layer that found it, a message, the
//! primary span, the block it belongs to and, where a fix is knowable, a help line.

mod capped;
pub mod codes;

pub use capped::{Diagnostics, MAX_DIAGNOSTIC_BYTES, MAX_DIAGNOSTICS, Omitted, Sink};

use serde::Serialize;

/// A place in the source text. `line` and `column` are 1-based; `column` counts Unicode
/// scalar values from the start of the line. `start..end` is the byte range in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Span {
    pub line: u32,
    pub column: u32,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// The layer that reports a problem. Layers are reported separately: a file can be well
/// formed (parse) and still claim a semantics this implementation cannot read (schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Parse,
    Schema,
    Policy,
    Adapter,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Parse => "parse",
            Layer::Schema => "schema",
            Layer::Policy => "policy",
            Layer::Adapter => "adapter",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Stable code, e.g. `DC0108`; see [`crate::diag::codes`].
    pub code: &'static str,
    pub severity: Severity,
    pub layer: Layer,
    pub message: String,
    pub span: Span,
    /// The block (decision id) the problem belongs to, if any.
    pub block: Option<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
