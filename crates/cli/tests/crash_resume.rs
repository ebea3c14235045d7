//! Crash safety: runs killed with SIGKILL at random moments leave logs that verify and runs
//! that resume; a torn last line is repaired on resume; a tool whose result is in the log is
//! not run again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::TempDir;
use serde_json::Value;

const TASK: &str = "Summarize each file";

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).env_remove("DECISION_LOG_KEY").output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A work directory with enough files for a run of a few hundred steps.
fn workspace(dir: &Path, files: usize) -> std::path::PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for i in 0..files {
        std::fs::write(ws.join(format!("m_{i:03}.py")), format!("# module {i}\n\ndef value_{i}():\n    return {i}\n"))
            .unwrap();
    }
    ws
}

fn events(log: &Path) -> Vec<(u64, Value)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some((v.get("run")?.as_u64()?, v.get("e")?.clone())))
        .collect()
}

/// No step whose tool result is in the log is called again by a later run.
fn no_tool_runs_twice(log: &Path) {
    let events = events(log);
    let of = |kind: &str| -> Vec<(u64, u64)> {
        events.iter().filter(|(_, e)| e["type"] == kind).map(|(run, e)| (*run, e["step"].as_u64().unwrap())).collect()
    };
    let results = of("tool:result");
    for (run, step) in of("tool:call") {
        let earlier = results.iter().any(|&(r, s)| r < run && s == step);
        assert!(!earlier, "run {run} calls step {step} again, whose result an earlier run recorded");
    }
}

/// A tiny deterministic generator: the kill moments differ from kill to kill, and from run
/// to run of the test, within a fixed range.
fn next(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

#[test]
fn runs_killed_at_random_moments_verify_and_resume() {
    // 16 kills by default; `CRASH_KILLS` asks for more, at most 30, all within 20 s.
    let kills = std::env::var("CRASH_KILLS").ok().and_then(|n| n.parse().ok()).unwrap_or(16_usize).min(30);
    const TOTAL: Duration = Duration::from_secs(20);
    let tmp = TempDir::new("crash-kill");
    let ws = workspace(tmp.path(), 300);
    let started = Instant::now();
    let mut seed = u64::from(std::process::id()) ^ 0x9e37_79b9_7f4a_7c15;
    let (mut killed, mut resumed, mut repaired) = (0, 0, 0);
    for round in 0..kills {
        if started.elapsed() > TOTAL {
            break;
        }
        let log = tmp.path().join(format!("run-{round}.jsonl"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_decision"))
            .args(["run", "--task", TASK, "--workdir", s(&ws), "--max-steps", "1000", "--log", s(&log), "--quiet"])
            .env_remove("DECISION_LOG_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(30 + next(&mut seed) % 400));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        killed += 1;
        if std::fs::metadata(&log).map_or(true, |m| m.len() == 0) {
            continue; // killed before the header was written
        }
        // A run killed before its first decision leaves a log with no record: allowed here.
        let replay = decision(&["replay", "--allow-empty", s(&log)]);
        let shown = text(&replay.stdout);
        assert_eq!(replay.status.code(), Some(0), "round {round}: the killed run's log verifies: {shown}");
        assert!(shown.contains("chain: intact"), "{shown}");
        let resume = decision(&["resume", s(&log), "--workdir", s(&ws), "--time-budget", "0.01", "--quiet"]);
        let stderr = text(&resume.stderr);
        if stderr.contains("already ended") {
            assert_eq!(resume.status.code(), Some(2));
            continue; // the run finished before the kill
        }
        if stderr.contains("no usable run:start") {
            assert_eq!(resume.status.code(), Some(2));
            continue; // killed after the header, before the run started
        }
        assert!(matches!(resume.status.code(), Some(0 | 1)), "round {round}: resume continues: {stderr}");
        assert!(!stderr.contains("error:"), "round {round}: {stderr}");
        repaired += usize::from(stderr.contains("repaired"));
        resumed += 1;
        let replay = decision(&["replay", "--require-seal", s(&log)]);
        assert_eq!(replay.status.code(), Some(0), "round {round}: the resumed log is sealed: {}", text(&replay.stdout));
        no_tool_runs_twice(&log);
    }
    eprintln!("{killed} kills, {resumed} resumed runs, {repaired} torn tails repaired, {:?}", started.elapsed());
    assert!(resumed >= 1, "at least one run was killed mid-way and resumed ({killed} kills)");
}

#[test]
fn a_torn_last_line_is_repaired_on_resume_and_the_run_continues() {
    let tmp = TempDir::new("crash-torn");
    let ws = workspace(tmp.path(), 8);
    let full = tmp.path().join("full.jsonl");
    let out = decision(&["run", "--task", TASK, "--workdir", s(&ws), "--log", s(&full), "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // What a kill during a group's `write` leaves: whole lines, then part of one.
    let bytes = std::fs::read(&full).unwrap();
    let newlines: Vec<usize> = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
    let cut = newlines[newlines.len() / 2] + 40;
    let log = tmp.path().join("torn.jsonl");
    std::fs::write(&log, &bytes[..cut]).unwrap();
    let replay = decision(&["replay", s(&log)]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stdout));
    assert!(text(&replay.stdout).contains("torn last line"), "{}", text(&replay.stdout));
    let resume = decision(&["resume", s(&log), "--workdir", s(&ws), "--quiet"]);
    let stderr = text(&resume.stderr);
    assert_eq!(resume.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("was cut short when the process stopped") && stderr.contains("it was removed"), "{stderr}");
    let replay = decision(&["replay", "--require-seal", s(&log)]);
    let shown = text(&replay.stdout);
    assert_eq!(replay.status.code(), Some(0), "{shown}");
    assert!(shown.contains("chain: intact") && !shown.contains("torn last line"), "{shown}");
    no_tool_runs_twice(&log);
}
