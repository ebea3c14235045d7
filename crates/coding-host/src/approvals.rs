//! Approvals as data, for the coding host: a gated call nobody can answer now becomes an
//! `approval:pending` event in the session log, and the run halts `awaiting_approval`. A
//! person answers it later (`approval:answer`: approve, deny with a reason, or approve a
//! modified input), and a resumed run uses the answer once (`approval:used`).
//!
//! The session-log half — the lines, the answer's binding (a MAC under the log key over the
//! approval id, the call's fingerprint, its request digest, the session id and the hash of
//! the pending line), its verification and single use — is the runtime's
//! ([`decision_runtime::log::approval`]), and so are the approvals as a person reads and
//! answers them ([`Approval`], [`read_approvals`], [`record_answer`], the check of a modified
//! input); this module keeps what is the coding host's own: the ids, the recorded answer as
//! the human gate of a resumed run, the approval a resume continues from, and where the log
//! may not be.

use std::path::Path;

use decision_runtime::lines::DEFAULT_MAX_LINE;
use decision_runtime::log::approval::{self as log_approval, Ledger, approval_of, read_ledger};
use decision_runtime::log::{KeyError, SealKey};
use thiserror::Error;

use super::human::{GateAnswer, GatedCall, Human, fingerprint};

pub use decision_runtime::log::approval::{
    ANSWER_EVENT, Approval, ApprovalAnswer, PENDING_EVENT, USED_EVENT, read_approvals, record_answer,
    record_answer_with,
};
/// The halt of a run waiting for an answer (resumable).
pub const AWAITING_APPROVAL: &str = "awaiting_approval";

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
    fn a_log_inside_the_work_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("decision-log-in-workdir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        assert!(refuse_log_in_workdir(&dir.join("ws/run.jsonl"), &dir.join("ws")).is_err());
        assert!(refuse_log_in_workdir(&dir.join("ws/sub/run.jsonl"), &dir.join("ws")).is_err());
        assert!(refuse_log_in_workdir(&dir.join("run.jsonl"), &dir.join("ws")).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
