//! `decision lsp` spoken to as an editor does: JSON-RPC over the real binary's stdin and
//! stdout, driven by the data-driven scripts in `tests/lsp/*.json`.
//!
//! A script is `{"steps": [...]}`; each step is one of
//! - `{"send": MESSAGE}`: a JSON-RPC message (`"jsonrpc": "2.0"` is added);
//! - `{"sendBody": "text"}` / `{"sendBodyBytes": [255, …]}`: a frame with this body, as is;
//! - `{"sendRaw": "text"}`: bytes written as they are, headers included;
//! - `{"write": {"path": "capabilities.json", "text": "…"}}`: a file in the script's directory;
//! - `{"expect": MESSAGE}`: the next message from the server matches (see [`matches`]);
//!   `window/logMessage` notifications are passed over unless the expected message is one;
//! - `{"expectExit": CODE}`: the input is closed and the server exits with CODE.
//!
//! In every string, `${DIR}` is the script's temporary directory and `${ROOT}` the repository
//! root; a string `@file:PATH` is the text of PATH (from the repository root) and a string
//! `@repeat:N:TEXT` is TEXT written N times.
//!
//! After the last step the server must have said nothing more, and every script must end
//! with the server's exit: a server that crashed on a step fails the script there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a step waits for the server's answer.
const TIMEOUT: Duration = Duration::from_secs(30);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A running `decision lsp` with a thread reading its messages.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
}

impl Session {
    fn start(args: &[&str], dir: &Path) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_decision"))
            .arg("lsp")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("decision lsp starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Session { child, stdin, messages }
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the input is open");
        stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("the server reads its input");
    }

    fn send_body(&mut self, body: &[u8]) {
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body);
        self.write(&frame);
    }

    fn send(&mut self, mut message: Value) {
        message["jsonrpc"] = json!("2.0");
        self.send_body(message.to_string().as_bytes());
    }

    /// The next message; panics after [`TIMEOUT`] or when the server has stopped.
    fn next(&self, waiting_for: &Value) -> Value {
        match self.messages.recv_timeout(TIMEOUT) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("no message within {TIMEOUT:?}; expected {waiting_for:#}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server stopped; expected {waiting_for:#}"),
        }
    }

    /// The next message that is not a log line (unless a log line is expected).
    fn expect(&self, expected: &Value) -> Value {
        let wants_log = expected["method"] == "window/logMessage";
        loop {
            let message = self.next(expected);
            if message["method"] == "window/logMessage" && !wants_log {
                continue;
            }
            let mut path = String::new();
            if let Err(why) = matches(expected, &message, &mut path) {
                panic!("at {path}: {why}\nexpected {expected:#}\n     got {message:#}");
            }
            return message;
        }
    }

    fn exit_code(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if start.elapsed() > TIMEOUT {
                self.child.kill().unwrap();
                panic!("the server did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One framed message from the server, or `None` when its output ends.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = Some(n.parse::<usize>().expect("a numeric Content-Length"));
        }
    }
    let mut body = vec![0; length.expect("a Content-Length header")];
    reader.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("the server writes JSON"))
}

/// Whether `actual` has everything `expected` has: an object's expected keys (others are
/// ignored), an array's elements in order and no more, a string `~TEXT` as a substring, a
/// string `*` as any value (including absent), anything else exactly. `path` says where a
/// mismatch is.
fn matches(expected: &Value, actual: &Value, path: &mut String) -> Result<(), String> {
    match (expected, actual) {
        (Value::String(s), _) if s == "*" => Ok(()),
        (Value::String(s), Value::String(a)) if s.starts_with('~') => {
            if a.contains(&s[1..]) {
                Ok(())
            } else {
                Err(format!("{a:?} does not contain {:?}", &s[1..]))
            }
        }
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let len = path.len();
                path.push_str(&format!(".{key}"));
                let actual = a.get(key).unwrap_or(&Value::Null);
                if value != "*" {
                    matches(value, actual, path)?;
                }
                path.truncate(len);
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!("{} elements, not {}", a.len(), e.len()));
            }
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                matches(e, a, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        _ => Err(format!("{actual} is not {expected}")),
    }
}

/// `${DIR}`, `${ROOT}`, `@file:` and `@repeat:` replaced throughout a value.
fn substitute(value: &Value, dir: &Path) -> Value {
    match value {
        Value::String(s) => {
            let s = s.replace("${DIR}", dir.to_str().unwrap()).replace("${ROOT}", root().to_str().unwrap());
            if let Some(path) = s.strip_prefix("@file:") {
                Value::String(std::fs::read_to_string(root().join(path)).expect("a script's @file exists"))
            } else if let Some(rest) = s.strip_prefix("@repeat:") {
                let (n, text) = rest.split_once(':').expect("@repeat:N:TEXT");
                Value::String(text.repeat(n.parse().expect("@repeat:N")))
            } else {
                Value::String(s)
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, dir)).collect()),
        // Keys too: a rename's edits are keyed by the document's URI.
        Value::Object(map) => Value::Object(
            map.iter().map(|(k, v)| (k.replace("${DIR}", dir.to_str().unwrap()), substitute(v, dir))).collect(),
        ),
        other => other.clone(),
    }
}

fn run_script(name: &str) {
    let path = root().join("crates/cli/tests/lsp").join(name);
    let script: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().canonicalize().unwrap();
    let args: Vec<String> = script["args"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut session = Session::start(&args, &dir_path);
    let steps = script["steps"].as_array().expect("a script has steps");
    for (i, step) in steps.iter().enumerate() {
        let step = substitute(step, &dir_path);
        let context = format!("{name}, step {i}");
        if let Some(message) = step.get("send") {
            session.send(message.clone());
        } else if let Some(body) = step.get("sendBody") {
            session.send_body(body.as_str().unwrap().as_bytes());
        } else if let Some(bytes) = step.get("sendBodyBytes") {
            let bytes: Vec<u8> = bytes.as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect();
            session.send_body(&bytes);
        } else if let Some(raw) = step.get("sendRaw") {
            session.write(raw.as_str().unwrap().as_bytes());
        } else if let Some(file) = step.get("write") {
            std::fs::write(dir_path.join(file["path"].as_str().unwrap()), file["text"].as_str().unwrap()).unwrap();
        } else if let Some(expected) = step.get("expect") {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.expect(expected)));
            if let Err(e) = result {
                let why = e.downcast_ref::<String>().cloned().unwrap_or_default();
                panic!("{context}: {why}");
            }
        } else if let Some(code) = step.get("expectExit") {
            let extra: Vec<Value> =
                session.messages.try_iter().filter(|m| m["method"] != "window/logMessage").collect();
            assert!(extra.is_empty(), "{context}: unexpected messages before the exit: {extra:#?}");
            assert_eq!(session.exit_code(), code.as_i64().map(|c| c as i32), "{context}: exit status");
            return;
        } else {
            panic!("{context}: unknown step {step}");
        }
    }
    panic!("{name}: a script must end with expectExit");
}

#[test]
fn diagnostics_follow_every_change() {
    run_script("diagnostics.json");
}

#[test]
fn bad_input_is_answered_and_the_server_keeps_serving() {
    run_script("robustness.json");
}

#[test]
fn capabilities_beside_the_contract_and_the_reference_profile() {
    run_script("capabilities.json");
}

#[test]
fn positions_count_utf16_code_units() {
    run_script("unicode.json");
}

#[test]
fn hover_completion_navigation_rename_and_quick_fixes() {
    run_script("features.json");
}

#[test]
fn the_outline_lists_blocks_questions_frames_and_policies() {
    run_script("symbols.json");
}

/// The server's diagnostics are `decision check`'s, code for code, at the same places, with
/// the same messages and help, for every bundled contract, with and without the reference
/// profile.
#[test]
fn diagnostics_are_those_of_decision_check() {
    let mut contracts: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    contracts.sort();
    assert!(contracts.len() >= 4, "{contracts:?}");
    for profile in [None, Some("reference")] {
        let args: Vec<&str> = profile.map(|p| vec!["--profile", p]).unwrap_or_default();
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::start(&args, dir.path());
        session.send(json!({"id": 1, "method": "initialize", "params": {"capabilities": {}}}));
        session.expect(&json!({"id": 1}));
        for (n, contract) in contracts.iter().enumerate() {
            let text = std::fs::read_to_string(contract).unwrap();
            let mut check = Command::new(env!("CARGO_BIN_EXE_decision"));
            check.args(["check", "--format", "json"]).args(&args).arg(contract);
            let expected: Value = serde_json::from_slice(&check.output().unwrap().stdout).unwrap();
            let expected = expected["files"][0]["diagnostics"].as_array().unwrap().clone();
            // A URI whose directory has no capabilities.json, so that only the profile counts.
            let uri = format!("file://{}/contract{n}.md", dir.path().display());
            session.send(json!({"method": "textDocument/didOpen", "params": {"textDocument":
                {"uri": uri, "languageId": "decision", "version": 1, "text": text}}}));
            let published = session.expect(&json!({"method": "textDocument/publishDiagnostics"}));
            let got = published["params"]["diagnostics"].as_array().unwrap();
            assert_eq!(got.len(), expected.len(), "{}: {got:#?}", contract.display());
            for (g, e) in got.iter().zip(&expected) {
                let message = match e["help"].as_str() {
                    Some(help) => format!("{}\nhelp: {help}", e["message"].as_str().unwrap()),
                    None => e["message"].as_str().unwrap().to_string(),
                };
                assert_eq!(g["code"], e["code"], "{}", contract.display());
                assert_eq!(g["message"], json!(message));
                assert_eq!(g["severity"], json!(if e["severity"] == "error" { 1 } else { 2 }));
                assert_eq!(g["data"]["help"], e["help"]);
                let start = &g["range"]["start"];
                assert_eq!(start["line"].as_u64().unwrap() + 1, e["line"].as_u64().unwrap());
                // The byte offsets, read back from the UTF-16 positions.
                let line = text.split_inclusive('\n').nth(start["line"].as_u64().unwrap() as usize).unwrap_or("");
                let units = start["character"].as_u64().unwrap() as usize;
                let bytes: usize = line
                    .chars()
                    .scan(0, |u, c| {
                        *u += c.len_utf16();
                        Some((*u, c.len_utf8()))
                    })
                    .take_while(|(u, _)| *u <= units)
                    .map(|(_, b)| b)
                    .sum();
                let line_offset: usize =
                    text.split_inclusive('\n').take(start["line"].as_u64().unwrap() as usize).map(str::len).sum();
                assert_eq!(line_offset + bytes, e["start"].as_u64().unwrap() as usize, "{}: {g:#}", contract.display());
            }
        }
        session.send(json!({"id": 2, "method": "shutdown"}));
        session.expect(&json!({"id": 2, "result": null}));
        session.send(json!({"method": "exit"}));
        assert_eq!(session.exit_code(), Some(0));
    }
}
