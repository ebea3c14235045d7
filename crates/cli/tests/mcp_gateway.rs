//! `decision mcp` as a client uses it: the gateway spawned in front of a tiny MCP server
//! (`crates/mcp/tests/data/fake_server.py`, plain Python, no SDK), driven over stdio with
//! JSON-RPC lines. Each test ends by verifying the sealed log with `decision replay
//! --require-seal`. Every wait is bounded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

use common::collector::{Collector, attribute};

const BIN: &str = env!("CARGO_BIN_EXE_decision");
/// The longest a test waits for one answer (the Python server can be slow to start on a busy
/// machine).
const WAIT: Duration = Duration::from_secs(30);
/// The log key's variable.
const KEY_VARIABLE: &str = "DECISION_LOG_KEY";

fn server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/data/fake_server.py")
}

fn python_available() -> bool {
    Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success())
}

struct Gateway {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    stderr: Receiver<String>,
    log: PathBuf,
    calls: PathBuf,
    /// How many tools the fake server lists.
    tools: usize,
    _dir: tempfile::TempDir,
}

impl Gateway {
    fn start(options: &[&str], env: &[(&str, &str)]) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("session.jsonl");
        let calls = dir.path().join("calls.jsonl");
        let mut command = Command::new(BIN);
        command.arg("mcp").arg("--log").arg(&log).args(options).arg("--").arg("python3").arg(server());
        command.env("FAKE_SERVER_CALLS", &calls).env_remove(KEY_VARIABLE);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the gateway starts");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = send.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
            }
        });
        let stderr_pipe = child.stderr.take().unwrap();
        let (send, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let _ = send.send(line);
            }
        });
        let stdin = child.stdin.take();
        let extra = |name: &str| env.iter().any(|(key, value)| *key == name && *value == "1");
        let tools = 5 + usize::from(extra("FAKE_SERVER_SCHEMA")) + 2 * usize::from(extra("FAKE_SERVER_EXTRA"));
        Gateway { child, stdin, lines, stderr, log, calls, tools, _dir: dir }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// The next message from the gateway.
    fn next(&self) -> Value {
        self.lines.recv_timeout(WAIT).expect("the gateway answers in time")
    }

    /// Sends a request and returns the response with its id (other messages are skipped).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            let message = self.next();
            if message["id"] == json!(id) {
                return message;
            }
        }
        panic!("no response to request {id}");
    }

    fn handshake(&mut self) {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let listed = self.request(2, "tools/list", json!({}));
        assert_eq!(
            listed["result"]["tools"].as_array().unwrap().len(),
            self.tools,
            "tools/list passes through: {listed}"
        );
    }

    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Closes the client's side and waits for the gateway to exit.
    fn close(mut self) -> (PathBuf, Vec<String>, tempfile::TempDir) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the gateway exits when the client disconnects");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(self.child.wait().unwrap().success());
        let stderr: Vec<String> = self.stderr.try_iter().collect();
        (self.log, stderr, self._dir)
    }

    fn ran(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.calls)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|l| l.get("e").cloned())
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn verify(log: &Path) -> String {
    verify_with(log, &[])
}

fn verify_with(log: &Path, options: &[&str]) -> String {
    verify_keyed(log, options, None)
}

fn verify_keyed(log: &Path, options: &[&str], key: Option<&str>) -> String {
    let mut replay = Command::new(BIN);
    replay.args(["replay", "--require-seal"]).args(options).arg(log).env_remove(KEY_VARIABLE);
    if let Some(key) = key {
        replay.env(KEY_VARIABLE, key);
    }
    let out = replay.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "replay --require-seal fails:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("seal: sealed"), "{text}");
    text
}

fn refused(response: &Value) -> bool {
    response["result"]["isError"] == json!(true)
        && response["result"]["content"][0]["text"].as_str().unwrap().starts_with("The decision gateway refused")
}

/// `decision approve LOG ID [options]` with the log key `key` (none: unset).
fn approve(log: &Path, id: &str, options: &[&str], key: Option<&str>) -> std::process::Output {
    let mut command = Command::new(BIN);
    command.arg("approve").args(options).arg(log).arg(id).env_remove(KEY_VARIABLE);
    if let Some(key) = key {
        command.env(KEY_VARIABLE, key);
    }
    command.output().unwrap()
}

/// The id of the held call of step `step`, once the log records it.
fn held_id(log: &Path, step: u64) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let pending = events(log).into_iter().find(|e| e["type"] == "approval:pending" && e["step"] == step);
        if let Some(p) = pending {
            return p["id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "step {step} is held");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the log has `count` events of type `kind`.
fn wait_for_events(log: &Path, kind: &str, count: usize) {
    let deadline = Instant::now() + WAIT;
    while of_type(&events(log), kind).len() < count {
        assert!(Instant::now() < deadline, "{count} `{kind}` event(s) in the log");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_read_runs_a_destructive_call_is_refused_and_bad_input_is_answered_while_serving_on() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "deny", "--max-message", "4096"], &[]);
    gw.handshake();
    let read = gw.call(3, "read_note", json!({"n": 1}));
    assert_eq!(read["result"]["content"][0]["text"], "ran read_note", "{read}");
    let write = gw.call(4, "write_note", json!({"n": 2}));
    assert!(refused(&write), "{write}");
    assert!(write["result"]["content"][0]["text"].as_str().unwrap().contains("score:harm >= 2 → ask_human"));
    let add = gw.call(5, "add_note", json!({"n": 3}));
    assert_eq!(add["result"]["content"][0]["text"], "ran add_note", "{add}");
    // A tool no listing named is read with the protocol's defaults: destructive.
    assert!(refused(&gw.call(6, "unlisted", json!({}))));

    gw.send_raw(b"this is not json\n");
    let parse = gw.next();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], Value::Null);
    let mut big = vec![b'x'; 10_000];
    big.push(b'\n');
    gw.send_raw(&big);
    let oversized = gw.next();
    assert_eq!(oversized["error"]["code"], -32600, "{oversized}");
    assert!(oversized["error"]["message"].as_str().unwrap().contains("10000 bytes"));
    gw.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"write_note\"}}]\n");
    assert_eq!(gw.next()["error"]["code"], -32600, "a batch is refused, so no call slips past the gate");
    assert_eq!(gw.request(7, "ping", json!({}))["result"], json!({}), "the gateway serves on");

    let ran: Vec<String> = gw.ran().iter().map(|c| c["tool"].as_str().unwrap().to_string()).collect();
    assert_eq!(ran, ["read_note", "add_note"], "the refused calls never reached the server");
    let (log, _, _dir) = gw.close();
    let events = events(&log);
    assert_eq!(of_type(&events, "decision").len(), 4);
    assert_eq!(of_type(&events, "tool:call").len(), 2);
    assert_eq!(of_type(&events, "mcp:refused").len(), 2);
    assert_eq!(of_type(&events, "mcp:bad-input").len(), 3);
    assert_eq!(of_type(&events, "mcp:initialize")[0]["protocolVersion"], "2025-11-25");
    assert!(verify(&log).contains("✓ verified             4"));
}

#[test]
fn a_queued_call_runs_exactly_once_after_an_approval_from_another_process() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "queue", "--approval-timeout", "60"], &[]);
    gw.handshake();
    gw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "write_note", "arguments": {"n": 1}}}));
    // The held call is recorded; find it as a person would.
    let deadline = Instant::now() + WAIT;
    let id = loop {
        let out = Command::new(BIN).args(["approvals", "--format", "json"]).arg(&gw.log).output().unwrap();
        let pending: Value = serde_json::from_slice(&out.stdout).unwrap_or(json!([]));
        if let Some(first) = pending.as_array().and_then(|p| p.first()) {
            assert_eq!(first["tool"], "write_note");
            break first["id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "the held call is listed");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(gw.ran().is_empty(), "nothing runs before the approval");
    // Meanwhile the gateway serves other requests.
    assert_eq!(gw.request(4, "ping", json!({}))["result"], json!({}));
    let approved = approve(&gw.log, &id, &[], None);
    assert!(approved.status.success(), "{}", String::from_utf8_lossy(&approved.stderr));
    let said = String::from_utf8_lossy(&approved.stdout);
    assert!(said.contains("approved") && said.contains("handed to it"), "{said}");
    let response = gw.next();
    assert_eq!(response["id"], 3);
    assert_eq!(response["result"]["content"][0]["text"], "ran write_note", "{response}");
    // A second answer to the same approval is refused, and nothing runs twice.
    let again = approve(&gw.log, &id, &[], None);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already answered"));
    let (log, stderr, _dir) = {
        let ran = gw.ran();
        assert_eq!(ran.len(), 1, "{ran:?}");
        gw.close()
    };
    assert!(stderr.iter().any(|l| l.contains("decision approve") && l.contains(&id)), "{stderr:?}");
    let events = events(&log);
    assert_eq!(of_type(&events, "approval:used").len(), 1);
    assert_eq!(of_type(&events, "tool:call").len(), 1);
    assert_eq!(of_type(&events, "mcp:answered")[0]["via"], "decision approve");
    assert!(!log.with_file_name("session.jsonl.answers").exists(), "the inbox goes with the session");
    let text = verify(&log);
    assert!(text.contains("✓ approvals: 1 requested · 1 answered · 1 used"), "{text}");
}

#[test]
fn a_held_call_nobody_answers_is_refused_after_the_timeout_and_a_denial_refuses_at_once() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "queue", "--approval-timeout", "1"], &[]);
    gw.handshake();
    let started = Instant::now();
    let response = gw.call(3, "write_note", json!({"n": 1}));
    assert!(refused(&response), "{response}");
    assert!(response["result"]["content"][0]["text"].as_str().unwrap().contains("no person answered within 1 s"));
    assert!(started.elapsed() < Duration::from_secs(10));

    gw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "write_note", "arguments": {"n": 2}}}));
    let id = held_id(&gw.log, 2);
    let deny = approve(&gw.log, &id, &["--deny", "--reason", "not today"], None);
    assert!(deny.status.success(), "{}", String::from_utf8_lossy(&deny.stderr));
    assert!(String::from_utf8_lossy(&deny.stdout).contains("denied"));
    let response = gw.next();
    assert_eq!(response["id"], 4);
    assert!(refused(&response), "{response}");
    assert!(response["result"]["content"][0]["text"].as_str().unwrap().contains("a person denied it: not today"));
    assert!(gw.ran().is_empty(), "neither call ran");
    let (log, _, _dir) = gw.close();
    let events = events(&log);
    let answers = of_type(&events, "approval:answer");
    assert_eq!(answers.len(), 2, "the timeout is recorded as a denial, bound like any answer");
    assert_eq!(answers[0]["approved"], false);
    assert!(answers[0]["reason"].as_str().unwrap().contains("no person answered within 1 s"));
    assert_eq!(answers[1]["reason"], "not today");
    assert!(of_type(&events, "approval:used").is_empty(), "a denial is never used");
    assert!(of_type(&events, "tool:call").is_empty());
    let text = verify(&log);
    assert!(text.contains("✓ approvals: 2 requested · 2 answered · 0 used"), "{text}");
    let listed = Command::new(BIN).arg("approvals").arg(&log).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("0 pending approval(s)"));
}

#[test]
fn a_forged_or_changed_answer_in_the_inbox_is_refused_and_the_call_stays_held() {
    use decision::log::approval::{Verdict, answer_event, read_ledger};
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "queue", "--approval-timeout", "60"], &[]);
    gw.handshake();
    gw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_note", "arguments": {"n": 1}}}));
    let id = held_id(&gw.log, 1);
    let file = gw.log.with_file_name("session.jsonl.answers").join(format!("{id}.json"));
    let ledger = read_ledger(&gw.log, None, 1 << 20, &[], &mut |_| {}).unwrap();
    let pending = ledger.get(&id).unwrap();
    let session = ledger.session.clone().unwrap();
    // An approval made up by hand: the right shape, a binding that does not hold.
    let mut forged = answer_event(&session, pending, &Verdict::Approve, None, 0);
    forged.insert("binding".into(), json!("00".repeat(32)));
    // A real denial, changed into an approval on its way.
    let mut changed = answer_event(&session, pending, &Verdict::Deny("no".into()), None, 0);
    changed.insert("approved".into(), json!(true));
    // A real approval carrying a member no answer has (it would be recorded unbound).
    let mut padded = answer_event(&session, pending, &Verdict::Approve, None, 0);
    padded.insert("via".into(), json!("someone"));
    // An answer from another session.
    let elsewhere = answer_event("mcp-other-session", pending, &Verdict::Approve, None, 0);
    for (n, answer) in [forged, changed, padded, elsewhere].into_iter().enumerate() {
        std::fs::write(&file, Value::Object(answer).to_string()).unwrap();
        wait_for_events(&gw.log, "mcp:answer-refused", n + 1);
    }
    std::fs::write(&file, b"not json").unwrap();
    wait_for_events(&gw.log, "mcp:answer-refused", 5);
    assert!(gw.ran().is_empty(), "nothing ran on a forged or changed answer");
    // A modified input is not something the gateway runs: refused before anything is handed in.
    let modified = approve(&gw.log, &id, &["--input", "\"other\""], None);
    assert_eq!(modified.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&modified.stderr).contains("never a modified input"));
    // The call is still held: a real approval runs it, once.
    assert!(approve(&gw.log, &id, &[], None).status.success());
    let response = gw.next();
    assert_eq!(response["id"], 3);
    assert_eq!(response["result"]["content"][0]["text"], "ran write_note", "{response}");
    assert_eq!(gw.ran().len(), 1);
    let (log, stderr, _dir) = gw.close();
    assert!(stderr.iter().any(|l| l.contains("was refused") && l.contains(&id)), "{stderr:?}");
    let events = events(&log);
    assert_eq!(of_type(&events, "mcp:answer-refused").len(), 5);
    assert_eq!(of_type(&events, "approval:answer").len(), 1, "only the answer that holds is recorded");
    let text = verify(&log);
    assert!(text.contains("✓ approvals: 1 requested · 1 answered · 1 used"), "{text}");
}

#[test]
fn a_keyed_log_takes_only_answers_bound_under_its_key() {
    if !python_available() {
        return;
    }
    let key = "a key of the gateway's log, 32+ bytes";
    let mut gw = Gateway::start(&["--approvals", "queue", "--approval-timeout", "60"], &[(KEY_VARIABLE, key)]);
    gw.handshake();
    gw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_note", "arguments": {"n": 1}}}));
    let id = held_id(&gw.log, 1);
    let without = approve(&gw.log, &id, &[], None);
    assert_eq!(without.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&without.stderr).contains("keyed"), "{}", String::from_utf8_lossy(&without.stderr));
    // Under another key the answer is built and handed in, and the gateway refuses it.
    let other = approve(&gw.log, &id, &[], Some("another key, not the log's, 32+ bytes"));
    assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
    wait_for_events(&gw.log, "mcp:answer-refused", 1);
    assert!(gw.ran().is_empty());
    let right = approve(&gw.log, &id, &[], Some(key));
    assert!(right.status.success(), "{}", String::from_utf8_lossy(&right.stderr));
    let response = gw.next();
    assert_eq!(response["result"]["content"][0]["text"], "ran write_note", "{response}");
    assert_eq!(gw.ran().len(), 1);
    let (log, _, _dir) = gw.close();
    let events = events(&log);
    assert_eq!(of_type(&events, "approval:answer")[0]["keyed"], true);
    let text = verify_keyed(&log, &[], Some(key));
    assert!(text.contains("✓ approvals: 1 requested · 1 answered · 1 used"), "{text}");
}

#[test]
fn an_upstream_that_hangs_or_exits_becomes_an_error_within_the_time_budget() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--time-budget", "4"], &[]);
    gw.handshake();
    let started = Instant::now();
    let hang = gw.call(3, "hang", json!({}));
    assert_eq!(hang["error"]["code"], -32000, "{hang}");
    assert!(hang["error"]["message"].as_str().unwrap().contains("did not answer within 4 s"));
    assert!(started.elapsed() < Duration::from_secs(10));
    let crash = gw.call(4, "crash", json!({}));
    assert_eq!(crash["error"]["code"], -32000, "{crash}");
    let after = gw.call(5, "read_note", json!({}));
    assert_eq!(after["error"]["message"], "the upstream server is not running");
    let (log, _, _dir) = gw.close();
    let events = events(&log);
    assert_eq!(of_type(&events, "mcp:unanswered").len(), 3, "every forwarded call is closed in the log");
    verify(&log);
}

#[test]
fn a_changed_tool_definition_is_reported_and_goes_to_a_person() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "deny"], &[("FAKE_SERVER_RUG_PULL", "1")]);
    gw.handshake();
    assert_eq!(gw.call(3, "read_note", json!({}))["result"]["content"][0]["text"], "ran read_note");
    gw.request(4, "tools/list", json!({}));
    assert!(refused(&gw.call(5, "read_note", json!({}))), "the pulled tool is no longer trusted");
    let (log, stderr, _dir) = gw.close();
    assert!(stderr.iter().any(|l| l.contains("`read_note` changed")), "{stderr:?}");
    assert_eq!(of_type(&events(&log), "mcp:tool-changed").len(), 1);
    verify(&log);
}

#[test]
fn shadow_mode_forwards_everything_and_records_what_enforcing_would_have_done() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--mode", "shadow"], &[]);
    gw.handshake();
    assert_eq!(gw.call(3, "write_note", json!({}))["result"]["content"][0]["text"], "ran write_note");
    let (log, _, _dir) = gw.close();
    let events = events(&log);
    let shadow = of_type(&events, "mcp:shadow");
    assert_eq!(shadow.len(), 1);
    assert_eq!(shadow[0]["wouldHave"], "ask a person");
    verify(&log);
}

#[test]
fn sigterm_ends_the_session_with_a_sealed_log() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&[], &[]);
    gw.handshake();
    let status = Command::new("kill").arg("-TERM").arg(gw.child.id().to_string()).status().unwrap();
    assert!(status.success());
    let deadline = Instant::now() + WAIT;
    while gw.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the gateway stops on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    gw.child.stderr.take().map(|mut s| s.read_to_string(&mut stderr));
    let (log, lines, _dir) = gw.close();
    assert!(lines.iter().any(|l| l.contains("stopped by a signal")), "{lines:?}");
    // No call was made, so the sealed log holds no decision record.
    verify_with(&log, &["--allow-empty"]);
}

#[test]
fn a_contract_the_gateway_cannot_honour_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("c.md");
    std::fs::write(&contract, "# x\n\nschema: decision-contract/v1\n\n## g\n\nkind: noul\nwhen: before-call —— x\n\nask: y\n\n- true — a\n- false — b\n\nframe:\n  + balance 10 —— not a cell of the gateway\n\npolicy:\n  - prob:g >= 0.5 → auto\n  - else → ask_human\n").unwrap();
    let out = Command::new(BIN)
        .arg("mcp")
        .arg(&contract)
        .arg("--log")
        .arg(dir.path().join("log.jsonl"))
        .args(["--", "python3", "-c", "pass"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the contract has errors") && stderr.contains("balance"), "{stderr}");
    assert!(!dir.path().join("log.jsonl").exists(), "no log for a session that never started");
}

#[test]
fn elicit_asks_the_person_through_the_client_and_runs_only_an_accepted_call() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "elicit"], &[]);
    let init = gw.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    gw.request(2, "tools/list", json!({}));
    let answer = |gw: &mut Gateway, id: u64, accept: bool| {
        gw.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "write_note", "arguments": {"n": id}}}));
        let ask = gw.next();
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        assert!(ask["params"]["message"].as_str().unwrap().contains("write_note"));
        let content = if accept {
            json!({"action": "accept", "content": {"approve": true}})
        } else {
            json!({"action": "decline"})
        };
        gw.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": content}));
        gw.next()
    };
    let declined = answer(&mut gw, 3, false);
    assert!(refused(&declined), "{declined}");
    assert!(gw.ran().is_empty());
    let accepted = answer(&mut gw, 4, true);
    assert_eq!(accepted["result"]["content"][0]["text"], "ran write_note", "{accepted}");
    assert_eq!(gw.ran().len(), 1);
    let (log, _, _dir) = gw.close();
    let events = events(&log);
    assert_eq!(of_type(&events, "approval:answer").len(), 2);
    let via: Vec<&Value> = of_type(&events, "mcp:answered").iter().map(|e| &e["via"]).collect();
    assert_eq!(via, [&json!("elicitation"), &json!("elicitation")]);
    let text = verify(&log);
    assert!(text.contains("✓ approvals: 2 requested · 2 answered · 1 used"), "{text}");
}

#[test]
fn elicit_falls_back_to_the_queue_for_a_client_that_cannot_ask() {
    if !python_available() {
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "elicit", "--approval-timeout", "60"], &[]);
    gw.handshake();
    gw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_note", "arguments": {"n": 1}}}));
    let id = held_id(&gw.log, 1);
    assert!(approve(&gw.log, &id, &[], None).status.success());
    let response = gw.next();
    assert_eq!(response["id"], 3, "no elicitation/create went to a client without the capability: {response}");
    assert_eq!(response["result"]["content"][0]["text"], "ran write_note");
    let (log, _, _dir) = gw.close();
    verify(&log);
}

#[test]
fn with_otlp_each_call_decided_reaches_the_collector_as_a_span_of_the_gateway() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let collector = Collector::start();
    let mut gw = Gateway::start(&["--approvals", "deny", "--otlp", &collector.url], &[]);
    gw.handshake();
    assert_eq!(gw.call(3, "read_note", json!({"n": 1}))["result"]["content"][0]["text"], "ran read_note");
    assert!(refused(&gw.call(4, "write_note", json!({"n": 2}))));
    let (log, stderr, _dir) = gw.close();
    let spans = collector.spans();
    assert_eq!(spans.len(), of_type(&events(&log), "decision").len(), "{stderr:?}");
    assert!(stderr.iter().any(|l| l.starts_with(&format!("otlp: 2 span(s) sent to {}", collector.url))), "{stderr:?}");
    let actions: Vec<Option<String>> = spans.iter().map(|(_, s)| attribute(s, "decision.action")).collect();
    assert_eq!(actions.len(), 2);
    assert!(spans.iter().all(|(_, s)| attribute(s, "decision.host").as_deref() == Some("mcp-gateway")));
    assert!(verify(&log).contains("✓ verified             2"));
}

/// The bundled contract with destructive tools refused outright instead of sent to a person.
fn forbidding_contract(dir: &Path) -> PathBuf {
    let bundled =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mcp-gateway/DECISION.md"))
            .unwrap();
    assert!(bundled.contains("score:harm >= 2 → ask_human"));
    let path = dir.join("forbidding.md");
    std::fs::write(&path, bundled.replace("score:harm >= 2 → ask_human", "score:harm >= 2 → escalate")).unwrap();
    path
}

#[test]
fn a_tool_the_contract_refuses_on_its_definition_is_hidden_from_the_listing_and_still_refused() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let contracts = tempfile::tempdir().unwrap();
    let contract = forbidding_contract(contracts.path());
    let mut gw = Gateway::start(&[contract.to_str().unwrap()], &[]);
    let init = gw.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let listed = gw.request(2, "tools/list", json!({}));
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read_note", "add_note", "hang", "crash"], "write_note declares nothing: destructive, hidden");
    // An agent that calls it anyway (it knew the name) is refused, and it never runs.
    let write = gw.call(3, "write_note", json!({"n": 1}));
    assert!(refused(&write), "{write}");
    assert!(gw.ran().is_empty());
    let (log, _, _dir) = gw.close();
    let recorded = events(&log);
    let hidden = of_type(&recorded, "mcp:hidden");
    assert_eq!(hidden.len(), 1);
    assert_eq!(hidden[0]["tools"], json!([{"tool": "write_note", "rule": "score:harm >= 2 → escalate"}]));
    assert_eq!(hidden[0]["shadow"], false);
    assert!(verify(&log).contains("✓ verified             1"));

    // Shadow mode hides nothing and records what it would have hidden.
    let mut shadow = Gateway::start(&[contract.to_str().unwrap(), "--mode", "shadow"], &[]);
    shadow.handshake();
    let (log, _, _dir) = shadow.close();
    let recorded = events(&log);
    let hidden = of_type(&recorded, "mcp:hidden");
    assert_eq!((hidden.len(), &hidden[0]["shadow"]), (1, &json!(true)));

    // A model may weigh a call's arguments: with any provider but the heuristic nothing is
    // hidden, though this one (a script that rates every call as destructive) refuses them all.
    let script = contracts.path().join("destructive.json");
    let answer = json!({"score": 2, "probabilities": {"0": 0.0, "1": 0.0, "2": 1.0}, "confidence": 1.0});
    let reaches = json!({"noul": 0.1});
    std::fs::write(&script, json!({"harm": vec![answer; 8], "reaches_out": vec![reaches; 8]}).to_string()).unwrap();
    let provider = format!("script:{}", script.display());
    let mut scripted = Gateway::start(&[contract.to_str().unwrap(), "--provider", &provider], &[]);
    scripted.handshake();
    let read = scripted.call(3, "read_note", json!({}));
    assert!(refused(&read), "the script's answer escalates: {read}");
    let (log, _, _dir) = scripted.close();
    assert!(of_type(&events(&log), "mcp:hidden").is_empty());
}

#[test]
fn a_result_that_breaks_its_deliverable_contract_reaches_the_agent_as_a_contract_violation() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let contracts = dir.path().join("outcomes.json");
    std::fs::write(
        &contracts,
        r#"{"contracts": [{"tool": "mcp", "method": "read_note", "purpose": "Read a note.",
            "deliverable": {"type": "object", "required": ["note"]}, "acceptance": "The note, as an object."}]}"#,
    )
    .unwrap();
    let mut gw = Gateway::start(&["--outcome-contracts", contracts.to_str().unwrap()], &[]);
    gw.handshake();
    // The fake server answers "ran read_note": text, not the object the contract promises.
    let read = gw.call(3, "read_note", json!({"n": 1}));
    assert_eq!(read["result"]["isError"], true, "{read}");
    let text = read["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("contract_violation: outcome of mcp.read_note does not satisfy"), "{text}");
    // A tool without a contract gets its result as the server sent it.
    assert_eq!(gw.call(4, "add_note", json!({}))["result"]["content"][0]["text"], "ran add_note");
    let (log, _, _dir) = gw.close();
    let recorded = events(&log);
    let outcomes = of_type(&recorded, "tool:outcome");
    assert_eq!(outcomes.len(), 2, "every call's outcome is recorded");
    assert_eq!((outcomes[0]["method"].as_str(), outcomes[0]["step"].as_u64()), (Some("read_note"), Some(1)));
    let report = Command::new(BIN).args(["outcomes", "report", "--format", "json"]).arg(&log).output().unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let read_note = report["tools"].as_array().unwrap().iter().find(|t| t["method"] == "read_note").unwrap();
    assert_eq!(
        (read_note["errors"].as_u64(), read_note["contract"]["violated"].as_u64()),
        (Some(1), Some(1)),
        "{report}"
    );
    assert!(verify(&log).contains("✓ verified             2"));

    // Shadow mode records the violation and relays the result.
    let mut shadow = Gateway::start(&["--outcome-contracts", contracts.to_str().unwrap(), "--mode", "shadow"], &[]);
    shadow.handshake();
    assert_eq!(shadow.call(3, "read_note", json!({}))["result"]["content"][0]["text"], "ran read_note");
    let (log, _, _dir) = shadow.close();
    assert_eq!(of_type(&events(&log), "tool:outcome").len(), 1);

    // A contracts file that does not lint is refused before anything starts.
    std::fs::write(&contracts, r#"{"contracts": [{"tool": "mcp"}]}"#).unwrap();
    let refused = Command::new(BIN)
        .args(["mcp", "--log"])
        .arg(dir.path().join("never.jsonl"))
        .arg("--outcome-contracts")
        .arg(&contracts)
        .args(["--", "python3"])
        .arg(server())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(!dir.path().join("never.jsonl").exists());
}

#[test]
fn a_structured_result_that_does_not_match_the_tools_output_schema_is_a_contract_violation() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let mut gw = Gateway::start(&[], &[("FAKE_SERVER_SCHEMA", "1")]);
    let init = gw.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    gw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(gw.request(2, "tools/list", json!({}))["result"]["tools"].as_array().unwrap().len(), 6);
    let good = gw.call(3, "get_time", json!({"as": "good"}));
    assert_eq!(good["result"]["structuredContent"]["datetime"], "2026-12-02T10:00:00Z", "{good}");
    let bad = gw.call(4, "get_time", json!({"as": "bad"}));
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    let text = bad["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "contract_violation: the structured result of mcp.get_time does not match its outputSchema at `/datetime`"
        ),
        "{text}"
    );
    assert!(bad["result"].get("structuredContent").is_none(), "the non-conforming value does not reach the agent");
    let none = gw.call(5, "get_time", json!({"as": "none"}));
    assert_eq!(none["result"]["isError"], true, "{none}");
    let (log, _, _dir) = gw.close();
    let recorded = events(&log);
    let violations = of_type(&recorded, "mcp:schema-violation");
    assert_eq!(violations.len(), 2);
    assert_eq!((violations[0]["step"].as_u64(), violations[0]["path"].as_str()), (Some(2), Some("/datetime")));
    assert!(verify(&log).contains("✓ verified             3"));
}

/// Outcome contracts for one tool the tests do not call, so every call is recorded as an
/// outcome and none is checked against a deliverable.
fn unrelated_contracts(dir: &Path) -> PathBuf {
    let path = dir.join("outcomes.json");
    std::fs::write(
        &path,
        r#"{"contracts": [{"tool": "mcp", "method": "never_called", "purpose": "Nothing.",
            "deliverable": {"type": "object"}, "acceptance": "An object."}]}"#,
    )
    .unwrap();
    path
}

#[test]
fn a_recorded_outcome_keeps_a_digest_of_what_the_tool_returned_not_its_text() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let contracts = unrelated_contracts(dir.path());
    let secret = "sk-live-4f9a1c-the-server-read-a-secret";
    let env = [("FAKE_SERVER_EXTRA", "1"), ("FAKE_SERVER_SECRET", secret)];
    let mut gw = Gateway::start(&["--outcome-contracts", contracts.to_str().unwrap()], &env);
    gw.handshake();
    let size = 4 << 20;
    let big = gw.call(3, "big", json!({"size": size}));
    let text = big["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.len() == size && text.ends_with(secret), "the agent gets the whole result");
    let (log, _, _dir) = gw.close();
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(!written.contains(secret), "what the tool returned is not copied into the log");
    let longest = written.lines().map(str::len).max().unwrap_or_default();
    assert!(longest < 8192, "every line stays small: {longest}");
    let recorded = events(&log);
    let outcome = of_type(&recorded, "tool:outcome")[0];
    assert_eq!(outcome["outcome"]["value"], "…", "{outcome}");
    assert_eq!(outcome["result"]["bytes"], size + 2, "JSON.stringify of the text: {outcome}");
    assert_eq!(outcome["result"]["sha256"].as_str().map(str::len), Some(64));
    assert!(verify(&log).contains("✓ verified             1"));
}

#[test]
fn a_result_that_breaks_only_its_output_schema_is_recorded_as_a_violation() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let contracts = unrelated_contracts(dir.path());
    let mut gw = Gateway::start(&["--outcome-contracts", contracts.to_str().unwrap()], &[("FAKE_SERVER_SCHEMA", "1")]);
    gw.handshake();
    assert!(gw.call(3, "get_time", json!({"as": "good"}))["result"].get("structuredContent").is_some());
    assert_eq!(gw.call(4, "get_time", json!({"as": "bad"}))["result"]["isError"], true);
    let (log, _, _dir) = gw.close();
    let recorded = events(&log);
    let outcomes = of_type(&recorded, "tool:outcome");
    let contract: Vec<&str> = outcomes.iter().map(|o| o["contract"].as_str().unwrap()).collect();
    assert_eq!(contract, ["not_applied", "violated"]);
    assert_eq!(outcomes[1]["outcome"]["error_type"], "contract_violation", "{}", outcomes[1]);
    assert_eq!(outcomes[1]["outcome"]["metadata"]["source"], "outputSchema");
    let report = Command::new(BIN).args(["outcomes", "report", "--format", "json"]).arg(&log).output().unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let get_time = report["tools"].as_array().unwrap().iter().find(|t| t["method"] == "get_time").unwrap();
    assert_eq!(get_time["contract"]["violated"], 1, "{report}");
    verify(&log);
}

#[test]
fn a_call_the_server_never_answers_is_recorded_as_a_failed_outcome() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let contracts = unrelated_contracts(dir.path());
    let mut gw = Gateway::start(&["--outcome-contracts", contracts.to_str().unwrap(), "--time-budget", "2"], &[]);
    gw.handshake();
    assert_eq!(gw.call(3, "hang", json!({}))["error"]["code"], -32000);
    assert_eq!(gw.call(4, "crash", json!({}))["error"]["code"], -32000);
    let (log, _, _dir) = gw.close();
    let recorded = events(&log);
    let outcomes = of_type(&recorded, "tool:outcome");
    let kinds: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|o| (o["method"].as_str().unwrap(), o["outcome"]["error_type"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("hang", "timeout"), ("crash", "execution")]);
    let unanswered = of_type(&recorded, "mcp:unanswered");
    assert_eq!((unanswered[0]["id"].as_u64(), unanswered[1]["id"].as_u64()), (Some(3), Some(4)));
    verify(&log);
}

#[test]
fn a_response_after_its_time_budget_is_dropped_and_an_id_in_flight_is_not_reused() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let mut gw = Gateway::start(&["--time-budget", "3"], &[("FAKE_SERVER_EXTRA", "1")]);
    gw.handshake();
    let slow = gw.call(3, "slow", json!({"seconds": 5}));
    assert!(slow["error"]["message"].as_str().unwrap().contains("did not answer within 3 s"), "{slow}");
    // The server answers the slow call late, then this one: the client gets this one only.
    gw.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read_note", "arguments": {}}}),
    );
    let next = gw.next();
    assert_eq!(
        (next["id"].as_u64(), &next["result"]["content"][0]["text"]),
        (Some(4), &json!("ran read_note")),
        "{next}"
    );
    // A second request under an id still in flight is refused, and never reaches the server.
    gw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}));
    gw.send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "read_note", "arguments": {}}}),
    );
    let refused = gw.next();
    assert_eq!((refused["id"].as_u64(), refused["error"]["code"].as_i64()), (Some(5), Some(-32600)), "{refused}");
    let ran: Vec<Value> = gw.ran().iter().map(|call| call["tool"].clone()).collect();
    assert_eq!(ran, [json!("slow"), json!("read_note")], "the second request 5 never ran");
    let (log, _, _dir) = gw.close();
    let recorded = events(&log);
    let late = of_type(&recorded, "mcp:late-response");
    assert_eq!((late.len(), late[0]["id"].as_u64()), (1, Some(3)));
    verify(&log);
}

#[test]
fn garbage_of_every_shape_is_answered_or_passed_on_and_the_gateway_serves_on() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "deny", "--max-message", "65536"], &[]);
    gw.handshake();
    let deep = format!("{}{}\n", "[".repeat(5_000), "]".repeat(5_000));
    let garbage: Vec<Vec<u8>> = vec![
        b"\xff\xfe\x00 not utf-8\n".to_vec(),
        deep.into_bytes(),
        b"{\"jsonrpc\":\"2.0\",\"id\":{\"nested\":[1,2]},\"method\":\"tools/call\",\"params\":\"a string\"}\n".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":42}}\n".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"read_note\",\"arguments\":[1e999]}}\n"
            .to_vec(),
        b"123\n".to_vec(),
        b"\"just a string\"\n".to_vec(),
        b"{}\n".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":13}\n".to_vec(),
    ];
    for line in &garbage {
        gw.send_raw(line);
    }
    // Every line the gateway can answer is answered; what is not a request is passed on or
    // dropped; then it still serves.
    assert_eq!(gw.request(20, "ping", json!({}))["result"], json!({}));
    let read = gw.call(21, "read_note", json!({}));
    assert_eq!(read["result"]["content"][0]["text"], "ran read_note", "{read}");
    let ran: Vec<Value> = gw.ran().iter().map(|call| call["tool"].clone()).collect();
    assert_eq!(ran, [json!("read_note")], "only the one good call reached the server");
    let (log, stderr, _dir) = gw.close();
    assert!(stderr.iter().all(|line| !line.contains('\u{1b}')), "nothing raw reaches the terminal");
    let recorded = events(&log);
    // Not UTF-8, nested past the parser's limit, a number out of range, and three JSON texts
    // that are not messages: answered, recorded, and never passed to the server.
    assert_eq!(of_type(&recorded, "mcp:bad-input").len(), 6, "{recorded:?}");
    verify(&log);
}

#[test]
fn a_client_that_vanishes_mid_call_leaves_the_call_closed_in_a_sealed_log() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let mut gw = Gateway::start(&["--time-budget", "30"], &[("FAKE_SERVER_EXTRA", "1")]);
    gw.handshake();
    gw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 5}}}));
    // The call reaches the server, then the client is gone.
    let deadline = Instant::now() + WAIT;
    while gw.ran().is_empty() {
        assert!(Instant::now() < deadline, "the call reached the server");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    let (log, _, _dir) = gw.close();
    assert!(started.elapsed() < Duration::from_secs(5), "the gateway does not wait for the call's answer");
    let recorded = events(&log);
    let unanswered = of_type(&recorded, "mcp:unanswered");
    assert_eq!((unanswered.len(), unanswered[0]["step"].as_u64()), (1, Some(1)), "the call is closed in the log");
    assert!(unanswered[0]["why"].as_str().unwrap().contains("client disconnected"));
    assert_eq!(of_type(&recorded, "tool:outcome")[0]["outcome"]["error_type"], "execution");
    verify(&log);
}

#[test]
fn a_call_hidden_after_a_line_break_inside_another_message_never_reaches_the_server() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let mut gw = Gateway::start(&["--approvals", "deny"], &[]);
    gw.handshake();
    // One JSON text to the gateway (a ping); two lines to a server that splits on `\r`.
    let hidden = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_note","arguments":{}}}"#;
    let smuggled = format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{{\"_\":\r{hidden}\r}}}}\n");
    gw.send_raw(smuggled.as_bytes());
    // A tools/call without an id is not passed on either.
    gw.send(json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "write_note", "arguments": {}}}));
    assert_eq!(gw.request(6, "ping", json!({}))["result"], json!({}));
    assert!(gw.ran().is_empty(), "write_note never ran: {:?}", gw.ran());
    let (log, _, _dir) = gw.close();
    verify_with(&log, &["--allow-empty"]);
}
