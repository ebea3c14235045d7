//! The session-log half of approvals, for any host: a call a person must authorise becomes an
//! `approval:pending` line, a person's answer an `approval:answer` line bound to it, and the
//! run that acts on the answer records `approval:used`. The host keeps what is its own (which
//! calls are gated, how an input is validated, how a run continues).
//!
//! # The binding
//!
//! An answer carries `binding`: a MAC over the session id (the log header's `id`), the
//! approval id, the pending call's fingerprint, its request digest, the SHA-256 of the pending
//! line, and the answer itself (approved or not, the fingerprint it allows, its reason, its
//! modified input). On a keyed log (`keyed: true`) it is HMAC-SHA256 under the log key
//! ([`super::SEAL_KEY_VARIABLE`]): only a key holder can answer, an answer copied from
//! another session or another call does not verify, and nothing in the answer can be changed.
//! On an unkeyed log it is a plain SHA-256 of the same message: it still ties the answer to
//! its call, its session and its pending line, but anyone who can write the log can compute
//! it — without a secret nothing can be authenticated (see `docs/security.md`).
//!
//! # Single use
//!
//! An approval is answered once (the first answer counts, [`append_answer`] refuses a second)
//! and used once: [`Ledger::problems`] reports a second `approval:used` of one id.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use decision_protocol::digest::stringify;
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::envelope::{LineKind, hex32, parse_hex32, parse_line};
use super::replay::{ChainStatus, LogReport, ReplayOptions, replay_reader_with_lines};
use super::seal::{KeyError, LogHead, SealKey, framed};
use super::{FsyncPolicy, LogError, SEAL_KEY_VARIABLE, SessionLog, now_ms};
use crate::lines::{DEFAULT_MAX_LINE, Line, LineReader};

mod answering;

pub use answering::{
    Approval, ApprovalAnswer, MAX_INPUT_BYTES, approval_of, approvals_of, check_modified_input, pending_document,
    read_approvals, record_answer, record_answer_with, verdict_of, verdict_words,
};

/// The event a pending approval is recorded as.
pub const PENDING_EVENT: &str = "approval:pending";
/// The event an answer is recorded as.
pub const ANSWER_EVENT: &str = "approval:answer";
/// The event a run records when it acts on an answer.
pub const USED_EVENT: &str = "approval:used";
/// What an answer's binding is taken over, before its parts.
const BINDING_CONTEXT: &str = "decision-approval-answer/v1";

/// SHA-256 (hex) of `JSON.stringify({"tool": tool, "input": input})`: what binds an approval
/// to one call.
pub fn call_fingerprint(tool: &str, input: &Value) -> String {
    let text = stringify(&json!({"tool": tool, "input": input}));
    let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
    hex32(&hash)
}

/// A pending approval as its line records it, with its answer and whether it was used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pending {
    /// The approval id (what `decision approve` names).
    pub id: String,
    /// The run that asked.
    pub run: u64,
    /// Its 1-based line number.
    pub line: u64,
    /// The SHA-256 of its line.
    #[serde(skip)]
    pub line_sha256: [u8; 32],
    /// The gated tool.
    pub tool: String,
    /// The tool input as proposed.
    pub input: Value,
    /// [`call_fingerprint`] of the call, as recorded.
    pub fingerprint: String,
    /// The request digest of the decision that asked for a person.
    pub request_digest: String,
    /// The whole pending event, for the host's own fields.
    #[serde(skip)]
    pub event: Map<String, Value>,
    /// The first answer recorded for it.
    pub answer: Option<Answer>,
    /// Whether an `approval:used` names it.
    pub used: bool,
}

impl Pending {
    /// Whether the recorded call still matches its fingerprint.
    pub fn call_matches(&self) -> bool {
        call_fingerprint(&self.tool, &self.input) == self.fingerprint
    }

    /// The input a run acts on: the answer's modified one when it changed it.
    pub fn effective_input(&self) -> &Value {
        self.answer.as_ref().and_then(|a| a.input.as_ref()).unwrap_or(&self.input)
    }
}

/// A person's answer, as its line records it, and what its binding says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// Its 1-based line number.
    pub line: u64,
    /// Whether the call may run.
    pub approved: bool,
    /// Why it was denied, when said.
    pub reason: Option<String>,
    /// The approved modified input.
    pub input: Option<Value>,
    /// The fingerprint of the call it allows.
    pub allows_fingerprint: String,
    /// Whether the binding says it is keyed.
    pub keyed: bool,
    /// The binding's check.
    pub binding: BindingCheck,
}

/// What an answer's binding says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "status", content = "why")]
pub enum BindingCheck {
    /// Keyed, and the MAC verifies under the key given.
    Verified,
    /// Unkeyed, and the digest matches (ties the answer to its call; authenticates nothing).
    Unkeyed,
    /// Keyed, and no key was given to check it.
    Unchecked,
    /// It does not hold: why.
    Failed(String),
}

/// One `approval:used` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Use {
    /// Its 1-based line number.
    pub line: u64,
    /// The approval it names.
    pub id: String,
    /// The fingerprint of the call it was used for.
    pub fingerprint: String,
    /// The step, when recorded.
    pub step: Option<u64>,
}

/// Every approval of a log, read in one streaming pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Ledger {
    /// The header's session id.
    pub session: Option<String>,
    /// The pending approvals, in order, each with its answer.
    pub approvals: Vec<Pending>,
    /// Every `approval:used`, in order.
    pub uses: Vec<Use>,
    /// Answer lines that name no earlier pending approval, or a second answer to one.
    pub stray_answers: Vec<u64>,
    /// The `tool:call` events after the first pending approval, in order: the calls a use of
    /// an approval can be followed by ([`Ledger::audit`]).
    pub calls: Vec<RanCall>,
}

/// A call the log says ran (a `tool:call` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RanCall {
    /// Its 1-based line number.
    pub line: u64,
    /// The step it ran at (0 when not recorded).
    pub step: u64,
    /// [`call_fingerprint`] of its tool and input.
    pub fingerprint: String,
}

/// What [`Ledger::audit`] found: replay's report on a log's approvals.
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

/// An event line handed to the caller of [`read_ledger`].
#[derive(Debug)]
pub struct EventLine<'a> {
    /// Its 1-based line number.
    pub line: u64,
    /// The run it belongs to.
    pub run: u64,
    /// The event (`e`).
    pub event: &'a Map<String, Value>,
}

/// Why approvals could not be read, answered or verified.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// The log could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The log.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The log could not be opened (locked, say) or written.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The log does not verify.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// No `approval:pending` event has this id.
    #[error("no approval `{0}` in the log")]
    Unknown(String),
    /// The approval has an answer already.
    #[error("approval `{0}` was already answered; an approval is answered once")]
    AlreadyAnswered(String),
    /// A run has used the approval already.
    #[error("approval `{0}` was already used by a resumed run")]
    AlreadyUsed(String),
    /// The recorded call, or its answer, does not match its fingerprint.
    #[error("approval `{id}`: the recorded call does not match its fingerprint (the log was changed)")]
    Tampered {
        /// The approval.
        id: String,
    },
    /// The log key in the environment is not usable (empty, too short, not UTF-8).
    #[error(transparent)]
    Key(#[from] KeyError),
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
    #[error("a modified input is only for approving; a denial runs nothing")]
    InputOnDeny,
}

/// Why a log does not verify, at its first failing line when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}: {}{reason}", path.display(), line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct Refusal {
    /// The log.
    pub path: PathBuf,
    /// The first line that fails, when one does.
    pub line: Option<u64>,
    /// What does not hold.
    pub reason: String,
}

/// How [`verify_log`] checks a log before anything acts on it.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// The log key; a keyed log is refused without it.
    pub key: Option<SealKey>,
    /// A head kept earlier: line `seq` must have its hash (a prefix check).
    pub head: Option<LogHead>,
    /// A key is required even when the log looks unkeyed.
    pub require_key: bool,
    /// Lines longer than this are refused without being held (default 16 MiB).
    pub max_line: Option<usize>,
}

/// The log verified, and its approvals.
#[derive(Debug, Clone)]
pub struct Verified {
    /// What replay found.
    pub report: LogReport,
    /// The approvals, every answer's binding checked.
    pub ledger: Ledger,
    /// Whether the log is keyed and was verified under the key (its text is authenticated).
    pub authenticated: bool,
}

/// Verifies the whole log before anything acts on it: the header, the chain (every byte,
/// blank lines included), every seal, the keyed seal's MAC when the log is keyed (refused
/// without the key), the head when one is given, every record, every answer's binding and
/// single use. Refuses at the first line that fails. A torn last line (a crash mid-write) is
/// allowed: the writer removes it. On a keyed log every line must be covered by a keyed seal.
pub fn verify_log(path: &Path, options: &VerifyOptions) -> Result<Verified, Refusal> {
    let refuse = |line: Option<u64>, reason: String| Refusal { path: path.to_path_buf(), line, reason };
    let max_line = options.max_line.unwrap_or(DEFAULT_MAX_LINE);
    let replay =
        ReplayOptions { max_line, seal_key: options.key.clone(), head: options.head, ..ReplayOptions::default() };
    let (report, ledger) = verify_lines_and_ledger(path, &replay)?;
    match report.chain_status() {
        ChainStatus::Intact => {}
        status => {
            return Err(refuse(
                None,
                format!("the chain is {}: only a log written with its hash chain can be acted on", status.as_str()),
            ));
        }
    }
    let keyed = report.keyed_seals > 0;
    if options.key.is_none() && (keyed || options.require_key) {
        let why = if keyed { "the log is keyed" } else { "a key is required" };
        return Err(refuse(None, format!("{why} and ${SEAL_KEY_VARIABLE} is not set: nothing is checked or acted on")));
    }
    if let Some(problem) = options.head.and_then(|head| super::replay::head_problem(&report, head)) {
        return Err(refuse(report.head_found.map(|f| f.line), problem));
    }
    let authenticated = options.key.is_some();
    if authenticated {
        // Every line must be under a keyed seal: a line after the last one is not authenticated.
        let sealed_to = report.last_seal.map_or(0, |s| s.line);
        let last = report.head.map(|h| h.seq + 1).unwrap_or(0);
        if sealed_to < last {
            return Err(refuse(
                Some(sealed_to + 1),
                "a line after the last keyed seal: it is not authenticated (a run that stopped without its seal cannot be resumed on a keyed log)".into(),
            ));
        }
    }
    if let Some(problem) = ledger.first_problem() {
        return Err(refuse(Some(problem.0), problem.1));
    }
    Ok(Verified { report, ledger, authenticated })
}

/// Replays the log at `path` under `options` and refuses it at its first failing line: a
/// break in the chain, a seal that does not hold, a line that is not one of a log (a torn last
/// line excepted: a crash mid-write leaves one, and the writer removes it), a decision record
/// that does not verify. The first step of [`verify_log`], and of any check of a log before
/// something acts on it; what the caller requires of the chain and the seals comes after.
pub fn verify_lines(path: &Path, options: &ReplayOptions) -> Result<LogReport, Refusal> {
    verify_lines_and_ledger(path, options).map(|(report, _)| report)
}

/// [`verify_lines`] and the log's approvals ([`read_ledger`]) from one read of the log.
fn verify_lines_and_ledger(path: &Path, options: &ReplayOptions) -> Result<(LogReport, Ledger), Refusal> {
    let mut first_mismatch = None;
    let read = File::open(path).and_then(|file| {
        replay_with_ledger(file, options, &mut |result| {
            if result.status == decision_protocol::record::VerifyOutcome::Mismatch && first_mismatch.is_none() {
                first_mismatch = Some(result.line);
            }
        })
    });
    let (report, ledger) =
        read.map_err(|e| Refusal { path: path.to_path_buf(), line: None, reason: format!("cannot read it: {e}") })?;
    Ok((refuse_failures(path, report, first_mismatch)?, ledger))
}

/// The first failing line of a replayed log, if any: a chain break, a seal that does not hold,
/// a line that is not the log's (a torn last line excepted), a record that does not verify.
fn refuse_failures(path: &Path, report: LogReport, first_mismatch: Option<u64>) -> Result<LogReport, Refusal> {
    let refuse = |line: Option<u64>, reason: String| Refusal { path: path.to_path_buf(), line, reason };
    let mut failures: Vec<(u64, String)> = Vec::new();
    if let Some(b) = report.breaks.first() {
        failures.push((b.line, b.reason.clone()));
    }
    if let Some(s) = report.seal_problems.first() {
        failures.push((s.line, s.reason.clone()));
    }
    if let Some(s) = report.skipped.iter().find(|s| Some(s.line) != report.torn_tail) {
        failures.push((s.line, format!("not a line of this log: {}", s.reason)));
    }
    if let Some(line) = first_mismatch {
        failures.push((line, "the decision record does not verify".into()));
    }
    match failures.into_iter().min_by_key(|(line, _)| *line) {
        Some((line, reason)) => Err(refuse(Some(line), reason)),
        None => Ok(report),
    }
}

impl Ledger {
    /// The approval with `id` (the first pending line naming it).
    pub fn get(&self, id: &str) -> Option<&Pending> {
        self.approvals.iter().find(|a| a.id == id)
    }

    /// Every broken rule, with its line, in log order: a call that does not match its
    /// fingerprint, an answer whose binding or allowed fingerprint does not hold, an answer to
    /// nothing, and a use of an approval never answered, not given for that call, or used twice.
    pub fn problems(&self) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        for a in &self.approvals {
            if !a.call_matches() {
                out.push((a.line, format!("approval `{}`: the recorded call does not match its fingerprint", a.id)));
            }
            let Some(answer) = &a.answer else { continue };
            if let BindingCheck::Failed(why) = &answer.binding {
                out.push((answer.line, format!("approval `{}`: the answer's binding does not hold: {why}", a.id)));
            }
            let allowed = match (&answer.input, answer.approved) {
                (Some(_), false) => None,
                (input, _) => Some(call_fingerprint(&a.tool, input.as_ref().unwrap_or(&a.input))),
            };
            if allowed.as_deref() != Some(answer.allows_fingerprint.as_str()) {
                out.push((answer.line, format!("approval `{}`: the answer does not allow the call it names", a.id)));
            }
        }
        for line in &self.stray_answers {
            out.push((*line, "an answer to no pending approval, or a second answer to one".into()));
        }
        for (index, u) in self.uses.iter().enumerate() {
            let twice = self.uses.iter().take(index).any(|earlier| earlier.id == u.id);
            let problem = match self.get(&u.id) {
                _ if twice => Some(format!("approval `{}` was used twice", u.id)),
                None => Some(format!("approval `{}` was used but never requested", u.id)),
                Some(Pending { answer: None, .. }) => Some(format!("approval `{}` was used but never answered", u.id)),
                Some(Pending { answer: Some(answer), .. }) if answer.allows_fingerprint != u.fingerprint => {
                    Some(format!("approval `{}` was used for a call it was not given for", u.id))
                }
                Some(_) => None,
            };
            if let Some(problem) = problem {
                out.push((u.line, problem));
            }
        }
        out.sort_by_key(|(line, _)| *line);
        out
    }

    /// Replay's approval checks: every answer's binding holds, every use names an answered
    /// approval whose allowed fingerprint is the call's, no approval is used twice, an
    /// approved use is followed by exactly that call at its step, and a denied one by no call
    /// at its step.
    pub fn audit(&self) -> ApprovalAudit {
        let mut problems = self.problems();
        for (index, used) in self.uses.iter().enumerate() {
            let first_use = !self.uses.iter().take(index).any(|earlier| earlier.id == used.id);
            let Some(answer) = self.get(&used.id).and_then(|a| a.answer.as_ref()) else { continue };
            if !first_use || answer.allows_fingerprint != used.fingerprint {
                continue;
            }
            let step = used.step.unwrap_or(0);
            let ran = self.calls.iter().any(|call| call.step == step && call.fingerprint == used.fingerprint);
            match answer.approved {
                true if !ran => {
                    problems.push((used.line, format!("approval `{}`: the approved call never ran", used.id)))
                }
                false if ran => {
                    problems.push((used.line, format!("approval `{}` was denied but the call ran", used.id)))
                }
                _ => {}
            }
        }
        problems.sort_by_key(|(line, _)| *line);
        ApprovalAudit {
            approvals: self.approvals.len(),
            answered: self.approvals.iter().filter(|a| a.answer.is_some()).count(),
            used: self.uses.len(),
            problems: problems.into_iter().map(|(_, problem)| problem).collect(),
        }
    }

    fn first_problem(&self) -> Option<(u64, String)> {
        self.problems().into_iter().next()
    }
}

/// The binding of an answer: its message parts.
fn binding_parts(
    session: &str,
    pending: &Pending,
    approved: bool,
    allows: &str,
    reason: Option<&str>,
    input: Option<&Value>,
) -> Vec<Vec<u8>> {
    let optional = |text: Option<String>| text.map_or_else(Vec::new, |t| format!("={t}").into_bytes());
    vec![
        session.as_bytes().to_vec(),
        pending.id.as_bytes().to_vec(),
        pending.fingerprint.as_bytes().to_vec(),
        pending.request_digest.as_bytes().to_vec(),
        hex32(&pending.line_sha256).into_bytes(),
        if approved { b"approved".to_vec() } else { b"denied".to_vec() },
        allows.as_bytes().to_vec(),
        optional(reason.map(str::to_owned)),
        optional(input.map(stringify)),
    ]
}

fn binding(key: Option<&SealKey>, parts: &[Vec<u8>]) -> [u8; 32] {
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    match key {
        Some(key) => key.mac_parts(BINDING_CONTEXT, &parts),
        None => Sha256::digest(framed(BINDING_CONTEXT, &parts)).into(),
    }
}

/// Reads every approval of the log at `path` in one streaming pass (no line longer than
/// `max_line` is held: such a line is skipped), checking each answer's binding under `key`.
/// Events whose type is in `also` are handed to `on_event`.
pub fn read_ledger(
    path: &Path,
    key: Option<&SealKey>,
    max_line: usize,
    also: &[&str],
    on_event: &mut dyn FnMut(EventLine<'_>),
) -> Result<Ledger, ApprovalError> {
    let read = |source| ApprovalError::Read { path: path.to_path_buf(), source };
    let file = File::open(path).map_err(read)?;
    // The line reader reads in large pieces itself: no buffer of its own in between.
    let mut lines = LineReader::new(file, max_line);
    let mut reader = LedgerReader::new(key.cloned());
    let needles: Vec<String> = also.iter().map(|t| format!("\"{t}\"")).collect();
    while let Some(line) = lines.next_line().map_err(read)? {
        let Line::Text { number, bytes, .. } = line else { continue };
        reader.read_line(number, bytes, &needles, also, on_event);
    }
    Ok(reader.finish())
}

/// Replays the log read from `reader` (as [`super::replay::replay_reader`] does, on
/// `options.threads` threads) and reads its approvals from the same lines: one read of the
/// log for both. Answers' bindings are checked under `options.seal_key`.
pub fn replay_with_ledger<R: io::Read + Send>(
    reader: R,
    options: &ReplayOptions,
    on_result: &mut dyn FnMut(&super::replay::RecordResult),
) -> io::Result<(LogReport, Ledger)> {
    let mut ledger = LedgerReader::new(options.seal_key.clone());
    let report = replay_reader_with_lines(
        reader,
        options,
        &mut |line| {
            if let Some(bytes) = line.bytes {
                ledger.line(line.number, bytes);
            }
        },
        on_result,
    )?;
    Ok((report, ledger.finish()))
}

/// Builds a [`Ledger`] from a log's lines as they are read, so that a pass over the log made
/// for another reason (replay) reads its approvals too. Only lines that can matter are
/// parsed: approval events, and `tool:call` events once an approval was asked for (the calls
/// [`Ledger::audit`] matches uses against).
#[derive(Debug)]
pub struct LedgerReader {
    key: Option<SealKey>,
    ledger: Ledger,
    /// The searchers for the event types that can matter, built once (most lines are
    /// searched and dropped).
    approval: memchr::memmem::Finder<'static>,
    call: memchr::memmem::Finder<'static>,
}

/// The event of a call the coding host ran (what an approval's use must be followed by).
const CALL_EVENT: &str = "tool:call";

impl LedgerReader {
    /// A reader that checks answers' bindings under `key`.
    pub fn new(key: Option<SealKey>) -> Self {
        LedgerReader {
            key,
            ledger: Ledger::default(),
            approval: memchr::memmem::Finder::new(b"\"approval:"),
            call: memchr::memmem::Finder::new(b"\"tool:call\""),
        }
    }

    /// Reads line `number` (its bytes without the `\n`); lines must come in order, from 1.
    pub fn line(&mut self, number: u64, bytes: &[u8]) {
        self.read_line(number, bytes, &[], &[], &mut |_| {});
    }

    /// The approvals read so far.
    pub fn finish(self) -> Ledger {
        self.ledger
    }

    fn read_line(
        &mut self,
        number: u64,
        bytes: &[u8],
        needles: &[String],
        also: &[&str],
        on_event: &mut dyn FnMut(EventLine<'_>),
    ) {
        let ledger = &mut self.ledger;
        if number == 1
            && let Ok(parsed) = parse_line(bytes)
            && let LineKind::Header { id, .. } = parsed.kind
        {
            ledger.session = id;
            return;
        }
        // Only the lines that can matter are parsed.
        let wanted = self.approval.find(bytes).is_some()
            || (!ledger.approvals.is_empty() && self.call.find(bytes).is_some())
            || needles.iter().any(|n| memchr::memmem::find(bytes, n.as_bytes()).is_some());
        if !wanted {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(bytes) else { return };
        if value.get("kind").and_then(Value::as_str) != Some("event") {
            return;
        }
        let run = value.get("run").and_then(Value::as_u64).unwrap_or(0);
        let Some(Value::Object(e)) = value.get("e") else { return };
        let text = |key: &str| e.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let event_type = e.get("type").and_then(Value::as_str);
        match event_type {
            Some(PENDING_EVENT) => ledger.approvals.push(Pending {
                id: text("id"),
                run,
                line: number,
                line_sha256: Sha256::digest(bytes).into(),
                tool: text("tool"),
                input: e.get("input").cloned().unwrap_or(Value::Null),
                fingerprint: text("fingerprint"),
                request_digest: text("requestDigest"),
                event: e.clone(),
                answer: None,
                used: false,
            }),
            Some(ANSWER_EVENT) => {
                let session = ledger.session.clone().unwrap_or_default();
                let id = text("id");
                let Some(pending) = ledger.approvals.iter_mut().find(|a| a.id == id && a.answer.is_none()) else {
                    ledger.stray_answers.push(number);
                    return;
                };
                let approved = e.get("approved").and_then(Value::as_bool) == Some(true);
                let reason = e.get("reason").and_then(Value::as_str).map(str::to_owned);
                let input = e.get("input").cloned();
                let allows = text("allowsFingerprint");
                let keyed = e.get("keyed").and_then(Value::as_bool) == Some(true);
                let recorded = e.get("binding").and_then(Value::as_str).and_then(parse_hex32);
                let check = match recorded {
                    None => BindingCheck::Failed("the answer carries no binding".into()),
                    Some(recorded) => {
                        let parts =
                            binding_parts(&session, pending, approved, &allows, reason.as_deref(), input.as_ref());
                        check_binding(&parts, keyed, &recorded, self.key.as_ref())
                    }
                };
                pending.answer = Some(Answer {
                    line: number,
                    approved,
                    reason,
                    input,
                    allows_fingerprint: allows,
                    keyed,
                    binding: check,
                });
            }
            Some(USED_EVENT) => {
                let id = text("id");
                if let Some(pending) = ledger.approvals.iter_mut().find(|a| a.id == id) {
                    pending.used = true;
                }
                let step = e.get("step").and_then(Value::as_u64);
                ledger.uses.push(Use { line: number, id, fingerprint: text("fingerprint"), step });
            }
            Some(CALL_EVENT) if !ledger.approvals.is_empty() => {
                let input = e.get("input").cloned().unwrap_or(Value::Null);
                ledger.calls.push(RanCall {
                    line: number,
                    step: e.get("step").and_then(Value::as_u64).unwrap_or(0),
                    fingerprint: call_fingerprint(&text("tool"), &input),
                });
            }
            _ => {}
        }
        if let Some(other) = event_type
            && also.contains(&other)
        {
            on_event(EventLine { line: number, run, event: e });
        }
    }
}

/// A person's verdict on a pending approval.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run the call as proposed.
    Approve,
    /// Run this input instead (the host has validated it).
    ApproveModified(Value),
    /// Do not run it, for this reason.
    Deny(String),
}

/// Records `verdict` on approval `id` in the log at `path`: takes the log's lock, verifies the
/// whole log ([`verify_log`]: a keyed log is refused without `key`, and nothing is written),
/// refuses an unknown, answered, used or changed approval, then appends the bound answer and
/// a seal (keyed under `key`), synced. Returns the answer event written.
pub fn append_answer(
    path: &Path,
    id: &str,
    verdict: &Verdict,
    key: Option<&SealKey>,
) -> Result<Map<String, Value>, ApprovalError> {
    // The lock first: what is verified is what the answer is appended to.
    let mut log = SessionLog::open(path, FsyncPolicy::EveryLine)?;
    let verified = verify_log(path, &VerifyOptions { key: key.cloned(), ..VerifyOptions::default() })?;
    let ledger = verified.ledger;
    let pending = ledger.get(id).ok_or_else(|| ApprovalError::Unknown(id.to_owned()))?;
    if pending.used {
        return Err(ApprovalError::AlreadyUsed(id.to_owned()));
    }
    if pending.answer.is_some() {
        return Err(ApprovalError::AlreadyAnswered(id.to_owned()));
    }
    if !pending.call_matches() {
        return Err(ApprovalError::Tampered { id: id.to_owned() });
    }
    let session = ledger.session.clone().unwrap_or_default();
    let event = answer_event(&session, pending, verdict, key, now_ms());
    log.set_run(pending.run);
    log.set_seal_key(key.cloned());
    log.append_event(ANSWER_EVENT, &event)?;
    log.seal()?;
    Ok(event)
}

/// Builds the `approval:answer` event recording `verdict` on `pending`, bound to it (see the
/// module's docs): keyed under `key` (the log's key) when given, else a plain digest. The
/// event's fields, in order: `id`, `fingerprint`, `approved`, `reason` (a denial), `input`
/// (a modified input), `allowsFingerprint`, `at` (`at_ms`), `keyed`, `binding`.
pub fn answer_event(
    session: &str,
    pending: &Pending,
    verdict: &Verdict,
    key: Option<&SealKey>,
    at_ms: u64,
) -> Map<String, Value> {
    let (approved, reason, input) = match verdict {
        Verdict::Approve => (true, None, None),
        Verdict::ApproveModified(input) => (true, None, Some(input.clone())),
        Verdict::Deny(reason) => (false, Some(reason.clone()), None),
    };
    let allows = match &input {
        Some(input) => call_fingerprint(&pending.tool, input),
        None => pending.fingerprint.clone(),
    };
    let parts = binding_parts(session, pending, approved, &allows, reason.as_deref(), input.as_ref());
    let mut event = Map::new();
    event.insert("id".into(), json!(pending.id));
    event.insert("fingerprint".into(), json!(pending.fingerprint));
    event.insert("approved".into(), json!(approved));
    if let Some(reason) = &reason {
        event.insert("reason".into(), json!(reason));
    }
    if let Some(input) = &input {
        event.insert("input".into(), input.clone());
    }
    event.insert("allowsFingerprint".into(), json!(allows));
    event.insert("at".into(), json!(at_ms));
    event.insert("keyed".into(), json!(key.is_some()));
    event.insert("binding".into(), json!(hex32(&binding(key, &parts))));
    event
}

/// Checks an `approval:answer` event (one built by [`answer_event`] in another process, say)
/// against `pending` in session `session` under `key`, as replay will check it once it is in
/// the log: its binding, and that it names this approval and allows the call (or its modified
/// input). What a writer holding the log runs before appending an answer it did not build.
pub fn check_answer_event(
    session: &str,
    pending: &Pending,
    event: &Map<String, Value>,
    key: Option<&SealKey>,
) -> BindingCheck {
    let text = |name: &str| event.get(name).and_then(Value::as_str);
    if text("id") != Some(pending.id.as_str()) {
        return BindingCheck::Failed(format!("the answer names another approval than `{}`", pending.id));
    }
    let approved = event.get("approved").and_then(Value::as_bool) == Some(true);
    let reason = text("reason");
    let input = event.get("input");
    let allows = text("allowsFingerprint").unwrap_or_default();
    let expected = match (input, approved) {
        (Some(_), false) => None,
        (input, _) => Some(call_fingerprint(&pending.tool, input.unwrap_or(&pending.input))),
    };
    if expected.as_deref() != Some(allows) || text("fingerprint") != Some(pending.fingerprint.as_str()) {
        return BindingCheck::Failed("the answer does not allow the call it names".into());
    }
    let keyed = event.get("keyed").and_then(Value::as_bool) == Some(true);
    let Some(recorded) = text("binding").and_then(parse_hex32) else {
        return BindingCheck::Failed("the answer carries no binding".into());
    };
    let parts = binding_parts(session, pending, approved, allows, reason, input);
    check_binding(&parts, keyed, &recorded, key)
}

/// What a recorded binding over `parts` says, keyed or not, under `key`.
fn check_binding(parts: &[Vec<u8>], keyed: bool, recorded: &[u8; 32], key: Option<&SealKey>) -> BindingCheck {
    match (keyed, key) {
        (true, Some(key)) => {
            let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            match key.verify_parts(BINDING_CONTEXT, &parts, recorded) {
                true => BindingCheck::Verified,
                false => BindingCheck::Failed("its MAC does not verify under the key".into()),
            }
        }
        (true, None) => BindingCheck::Unchecked,
        (false, Some(_)) => BindingCheck::Failed("a key was given and the answer is not keyed".into()),
        (false, None) => match binding(None, parts) == *recorded {
            true => BindingCheck::Unkeyed,
            false => BindingCheck::Failed("its digest does not match this session, call and pending line".into()),
        },
    }
}

/// A call a host holds for a person, as [`append_pending`] records it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    /// The approval id (what a person answers).
    pub id: String,
    /// The gated tool.
    pub tool: String,
    /// The tool input as proposed.
    pub input: Value,
    /// The request digest of the decision that asked for a person.
    pub request_digest: String,
    /// The host's own fields (`step`, `rule`, `reason`, …), recorded after the common ones.
    pub extra: Map<String, Value>,
}

/// For the writer that holds the log (a gateway, a framework adapter): appends `call` as an
/// `approval:pending` line — `id`, `tool`, `input`, `fingerprint` ([`call_fingerprint`]),
/// `requestDigest`, then the host's fields — and returns it as [`read_ledger`] will read it,
/// ready for [`append_bound_answer`]. The line is chained at once; with group commit it
/// reaches the file at the next commit.
pub fn append_pending(log: &mut SessionLog, call: PendingCall) -> Result<Pending, LogError> {
    let fingerprint = call_fingerprint(&call.tool, &call.input);
    let mut event = Map::new();
    event.insert("id".into(), json!(call.id));
    event.insert("tool".into(), json!(call.tool));
    event.insert("input".into(), call.input.clone());
    event.insert("fingerprint".into(), json!(fingerprint));
    event.insert("requestDigest".into(), json!(call.request_digest));
    for (name, value) in call.extra {
        event.entry(name).or_insert(value);
    }
    log.append_event(PENDING_EVENT, &event)?;
    let head = log.head().ok_or(LogError::Empty(log.path().to_path_buf()))?;
    Ok(Pending {
        id: call.id,
        run: log.run(),
        line: head.seq + 1,
        line_sha256: head.sha256,
        tool: call.tool,
        input: call.input,
        fingerprint,
        request_digest: call.request_digest,
        event,
        answer: None,
        used: false,
    })
}

/// For the writer that holds the log: appends `verdict` on `pending` as an `approval:answer`
/// bound to it under the log's seal key ([`SessionLog::seal_key`]) and the log's session id,
/// and marks `pending` answered. Refuses a second answer, and a log whose session id is
/// unknown (its first line is not a header with an id). Returns the event written.
pub fn append_bound_answer(
    log: &mut SessionLog,
    pending: &mut Pending,
    verdict: &Verdict,
) -> Result<Map<String, Value>, ApprovalError> {
    if pending.answer.is_some() {
        return Err(ApprovalError::AlreadyAnswered(pending.id.clone()));
    }
    let session = log.session_id().ok_or_else(|| ApprovalError::Tampered { id: pending.id.clone() })?.to_owned();
    let event = answer_event(&session, pending, verdict, log.seal_key(), now_ms());
    append_checked_answer(log, pending, event.clone())?;
    Ok(event)
}

/// For the writer that holds the log: appends an answer event built elsewhere (by
/// [`answer_event`] in the process of the person who answered) after checking it with
/// [`check_answer_event`] under the log's key — an answer that does not hold is refused and
/// nothing is written — and marks `pending` answered.
pub fn append_checked_answer(
    log: &mut SessionLog,
    pending: &mut Pending,
    event: Map<String, Value>,
) -> Result<(), ApprovalError> {
    if pending.answer.is_some() {
        return Err(ApprovalError::AlreadyAnswered(pending.id.clone()));
    }
    let session = log.session_id().ok_or_else(|| ApprovalError::Tampered { id: pending.id.clone() })?.to_owned();
    let check = check_answer_event(&session, pending, &event, log.seal_key());
    if !matches!(check, BindingCheck::Verified | BindingCheck::Unkeyed) {
        return Err(ApprovalError::Tampered { id: pending.id.clone() });
    }
    let run = log.run();
    log.set_run(pending.run);
    let appended = log.append_event(ANSWER_EVENT, &event);
    log.set_run(run);
    appended?;
    let line = log.head().map_or(0, |h| h.seq + 1);
    pending.answer = Some(Answer {
        line,
        approved: event.get("approved").and_then(Value::as_bool) == Some(true),
        reason: event.get("reason").and_then(Value::as_str).map(str::to_owned),
        input: event.get("input").cloned(),
        allows_fingerprint: event.get("allowsFingerprint").and_then(Value::as_str).unwrap_or_default().to_owned(),
        keyed: event.get("keyed").and_then(Value::as_bool) == Some(true),
        binding: check,
    });
    Ok(())
}

/// For the writer that holds the log: records that the run acts on `pending`'s answer now
/// (`approval:used`: `id`, the `fingerprint` of the call it runs, then `step` when given).
/// Refuses an unanswered, denied or already used approval.
pub fn append_used(log: &mut SessionLog, pending: &mut Pending, step: Option<u64>) -> Result<(), ApprovalError> {
    match &pending.answer {
        _ if pending.used => Err(ApprovalError::AlreadyUsed(pending.id.clone())),
        Some(answer) if answer.approved => {
            let mut event = Map::new();
            event.insert("id".into(), json!(pending.id));
            event.insert("fingerprint".into(), json!(answer.allows_fingerprint));
            if let Some(step) = step {
                event.insert("step".into(), json!(step));
            }
            log.append_event(USED_EVENT, &event)?;
            pending.used = true;
            Ok(())
        }
        _ => Err(ApprovalError::Unknown(pending.id.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_parts_cannot_be_shifted_into_one_another() {
        let a = framed(BINDING_CONTEXT, &[b"ab", b"c"]);
        let b = framed(BINDING_CONTEXT, &[b"a", b"bc"]);
        assert_ne!(a, b);
    }

    /// A host of its own (not the coding host): a pending call, answered through the API,
    /// verified under the key and refused under another key or none.
    #[test]
    fn any_host_can_queue_answer_and_verify_an_approval() {
        use super::super::{LogHeader, SealStatus};
        let dir = std::env::temp_dir().join(format!("decision-approval-api-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gateway.jsonl");
        let key = SealKey::new(b"0123456789abcdef0123".to_vec()).unwrap();
        let input = json!({"repo": "x", "branch": "main"});
        let print = call_fingerprint("git.push", &input);
        let header = LogHeader { id: "gw-1".into(), created_at_ms: 0, cwd: None };
        let mut log = SessionLog::create(&path, &header, FsyncPolicy::Never).unwrap();
        log.set_seal_key(Some(key.clone()));
        let pending = json!({"id": "push-1", "tool": "git.push", "input": input, "fingerprint": print,
                             "requestDigest": "0123456789abcdef"});
        log.append_event(PENDING_EVENT, pending.as_object().unwrap()).unwrap();
        log.seal().unwrap();
        drop(log);
        // Without the key nothing is written.
        let before = std::fs::read(&path).unwrap();
        assert!(matches!(append_answer(&path, "push-1", &Verdict::Approve, None), Err(ApprovalError::Refused(_))));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        append_answer(&path, "push-1", &Verdict::Approve, Some(&key)).unwrap();
        assert!(matches!(
            append_answer(&path, "push-1", &Verdict::Deny("no".into()), Some(&key)),
            Err(ApprovalError::AlreadyAnswered(_))
        ));
        let verified = verify_log(&path, &VerifyOptions { key: Some(key.clone()), ..Default::default() }).unwrap();
        assert!(verified.authenticated);
        assert_eq!(verified.report.seal, SealStatus::Sealed);
        let answer = verified.ledger.get("push-1").and_then(|a| a.answer.clone()).unwrap();
        assert_eq!((answer.approved, answer.binding), (true, BindingCheck::Verified));
        let other = SealKey::new(b"0123456789abcdef0124".to_vec()).unwrap();
        let ledger = read_ledger(&path, Some(&other), DEFAULT_MAX_LINE, &[], &mut |_| {}).unwrap();
        assert!(matches!(ledger.approvals[0].answer.as_ref().unwrap().binding, BindingCheck::Failed(_)));
        assert!(!ledger.problems().is_empty());
        let refusal = verify_log(&path, &VerifyOptions::default()).unwrap_err();
        assert!(refusal.reason.contains("the log is keyed"), "{refusal}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The writer that holds the log (a gateway, an adapter) queues, answers and uses an
    /// approval itself; replay verifies every binding, keyed and unkeyed. An answer built in
    /// another process is appended only when it holds; a changed one is refused unwritten.
    #[test]
    fn a_writer_holding_the_log_binds_its_answers() {
        use super::super::LogHeader;
        let dir = std::env::temp_dir().join(format!("decision-approval-writer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for key in [None, Some(SealKey::new(b"0123456789abcdef0123".to_vec()).unwrap())] {
            let path = dir.join(format!("held-{}.jsonl", key.is_some()));
            let header = LogHeader { id: "gw-2".into(), created_at_ms: 0, cwd: None };
            let mut log = SessionLog::create(&path, &header, FsyncPolicy::Never).unwrap();
            log.set_seal_key(key.clone());
            let call = |id: &str, path: &str| PendingCall {
                id: id.into(),
                tool: "fs.write".into(),
                input: json!({"path": path}),
                request_digest: "00ff".into(),
                extra: Map::from_iter([("rule".to_owned(), json!("ask_person"))]),
            };
            let mut first = append_pending(&mut log, call("w-1", "a.txt")).unwrap();
            let mut second = append_pending(&mut log, call("w-2", "b.txt")).unwrap();
            append_bound_answer(&mut log, &mut first, &Verdict::Approve).unwrap();
            assert!(matches!(
                append_bound_answer(&mut log, &mut first, &Verdict::Approve),
                Err(ApprovalError::AlreadyAnswered(_))
            ));
            append_used(&mut log, &mut first, Some(3)).unwrap();
            assert!(matches!(append_used(&mut log, &mut first, Some(3)), Err(ApprovalError::AlreadyUsed(_))));
            // An answer built elsewhere for the second call, then changed: refused, unwritten.
            let mut forged = answer_event("gw-2", &second, &Verdict::Deny("no".into()), key.as_ref(), 1);
            forged.insert("approved".into(), json!(true));
            let head = log.head();
            assert!(matches!(
                append_checked_answer(&mut log, &mut second, forged),
                Err(ApprovalError::Tampered { .. })
            ));
            assert_eq!(log.head(), head);
            // Built for another session: refused too.
            let elsewhere = answer_event("gw-other", &second, &Verdict::Approve, key.as_ref(), 1);
            assert!(append_checked_answer(&mut log, &mut second, elsewhere).is_err());
            let honest = answer_event("gw-2", &second, &Verdict::Deny("not today".into()), key.as_ref(), 1);
            append_checked_answer(&mut log, &mut second, honest).unwrap();
            assert!(append_used(&mut log, &mut second, None).is_err(), "a denied approval is not used");
            log.seal().unwrap();
            drop(log);
            let verified = verify_log(&path, &VerifyOptions { key: key.clone(), ..Default::default() }).unwrap();
            let expected = if key.is_some() { BindingCheck::Verified } else { BindingCheck::Unkeyed };
            for id in ["w-1", "w-2"] {
                let answer = verified.ledger.get(id).and_then(|a| a.answer.clone()).unwrap();
                assert_eq!(answer.binding, expected, "{id}");
            }
            assert!(verified.ledger.get("w-1").unwrap().used);
            // Reopened, the writer knows its session: a later answer still binds.
            let log = SessionLog::open(&path, FsyncPolicy::Never).unwrap();
            assert_eq!(log.session_id(), Some("gw-2"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A log with one approved and used call, `filler` other events, and the approved call's
    /// `tool:call` at the use's step when `ran`.
    fn approved_log(path: &Path, filler: usize, ran: bool) {
        use super::super::LogHeader;
        let header = LogHeader { id: "one-pass".into(), created_at_ms: 0, cwd: None };
        let mut log = SessionLog::create(path, &header, FsyncPolicy::Never).unwrap();
        let mut pending = append_pending(
            &mut log,
            PendingCall {
                id: "ap-1".into(),
                tool: "write_file".into(),
                input: json!("a.txt\nhello"),
                request_digest: "00ff".into(),
                extra: Map::new(),
            },
        )
        .unwrap();
        append_bound_answer(&mut log, &mut pending, &Verdict::Approve).unwrap();
        append_used(&mut log, &mut pending, Some(4)).unwrap();
        for step in 0..filler as u64 {
            let call = json!({"tool": "read_file", "input": format!("f{step}"), "step": step + 10});
            log.append_event(CALL_EVENT, call.as_object().unwrap()).unwrap();
        }
        if ran {
            let call = json!({"tool": "write_file", "input": "a.txt\nhello", "step": 4});
            log.append_event(CALL_EVENT, call.as_object().unwrap()).unwrap();
        }
        log.seal().unwrap();
    }

    /// Counts the bytes handed out, to show a log is read once.
    struct Counted<R> {
        inner: R,
        bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    }

    impl<R: io::Read> io::Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.bytes.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(n)
        }
    }

    /// Replay reads a log's approvals from its own read of the log, on one thread or several,
    /// and finds what a separate read finds: an approved call that ran passes, one that never
    /// ran is a problem.
    #[test]
    fn replay_reads_the_approvals_in_its_own_pass() {
        let dir = std::env::temp_dir().join(format!("decision-approval-one-pass-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for ran in [true, false] {
            let path = dir.join(format!("ran-{ran}.jsonl"));
            // Enough lines for several of the parallel replay's batches.
            approved_log(&path, 10_000, ran);
            let apart = read_ledger(&path, None, DEFAULT_MAX_LINE, &[], &mut |_| {}).unwrap();
            assert_eq!(apart.calls.len(), 10_000 + usize::from(ran));
            let expected = apart.audit();
            assert_eq!((expected.approvals, expected.answered, expected.used), (1, 1, 1));
            assert_eq!(expected.problems.is_empty(), ran, "{:?}", expected.problems);
            if !ran {
                assert!(expected.problems[0].contains("the approved call never ran"), "{:?}", expected.problems);
            }
            let length = std::fs::metadata(&path).unwrap().len();
            for threads in [1, 3] {
                let bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
                let reader = Counted { inner: File::open(&path).unwrap(), bytes: bytes.clone() };
                let options = ReplayOptions { threads, ..ReplayOptions::default() };
                let (report, ledger) = replay_with_ledger(reader, &options, &mut |_| {}).unwrap();
                assert_eq!(report.chain_status(), ChainStatus::Intact);
                assert_eq!(ledger, apart, "threads {threads}");
                assert_eq!(ledger.audit(), expected, "threads {threads}");
                assert_eq!(bytes.load(std::sync::atomic::Ordering::Relaxed), length, "one read, threads {threads}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Calls before the first approval can have been allowed by none: they are not kept.
    #[test]
    fn calls_are_kept_only_after_an_approval_was_asked_for() {
        let mut reader = LedgerReader::new(None);
        reader.line(1, br#"{"v":1,"kind":"header","id":"s"}"#);
        reader.line(2, br#"{"kind":"event","run":1,"e":{"type":"tool:call","tool":"t","input":"x","step":1}}"#);
        assert!(reader.finish().calls.is_empty());
    }

    #[test]
    fn fingerprints_bind_tool_and_input() {
        let print = call_fingerprint("read_file", &json!("a"));
        assert_eq!(print.len(), 64);
        assert_ne!(print, call_fingerprint("read_file", &json!("b")));
        assert_ne!(print, call_fingerprint("delete_file", &json!("a")));
    }
}
