//! `--time-budget` bounds wall time against a model server that trickles one byte a second:
//! every model request ends by the budget plus the grace, and no timeout is retried past it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::TempDir;

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";

/// A server on 127.0.0.1 that answers every request one byte per second, at most 40 bytes,
/// for at most 30 s in all.
struct Trickle {
    port: u16,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
}

impl Trickle {
    fn start() -> Trickle {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let (stop_flag, count) = (Arc::clone(&stop), Arc::clone(&connections));
        std::thread::spawn(move || {
            let started = Instant::now();
            while !stop_flag.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(30) {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
                    let mut request = [0u8; 8192];
                    let _ = stream.read(&mut request);
                    for byte in b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n".iter().take(40) {
                        if stream.write_all(&[*byte]).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_secs(1));
                    }
                });
            }
        });
        Trickle { port, stop, connections }
    }
}

impl Drop for Trickle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_server_sending_one_byte_a_second_cannot_stretch_a_run_past_its_budget() {
    let server = Trickle::start();
    let tmp = TempDir::new("budget-trickle");
    let log = tmp.path().join("run.jsonl");
    let url = format!("http://127.0.0.1:{}", server.port);
    let budget = 2.0;
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(["run", "--task", TASK, "--workdir", WORKSPACE, "--provider", "systemone", "--url", &url])
        .args(["--time-budget", "2", "--log", s(&log), "--quiet"])
        .env_remove("TYPESAFE_API_KEY")
        .env_remove("DECISION_GENERATOR_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: a run that outlasts 15 s is killed and fails the test.
    let status = wait_at_most(&mut child, started, Duration::from_secs(15));
    let elapsed = started.elapsed();
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert!(status.is_some(), "the run was still going after {elapsed:?}");
    // The budget, the 1 s grace, and the host's own work (process start, a debug build).
    assert!(elapsed.as_secs_f64() < budget + 1.0 + 1.5, "the run took {elapsed:?}");
    // The request the budget cut short failed closed, and the run ended with its report.
    assert!(stdout.contains("halt: "), "{stdout}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("timed out") || text.contains("time budget is spent"), "the outage is recorded");
    assert!(!text.contains("retrying in"), "no timeout is retried past the budget");
    assert!(server.connections.load(Ordering::SeqCst) >= 1);
}

/// `decision ask --timeout-ms` bounds the whole call, retries included: against the same
/// trickling server a 1.5 s limit ends the call by then (plus the process's own start), where
/// a limit per attempt let each retry take 1.5 s more.
#[test]
fn ask_timeout_bounds_the_whole_call_not_each_attempt() {
    let server = Trickle::start();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/support-triage");
    let url = format!("http://127.0.0.1:{}", server.port);
    let (contract, state) = (format!("{examples}/DECISION.md"), format!("{examples}/state.json"));
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(["ask", &contract, "--block", "is_actionable", "--state", &state, "--cells", "state"])
        .args(["--provider", "systemone", "--url", &url, "--timeout-ms", "1500"])
        .env_remove("TYPESAFE_API_KEY")
        .env_remove("DECISION_GENERATOR_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: a call that outlasts 20 s is killed and fails the test.
    let status = wait_at_most(&mut child, started, Duration::from_secs(20));
    let elapsed = started.elapsed();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert!(status.is_some(), "the call was still going after {elapsed:?}");
    assert!(elapsed.as_secs_f64() < 1.5 + 1.5, "the call took {elapsed:?}: {stderr}");
    // The model was not reached in time: the block escalates (fail closed), it does not pass.
    assert!(!stdout.contains("→ continue") && !stderr.contains("→ continue"), "{stdout}{stderr}");
    assert!(server.connections.load(Ordering::SeqCst) >= 1);
}

/// The child's exit status, or `None` when it was still running `limit` after `started` (it
/// is then killed).
fn wait_at_most(
    child: &mut std::process::Child,
    started: Instant,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
