//! `decision mcp --listen`: the gateway serving MCP clients over Streamable HTTP, each client
//! session in front of its own upstream server (`crates/mcp/tests/data/fake_server.py`) with
//! its own sealed log. Driven with a plain HTTP client, as the transport's specification
//! describes it; every wait is bounded and traffic stays on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_decision");
const WAIT: Duration = Duration::from_secs(60);

fn python_available() -> bool {
    Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/data/fake_server.py")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A listening gateway, stopped with SIGTERM when the test is done with it.
struct Listening {
    child: Child,
    url: String,
    logs: PathBuf,
    _dir: tempfile::TempDir,
}

impl Listening {
    fn start(options: &[&str]) -> Listening {
        Listening::start_with(options, &[])
    }

    /// As [`Listening::start`], the upstream server started with `server_env` set.
    fn start_with(options: &[&str], server_env: &[(&str, &str)]) -> Listening {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        let port = free_port();
        let address = format!("127.0.0.1:{port}");
        let child = Command::new(BIN)
            .args(["mcp", "--log"])
            .arg(&logs)
            .args(["--listen", &address])
            .args(options)
            .arg("--")
            .arg("python3")
            .arg(server())
            .env_remove("DECISION_LOG_KEY")
            .envs(server_env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(&address).is_err() {
            assert!(Instant::now() < deadline, "the gateway listens");
            std::thread::sleep(Duration::from_millis(20));
        }
        Listening { child, url: format!("http://{address}/mcp"), logs, _dir: dir }
    }

    /// Stops the gateway with SIGTERM; returns its stderr, every session log and the
    /// directory that holds them (removed when dropped).
    fn stop(mut self) -> (String, Vec<PathBuf>, tempfile::TempDir) {
        Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the gateway stops on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(self.child.wait().unwrap().success());
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        let mut logs: Vec<PathBuf> =
            std::fs::read_dir(&self.logs).unwrap().map(|e| e.unwrap().path()).filter(|p| is_log(p)).collect();
        logs.sort();
        let dir = std::mem::replace(&mut self._dir, tempfile::tempdir().unwrap());
        (stderr, logs, dir)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // A test that failed before `stop` leaves no gateway behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_log(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(WAIT)).build().into()
}

/// The messages of an event stream, or of a JSON body.
fn messages(response: ureq::http::Response<ureq::Body>) -> Vec<Value> {
    let reader = BufReader::new(response.into_body().into_reader());
    reader
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| line.strip_prefix("data: ").map(|d| serde_json::from_str(d).unwrap()))
        .collect()
}

/// One client: its session id once it has one.
struct Client {
    agent: ureq::Agent,
    url: String,
    session: Option<String>,
}

impl Client {
    fn new(url: &str) -> Client {
        Client { agent: agent(), url: url.to_owned(), session: None }
    }

    fn post_raw(&self, body: &[u8], origin: Option<&str>) -> ureq::http::Response<ureq::Body> {
        let mut request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send(body).unwrap()
    }

    /// POSTs a request; returns the messages of its stream (its response last).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let response = self.post_raw(body.as_bytes(), None);
        assert_eq!(response.status(), 200);
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_owned());
        }
        messages(response)
    }

    fn notify(&self, message: Value) -> u16 {
        self.post_raw(message.to_string().as_bytes(), None).status().as_u16()
    }

    fn handshake(&mut self, capabilities: Value) {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(init.last().unwrap()["result"]["serverInfo"]["name"], "fake", "{init:?}");
        assert!(self.session.as_ref().is_some_and(|s| s.len() == 32), "a 128-bit session id");
        assert_eq!(self.notify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})), 202);
        let listed = self.request(2, "tools/list", json!({}));
        assert_eq!(listed.last().unwrap()["result"]["tools"].as_array().unwrap().len(), 5);
    }

    fn call(&mut self, id: u64, tool: &str) -> Value {
        let answer = self.request(id, "tools/call", json!({"name": tool, "arguments": {"id": id}}));
        answer.last().cloned().unwrap()
    }

    fn delete(&self) -> u16 {
        let session = self.session.clone().unwrap();
        self.agent.delete(&self.url).header("mcp-session-id", &session).call().unwrap().status().as_u16()
    }
}

fn verify(log: &Path) -> String {
    verify_with(log, &[])
}

/// Verifies a log that may hold no decision (a session that made no call).
fn verify_sealed(log: &Path) -> String {
    verify_with(log, &["--allow-empty"])
}

fn verify_with(log: &Path, options: &[&str]) -> String {
    let out = Command::new(BIN).args(["replay", "--require-seal"]).args(options).arg(log).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("seal: sealed"), "{}: {text}{stderr}", log.display());
    text
}

#[test]
fn each_client_session_has_its_own_server_and_sealed_log_and_bad_requests_are_refused() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let gateway = Listening::start(&["--approvals", "deny", "--max-message", "4096"]);
    let mut first = Client::new(&gateway.url);
    first.handshake(json!({}));
    assert_eq!(first.call(3, "read_note")["result"]["content"][0]["text"], "ran read_note");
    let refused = first.call(4, "write_note");
    assert_eq!(refused["result"]["isError"], true, "{refused}");

    // Requests the transport refuses, each with the status the specification gives it.
    let stranger = Client::new(&gateway.url);
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}).to_string();
    assert_eq!(stranger.post_raw(ping.as_bytes(), None).status(), 400, "no session id");
    let unknown = Client { session: Some("0".repeat(32)), ..Client::new(&gateway.url) };
    assert_eq!(unknown.post_raw(ping.as_bytes(), None).status(), 404, "an unknown session");
    assert_eq!(first.post_raw(b"{not json", None).status(), 400);
    assert_eq!(first.post_raw(b"[]", None).status(), 400, "a batch");
    assert_eq!(first.post_raw(b"{}", None).status(), 400, "not a message");
    assert_eq!(first.post_raw(&vec![b' '; 5000], None).status(), 413, "over --max-message");
    assert_eq!(first.post_raw(ping.as_bytes(), Some("https://evil.example")).status(), 403);
    assert_eq!(first.post_raw(ping.as_bytes(), Some("http://localhost:6274")).status(), 200);

    // A second client is a session of its own; ending the first leaves it running.
    let mut second = Client::new(&gateway.url);
    second.handshake(json!({}));
    assert_ne!(first.session, second.session);
    assert_eq!(first.delete(), 200);
    assert_eq!(first.post_raw(ping.as_bytes(), None).status(), 404, "an ended session");
    assert_eq!(second.call(3, "add_note")["result"]["content"][0]["text"], "ran add_note");

    let (stderr, logs, _dir) = gateway.stop();
    assert_eq!(logs.len(), 2, "{stderr}");
    assert!(stderr.contains("client disconnected") && stderr.contains("stopped by a signal"), "{stderr}");
    for log in &logs {
        verify(log);
    }
}

#[test]
fn an_elicitation_reaches_the_client_on_its_get_stream_and_its_answer_releases_the_call() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let gateway = Listening::start(&["--approvals", "elicit", "--approval-timeout", "60"]);
    let mut client = Client::new(&gateway.url);
    client.handshake(json!({"elicitation": {}}));
    let get = client
        .agent
        .get(&client.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", client.session.as_deref().unwrap())
        .call()
        .unwrap();
    assert_eq!(get.status(), 200);
    let (send, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(get.into_body().into_reader()).lines().map_while(Result::ok) {
            if let Some(data) = line.strip_prefix("data: ") {
                let _ = send.send(serde_json::from_str::<Value>(data).unwrap());
            }
        }
    });
    let url = client.url.clone();
    let session = client.session.clone();
    let call = std::thread::spawn(move || {
        let mut caller = Client { session, ..Client::new(&url) };
        caller.call(3, "write_note")
    });
    let ask = received.recv_timeout(WAIT).expect("the elicitation on the GET stream");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let accept =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"approve": true}}});
    assert_eq!(client.notify(accept), 202);
    let ran = call.join().unwrap();
    assert_eq!(ran["result"]["content"][0]["text"], "ran write_note", "{ran}");
    assert_eq!(client.delete(), 200);
    let (_, logs, _dir) = gateway.stop();
    assert!(verify(&logs[0]).contains("✓ approvals: 1 requested · 1 answered · 1 used"));
}

#[test]
fn twenty_concurrent_clients_make_a_thousand_calls_and_every_log_verifies() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    const CLIENTS: u64 = 20;
    const CALLS: u64 = 50;
    let gateway = Listening::start(&["--approvals", "deny"]);
    let started = Instant::now();
    let workers: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let url = gateway.url.clone();
            std::thread::spawn(move || {
                let mut client = Client::new(&url);
                client.handshake(json!({}));
                let mut ran = 0;
                for call in 0..CALLS {
                    let tool = if call % 10 == 9 { "write_note" } else { "read_note" };
                    let answer = client.call(3 + call, tool);
                    if answer["result"]["content"][0]["text"] == "ran read_note" {
                        ran += 1;
                    }
                }
                // Half the clients end their session; the rest are ended by the signal.
                if n % 2 == 0 {
                    assert_eq!(client.delete(), 200);
                }
                ran
            })
        })
        .collect();
    let ran: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(ran, CLIENTS * CALLS * 9 / 10, "every read ran, every write was refused");
    assert!(started.elapsed() < Duration::from_secs(300));
    let (_, logs, _dir) = gateway.stop();
    assert_eq!(logs.len() as u64, CLIENTS);
    for log in &logs {
        assert!(verify(log).contains(&format!("✓ verified            {CALLS}")), "{}", log.display());
    }
}

#[test]
fn a_listening_address_other_machines_could_reach_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["mcp", "--log"])
        .arg(dir.path().join("logs"))
        .args(["--listen", "0.0.0.0:0", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be a loopback address"));
    assert!(!dir.path().join("logs").exists(), "nothing was created");
}

#[test]
fn a_session_whose_client_went_quiet_is_ended_and_sealed_and_the_client_begins_again() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let gateway = Listening::start(&["--approvals", "deny", "--session-idle", "1"]);
    let mut quiet = Client::new(&gateway.url);
    quiet.handshake(json!({}));
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string();
    // A client that keeps asking keeps its session: four pings half a second apart outlast the
    // idle second.
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(quiet.post_raw(ping.as_bytes(), None).status(), 200, "an active session lives on");
    }
    // Quiet for well over the idle second (the gateway looks five times a second): ended.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let status = quiet.post_raw(ping.as_bytes(), None).status();
        if status == 404 {
            break;
        }
        // Each ping above counts as activity; wait longer between them.
        std::thread::sleep(Duration::from_millis(1500));
        assert!(Instant::now() < deadline, "an idle session ends");
    }
    // The client begins again, as the transport says to on a 404.
    quiet.session = None;
    quiet.handshake(json!({}));
    let (stderr, logs, _dir) = gateway.stop();
    assert_eq!(logs.len(), 2, "{stderr}");
    assert!(stderr.contains("client idle"), "{stderr}");
    for log in &logs {
        verify_sealed(log);
    }
}

#[test]
fn a_client_waiting_on_a_slow_server_is_not_idle_and_its_idle_time_starts_at_the_answer() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    // The server takes twice the idle time to answer `initialize`.
    let gateway =
        Listening::start_with(&["--approvals", "deny", "--session-idle", "2"], &[("FAKE_SERVER_SLOW_START", "4")]);
    let mut client = Client::new(&gateway.url);
    let init = client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init.last().unwrap()["result"]["serverInfo"]["name"], "fake", "{init:?}");
    // A quarter of the idle time after the answer (the gateway looks for idle sessions five
    // times a second): the session counts from the answer, not from the request that began it.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(client.notify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})), 202);
    let listed = client.request(2, "tools/list", json!({}));
    assert_eq!(listed.last().unwrap()["result"]["tools"].as_array().unwrap().len(), 5);
    let (stderr, logs, _dir) = gateway.stop();
    assert_eq!(logs.len(), 1, "{stderr}");
    assert!(!stderr.contains("client idle"), "{stderr}");
    verify_sealed(&logs[0]);
}

#[test]
fn a_client_stalled_mid_request_never_keeps_the_gateway_from_stopping_and_sealing() {
    use std::io::Write as _;
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let gateway = Listening::start(&["--approvals", "deny"]);
    let mut client = Client::new(&gateway.url);
    client.handshake(json!({}));
    let address = gateway.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    // One connection promises a body it never sends; one opens a GET stream and never reads.
    let mut stalled = std::net::TcpStream::connect(&address).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nMcp-Session-Id: {}\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
        client.session.as_deref().unwrap()
    );
    stalled.write_all(head.as_bytes()).unwrap();
    let mut unread = std::net::TcpStream::connect(&address).unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\n\r\n",
        client.session.as_deref().unwrap()
    );
    unread.write_all(get.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let (stderr, logs, _dir) = gateway.stop();
    assert!(started.elapsed() < Duration::from_secs(30), "stopped without waiting for the stalled clients");
    assert_eq!(logs.len(), 1, "{stderr}");
    assert!(stderr.contains("stopped by a signal"), "{stderr}");
    verify_sealed(&logs[0]);
    drop((stalled, unread));
}

#[test]
fn a_stop_while_clients_begin_sessions_seals_every_session_it_began() {
    if !python_available() {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    const CLIENTS: usize = 12;
    let gateway = Listening::start(&["--approvals", "deny"]);
    let url = gateway.url.clone();
    let (began, begun) = mpsc::channel();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (url, began) = (url.clone(), began.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(15 * i as u64));
                let client = Client::new(&url);
                let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
                // Refused (503), cut off, or begun: each is a fair answer to a stopping gateway.
                let _ = client.agent.post(&client.url).header("accept", "application/json, text/event-stream").send(init.to_string().as_bytes());
                let _ = began.send(i);
            })
        })
        .collect();
    // Stop while the initializations are arriving.
    std::thread::sleep(Duration::from_millis(60));
    let (stderr, logs, _dir) = gateway.stop();
    for client in clients {
        client.join().unwrap();
    }
    drop(began);
    assert_eq!(begun.iter().count(), CLIENTS, "every client got an answer or a closed connection");
    // Every log a session began is sealed: none was begun after the stop ended the others.
    for log in &logs {
        verify_sealed(log);
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}
