//! Approvals of held calls, in the coding host's line shapes (`approval:pending`,
//! `approval:answer`, `approval:used`), so `decision approvals LOG` lists a gateway's held
//! calls, `decision approve LOG ID [--deny --reason TEXT]` answers them from any other
//! process, and `decision replay` audits their use.
//!
//! An approval is bound to the exact call: its id carries the step and the start of the
//! call's fingerprint (SHA-256 of `JSON.stringify({"tool", "input"})`, the input being
//! `JSON.stringify` of the call's arguments), the pending line carries the decision's request
//! digest, and the gateway runs the call only on an answer whose `allowsFingerprint` is that
//! fingerprint. An approval answers one call once: the gateway records `approval:used` and
//! forgets it. An answer that approves a modified input is not run by the gateway (it relays
//! calls, it does not rewrite them): it is a denial saying so.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use decision::digest::stringify;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::tools::hex;

/// The event a held call is recorded as.
pub const PENDING_EVENT: &str = "approval:pending";
/// The event a person's answer is recorded as (by `decision approve`).
pub const ANSWER_EVENT: &str = "approval:answer";
/// The event the gateway records when it uses an answer.
pub const USED_EVENT: &str = "approval:used";
/// How often a waiting gateway looks for an answer.
const POLL: Duration = Duration::from_millis(100);

/// SHA-256 (hex) of `JSON.stringify({"tool": tool, "input": input})`: what an approval is
/// bound to.
pub fn fingerprint(tool: &str, input: &str) -> String {
    hex(&Sha256::digest(stringify(&json!({"tool": tool, "input": input})).as_bytes()))
}

/// A call held for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// `ap-RUN-STEP-` and the first 12 hex digits of the fingerprint.
    pub id: String,
    /// The call's step in the session.
    pub step: u64,
    /// The tool.
    pub tool: String,
    /// `JSON.stringify` of the call's arguments.
    pub input: String,
    /// The call's [`fingerprint`].
    pub fingerprint: String,
    /// The request digest of the decision that asked for a person.
    pub request_digest: String,
    /// The rule that fired.
    pub rule: String,
}

impl Held {
    /// The held call of step `step` (of run `run`).
    pub fn new(run: u64, step: u64, tool: &str, input: &str, request_digest: &str, rule: &str) -> Held {
        let fingerprint = fingerprint(tool, input);
        let id = format!("ap-{run}-{step}-{}", fingerprint.get(..12).unwrap_or(&fingerprint));
        Held {
            id,
            step,
            tool: tool.to_string(),
            input: input.to_string(),
            fingerprint,
            request_digest: request_digest.to_string(),
            rule: rule.to_string(),
        }
    }

    /// The `approval:pending` payload.
    pub fn pending_event(&self) -> Map<String, Value> {
        let mut e = Map::new();
        e.insert("step".into(), json!(self.step));
        e.insert("id".into(), json!(self.id));
        e.insert("tool".into(), json!(self.tool));
        e.insert("input".into(), json!(self.input));
        e.insert("fingerprint".into(), json!(self.fingerprint));
        e.insert("requestDigest".into(), json!(self.request_digest));
        e.insert("rule".into(), json!(self.rule));
        e.insert("reason".into(), json!(self.rule));
        e
    }

    /// The `approval:answer` payload of an answer a person gave through the client's
    /// elicitation (`decision approve` writes the same line for an answer given from outside).
    pub fn answer_event(&self, approved: bool, reason: Option<&str>) -> Map<String, Value> {
        let mut e = Map::new();
        e.insert("id".into(), json!(self.id));
        e.insert("fingerprint".into(), json!(self.fingerprint));
        e.insert("approved".into(), json!(approved));
        if let Some(reason) = reason {
            e.insert("reason".into(), json!(reason));
        }
        e.insert("allowsFingerprint".into(), json!(self.fingerprint));
        e.insert("via".into(), json!("elicitation"));
        e.insert("at".into(), json!(decision::log::now_ms()));
        e
    }

    /// The `elicitation/create` request (id `request_id`) that asks the person at the client
    /// whether this call may run: one required boolean, `approve`.
    pub fn elicitation_request(&self, request_id: &str) -> Value {
        let message = format!(
            "The decision gateway holds a call of the tool `{}` for your approval ({}). Arguments: {}",
            self.tool,
            self.rule,
            decision::terminal::one_line(&self.input)
        );
        json!({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": {
            "message": message,
            "requestedSchema": {"type": "object", "required": ["approve"], "properties": {
                "approve": {"type": "boolean", "title": "Run this call?"}}}}})
    }

    /// The `approval:used` payload.
    pub fn used_event(&self) -> Map<String, Value> {
        let mut e = Map::new();
        e.insert("step".into(), json!(self.step));
        e.insert("id".into(), json!(self.id));
        e.insert("fingerprint".into(), json!(self.fingerprint));
        e
    }
}

/// What came of a held call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A person approved exactly this call.
    Approved,
    /// A person denied it, or approved something else; the reason in words.
    Denied(String),
    /// Nobody answered in time.
    TimedOut,
    /// The gateway is stopping.
    Stopped,
}

/// What a client's response to [`Held::elicitation_request`] answers: approved only when
/// the person accepted with `approve: true`; anything else (decline, cancel, an error, another
/// shape) is a denial.
pub fn elicited_answer(response: &Value) -> Answer {
    let result = response.get("result");
    let accepted = result.and_then(|r| r.get("action")).and_then(Value::as_str) == Some("accept");
    let approve = result.and_then(|r| r.get("content")).and_then(|c| c.get("approve")).and_then(Value::as_bool);
    match (accepted, approve) {
        (true, Some(true)) => Answer::Approved,
        _ => Answer::Denied("the person declined it at the client".into()),
    }
}

/// Reads `approval:answer` lines for one held call from the log, from where it last stopped.
struct AnswerScan {
    offset: u64,
}

impl AnswerScan {
    /// The answer to `held` among the lines appended since the last look, if any.
    fn look(&mut self, path: &Path, held: &Held) -> Option<Answer> {
        let mut file = File::open(path).ok()?;
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line).ok()?;
            // Only whole lines count; a line still being written is read on the next look.
            if read == 0 || line.last() != Some(&b'\n') {
                return None;
            }
            self.offset += read as u64;
            if let Some(answer) = answer_in(&line, held) {
                return Some(answer);
            }
        }
    }
}

/// The answer a log line gives `held`, if it is an answer to it.
fn answer_in(line: &[u8], held: &Held) -> Option<Answer> {
    if !line.windows(ANSWER_EVENT.len()).any(|w| w == ANSWER_EVENT.as_bytes()) {
        return None;
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    let e = value.get("e")?;
    if e.get("type").and_then(Value::as_str) != Some(ANSWER_EVENT)
        || e.get("id").and_then(Value::as_str) != Some(&held.id)
    {
        return None;
    }
    let approved = e.get("approved").and_then(Value::as_bool) == Some(true);
    let allows = e.get("allowsFingerprint").and_then(Value::as_str);
    Some(match (approved, allows == Some(held.fingerprint.as_str())) {
        (true, true) => Answer::Approved,
        (true, false) => {
            Answer::Denied("the approval was for a modified call; the gateway runs only the call the agent made".into())
        }
        (false, _) => {
            Answer::Denied(e.get("reason").and_then(Value::as_str).unwrap_or("denied by a person").to_string())
        }
    })
}

/// Waits for a person's answer to `held` in the log at `path` (written from `from`, the
/// file's length when the call was held), until `timeout` passes or `stop` is set.
pub fn wait_for_answer(path: &Path, held: &Held, from: u64, timeout: Duration, stop: &AtomicBool) -> Answer {
    let deadline = Instant::now() + timeout;
    let mut scan = AnswerScan { offset: from };
    loop {
        if let Some(answer) = scan.look(path, held) {
            return answer;
        }
        if stop.load(Ordering::Relaxed) {
            return Answer::Stopped;
        }
        let now = Instant::now();
        if now >= deadline {
            return Answer::TimedOut;
        }
        std::thread::sleep(POLL.min(deadline - now));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn held() -> Held {
        Held::new(0, 3, "write_file", "{\"path\":\"a.txt\"}", "rd", "score:harm >= 2 → ask_human")
    }

    fn answer_line(id: &str, approved: bool, allows: &str) -> Vec<u8> {
        let e =
            json!({"type": ANSWER_EVENT, "id": id, "approved": approved, "allowsFingerprint": allows, "reason": "no"});
        format!("{}\n", json!({"kind": "event", "run": 0, "e": e})).into_bytes()
    }

    #[test]
    fn an_approval_runs_only_the_exact_call_and_only_its_own_id_counts() {
        let h = held();
        assert_eq!(h.id.len(), "ap-0-3-".len() + 12);
        assert_eq!(answer_in(&answer_line(&h.id, true, &h.fingerprint), &h), Some(Answer::Approved));
        assert!(matches!(answer_in(&answer_line(&h.id, true, "other"), &h), Some(Answer::Denied(_))));
        assert_eq!(answer_in(&answer_line(&h.id, false, &h.fingerprint), &h), Some(Answer::Denied("no".into())));
        assert_eq!(answer_in(&answer_line("ap-0-4-x", true, &h.fingerprint), &h), None);
        assert_eq!(answer_in(b"{\"kind\":\"event\"}\n", &h), None);
    }

    #[test]
    fn only_an_accepted_elicitation_with_approve_true_approves() {
        let accept =
            |approve: Value| json!({"id": "e", "result": {"action": "accept", "content": {"approve": approve}}});
        assert_eq!(elicited_answer(&accept(json!(true))), Answer::Approved);
        assert!(matches!(elicited_answer(&accept(json!(false))), Answer::Denied(_)));
        assert!(matches!(elicited_answer(&accept(json!("true"))), Answer::Denied(_)));
        assert!(matches!(elicited_answer(&json!({"id": "e", "result": {"action": "decline"}})), Answer::Denied(_)));
        assert!(matches!(
            elicited_answer(&json!({"id": "e", "error": {"code": -1, "message": "x"}})),
            Answer::Denied(_)
        ));
        let request = held().elicitation_request("decision-mcp-1");
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["requestedSchema"]["required"], json!(["approve"]));
    }

    #[test]
    fn waiting_ends_with_the_answer_or_the_timeout_and_reads_only_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let h = held();
        std::fs::write(&path, b"{\"kind\":\"header\"}\n").unwrap();
        let stop = AtomicBool::new(false);
        assert_eq!(wait_for_answer(&path, &h, 0, Duration::from_millis(150), &stop), Answer::TimedOut);
        let mut text = std::fs::read(&path).unwrap();
        let line = answer_line(&h.id, true, &h.fingerprint);
        text.extend_from_slice(line.split_last().unwrap().1);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(wait_for_answer(&path, &h, 0, Duration::from_millis(150), &stop), Answer::TimedOut, "torn line");
        text.push(b'\n');
        std::fs::write(&path, &text).unwrap();
        assert_eq!(wait_for_answer(&path, &h, 0, Duration::from_secs(5), &stop), Answer::Approved);
        stop.store(true, Ordering::Relaxed);
        let other = Held::new(0, 9, "x", "{}", "", "");
        assert_eq!(wait_for_answer(&path, &other, 0, Duration::from_secs(5), &stop), Answer::Stopped);
    }
}
