//! What a function refuses with: the JavaScript side throws it as an `Error` carrying these
//! fields.

use decision_core::Diagnostic;
use decision_runtime::api::check::diagnostic_json;
use serde_json::{Map, Value, json};

/// The `code` of a refusal that is not a contract diagnostic (those carry their own `DCxxxx`).
pub mod codes {
    /// The call itself is wrong: an unknown block, a state or answers that are not a JSON
    /// object, an option of the wrong type, a gate that does not apply.
    pub const USAGE: &str = "E_USAGE";
    /// The contract parses, but cannot produce the frame (a field whose cell or projection
    /// the host does not have).
    pub const FRAME: &str = "E_FRAME";
    /// The text given to `verifyRecord` is not a decision record.
    pub const RECORD: &str = "E_RECORD";
    /// A tool-outcome contracts file does not lint clean.
    pub const CONTRACTS: &str = "E_CONTRACTS";
    /// The document given as a tool outcome is not one.
    pub const OUTCOME: &str = "E_OUTCOME";
}

/// A refusal: a stable code, a message, and where the problem is when that is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
    /// The name the caller gave the input (never opened).
    pub path: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// Every error diagnostic, for a contract that does not parse; each lint error, for a
    /// contracts file.
    pub diagnostics: Vec<Value>,
}

impl Failure {
    /// A refusal without a location.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Failure { code, message: message.into(), path: None, line: None, column: None, diagnostics: vec![] }
    }

    /// A contract whose parse errors are `errors` (at least one): the code and location of
    /// the first, and all of them as diagnostics.
    pub fn contract(message: String, path: &str, errors: &[&Diagnostic]) -> Self {
        let first = errors.first();
        Failure {
            code: first.map_or(codes::USAGE, |d| d.code),
            message,
            path: Some(path.to_owned()),
            line: first.map(|d| d.span.line),
            column: first.map(|d| d.span.column),
            diagnostics: errors.iter().map(|d| diagnostic_json(d)).collect(),
        }
    }

    /// The same refusal, naming the input it is about.
    pub fn at_path(mut self, path: &str) -> Self {
        self.path = Some(path.to_owned());
        self
    }

    /// `{"code", "message", "path", "line", "column", "diagnostics"}`.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), json!(self.code));
        map.insert("message".into(), json!(self.message));
        map.insert("path".into(), json!(self.path));
        map.insert("line".into(), json!(self.line));
        map.insert("column".into(), json!(self.column));
        map.insert("diagnostics".into(), Value::Array(self.diagnostics.clone()));
        Value::Object(map)
    }
}
