//! Approvals as a person sees and answers them: every approval of a log with its answer and
//! use ([`Approval`]), the ones still waiting (`decision approvals --format json`), and a
//! person's answer recorded ([`record_answer`]) — with a modified input checked first. The
//! CLI, the Python package and the coding host all read and answer approvals through here.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::{ApprovalError, Ledger, Pending, Verdict, append_answer, read_ledger};
use crate::lines::DEFAULT_MAX_LINE;
use crate::log::SealKey;

/// The longest modified input an answer may carry, in bytes.
pub const MAX_INPUT_BYTES: usize = 1 << 20;

/// A person's answer to a pending approval, as its `approval:answer` event records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalAnswer {
    /// Whether the call may run (`approved` of the event).
    pub approved: bool,
    /// Why it was denied, when the person said (`None` for an approval, and for a denial
    /// given without words: a resumed run then reports "denied by a person").
    pub reason: Option<String>,
    /// The approved modified input, when the person changed it.
    pub input: Option<String>,
    /// The fingerprint of the call the answer allows (the modified one when changed).
    pub fingerprint: String,
}

/// A pending approval as the log records it, with its answer and use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    /// `ap-RUN-STEP-` and the first 12 hex digits of the fingerprint; what `decision approve`
    /// names.
    pub id: String,
    /// The index of the run (in its session log) that asked.
    pub run: u64,
    /// The step of that run whose call waits.
    pub step: u64,
    /// The gated tool.
    pub tool: String,
    /// The tool input as the run proposed it.
    pub input: String,
    /// SHA-256 (hex) of `JSON.stringify({"tool", "input"})` of the recorded call; a recorded
    /// call that no longer matches it was changed after the fact.
    pub fingerprint: String,
    /// The request digest of the decision that asked for a person.
    pub request_digest: String,
    /// The policy rule that fired (`predicate → action`).
    pub rule: String,
    /// The gate's reason as the person is shown it.
    pub reason: String,
    /// The first answer recorded for it; `None` while it is pending.
    pub answer: Option<ApprovalAnswer>,
    /// Whether a resumed run has used it (an `approval:used` event names it).
    pub used: bool,
}

impl Approval {
    /// The input a resumed run gates and runs: the modified one when the answer changed it.
    pub fn effective_input(&self) -> &str {
        self.answer.as_ref().and_then(|a| a.input.as_deref()).unwrap_or(&self.input)
    }

    /// Whether it still waits for an answer (no answer, never used).
    pub fn is_pending(&self) -> bool {
        self.answer.is_none() && !self.used
    }
}

/// One approval of a ledger as a person sees it. Inputs are text; an input that is not a
/// string is shown as its JSON (and never matches a text fingerprint).
pub fn approval_of(pending: &Pending) -> Approval {
    let text = |key: &str| pending.event.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let as_text = |input: &Value| input.as_str().map_or_else(|| input.to_string(), str::to_owned);
    Approval {
        id: pending.id.clone(),
        run: pending.run,
        step: pending.event.get("step").and_then(Value::as_u64).unwrap_or(0),
        tool: pending.tool.clone(),
        input: as_text(&pending.input),
        fingerprint: pending.fingerprint.clone(),
        request_digest: pending.request_digest.clone(),
        rule: text("rule"),
        reason: text("reason"),
        answer: pending.answer.as_ref().map(|answer| ApprovalAnswer {
            approved: answer.approved,
            reason: answer.reason.clone(),
            input: answer.input.as_ref().map(as_text),
            fingerprint: answer.allows_fingerprint.clone(),
        }),
        used: pending.used,
    }
}

/// Every approval of a ledger, in order.
pub fn approvals_of(ledger: &Ledger) -> Vec<Approval> {
    ledger.approvals.iter().map(approval_of).collect()
}

/// Every approval in the session log at `path`, in order, with its answer and whether it was
/// used (read in one streaming pass; no line longer than 16 MiB is held).
pub fn read_approvals(path: &Path) -> Result<Vec<Approval>, ApprovalError> {
    let ledger = read_ledger(path, None, DEFAULT_MAX_LINE, &[], &mut |_| {})?;
    Ok(approvals_of(&ledger))
}

/// The approvals still waiting for an answer, as `decision approvals --format json` lists
/// them: `id`, `run`, `step`, `tool`, `input`, `fingerprint`, `requestDigest`, `rule`,
/// `reason`.
pub fn pending_document(approvals: &[Approval]) -> Value {
    let pending: Vec<PendingDocument<'_>> =
        approvals.iter().filter(|a| a.is_pending()).map(PendingDocument::of).collect();
    // Strings and numbers only: serialising cannot fail.
    serde_json::to_value(pending).unwrap_or_default()
}

/// A pending approval as `decision approvals --format json` lists it, member by member in
/// that order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingDocument<'a> {
    /// The approval's id.
    pub id: &'a str,
    /// The run that asked.
    pub run: u64,
    /// The step that asked.
    pub step: u64,
    /// The tool the call is for.
    pub tool: &'a str,
    /// The call's input.
    pub input: &'a str,
    /// The call's fingerprint (its tool and input).
    pub fingerprint: &'a str,
    /// The request digest of the decision that sent it to a person.
    pub request_digest: &'a str,
    /// The rule that did.
    pub rule: &'a str,
    /// Why.
    pub reason: &'a str,
}

impl PendingDocument<'_> {
    /// The document of `approval`.
    pub fn of(approval: &Approval) -> PendingDocument<'_> {
        PendingDocument {
            id: &approval.id,
            run: approval.run,
            step: approval.step,
            tool: &approval.tool,
            input: &approval.input,
            fingerprint: &approval.fingerprint,
            request_digest: &approval.request_digest,
            rule: &approval.rule,
            reason: &approval.reason,
        }
    }
}

/// The checks a modified input for `tool` must pass before it is recorded: at most 1 MiB, no
/// NUL, and the shape of the coding tools' inputs (one path for `list_dir`, `read_file` and
/// `delete_file`; a path, a line break and the content or destination for `write_file` and
/// `move_file`; a path that is not empty). The tool checks it again when the call runs.
pub fn check_modified_input(tool: &str, input: &str) -> Result<(), ApprovalError> {
    let refuse = |why: &str| Err(ApprovalError::BadInput { tool: tool.to_owned(), why: why.to_owned() });
    if input.len() > MAX_INPUT_BYTES {
        return refuse("it is longer than 1 MiB");
    }
    if input.contains('\0') {
        return refuse("it contains a NUL character");
    }
    let path = input.split('\n').next().unwrap_or_default();
    match tool {
        "list_dir" | "read_file" | "delete_file" if input.contains('\n') => refuse("a path has no line breaks"),
        "write_file" | "move_file" if !input.contains('\n') => {
            refuse("it must be a path, a line break, and the content (or the destination)")
        }
        _ if path.trim().is_empty() && tool != "list_dir" => refuse("the path is empty"),
        _ => Ok(()),
    }
}

/// What a person answers, as the CLI's `--deny`/`--reason`/`--input` and Python's
/// `deny`/`reason`/`input` give it: a denial (with its reason) or an approval, of the call as
/// proposed or of a modified `input`. A denial with an input is refused
/// ([`ApprovalError::InputOnDeny`]).
pub fn verdict_of(deny: Option<&str>, input: Option<&str>) -> Result<Verdict, ApprovalError> {
    match (deny, input) {
        (Some(_), Some(_)) => Err(ApprovalError::InputOnDeny),
        (Some(reason), None) => Ok(Verdict::Deny(reason.to_owned())),
        (None, Some(modified)) => Ok(Verdict::ApproveModified(json!(modified))),
        (None, None) => Ok(Verdict::Approve),
    }
}

/// What was recorded, in words: `approved`, `denied` or `approved with a modified input`.
pub fn verdict_words(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Deny(_) => "denied",
        Verdict::ApproveModified(_) => "approved with a modified input",
        Verdict::Approve => "approved",
    }
}

/// Records a person's answer to approval `id` in the session log at `path` (approve; deny
/// with a reason; approve with a modified `input`, checked by [`check_modified_input`]),
/// bound to the call and the session under the log key in
/// [`crate::log::SEAL_KEY_VARIABLE`], sealed and synced; returns what was recorded
/// ([`verdict_words`]). The log is locked and verified first: a keyed log without the key is
/// refused and nothing is written. A resumed run then continues from it.
pub fn record_answer(
    path: &Path,
    id: &str,
    deny: Option<&str>,
    input: Option<&str>,
) -> Result<&'static str, ApprovalError> {
    let key = SealKey::from_env()?;
    record_answer_with(path, id, deny, input, key.as_ref())
}

/// [`record_answer`] under the given key (`None`: an unkeyed log).
pub fn record_answer_with(
    path: &Path,
    id: &str,
    deny: Option<&str>,
    input: Option<&str>,
    key: Option<&SealKey>,
) -> Result<&'static str, ApprovalError> {
    let verdict = verdict_of(deny, input)?;
    if let Some(modified) = input {
        // The tool is named by the pending line; it is read again, under the lock, when the
        // answer is appended.
        let tool = read_approvals(path)?.into_iter().find(|a| a.id == id).map(|a| a.tool);
        if let Some(tool) = tool {
            check_modified_input(&tool, modified)?;
        }
    }
    append_answer(path, id, &verdict, key)?;
    Ok(verdict_words(&verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_inputs_are_checked_for_the_tool() {
        assert!(check_modified_input("delete_file", "a.md").is_ok());
        assert!(check_modified_input("write_file", "a.md\nhello").is_ok());
        assert!(check_modified_input("list_dir", "").is_ok());
        for (tool, input) in [("delete_file", "a\nb"), ("write_file", "a.md"), ("read_file", "a\0"), ("read_file", " ")]
        {
            assert!(
                matches!(check_modified_input(tool, input), Err(ApprovalError::BadInput { .. })),
                "{tool} {input:?}"
            );
        }
        let long = "a".repeat(MAX_INPUT_BYTES + 1);
        assert!(matches!(check_modified_input("read_file", &long), Err(ApprovalError::BadInput { .. })));
    }

    #[test]
    fn a_denial_carries_no_input() {
        assert!(matches!(verdict_of(Some("no"), Some("a.md")), Err(ApprovalError::InputOnDeny)));
        assert_eq!(verdict_of(Some("no"), None).unwrap(), Verdict::Deny("no".into()));
        assert_eq!(verdict_of(None, Some("a.md")).unwrap(), Verdict::ApproveModified(json!("a.md")));
        assert_eq!(verdict_words(&verdict_of(None, None).unwrap()), "approved");
    }
}
