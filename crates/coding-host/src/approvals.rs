//! Approvals as data, for the coding host: a gated call nobody can answer now becomes an
//! `approval:pending` event in the session log, and the run halts `awaiting_approval`. A
//! person answers it later (`approval:answer`: approve, deny with a reason, or approve a
//! modified input), and a resumed run uses the answer once (`approval:used`).
//!
//! The session-log half — the lines, the answer's binding (a MAC under the log key over the
//! approval id, the call's fingerprint, its request digest, the session id and the hash of
//! the pending line), its verification and single use — is the runtime's
//! ([`decision_runtime::log::approval`]); this module keeps what is the coding host's own:
//! the ids, the checks on a modified input, the recorded answer as the human gate of a resumed
//! run, and the check that every approved call ran and no denied one did.

use std::path::Path;

use decision_runtime::lines::DEFAULT_MAX_LINE;
use decision_runtime::log::approval::{self as log_approval, Ledger, Pending, Verdict, read_ledger};
use decision_runtime::log::{KeyError, SealKey};
use serde::Serialize;
use serde_json::{Value, json};
use thiserror::Error;

use super::human::{GateAnswer, GatedCall, Human, fingerprint};

pub use decision_runtime::log::approval::{ANSWER_EVENT, PENDING_EVENT, USED_EVENT};
/// The halt of a run waiting for an answer (resumable).
pub const AWAITING_APPROVAL: &str = "awaiting_approval";
/// The longest modified input an answer may carry, in bytes.
pub const MAX_INPUT_BYTES: usize = 1 << 20;

/// The id of a pending approval: run, step and the start of the fingerprint.
pub(crate) fn approval_id(run: u64, step: u64, fingerprint: &str) -> String {
    format!("ap-{run}-{step}-{}", fingerprint.get(..12).unwrap_or(fingerprint))
}

/// The human gate that never decides: every gated call becomes a pending approval
/// (`--approvals queue`, and `decision run` without a terminal).
#[derive(Debug, Clone, Copy, Default)]
pub struct QueueApprovals;

impl Human for QueueApprovals {
    fn authorize(&mut self, _tool: &str, _target: &str, _reason: &str) -> bool {
        false
    }

    fn gate(&mut self, _call: &GatedCall) -> GateAnswer {
        GateAnswer::Pending
    }
}

/// The human gate of a resumed run: the recorded answer of one approval, used at most once and
/// only for the call whose fingerprint it was given for. Any other gated call is queued again.
#[derive(Debug, Clone)]
pub struct RecordedAnswers {
    /// The answered approval, until a gated call uses it.
    approval: Option<Approval>,
}

impl RecordedAnswers {
    /// A gate that answers with `approval`'s recorded answer (from [`approval_to_resume`]);
    /// an approval with no answer yet leaves every gated call pending.
    pub fn new(approval: Approval) -> Self {
        RecordedAnswers { approval: Some(approval) }
    }
}

impl Human for RecordedAnswers {
    fn authorize(&mut self, _tool: &str, _target: &str, _reason: &str) -> bool {
        false
    }

    fn gate(&mut self, call: &GatedCall) -> GateAnswer {
        // Only the call the answer allows: the modified one when the answer changed it.
        let fits = self
            .approval
            .as_ref()
            .and_then(|a| a.answer.as_ref())
            .is_some_and(|answer| answer.fingerprint == call.fingerprint());
        let Some(approval) = self.approval.take().filter(|_| fits) else { return GateAnswer::Pending };
        match approval.answer {
            Some(ApprovalAnswer { approved: true, .. }) => GateAnswer::Approve { approval: Some(approval.id) },
            Some(ApprovalAnswer { reason, .. }) => GateAnswer::Deny {
                reason: reason.unwrap_or_else(|| "denied by a person".into()),
                approval: Some(approval.id),
            },
            None => GateAnswer::Pending,
        }
    }
}

/// A person's answer to a pending approval, as its `approval:answer` event records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalAnswer {
    /// Whether the call may run (`approved` of the event).
    pub approved: bool,
    /// Why it was denied, when the person said (`None` for an approval, and for a denial
    /// given without words: the resumed run then reports "denied by a person").
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
    /// The request digest of the `grade_risk` decision that asked for a person.
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
}

/// Why approvals could not be read, answered or resumed from. The `Display` text is what
/// `decision approve` and `decision resume` print.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// The session log could not be read or written, does not verify, or names no such
    /// approval, or one already answered or used (the runtime's checks).
    #[error(transparent)]
    Log(#[from] log_approval::ApprovalError),
    /// The log key in the environment is not usable (empty, too short, not UTF-8).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A resume found the approval it would continue from unanswered.
    #[error("approval `{id}` is still pending: answer it with `decision approve LOG {id}` (or `--deny`)")]
    StillPending {
        /// The pending approval.
        id: String,
    },
    /// The recorded call, or its approved modified input, does not match the fingerprint the
    /// log holds for it.
    #[error("approval `{id}`: the recorded call does not match its fingerprint (the log was changed)")]
    Tampered {
        /// The approval whose record was changed.
        id: String,
    },
    /// A modified input that the tool could never take (too long, a NUL, a path with a line
    /// break, a missing content or destination, an empty path).
    #[error("the modified input for `{tool}` is refused: {why}")]
    BadInput {
        /// The approval's tool.
        tool: String,
        /// What is wrong with the input, in words.
        why: String,
    },
    /// A denial that also carried a modified input.
    #[error("--input is only for approving; a denial runs nothing")]
    InputOnDeny,
}

/// The coding host's view of one approval of the runtime's ledger.
fn approval_of(pending: &Pending) -> Approval {
    let text = |key: &str| pending.event.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    // The coding host's inputs are strings; anything else never matches its fingerprint.
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

/// Every approval in a session log, in order, with its answer and whether it was used (read
/// in one streaming pass; no line longer than 16 MiB is held).
pub fn read_approvals(path: &Path) -> Result<Vec<Approval>, ApprovalError> {
    let ledger = read_ledger(path, None, DEFAULT_MAX_LINE, &[], &mut |_| {})?;
    Ok(approvals_of(&ledger))
}

/// The coding host's view of every approval of a ledger.
pub fn approvals_of(ledger: &Ledger) -> Vec<Approval> {
    ledger.approvals.iter().map(approval_of).collect()
}

/// The checks a modified input must pass before it is recorded; the sandbox checks it again
/// when the call runs.
fn validate_input(tool: &str, input: &str) -> Result<(), ApprovalError> {
    let refuse = |why: &str| Err(ApprovalError::BadInput { tool: tool.to_string(), why: why.to_string() });
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

/// The pending approval a resume continues from, in a ledger read from a verified log: the
/// last one not used yet, which must be answered and match its fingerprint. `Ok(None)`: the
/// log has no approval to continue.
pub fn approval_from_ledger(ledger: &Ledger) -> Result<Option<Approval>, ApprovalError> {
    let Some(pending) = ledger.approvals.iter().rev().find(|a| !a.used) else { return Ok(None) };
    let approval = approval_of(pending);
    if !pending.call_matches() {
        return Err(ApprovalError::Tampered { id: approval.id });
    }
    match &approval.answer {
        None => Err(ApprovalError::StillPending { id: approval.id }),
        Some(answer) if answer.fingerprint != fingerprint(&approval.tool, approval.effective_input()) => {
            Err(ApprovalError::Tampered { id: approval.id })
        }
        Some(_) => Ok(Some(approval)),
    }
}

/// [`approval_from_ledger`] of the log at `path`, verified first as a resume verifies it
/// ([`log_approval::verify_log`], under the log key in the environment).
pub fn approval_to_resume(path: &Path) -> Result<Option<Approval>, ApprovalError> {
    let key = SealKey::from_env()?;
    let options = log_approval::VerifyOptions { key, ..Default::default() };
    let verified = log_approval::verify_log(path, &options).map_err(log_approval::ApprovalError::from)?;
    approval_from_ledger(&verified.ledger)
}

pub use decision_runtime::log::approval::ApprovalAudit;

/// Replay's approval checks, with no key ([`verify_approvals_with`]).
pub fn verify_approvals(path: &Path) -> Result<ApprovalAudit, ApprovalError> {
    verify_approvals_with(path, None, DEFAULT_MAX_LINE)
}

/// Replay's approval checks ([`Ledger::audit`]) on the log at `path`, answers' bindings under
/// `key`: every answer's binding holds (its MAC on a keyed log), every use names an answered
/// approval whose allowed fingerprint is the call's, no approval is used twice, an approved use
/// is followed by exactly that call at its step, and a denied one by no call at its step.
/// Lines longer than `max_line` are skipped, never held. `decision replay` makes the same
/// checks in its own read of the log ([`decision_runtime::log::approval::replay_with_ledger`]).
pub fn verify_approvals_with(
    path: &Path,
    key: Option<&SealKey>,
    max_line: usize,
) -> Result<ApprovalAudit, ApprovalError> {
    Ok(read_ledger(path, key, max_line, &[], &mut |_| {})?.audit())
}

/// The approvals of a log still waiting for an answer, as `decision approvals --format json`
/// lists them: `id`, `run`, `step`, `tool`, `input`, `fingerprint`, `requestDigest`, `rule`,
/// `reason`.
pub fn pending_json(approvals: &[Approval]) -> Value {
    approvals
        .iter()
        .filter(|a| a.answer.is_none() && !a.used)
        .map(|a| {
            json!({"id": a.id, "run": a.run, "step": a.step, "tool": a.tool, "input": a.input,
                   "fingerprint": a.fingerprint, "requestDigest": a.request_digest,
                   "rule": a.rule, "reason": a.reason})
        })
        .collect()
}

/// Why a person's answer could not be recorded.
pub type RecordAnswerError = ApprovalError;

/// Records a person's answer to approval `id` in the session log at `path` (approve; deny with
/// a reason; approve with a modified `input`, validated again), bound to the call and the
/// session under the log key in [`decision_runtime::log::SEAL_KEY_VARIABLE`], and sealed,
/// synced to disk; returns what was recorded (`approved`, `denied`, `approved with a modified
/// input`). The log is locked and verified first: a keyed log without the key is refused and
/// nothing is written. A resumed run then continues from it.
pub fn record_answer(
    path: &Path,
    id: &str,
    deny: Option<&str>,
    input: Option<&str>,
) -> Result<&'static str, RecordAnswerError> {
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
) -> Result<&'static str, RecordAnswerError> {
    let verdict = match (deny, input) {
        (Some(_), Some(_)) => return Err(ApprovalError::InputOnDeny),
        (Some(reason), None) => Verdict::Deny(reason.to_owned()),
        (None, Some(modified)) => {
            // The tool is named by the pending line; it is read again, under the lock, below.
            let tool = read_approvals(path)?.into_iter().find(|a| a.id == id).map(|a| a.tool);
            if let Some(tool) = tool {
                validate_input(&tool, modified)?;
            }
            Verdict::ApproveModified(json!(modified))
        }
        (None, None) => Verdict::Approve,
    };
    log_approval::append_answer(path, id, &verdict, key)?;
    Ok(match verdict {
        Verdict::Deny(_) => "denied",
        Verdict::ApproveModified(_) => "approved with a modified input",
        Verdict::Approve => "approved",
    })
}

/// Where the log of a run must not be: inside its work directory, where the run's own tools
/// could rewrite it. `Err` names both.
pub fn refuse_log_in_workdir(log: &Path, workdir: &Path) -> Result<(), String> {
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let Some(root) = canonical(workdir) else { return Ok(()) };
    // The log may not exist yet: its directory is what counts.
    let parent = log.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Some(dir) = canonical(parent) else { return Ok(()) };
    if dir.starts_with(&root) {
        return Err(format!(
            "the session log {} is inside the work directory {}: the run's own tools could rewrite it; put the log outside the work directory",
            log.display(),
            root.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(answer: Option<ApprovalAnswer>) -> Approval {
        let fingerprint = fingerprint("delete_file", "notes.md");
        Approval {
            id: approval_id(0, 2, &fingerprint),
            run: 0,
            step: 2,
            tool: "delete_file".into(),
            input: "notes.md".into(),
            fingerprint,
            request_digest: "r".into(),
            rule: "score:risk >= 2 → ask_human".into(),
            reason: "score:risk >= 2 → ask_human".into(),
            answer,
            used: false,
        }
    }

    fn call(input: &str) -> GatedCall {
        GatedCall {
            step: 2,
            tool: "delete_file".into(),
            input: input.into(),
            rule: String::new(),
            reason: String::new(),
            request_digest: String::new(),
        }
    }

    #[test]
    fn a_recorded_answer_is_used_once_and_only_for_the_call_it_allows() {
        let answer =
            ApprovalAnswer { approved: true, reason: None, input: None, fingerprint: approval(None).fingerprint };
        let mut gate = RecordedAnswers::new(approval(Some(answer.clone())));
        assert_eq!(gate.gate(&call("other.md")), GateAnswer::Pending);
        let mut gate = RecordedAnswers::new(approval(Some(answer)));
        assert!(matches!(gate.gate(&call("notes.md")), GateAnswer::Approve { approval: Some(_) }));
        assert_eq!(gate.gate(&call("notes.md")), GateAnswer::Pending);
        // An answer that allows a modified call does not approve the original one.
        let modified = ApprovalAnswer {
            approved: true,
            reason: None,
            input: Some("old.md".into()),
            fingerprint: fingerprint("delete_file", "old.md"),
        };
        let mut gate = RecordedAnswers::new(approval(Some(modified)));
        assert_eq!(gate.gate(&call("notes.md")), GateAnswer::Pending);
    }

    #[test]
    fn modified_inputs_are_checked_for_the_tool() {
        assert!(validate_input("delete_file", "a.md").is_ok());
        assert!(matches!(validate_input("delete_file", "a\nb"), Err(ApprovalError::BadInput { .. })));
        assert!(matches!(validate_input("write_file", "a.md"), Err(ApprovalError::BadInput { .. })));
        assert!(matches!(validate_input("read_file", "a\0"), Err(ApprovalError::BadInput { .. })));
        assert!(matches!(validate_input("read_file", " "), Err(ApprovalError::BadInput { .. })));
    }

    #[test]
    fn a_log_inside_the_work_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("decision-log-in-workdir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        assert!(refuse_log_in_workdir(&dir.join("ws/run.jsonl"), &dir.join("ws")).is_err());
        assert!(refuse_log_in_workdir(&dir.join("ws/sub/run.jsonl"), &dir.join("ws")).is_err());
        assert!(refuse_log_in_workdir(&dir.join("run.jsonl"), &dir.join("ws")).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
