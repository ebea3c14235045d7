//! The one refusal every entrance reports: a stable [`Code`], a message, and where the problem
//! is when that is known. The CLI prints it as `error[CODE]: message` and exits 2; Python
//! raises the exception class of its [`Kind`] carrying the same `code`; the npm package throws
//! a `DecisionError` with the same `code` — so a script that switches on a code works the same
//! behind every front end. `docs/errors.md` lists the vocabulary.

use decision_core::Diagnostic;
use decision_core::contract::Contract;
use serde_json::{Map, Value, json};

use super::diagnostic::diagnostic_json;
use super::replay::RecordError;
use crate::log::LogError;
use crate::log::approval::ApprovalError;

/// Why a request was refused. The string form ([`Code::as_str`]) is the stable vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// The contract does not parse: the code of its first error diagnostic (`DC0108`, …).
    Diagnostic(&'static str),
    /// A policy rule of the block does not compile (`E_POLICY`).
    Policy,
    /// The contract cannot produce this frame for this host: a field whose cell or projection
    /// the host does not have, a block that does not fit the host's capabilities (`E_FRAME`).
    Frame,
    /// A tool-outcome contracts file does not lint clean (`E_CONTRACTS`).
    Contracts,
    /// The request itself is wrong: an unknown block, profile or option, an argument of the
    /// wrong shape, a gate that does not apply, an approval that cannot be answered (`E_USAGE`).
    Usage,
    /// The document given as a tool outcome is not one, or names another tool (`E_OUTCOME`).
    Outcome,
    /// The decider cannot make the request at all (`E_PROVIDER`). A provider that is down or
    /// answers nonsense is not a refusal: that decision escalates, degraded.
    Provider,
    /// The text given as a decision record is not one (`E_RECORD`).
    Record,
    /// A file could not be read or written (`E_IO`).
    Io,
    /// A session log's last line was cut short (`E_LOG_TORN`); `line` says which.
    LogTorn,
    /// A session log that has no lines where one was required (`E_LOG_EMPTY`).
    LogEmpty,
    /// A session log that was closed, or is unusable after a failed write (`E_LOG_CLOSED`).
    LogClosed,
    /// A session log another writer holds open (a running run or decision gateway), so it
    /// cannot be written here now (`E_LOG_HELD`).
    LogHeld,
    /// A session id that cannot name a log (`E_SESSION_ID`).
    SessionId,
    /// A log whose tool outcomes cannot be reported (`E_REPORT`).
    Report,
    /// A session log that does not verify — a broken chain or seal — so nothing in it may be
    /// acted on (`E_UNVERIFIED`).
    Unverified,
}

/// The family a [`Code`] belongs to: what a front end keys its exception class or exit status
/// on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The contract (or contracts file) cannot do what was asked.
    Contract,
    /// The request is wrong.
    Usage,
    /// The decider cannot be asked.
    Provider,
    /// A log or another file cannot be read or written.
    Log,
    /// A record cannot be verified.
    Record,
}

impl Code {
    /// The stable string: a diagnostic's own `DCxxxx`, else `E_…`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Diagnostic(code) => code,
            Code::Policy => "E_POLICY",
            Code::Frame => "E_FRAME",
            Code::Contracts => "E_CONTRACTS",
            Code::Usage => "E_USAGE",
            Code::Outcome => "E_OUTCOME",
            Code::Provider => "E_PROVIDER",
            Code::Record => "E_RECORD",
            Code::Io => "E_IO",
            Code::LogTorn => "E_LOG_TORN",
            Code::LogEmpty => "E_LOG_EMPTY",
            Code::LogClosed => "E_LOG_CLOSED",
            Code::LogHeld => "E_LOG_HELD",
            Code::SessionId => "E_SESSION_ID",
            Code::Report => "E_REPORT",
            Code::Unverified => "E_UNVERIFIED",
        }
    }

    /// Every code that is not a diagnostic's, in the order `docs/errors.md` lists them.
    pub const NAMED: [Code; 15] = [
        Code::Policy,
        Code::Frame,
        Code::Contracts,
        Code::Usage,
        Code::Outcome,
        Code::Provider,
        Code::Record,
        Code::Io,
        Code::LogTorn,
        Code::LogEmpty,
        Code::LogClosed,
        Code::LogHeld,
        Code::SessionId,
        Code::Report,
        Code::Unverified,
    ];

    /// The family of this code.
    pub fn kind(self) -> Kind {
        match self {
            Code::Diagnostic(_) | Code::Policy | Code::Frame | Code::Contracts => Kind::Contract,
            Code::Usage | Code::Outcome => Kind::Usage,
            Code::Provider => Kind::Provider,
            Code::Record => Kind::Record,
            Code::Io
            | Code::LogTorn
            | Code::LogEmpty
            | Code::LogClosed
            | Code::LogHeld
            | Code::SessionId
            | Code::Report
            | Code::Unverified => Kind::Log,
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal: its code, its message, and where the problem is when that is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// Why.
    pub code: Code,
    /// What happened, in words (for people; the code is for programs).
    pub message: String,
    /// The name the caller gave the input at fault, or the argument at fault (never opened).
    pub path: Option<String>,
    /// The 1-based line of the problem.
    pub line: Option<u32>,
    /// The 1-based column of the problem.
    pub column: Option<u32>,
    /// Every error diagnostic, for a contract that does not parse; each lint error, for a
    /// contracts file.
    pub diagnostics: Vec<Value>,
}

impl Error {
    /// A refusal without a location.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), path: None, line: None, column: None, diagnostics: Vec::new() }
    }

    /// A wrong request ([`Code::Usage`]).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(Code::Usage, message)
    }

    /// A file that could not be read or written ([`Code::Io`]), naming it.
    pub fn io(path: &str, message: impl Into<String>) -> Self {
        Error::new(Code::Io, message).at_path(path)
    }

    /// A contract whose error diagnostics are `errors` (at least one): the code and location
    /// of the first, every one in `diagnostics`, and the message `path does not parse:` with
    /// one `path:line:column: CODE message` line per error.
    pub fn unparsed(path: &str, errors: &[&Diagnostic]) -> Self {
        Error::diagnosed(path, &format!("{path} does not parse"), errors)
    }

    /// A contract refused for its error diagnostics `errors` (at least one): the code and
    /// location of the first, every one in `diagnostics`, and the message `{headline}:` with
    /// one `path:line:column: CODE message` line per error.
    pub fn diagnosed(path: &str, headline: &str, errors: &[&Diagnostic]) -> Self {
        let lines: Vec<String> = errors
            .iter()
            .map(|d| format!("{path}:{}:{}: {} {}", d.span.line, d.span.column, d.code, d.message))
            .collect();
        let first = errors.first();
        Error {
            code: first.map_or(Code::Usage, |d| Code::Diagnostic(d.code)),
            message: format!("{headline}:\n  {}", lines.join("\n  ")),
            path: Some(path.to_owned()),
            line: first.map(|d| d.span.line),
            column: first.map(|d| d.span.column),
            diagnostics: errors.iter().map(|d| diagnostic_json(d)).collect(),
        }
    }

    /// The same refusal, naming the input (or argument) it is about.
    pub fn at_path(mut self, path: &str) -> Self {
        self.path = Some(path.to_owned());
        self
    }

    /// The same refusal, at a line of its input.
    pub fn at_line(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    /// The family of its code.
    pub fn kind(&self) -> Kind {
        self.code.kind()
    }

    /// `{"code", "message", "path", "line", "column", "diagnostics"}`: what the npm package
    /// throws and what the parity tests compare.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), json!(self.code.as_str()));
        map.insert("message".into(), json!(self.message));
        map.insert("path".into(), json!(self.path));
        map.insert("line".into(), json!(self.line));
        map.insert("column".into(), json!(self.column));
        map.insert("diagnostics".into(), Value::Array(self.diagnostics.clone()));
        Value::Object(map)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<RecordError> for Error {
    fn from(error: RecordError) -> Self {
        Error::new(Code::Record, error.to_string())
    }
}

impl From<&LogError> for Error {
    fn from(error: &LogError) -> Self {
        let shown = |path: &std::path::Path| path.display().to_string();
        match error {
            LogError::Io { path, .. } => Error::io(&shown(path), error.to_string()),
            LogError::Locked(path) => Error::new(Code::LogHeld, error.to_string()).at_path(&shown(path)),
            LogError::InvalidSessionId(_) => Error::new(Code::SessionId, error.to_string()),
            LogError::TornTail { path, line } => Error::new(Code::LogTorn, error.to_string())
                .at_path(&shown(path))
                .at_line(u32::try_from(*line).unwrap_or(u32::MAX)),
            LogError::Empty(path) => Error::new(Code::LogEmpty, error.to_string()).at_path(&shown(path)),
        }
    }
}

impl From<&ApprovalError> for Error {
    fn from(error: &ApprovalError) -> Self {
        match error {
            ApprovalError::Read { path, .. } => Error::io(&path.display().to_string(), error.to_string()),
            ApprovalError::Log(log) => Error::from(log),
            ApprovalError::Refused(_) => Error::new(Code::Unverified, error.to_string()),
            ApprovalError::Key(_) => Error::usage(error.to_string()),
            ApprovalError::BadInput { .. } | ApprovalError::InputOnDeny => {
                Error::usage(error.to_string()).at_path("input")
            }
            // An unknown, answered, used or changed approval: the id asked for cannot be
            // answered, which is the request's problem to fix.
            _ => Error::usage(error.to_string()).at_path("id"),
        }
    }
}

/// Parses a contract for a command that needs it whole: any error diagnostic refuses it
/// ([`Error::unparsed`]). `path` names it in messages; it is never opened.
pub fn parse_contract(path: &str, source: &[u8]) -> Result<Contract, Error> {
    let parsed = decision_core::parse(source);
    let errors: Vec<&Diagnostic> = parsed.diagnostics.iter().filter(|d| d.is_error()).collect();
    if errors.is_empty() { Ok(parsed.contract) } else { Err(Error::unparsed(path, &errors)) }
}

/// The block named `id`, or a usage error listing the blocks there are.
pub fn find_block<'a>(
    path: &str,
    contract: &'a Contract,
    id: &str,
) -> Result<&'a decision_core::contract::Block, Error> {
    contract.blocks.iter().find(|b| b.id == id).ok_or_else(|| {
        let known: Vec<&str> = contract.blocks.iter().map(|b| b.id.as_str()).collect();
        Error::usage(format!("no block `{id}` in {path} (blocks: {})", known.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_vocabulary_is_the_code_vocabulary_in_order() {
        let doc = include_str!("../../../../docs/errors.md");
        let rows: Vec<&str> = doc
            .lines()
            .filter_map(|line| line.strip_prefix("| `E_"))
            .filter_map(|rest| rest.split('`').next())
            .collect();
        let named: Vec<String> = Code::NAMED.iter().map(|c| c.as_str().trim_start_matches("E_").to_owned()).collect();
        assert_eq!(rows, named, "docs/errors.md lists every named code once, in Code::NAMED's order");
    }

    #[test]
    fn named_codes_are_distinct_and_prefixed() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::NAMED {
            assert!(code.as_str().starts_with("E_"), "{code}");
            assert!(seen.insert(code.as_str()), "{code} twice");
        }
        assert_eq!(Code::Diagnostic("DC0108").as_str(), "DC0108");
    }

    #[test]
    fn a_contract_that_does_not_parse_carries_its_first_error() {
        let broken = b"---\nschema: decision-contract/v1\n---\n\n## block: x\n\nnonsense here\n";
        let error = parse_contract("bad.md", broken).err();
        let Some(error) = error else { panic!("a broken contract parsed") };
        assert!(matches!(error.code, Code::Diagnostic(code) if code.starts_with("DC")), "{:?}", error.code);
        assert!(error.message.starts_with("bad.md does not parse:\n  bad.md:"), "{}", error.message);
        assert_eq!(error.path.as_deref(), Some("bad.md"));
        assert!(error.line.is_some() && !error.diagnostics.is_empty());
        assert_eq!(error.kind(), Kind::Contract);
    }

    #[test]
    fn each_code_has_its_kind() {
        assert_eq!(Error::usage("x").kind(), Kind::Usage);
        assert_eq!(Error::io("f", "x").kind(), Kind::Log);
        assert_eq!(Error::new(Code::Frame, "x").kind(), Kind::Contract);
        assert_eq!(Error::new(Code::Outcome, "x").kind(), Kind::Usage);
        assert_eq!(Error::new(Code::Record, "x").kind(), Kind::Record);
        assert_eq!(Error::new(Code::Provider, "x").kind(), Kind::Provider);
    }

    #[test]
    fn an_unknown_block_is_a_usage_error_naming_the_blocks() {
        let source = std::fs::read("../../examples/coding-agent/DECISION.md");
        let Ok(source) = source else { panic!("the bundled example is missing") };
        let Ok(contract) = parse_contract("c.md", &source) else { panic!("the example does not parse") };
        assert!(find_block("c.md", &contract, "needs_tool").is_ok());
        let Err(error) = find_block("c.md", &contract, "nope") else { panic!("found `nope`") };
        assert_eq!(error.code, Code::Usage);
        assert!(error.message.contains("needs_tool"), "{}", error.message);
    }
}
