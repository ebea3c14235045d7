//! `--heads FILE`: runs append their log's head to a manifest, and `decision replay --heads`
//! names every log of a fleet that was cut, rewritten, deleted or added since.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::TempDir;
use serde_json::Value;
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_decision");
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";

fn decision(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("DECISION_LOG_KEY").output().unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A finished run into `log`, its head appended to `heads`.
fn run(log: &Path, heads: &Path) {
    let out =
        decision(&["run", "--task", TASK, "--workdir", WORKSPACE, "--log", s(log), "--heads", s(heads), "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains(&format!("recorded in {}", heads.display())), "{}", text(&out));
}

fn lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap().lines().map(str::to_owned).collect()
}

fn write(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

/// Recomputes every `prev`: the log is self-consistent again, and only a head kept aside tells.
fn rechain(lines: &mut [String]) {
    for i in 1..lines.len() {
        let prev = Sha256::digest(lines[i - 1].as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
        let at = lines[i].rfind(",\"prev\":\"").unwrap();
        lines[i] = format!("{},\"prev\":\"{prev}\"}}", &lines[i][..at]);
    }
}

/// The logs `decision replay --format json` fails, by file name, from its `files` entries.
fn failing(document: &Value) -> BTreeSet<String> {
    document["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["missing"] == true || !f["heads"]["problems"].as_array().is_none_or(Vec::is_empty))
        .map(|f| Path::new(f["path"].as_str().unwrap()).file_name().unwrap().to_str().unwrap().to_owned())
        .collect()
}

/// The file names the human output reports with a `✗ heads:` line.
fn named(human: &str) -> BTreeSet<String> {
    let mut file = String::new();
    let mut names = BTreeSet::new();
    for line in human.lines() {
        if let Some(path) = line.strip_prefix("file: ") {
            file = Path::new(path).file_name().unwrap().to_str().unwrap().to_owned();
        } else if line.starts_with("  ✗ heads: ") {
            names.insert(file.clone());
        }
    }
    names
}

fn fleet(tmp: &TempDir, runs: usize) -> (PathBuf, PathBuf) {
    let dir = tmp.path().join("fleet");
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    let heads = tmp.path().join("heads.jsonl");
    for i in 0..runs {
        let sub = if i % 2 == 0 { dir.clone() } else { dir.join("nested") };
        run(&sub.join(format!("run-{i}.jsonl")), &heads);
    }
    (dir, heads)
}

#[test]
fn a_cut_a_rewritten_and_a_deleted_log_are_named_and_nothing_else() {
    let tmp = TempDir::new("heads-fleet");
    let (dir, heads) = fleet(&tmp, 6);
    assert_eq!(lines(&heads).len(), 6, "one entry a run");
    let entry: Value = serde_json::from_str(&lines(&heads)[0]).unwrap();
    assert_eq!(entry["schema"], "decision-heads/v1");
    assert!(Path::new(entry["log"].as_str().unwrap()).is_absolute(), "{entry}");
    assert!(entry["records"].as_u64().unwrap() > 0, "{entry}");

    let out = decision(&["replay", "--heads", s(&heads), s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "an untouched fleet passes: {}", text(&out));
    assert!(named(&text(&out)).is_empty(), "{}", text(&out));

    // Cut: the last two lines (the run's end and its seal) are gone.
    let cut = dir.join("run-0.jsonl");
    let all = lines(&cut);
    write(&cut, &all[..all.len() - 2]);
    // Rewritten: one event changed and the chain recomputed after it.
    let rewritten = dir.join("nested/run-1.jsonl");
    let mut all = lines(&rewritten);
    let end = all.iter().position(|l| l.contains(r#""type":"run:end""#)).unwrap();
    all[end] = all[end].replace(r#""halt":"task_done""#, r#""halt":"answered_directly""#);
    rechain(&mut all);
    write(&rewritten, &all);
    // Deleted.
    std::fs::remove_file(dir.join("run-2.jsonl")).unwrap();

    // Without the manifest, nothing is wrong with what is left: each log is self-consistent.
    let out = decision(&["replay", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let out = decision(&["replay", "--heads", s(&heads), s(&dir)]);
    let human = text(&out);
    assert_eq!(out.status.code(), Some(1), "{human}");
    let expected: BTreeSet<String> = ["run-0.jsonl", "run-1.jsonl", "run-2.jsonl"].map(str::to_owned).into();
    assert_eq!(named(&human), expected, "{human}");
    assert!(human.contains("cut or replaced: the manifest's head"), "{human}");
    assert!(human.contains("rewritten: the manifest's head"), "{human}");
    assert!(human.contains("deleted: the heads manifest recorded head"), "{human}");

    let out = decision(&["replay", "--format", "json", "--heads", s(&heads), s(&dir)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let document: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failing(&document), expected, "{document}");
}

#[test]
fn a_log_the_manifest_does_not_name_fails_and_a_log_outside_the_paths_is_not_missing() {
    let tmp = TempDir::new("heads-unknown");
    let (dir, heads) = fleet(&tmp, 2);
    // A log written without --heads (or copied in) is unknown.
    let stranger = dir.join("stranger.jsonl");
    std::fs::copy(dir.join("run-0.jsonl"), &stranger).unwrap();
    let out = decision(&["replay", "--heads", s(&heads), s(&dir)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(named(&text(&out)), BTreeSet::from(["stranger.jsonl".to_owned()]), "{}", text(&out));
    assert!(text(&out).contains("unknown: the heads manifest names no head for this log"), "{}", text(&out));
    // Replaying one directory of the fleet does not report the logs of another as deleted.
    let out = decision(&["replay", "--heads", s(&heads), s(&dir.join("nested"))]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_bad_manifest_is_a_located_usage_error_and_head_and_heads_exclude_each_other() {
    let tmp = TempDir::new("heads-bad");
    let (dir, heads) = fleet(&tmp, 1);
    let mut all = lines(&heads);
    all.push("{\"schema\":\"decision-heads/v1\",\"log\":\"/x.jsonl\"}".to_owned());
    write(&heads, &all);
    let out = decision(&["replay", "--heads", s(&heads), s(&dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("heads.jsonl:2: not a decision-heads/v1 entry"), "{}", text(&out));
    let out = decision(&["replay", "--heads", s(&heads), "--head", &format!("1:{}", "0".repeat(64)), s(&dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = decision(&["replay", "--heads", s(&tmp.path().join("absent.jsonl")), s(&dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn the_gateway_records_its_head_when_the_client_disconnects() {
    if !Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("python3 is not on the path: skipped");
        return;
    }
    let tmp = TempDir::new("heads-mcp");
    let (log, heads) = (tmp.path().join("gateway.jsonl"), tmp.path().join("heads.jsonl"));
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/data/fake_server.py");
    let mut child = Command::new(BIN)
        .args(["mcp", "--log", s(&log), "--heads", s(&heads), "--", "python3", s(&server)])
        .env("FAKE_SERVER_CALLS", tmp.path().join("calls.jsonl"))
        .env_remove("DECISION_LOG_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"n":1}}}"#,
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    // Wait for the call's answer, then disconnect.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap() > 0 && !line.contains(r#""id":3"#) {
        line.clear();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let entries = lines(&heads);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let out = decision(&["replay", "--heads", s(&heads), s(&log)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
