//! `decision run`, `decision resume` and `decision adapter-report` as a user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;
#[path = "../../core/tests/reference/mod.rs"]
mod reference;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const README_TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_readme_command_delivers_offline_and_its_log_replays() {
    let tmp = TempDir::new("run-readme");
    let dir = tmp.path();
    let log = dir.join("run.jsonl");
    let out =
        decision(&["run", "--task", README_TASK, "--workdir", WORKSPACE, "--provider", "heuristic", "--log", s(&log)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("halt: task_done (delivered)"), "{stdout}");
    assert!(stdout.contains("pricing.py:6:     return price * (100 - percent) / 100"), "{stdout}");
    // The answer is the evidence report: no model wrote it, and the summary does not say one did.
    assert!(stdout.contains("decisions:") && stdout.contains("evidence reports: 1 (no model)"), "{stdout}");
    assert!(!stdout.contains("model calls"), "{stdout}");
    assert!(stdout.contains("time: decisions"), "{stdout}");
    // Each decision as it happens: node, action, probabilities, margin.
    assert!(stderr.contains("needs_tool   → use_tool    needs_tool=0.85  margin 0.35"), "{stderr}");
    // The definition comes from the code index, not from reading files in turn.
    assert!(stderr.contains("pick_tool    → call        tool=find_definition"), "{stderr}");
    assert!(stderr.contains("can_deliver  → deliver"), "{stderr}");
    let replay = decision(&["replay", s(&log)]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stdout));
    assert!(text(&replay.stdout).contains("chain: intact"));
}

#[test]
fn usage_problems_exit_2_and_refused_contracts_exit_1() {
    let tmp = TempDir::new("run-usage");
    let dir = tmp.path();
    let out = decision(&[
        "run",
        "--task",
        "x",
        "--workdir",
        WORKSPACE,
        "--provider",
        "nope",
        "--log",
        s(&dir.join("a.jsonl")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown provider `nope`"));
    let out = decision(&["run", "--task", "x", "--workdir", s(&dir.join("missing")), "--log", s(&dir.join("b.jsonl"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // A contract without `is_done`: the host refuses to start and says where.
    let contract =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md"))
            .unwrap()
            .replace("## is_done", "## is_finished");
    let path = dir.join("DECISION.md");
    std::fs::write(&path, contract).unwrap();
    let out = decision(&["run", s(&path), "--task", "x", "--workdir", WORKSPACE, "--log", s(&dir.join("c.jsonl"))]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the host refuses to start"), "{stderr}");
    assert!(stderr.contains("`is_done`"), "{stderr}");
    assert!(stderr.contains("(block `is_finished`)"), "the uninvoked block is located: {stderr}");
}

#[test]
fn an_empty_task_and_zero_limits_are_refused_with_plain_messages() {
    let tmp = TempDir::new("run-limits");
    let log = tmp.path().join("a.jsonl");
    for task in ["", "   "] {
        let out = decision(&["run", "--task", task, "--workdir", WORKSPACE, "--log", s(&log)]);
        assert_eq!(out.status.code(), Some(2), "{task:?}");
        assert!(text(&out.stderr).contains("the task is empty"), "{}", text(&out.stderr));
    }
    let out = decision(&["run", "--task", "x", "--workdir", WORKSPACE, "--max-steps", "0", "--log", s(&log)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the step limit must be at least 1"), "{stderr}");
    assert!(!stderr.contains("18446744073709551615"), "{stderr}");
    let out = decision(&["resume", s(&log), "--max-steps", "0"]);
    assert!(text(&out.stderr).contains("the step limit must be at least 1"), "{}", text(&out.stderr));
    let out = decision(&["run", "--task", "x", "--workdir", WORKSPACE, "--max-output-tokens", "0", "--log", s(&log)]);
    assert!(text(&out.stderr).contains("the token cap must be at least 1"), "{}", text(&out.stderr));
    assert!(!log.exists(), "nothing ran");
}

#[test]
fn resume_continues_an_unfinished_run_in_the_same_log() {
    let tmp = TempDir::new("run-resume");
    let dir = tmp.path();
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for (name, body) in [("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")] {
        std::fs::write(ws.join(name), body).unwrap();
    }
    let log = dir.join("run.jsonl");
    let task = "Summarize each file";
    let first =
        decision(&["run", "--task", task, "--workdir", s(&ws), "--max-steps", "2", "--log", s(&log), "--quiet"]);
    assert!(text(&first.stdout).contains("halt: max_steps"), "{}", text(&first.stdout));
    let resumed = decision(&["resume", s(&log), "--workdir", s(&ws), "--max-steps", "8"]);
    let (stdout, stderr) = (text(&resumed.stdout), text(&resumed.stderr));
    assert!(stderr.contains("resuming run 0") && stderr.contains("at step 3"), "{stderr}");
    assert!(stdout.contains("halt: task_done (delivered)"), "{stdout}\n{stderr}");
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log_text.matches("\"type\":\"run:start\"").count(), 2);
    assert!(log_text.contains("\"run\":1,"), "the resumed run has its own index");
    let replay = decision(&["replay", s(&log)]);
    assert_eq!(replay.status.code(), Some(0));
    assert!(text(&replay.stdout).contains("chain: intact"), "{}", text(&replay.stdout));
    // The resumed run ended with task_done: it is not resumable, and the log is left alone.
    let before = std::fs::read(&log).unwrap();
    let again = decision(&["resume", s(&log)]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    let message = text(&again.stderr);
    assert!(message.contains("run 1 already ended (halt `task_done`)"), "{message}");
    assert!(message.contains("start a new run with `decision run`"), "{message}");
    assert_eq!(std::fs::read(&log).unwrap(), before, "a refused resume writes nothing");
    // Neither is a missing log.
    assert_eq!(decision(&["resume", s(&dir.join("none.jsonl"))]).status.code(), Some(2));
}

#[test]
fn the_adapter_report_is_generated_and_checked() {
    let tmp = TempDir::new("run-report");
    let dir = tmp.path();
    let out = decision(&["adapter-report"]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["level"], 2);
    assert_eq!(report["terminalStates"], serde_json::json!(["end"]));
    assert_eq!(report["graphFeatures"], serde_json::json!(["branch", "retry", "escalation", "terminal-state"]));
    let path = dir.join("report.json");
    std::fs::write(&path, &out.stdout).unwrap();
    let ok = decision(&["adapter-report", "--check", s(&path)]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stdout));
    // A drifted report fails with one line per problem.
    let drifted = text(&out.stdout).replace("\"keep_going\"", "\"stop\"");
    std::fs::write(&path, drifted).unwrap();
    let bad = decision(&["adapter-report", "--check", s(&path)]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stdout).contains("positions[after-tool]"), "{}", text(&bad.stdout));
    // The external host's report describes another host (the issue-triage graph): it drifts.
    let triage = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/external-host/capabilities.json");
    let other = decision(&["adapter-report", "--check", triage]);
    assert_eq!(other.status.code(), Some(1));
    assert!(text(&other.stdout).contains("hostPositions lists `host:review`"), "{}", text(&other.stdout));
}

#[test]
fn the_reference_triage_report_drifts_from_the_coding_host() {
    let Some(fixture) = reference::path("fixtures/jevloop/external-host.capabilities.json") else { return };
    let other = decision(&["adapter-report", "--check", fixture.to_str().unwrap()]);
    assert_eq!(other.status.code(), Some(1));
    assert!(text(&other.stdout).contains("hostPositions lists `host:review`"), "{}", text(&other.stdout));
}

#[test]
fn a_run_that_does_not_deliver_says_why_on_screen() {
    let tmp = TempDir::new("run-why");
    let dir = tmp.path();
    // An unreachable decision server: the transport error and the node are on screen.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let args = ["run", "--task", README_TASK, "--workdir", WORKSPACE, "--provider", "openai", "--url", &url];
    let out = decision(&[&args[..], &["--quiet", "--log", s(&dir.join("a.jsonl"))]].concat());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let why = stdout.lines().find(|l| l.starts_with("why: ")).unwrap_or_else(|| panic!("no why: {stdout}"));
    assert!(why.contains("`loop.needsTool` at step 1") && why.contains("unavailable"), "{why}");
    assert!(!stdout.contains("no tool could be chosen with enough confidence (tool_unclear)\nwhy"), "{stdout}");
    // A write without --allow-write: nothing is written, and the flag is named.
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "alpha").unwrap();
    let task = "Create CHANGELOG.md containing the line 'v0.1: first release'";
    let out = decision(&["run", "--task", task, "--workdir", s(&ws), "--quiet", "--log", s(&dir.join("b.jsonl"))]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("halt: not_permitted"), "{stdout}");
    assert!(stdout.contains("why: writing files is not permitted in this run") && stdout.contains("--allow-write"));
    assert!(!ws.join("CHANGELOG.md").exists());
    // A delivered run has no why.
    let out =
        decision(&["run", "--task", README_TASK, "--workdir", WORKSPACE, "--quiet", "--log", s(&dir.join("c.jsonl"))]);
    assert!(!text(&out.stdout).contains("why: "), "{}", text(&out.stdout));
}
