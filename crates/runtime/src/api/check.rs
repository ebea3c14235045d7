//! `decision check --format json`: one file's object and the whole document.

use std::collections::BTreeMap;

use decision_core::check::{self, Capabilities, CheckOptions, Report, Summary};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::diagnostic::DiagnosticDocument;

use super::error::Error;
use super::host::Profile;

/// What `check` is asked, by the names every entrance takes (the command line's
/// `--profile` and `--deny warnings`, Python's keywords, the JavaScript options). The inputs —
/// the contract and a host capability report — each entrance reads its own way.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct CheckRequest {
    /// A built-in host profile to run the adapter layer against.
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub profile: Option<Profile>,
    /// Every warning becomes an error: `--deny warnings` on the command line,
    /// `deny_warnings=True` in Python, `denyWarnings: true` in JavaScript.
    #[cfg_attr(feature = "cli", arg(
        long = "deny",
        value_name = "warnings",
        value_parser = deny_warnings,
        action = clap::ArgAction::Set,
        default_value = "",
        hide_default_value = true,
    ))]
    pub deny_warnings: bool,
}

impl CheckRequest {
    /// The host to check against: the request's profile or the capability `report`
    /// (`(shown, text)`); neither is `None`, both a usage error.
    pub fn host(&self, report: Option<(&str, &str)>) -> Result<Option<Capabilities>, Error> {
        super::host::named(self.profile.map(Profile::name), report)
    }

    /// Checks a contract's bytes against `capabilities`, as asked.
    pub fn check(&self, source: &[u8], capabilities: Option<&Capabilities>) -> Report {
        check_source(source, capabilities, self.deny_warnings)
    }
}

/// `--deny warnings` on the command line: the one thing that can be denied.
#[cfg(feature = "cli")]
fn deny_warnings(value: &str) -> Result<bool, String> {
    match value {
        "warnings" => Ok(true),
        "" => Ok(false),
        other => Err(format!("`{other}` cannot be denied (only `warnings`)")),
    }
}

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
    let omitted = (!report.omitted.is_empty()).then_some(&report.omitted);
    let document = CheckFileDocument {
        path,
        ok: !report.has_errors(),
        schema: report.contract.schema.as_ref().map(|s| s.value.as_str()),
        summary: report.summary(),
        diagnostics: report.diagnostics.iter().map(DiagnosticDocument::of).collect(),
        omitted: omitted.map(|o| o.total()),
        omitted_by_code: omitted.map(|o| &o.by_code),
    };
    // Strings, numbers, booleans and maps of them only: serialising cannot fail.
    serde_json::to_value(document).unwrap_or_default()
}

/// One file's object of the document `decision check --format json` prints, member by member
/// in that order (see [`file_json`]).
#[derive(Debug, Clone, Serialize)]
pub struct CheckFileDocument<'a> {
    /// The file's name (`null` when the text came from no file).
    pub path: Option<&'a str>,
    /// Whether the contract has no error.
    pub ok: bool,
    /// The `schema:` line's value, if any.
    pub schema: Option<&'a str>,
    /// The headline counts.
    pub summary: Summary,
    /// The diagnostics kept.
    pub diagnostics: Vec<DiagnosticDocument<'a>>,
    /// How many were left out, when some were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<usize>,
    /// How many of each code were left out, when some were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_by_code: Option<&'a BTreeMap<&'static str, usize>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_request_reads_the_names_every_entrance_takes() {
        let request: CheckRequest =
            super::super::request("check", json!({"profile": "reference", "deny_warnings": true})).unwrap();
        assert_eq!((request.profile, request.deny_warnings), (Some(Profile::Reference), true));
        assert!(request.host(None).unwrap().is_some());
        let both = request.host(Some(("caps.json", "{}"))).unwrap_err();
        assert!(both.message.contains("not both"), "{both:?}");
        let none: CheckRequest = super::super::request("check", Value::Null).unwrap();
        assert_eq!((none.profile, none.deny_warnings), (None, false));
        assert!(none.host(None).unwrap().is_none());
        let refused = super::super::request::<CheckRequest>("check", json!({"deny": "warnings"})).unwrap_err();
        assert!(refused.message.starts_with("check options: unknown field `deny`"), "{refused:?}");
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_command_line_denies_warnings_by_name() {
        let parse = super::super::command_line::<CheckRequest>;
        assert!(!parse(&["check"]).unwrap().deny_warnings);
        assert!(parse(&["check", "--deny", "warnings"]).unwrap().deny_warnings);
        assert!(parse(&["check", "--deny", "errors"]).is_err());
        assert!(parse(&["check", "--deny"]).is_err());
        let reference = parse(&["check", "--profile", "reference"]).unwrap();
        assert_eq!(reference.profile, Some(Profile::Reference));
    }
}
