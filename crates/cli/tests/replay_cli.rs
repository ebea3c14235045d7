//! `decision replay` as a user runs it: the JSON document, the notes, and the exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;
use decision::digest::{frame_digest, request_digest};
use decision::log::{DecisionEvent, FsyncPolicy, LogHeader, SessionLog};
use serde_json::{Map, Value, json};

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

fn object(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// A chained log with three single-node decisions and a run:start.
fn write_log(path: &Path) {
    let header = LogHeader { id: "cli".into(), created_at_ms: 0, cwd: None };
    let mut log = SessionLog::create(path, &header, FsyncPolicy::Never).unwrap();
    log.append_event("run:start", &object(json!({"task": "t", "cwd": "/w"}))).unwrap();
    for step in 1..=3u64 {
        let state = object(json!({"tool": "read_file", "step": step}));
        let questions = json!({"ok": {"type": "noul", "instructions": "Did it work?"}});
        let digest = frame_digest("loop.stepOk", &state);
        log.append_decision(&DecisionEvent {
            step,
            id: "loop.stepOk".into(),
            frame: Some(json!({"node": "loop.stepOk", "digest": digest})),
            request_digest: Some(request_digest(&digest, &questions)),
            sent_frame_digest: Some(digest),
            sent_questions: Some(questions.clone()),
            batch_ids: Some(vec!["loop.stepOk".into()]),
            state,
            questions,
            answers: json!({"ok": {"type": "noul", "noul": 0.9}}),
            action: "continue".into(),
            reason: "prob:ok >= 0.5 → continue".into(),
            provider: "mock".into(),
            ..DecisionEvent::default()
        })
        .unwrap();
    }
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn a_clean_log_exits_0_with_the_documented_json_shape() {
    let tmp = TempDir::new("replay-clean");
    let dir = tmp.path();
    let path = dir.join("s.jsonl");
    write_log(&path);
    let out = decision(&["replay", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out);
    let keys: Vec<_> = doc.as_object().unwrap().keys().take(10).cloned().collect();
    assert_eq!(
        keys,
        [
            "records",
            "other_events",
            "runs",
            "skipped_lines",
            "verified",
            "partial",
            "unverifiable",
            "mismatch",
            "chain",
            "results"
        ]
    );
    assert_eq!(doc["records"], 3);
    assert_eq!(doc["other_events"], 1);
    assert_eq!(doc["runs"], 1);
    assert_eq!(doc["verified"], 3);
    assert_eq!(doc["chain"], "intact");
    assert_eq!(doc["results"], json!([]));
    assert_eq!(doc["notes"].as_array().unwrap().len(), 3);

    let verbose = json_of(&decision(&["replay", "--format", "json", "--verbose", path.to_str().unwrap()]));
    let results = verbose["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["run"], 0);
    assert_eq!(results[0]["step"], 1);
    assert_eq!(results[0]["node"], "loop.stepOk");
    assert_eq!(results[0]["status"], "verified");
    let names: Vec<_> = results[0]["checks"].as_array().unwrap().iter().map(|c| c["name"].clone()).collect();
    assert_eq!(names, ["frame-solo", "questions-solo", "sent-frame", "request"]);
    assert!(results[0]["checks"].as_array().unwrap().iter().all(|c| c["status"] == "pass" && c["detail"].is_string()));
}

#[test]
fn human_output_always_prints_the_three_notes() {
    let tmp = TempDir::new("replay-human");
    let dir = tmp.path();
    let path = dir.join("s.jsonl");
    write_log(&path);
    let out = decision(&["replay", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("records: 3 decisions · 1 other events · 1 runs"), "{text}");
    assert!(text.contains("chain: intact"));
    assert!(text.contains("✓ no inconsistent records"));
    assert!(text.contains("1. Replay does not check that the frame was compiled correctly"));
    assert!(text.contains("2. Replay does not check whether the decision was right"));
    assert!(text.contains("3. Replay does not compare answers"));
}

#[test]
fn a_mismatch_or_a_broken_chain_exits_1() {
    let tmp = TempDir::new("replay-broken");
    let dir = tmp.path();
    let path = dir.join("s.jsonl");
    write_log(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    // Tamper with the last record's state: a mismatch (the chain cannot see the last line).
    let tampered = lines[4].replacen("\"step\":3}", "\"step\":4}", 1);
    assert_ne!(tampered, lines[4]);
    lines[4] = &tampered;
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = decision(&["replay", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json_of(&out);
    assert_eq!(doc["mismatch"], 1);
    assert_eq!(doc["results"][0]["status"], "mismatch");
    assert_eq!(doc["results"][0]["checks"][0]["status"], "fail");
    let human = String::from_utf8(decision(&["replay", path.to_str().unwrap()]).stdout).unwrap();
    assert!(human.contains("✗ mismatch run 0 · step 3 · loop.stepOk (line 5)"), "{human}");

    // Delete a line: the records are consistent, the chain is not.
    let path = dir.join("deleted.jsonl");
    write_log(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(2);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = decision(&["replay", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json_of(&out);
    assert_eq!(doc["mismatch"], 0);
    assert_eq!(doc["chain"], "broken");
}

#[test]
fn a_torn_last_line_is_counted_not_fatal() {
    let tmp = TempDir::new("replay-torn");
    let dir = tmp.path();
    let path = dir.join("s.jsonl");
    write_log(&path);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 30]).unwrap();
    let out = decision(&["replay", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let doc = json_of(&out);
    assert_eq!(doc["skipped_lines"], 1);
    assert_eq!(doc["records"], 2);
    assert_eq!(doc["files"][0]["torn_tail"], 5);
    let human = String::from_utf8(decision(&["replay", path.to_str().unwrap()]).stdout).unwrap();
    assert!(human.contains("1 unreadable lines"), "{human}");
}

#[test]
fn usage_and_unreadable_input_exit_2() {
    assert_eq!(decision(&["replay"]).status.code(), Some(2));
    let out = decision(&["replay", "/nonexistent/log.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

/// A file replay verified nothing in is not green: an empty file, a file that is not a log,
/// and a log with an unreadable line in the middle all exit 1 and say why.
#[test]
fn a_file_with_nothing_verified_or_unreadable_lines_fails() {
    let tmp = TempDir::new("replay-unverified");
    let dir = tmp.path();
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let prose = dir.join("notes.md");
    std::fs::write(&prose, "# Notes\n\nNot a session log.\n").unwrap();
    for path in [&empty, &prose] {
        let out = decision(&["replay", path.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("✗ nothing was verified: the file holds no decision record"), "{stdout}");
        assert!(!stdout.contains("✓ no inconsistent records"), "{stdout}");
        let out = decision(&["replay", "--format", "json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let problems = json_of(&out)["files"][0]["problems"].to_string();
        assert!(problems.contains("nothing was verified"), "{problems}");
    }
    let prose_report = String::from_utf8_lossy(&decision(&["replay", prose.to_str().unwrap()]).stdout).into_owned();
    assert!(prose_report.contains("and 2 unreadable lines"), "{prose_report}");
    // --allow-empty passes a log without records, and only that.
    assert_eq!(decision(&["replay", "--allow-empty", empty.to_str().unwrap()]).status.code(), Some(0));
    assert_eq!(decision(&["replay", "--allow-empty", prose.to_str().unwrap()]).status.code(), Some(1));

    // A good log with one line in its middle that is not JSON.
    let log = dir.join("s.jsonl");
    write_log(&log);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "garbage");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let out = decision(&["replay", log.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("1 unreadable lines were not verified"), "{stdout}");
}

/// A torn last line (a write cut short) is allowed by the append-only format: the rest of the
/// log still verifies green.
#[test]
fn a_torn_last_line_alone_does_not_fail() {
    let tmp = TempDir::new("replay-torn");
    let log = tmp.path().join("s.jsonl");
    write_log(&log);
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("{\"kind\":\"event\",\"run\":0,\"e\":{\"ty");
    std::fs::write(&log, text).unwrap();
    let out = decision(&["replay", log.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("torn last line: line 6 was cut short"), "{stdout}");
    assert!(!stdout.contains("unreadable lines were not verified"), "{stdout}");
}
