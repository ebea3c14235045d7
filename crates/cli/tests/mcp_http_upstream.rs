//! `decision mcp --upstream URL`: the gateway in front of a server over Streamable HTTP (a
//! loopback server, `common::mcp_http`), driven over stdio as a client would. Every failure
//! the transport can meet becomes an answer within the time budget, and the log verifies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

use common::mcp_http::{McpHttpServer, SESSION};

const BIN: &str = env!("CARGO_BIN_EXE_decision");
const WAIT: Duration = Duration::from_secs(30);
const TOKEN: &str = "Bearer loopback-secret-token";

#[test]
fn a_server_over_streamable_http_is_gated_like_a_spawned_one_and_its_failures_become_answers() {
    let server = McpHttpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut child = Command::new(BIN)
        .args(["mcp", "--log"])
        .arg(&log)
        .args(["--approvals", "deny", "--time-budget", "2", "--upstream", &server.url])
        .env("DECISION_MCP_UPSTREAM_HEADERS", format!("Authorization={TOKEN}"))
        .env_remove("DECISION_LOG_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = send.send(serde_json::from_str(&line).unwrap_or(Value::String(line)));
        }
    });
    let mut received: Vec<Value> = Vec::new();
    let request = |stdin: &mut std::process::ChildStdin,
                   id: u64,
                   method: &str,
                   params: Value,
                   received: &mut Vec<Value>|
     -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{message}").unwrap();
        let deadline = Instant::now() + WAIT;
        loop {
            let message = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("an answer");
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            received.push(message);
        }
    };

    let init = request(
        &mut stdin,
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        &mut received,
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "loopback", "a pretty-printed JSON answer: {init}");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let listed = request(&mut stdin, 2, "tools/list", json!({}), &mut received);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 5, "{listed}");
    let ran = request(&mut stdin, 3, "tools/call", json!({"name": "read_note", "arguments": {}}), &mut received);
    assert_eq!(ran["result"]["content"][0]["text"], "ran read_note", "{ran}");
    let logs = received.iter().filter(|m| m["method"] == "notifications/message").count();
    assert_eq!(logs, 2, "notifications on a request's stream reach the client: {received:?}");

    let started = Instant::now();
    let hang = request(&mut stdin, 4, "tools/call", json!({"name": "hang", "arguments": {}}), &mut received);
    assert!(hang["error"]["message"].as_str().unwrap().contains("did not answer within 2 s"), "{hang}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let errors = [
        ("gone", "no longer knows this session (HTTP 404)"),
        ("moved", "HTTP 307 (a redirect, not followed)"),
        ("cut", "ended its answer without a response to this request"),
    ];
    for (index, (tool, why)) in errors.into_iter().enumerate() {
        let answer =
            request(&mut stdin, 5 + index as u64, "tools/call", json!({"name": tool, "arguments": {}}), &mut received);
        assert!(answer["error"]["message"].as_str().unwrap().contains(why), "{tool}: {answer}");
    }
    // The GET stream's notification arrived too (the server sends it when the stream opens).
    let deadline = Instant::now() + WAIT;
    while !received.iter().any(|m| m["method"] == "notifications/tools/list_changed") {
        received.push(lines.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("the GET stream"));
    }

    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})).unwrap();
    drop(stdin);
    let deadline = Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the gateway exits when the client disconnects");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(!stderr.contains("loopback-secret-token"), "{stderr}");

    let seen = server.seen();
    assert!(seen.iter().all(|s| s.path == "/mcp"), "the redirect was not followed: {seen:?}");
    assert!(seen.iter().all(|s| s.authorization.as_deref() == Some(TOKEN)), "{seen:?}");
    let after_init: Vec<_> = seen.iter().filter(|s| s.rpc.as_deref() != Some("initialize")).collect();
    assert!(after_init.iter().all(|s| s.session.as_deref() == Some(SESSION)), "{after_init:?}");
    let posts = after_init.iter().filter(|s| s.method == "POST");
    assert!(posts.clone().all(|s| s.version.as_deref() == Some("2025-11-25")), "{after_init:?}");
    assert!(seen.iter().any(|s| s.method == "GET"), "the GET stream was opened");
    assert!(seen.iter().any(|s| s.method == "DELETE"), "the session was ended at the server");

    let written = std::fs::read_to_string(&log).unwrap();
    let start: Value = serde_json::from_str(written.lines().nth(1).unwrap()).unwrap();
    assert_eq!(start["e"]["upstream"], server.url.as_str(), "{start}");
    let replay = Command::new(BIN).args(["replay", "--require-seal"]).arg(&log).output().unwrap();
    let text = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success() && text.contains("seal: sealed"), "{text}");
}

#[test]
fn what_a_client_sends_right_after_initialize_waits_for_its_answer_and_carries_the_session() {
    let server = McpHttpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let mut child = Command::new(BIN)
        .args(["mcp", "--log"])
        .arg(&log)
        .args(["--approvals", "deny", "--time-budget", "5", "--upstream", &server.url])
        .env_remove("DECISION_LOG_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // All three at once, as a pipelining client sends them; the server takes 200 ms to answer
    // the first.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    write!(stdin, "{init}\n{initialized}\n{list}\n").unwrap();
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the gateway answered both requests: {answers:?}");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id").is_some() {
            answers.push(message);
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let listed = answers.iter().find(|a| a["id"] == 2).unwrap();
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(5), "{listed}");
    let posts: Vec<_> = server.seen().into_iter().filter(|s| s.method == "POST").collect();
    let order: Vec<_> = posts.iter().map(|s| s.rpc.clone().unwrap_or_default()).collect();
    assert_eq!(order, ["initialize", "notifications/initialized", "tools/list"], "{posts:?}");
    assert!(posts[1..].iter().all(|s| s.session.as_deref() == Some(SESSION)), "{posts:?}");
    assert!(posts[1..].iter().all(|s| s.version.as_deref() == Some("2025-11-25")), "{posts:?}");
}

#[test]
fn an_upstream_url_that_cannot_be_used_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("never.jsonl");
    for (url, why) in
        [("ftp://127.0.0.1/mcp", "http:// or https://"), ("http://me:pw@127.0.0.1/mcp", "must not carry credentials")]
    {
        let out = Command::new(BIN).args(["mcp", "--log"]).arg(&log).args(["--upstream", url]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(why) && !stderr.contains("pw@"), "{stderr}");
        assert!(!log.exists());
    }
    let both = Command::new(BIN)
        .args(["mcp", "--log"])
        .arg(&log)
        .args(["--upstream", "http://127.0.0.1:9/mcp", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "a command and a URL at once");
}
