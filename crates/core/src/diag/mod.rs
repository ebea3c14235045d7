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
    /// 1-based line number (lines split on `\n` only).
    pub line: u32,
    /// 1-based column, in Unicode scalar values from the start of the line.
    pub column: u32,
    /// Byte offset of the first byte, from the start of the source (a leading byte-order mark
    /// counts).
    pub start: usize,
    /// Byte offset one past the last byte; `start == end` for a point (e.g. a missing
    /// declaration reported at the top of the file).
    pub end: usize,
}

/// How bad a problem is. Serialised lowercase (`"warning"`, `"error"`); ordered so that
/// `Error > Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file is usable as written, but probably does not say what its author meant (a lint).
    Warning,
    /// The file must not be run: a host refuses a contract with any error.
    Error,
}

/// The layer that reports a problem. Layers are reported separately: a file can be well
/// formed (parse) and still claim a semantics this implementation cannot read (schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// The text itself: block structure, keys, frames, options, and the parse-level lints.
    Parse,
    /// The `schema:` declaration: missing or not one this implementation reads.
    Schema,
    /// Policy rules: predicates that do not compile, rules that can never fire.
    Policy,
    /// The contract against a host's [`Capabilities`](crate::check::Capabilities): positions,
    /// actions, providers, projections, state cells, required blocks and frame coverage.
    /// Only run when capabilities are given.
    Adapter,
}

impl Layer {
    /// The lowercase name, as serialised (`"parse"`, `"schema"`, `"policy"`, `"adapter"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Parse => "parse",
            Layer::Schema => "schema",
            Layer::Policy => "policy",
            Layer::Adapter => "adapter",
        }
    }
}

/// One problem found in a contract, located in its source. Serialised with these field names;
/// `block` and `help` serialise as `null` when absent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Stable code, e.g. `DC0108`; see [`crate::diag::codes`].
    pub code: &'static str,
    /// Whether the problem stops the contract from being run.
    pub severity: Severity,
    /// The layer that found it; a report lists layers in order.
    pub layer: Layer,
    /// A one-sentence human explanation, naming the offending text. Not stable: match on
    /// `code`, not on this.
    pub message: String,
    /// Where the problem is: the offending part of the line where it can be isolated, else the
    /// trimmed line (or the block heading, for a problem of the block as a whole).
    pub span: Span,
    /// The block (decision id) the problem belongs to, if any.
    pub block: Option<String>,
    /// A suggested fix (e.g. "did you mean `tool`?"), where one is knowable; `None` otherwise.
    pub help: Option<String>,
}

/// A problem a layer finds, typed: each kind of problem is a variant holding the names and
/// values that matter, and renders its own code, message and help
/// ([`crate::syntax::problem::ParseProblem`], [`crate::check::problem::CheckProblem`]).
pub trait Problem {
    /// The stable code.
    fn code(&self) -> &'static str;
    /// The layer that reports it.
    fn layer(&self) -> Layer;
    /// The one-sentence explanation.
    fn message(&self) -> String;
    /// The suggested fix.
    fn help(&self) -> String;

    /// A lint (`DC05xx`) is a warning; every other problem stops the contract from being run.
    fn severity(&self) -> Severity {
        match self.code().starts_with("DC05") {
            true => Severity::Warning,
            false => Severity::Error,
        }
    }

    /// The diagnostic, at `span`, of `block` (the block id, when the problem is in one).
    fn at(&self, span: Span, block: Option<String>) -> Diagnostic {
        Diagnostic {
            code: self.code(),
            severity: self.severity(),
            layer: self.layer(),
            message: self.message(),
            span,
            block,
            help: Some(self.help()),
        }
    }
}

impl Diagnostic {
    /// Whether the severity is [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
