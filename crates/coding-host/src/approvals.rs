//! Approvals as data: a gated call nobody can answer now becomes an `approval:pending` event
//! in the session log, and the run halts `awaiting_approval`. Anyone with the log answers it
//! later (`approval:answer`: approve, deny with a reason, or approve a modified input), and a
//! resumed run uses the answer once (`approval:used`).
//!
//! An approval is bound to the call it was made for by a fingerprint: the SHA-256 of
//! `JSON.stringify({"tool": tool, "input": input})`. A resumed run puts the call (or the
//! approved modified input) through the risk gate again; if the gate again asks a person, the
//! approval answers only a call with the same fingerprint, and only once. [`verify_approvals`]
//! checks a finished log: every approved call that ran had its approval, none was used twice.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};
use thiserror::Error;

use super::human::{GateAnswer, GatedCall, Human, fingerprint};

/// The event a pending approval is recorded as.
pub const PENDING_EVENT: &str = "approval:pending";
/// The event an answer is recorded as.
pub const ANSWER_EVENT: &str = "approval:answer";
/// The event a resumed run records when it uses an answer.
pub const USED_EVENT: &str = "approval:used";
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
        let fits = self.approval.as_ref().and_then(|a| a.answer.as_ref().map(|answer| (a, answer))).is_some_and(
            |(approval, answer)| answer.fingerprint == call.fingerprint() || approval.fingerprint == call.fingerprint(),
        );
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
    /// The session log could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The log's path.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// No `approval:pending` event has this id.
    #[error("no approval `{0}` in the log")]
    Unknown(String),
    /// The approval has an answer already.
    #[error("approval `{0}` was already answered; an approval is answered once")]
    AlreadyAnswered(String),
    /// A resumed run has used the approval already.
    #[error("approval `{0}` was already used by a resumed run")]
    AlreadyUsed(String),
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

/// Every approval in a session log, in order, with its answer and whether it was used.
pub fn read_approvals(path: &Path) -> Result<Vec<Approval>, ApprovalError> {
    Ok(scan(path)?.approvals)
}

struct Scan {
    approvals: Vec<Approval>,
    /// `(id, fingerprint, step)` of every `approval:used`, in order.
    used: Vec<(String, String, u64)>,
    /// `(step, fingerprint)` of every `tool:call`.
    calls: Vec<(u64, String)>,
}

fn scan(path: &Path) -> Result<Scan, ApprovalError> {
    let read = |source| ApprovalError::Read { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut out = Scan { approvals: Vec::new(), used: Vec::new(), calls: Vec::new() };
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.map_err(read)?;
        // Only the lines that can matter are parsed.
        if memchr::memmem::find(&line, b"\"approval:").is_none()
            && memchr::memmem::find(&line, b"\"tool:call\"").is_none()
        {
            continue;
        }
        let Ok(value) = serde_json::from_slice::<Value>(&line) else { continue };
        let run = value.get("run").and_then(Value::as_u64).unwrap_or(0);
        let Some(e) = value.get("e") else { continue };
        let text = |key: &str| e.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let step = e.get("step").and_then(Value::as_u64).unwrap_or(0);
        match e.get("type").and_then(Value::as_str) {
            Some(PENDING_EVENT) => out.approvals.push(Approval {
                id: text("id"),
                run,
                step,
                tool: text("tool"),
                input: text("input"),
                fingerprint: text("fingerprint"),
                request_digest: text("requestDigest"),
                rule: text("rule"),
                reason: text("reason"),
                answer: None,
                used: false,
            }),
            Some(ANSWER_EVENT) => {
                let id = text("id");
                if let Some(approval) = out.approvals.iter_mut().find(|a| a.id == id && a.answer.is_none()) {
                    approval.answer = Some(ApprovalAnswer {
                        approved: e.get("approved").and_then(Value::as_bool) == Some(true),
                        reason: e.get("reason").and_then(Value::as_str).map(str::to_owned),
                        input: e.get("input").and_then(Value::as_str).map(str::to_owned),
                        fingerprint: text("allowsFingerprint"),
                    });
                }
            }
            Some(USED_EVENT) => {
                let id = text("id");
                if let Some(approval) = out.approvals.iter_mut().find(|a| a.id == id) {
                    approval.used = true;
                }
                out.used.push((id, text("fingerprint"), step));
            }
            Some("tool:call") => out.calls.push((step, fingerprint(&text("tool"), &text("input")))),
            _ => {}
        }
    }
    Ok(out)
}

/// The `approval:answer` event for approval `id`: approve (optionally with a modified input,
/// validated for the tool) or deny with a reason. Refused for an unknown id, one already
/// answered or used, and a recorded call that does not match its fingerprint.
pub fn answer_event(
    approvals: &[Approval],
    id: &str,
    deny: Option<&str>,
    input: Option<&str>,
) -> Result<Map<String, Value>, ApprovalError> {
    let approval = approvals.iter().find(|a| a.id == id).ok_or_else(|| ApprovalError::Unknown(id.to_string()))?;
    if approval.used {
        return Err(ApprovalError::AlreadyUsed(id.to_string()));
    }
    if approval.answer.is_some() {
        return Err(ApprovalError::AlreadyAnswered(id.to_string()));
    }
    if fingerprint(&approval.tool, &approval.input) != approval.fingerprint {
        return Err(ApprovalError::Tampered { id: id.to_string() });
    }
    let mut event = Map::new();
    event.insert("id".into(), json!(id));
    event.insert("fingerprint".into(), json!(approval.fingerprint));
    match (deny, input) {
        (Some(_), Some(_)) => return Err(ApprovalError::InputOnDeny),
        (Some(reason), None) => {
            event.insert("approved".into(), json!(false));
            event.insert("reason".into(), json!(reason));
            event.insert("allowsFingerprint".into(), json!(approval.fingerprint));
        }
        (None, Some(modified)) => {
            validate_input(&approval.tool, modified)?;
            event.insert("approved".into(), json!(true));
            event.insert("input".into(), json!(modified));
            event.insert("allowsFingerprint".into(), json!(fingerprint(&approval.tool, modified)));
        }
        (None, None) => {
            event.insert("approved".into(), json!(true));
            event.insert("allowsFingerprint".into(), json!(approval.fingerprint));
        }
    }
    event.insert("at".into(), json!(decision_runtime::log::now_ms()));
    Ok(event)
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

/// The pending approval a resume continues from: the last one not used yet, which must be
/// answered and match its fingerprint. `Ok(None)`: the log has no approval to continue.
pub fn approval_to_resume(path: &Path) -> Result<Option<Approval>, ApprovalError> {
    let approvals = read_approvals(path)?;
    let Some(approval) = approvals.into_iter().rev().find(|a| !a.used) else { return Ok(None) };
    if fingerprint(&approval.tool, &approval.input) != approval.fingerprint {
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

/// What [`verify_approvals`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ApprovalAudit {
    /// `approval:pending` events in the log.
    pub approvals: usize,
    /// Of those, how many have an answer.
    pub answered: usize,
    /// `approval:used` events in the log (a reuse counts twice).
    pub used: usize,
    /// Each broken rule, in words, in log order; empty when the log keeps them all.
    pub problems: Vec<String>,
}

/// Replay's approval checks: every use names an answered approval whose allowed fingerprint is
/// the call's, no approval is used twice, an approved use is followed by exactly that call at
/// its step, and a denied one by no call at its step.
pub fn verify_approvals(path: &Path) -> Result<ApprovalAudit, ApprovalError> {
    let scan = scan(path)?;
    let mut audit = ApprovalAudit {
        approvals: scan.approvals.len(),
        answered: scan.approvals.iter().filter(|a| a.answer.is_some()).count(),
        used: scan.used.len(),
        problems: Vec::new(),
    };
    for (index, (id, used_fingerprint, step)) in scan.used.iter().enumerate() {
        if scan.used.iter().take(index).any(|(earlier, _, _)| earlier == id) {
            audit.problems.push(format!("approval `{id}` was used twice"));
            continue;
        }
        let Some(approval) = scan.approvals.iter().find(|a| a.id == *id) else {
            audit.problems.push(format!("approval `{id}` was used but never requested"));
            continue;
        };
        let Some(answer) = &approval.answer else {
            audit.problems.push(format!("approval `{id}` was used but never answered"));
            continue;
        };
        if answer.fingerprint != *used_fingerprint {
            audit.problems.push(format!("approval `{id}` was used for a call it was not given for"));
            continue;
        }
        let ran = scan.calls.iter().any(|(s, f)| s == step && f == used_fingerprint);
        match answer.approved {
            true if !ran => audit.problems.push(format!("approval `{id}`: the approved call never ran")),
            false if ran => audit.problems.push(format!("approval `{id}` was denied but the call ran")),
            _ => {}
        }
    }
    Ok(audit)
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
    fn fingerprints_bind_tool_and_input() {
        assert_eq!(fingerprint("read_file", "a").len(), 64);
        assert_ne!(fingerprint("read_file", "a"), fingerprint("read_file", "b"));
        assert_ne!(fingerprint("read_file", "a"), fingerprint("delete_file", "a"));
    }

    #[test]
    fn a_recorded_answer_is_used_once_and_only_for_its_call() {
        let answer =
            ApprovalAnswer { approved: true, reason: None, input: None, fingerprint: approval(None).fingerprint };
        let mut gate = RecordedAnswers::new(approval(Some(answer.clone())));
        assert_eq!(gate.gate(&call("other.md")), GateAnswer::Pending);
        let mut gate = RecordedAnswers::new(approval(Some(answer)));
        assert!(matches!(gate.gate(&call("notes.md")), GateAnswer::Approve { approval: Some(_) }));
        assert_eq!(gate.gate(&call("notes.md")), GateAnswer::Pending);
    }

    #[test]
    fn answers_are_refused_for_unknown_answered_or_tampered_approvals_and_bad_inputs() {
        let pending = approval(None);
        let id = pending.id.clone();
        assert!(answer_event(std::slice::from_ref(&pending), &id, None, None).is_ok());
        assert!(matches!(answer_event(&[], &id, None, None), Err(ApprovalError::Unknown(_))));
        let answered =
            approval(Some(ApprovalAnswer { approved: false, reason: None, input: None, fingerprint: String::new() }));
        assert!(matches!(answer_event(&[answered], &id, None, None), Err(ApprovalError::AlreadyAnswered(_))));
        let mut tampered = approval(None);
        tampered.input = "secrets.md".into();
        assert!(matches!(answer_event(&[tampered], &id, None, None), Err(ApprovalError::Tampered { .. })));
        let bad = answer_event(std::slice::from_ref(&pending), &id, None, Some("a\nb"));
        assert!(matches!(bad, Err(ApprovalError::BadInput { .. })), "{bad:?}");
        let modified = answer_event(std::slice::from_ref(&pending), &id, None, Some("old.md")).unwrap();
        assert_eq!(modified["allowsFingerprint"], json!(fingerprint("delete_file", "old.md")));
        assert!(matches!(answer_event(&[pending], &id, Some("no"), Some("x")), Err(ApprovalError::InputOnDeny)));
    }

    #[test]
    fn replay_checks_find_a_reused_approval_and_a_denied_call_that_ran() {
        let print = fingerprint("delete_file", "notes.md");
        let line = |e: Value| json!({"kind": "event", "run": 0, "e": e}).to_string();
        let pending = line(json!({"type": PENDING_EVENT, "step": 2, "id": "a", "tool": "delete_file",
                                  "input": "notes.md", "fingerprint": print}));
        let answer = |approved: bool| {
            line(json!({"type": ANSWER_EVENT, "id": "a", "approved": approved, "allowsFingerprint": print}))
        };
        let used = line(json!({"type": USED_EVENT, "step": 2, "id": "a", "fingerprint": print}));
        let call = line(json!({"type": "tool:call", "step": 2, "tool": "delete_file", "input": "notes.md"}));
        let dir = std::env::temp_dir().join(format!("decision-approvals-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let audit = |lines: &[&String]| {
            let path = dir.join("log.jsonl");
            let text: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
            std::fs::write(&path, text.join("\n")).unwrap();
            verify_approvals(&path).unwrap().problems
        };
        assert!(audit(&[&pending, &answer(true), &used, &call]).is_empty());
        assert_eq!(audit(&[&pending, &answer(true), &used, &call, &used, &call]), ["approval `a` was used twice"]);
        assert_eq!(audit(&[&pending, &answer(false), &used, &call]), ["approval `a` was denied but the call ran"]);
        assert_eq!(audit(&[&pending, &used, &call]), ["approval `a` was used but never answered"]);
        assert_eq!(audit(&[&pending, &answer(true), &used]), ["approval `a`: the approved call never ran"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
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
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RecordAnswerError {
    /// The answer is not one the approval accepts.
    #[error(transparent)]
    Approval(#[from] ApprovalError),
    /// The session log could not be opened or written.
    #[error(transparent)]
    Log(#[from] decision_runtime::log::LogError),
}

/// Records a person's answer to approval `id` in the session log at `path` (approve; deny with
/// a reason; approve with a modified `input`, validated again), synced to disk; returns what
/// was recorded (`approved`, `denied`, `approved with a modified input`). A resumed run then
/// continues from it.
pub fn record_answer(
    path: &Path,
    id: &str,
    deny: Option<&str>,
    input: Option<&str>,
) -> Result<&'static str, RecordAnswerError> {
    let approvals = read_approvals(path)?;
    let event = answer_event(&approvals, id, deny, input)?;
    let run = approvals.iter().find(|a| a.id == id).map_or(0, |a| a.run);
    let mut log = decision_runtime::log::SessionLog::open(path, decision_runtime::log::FsyncPolicy::EveryLine)?;
    log.set_run(run);
    log.append_event(ANSWER_EVENT, &event)?;
    log.commit()?;
    Ok(match (deny.is_some(), input.is_some()) {
        (true, _) => "denied",
        (false, true) => "approved with a modified input",
        (false, false) => "approved",
    })
}
