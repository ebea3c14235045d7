//! `decision export` and `decision replay DIR`, as a user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(args)
        .output()
        .unwrap()
}

fn fleet(dir: &Path) {
    for (name, source) in [
        ("a/1.jsonl", "examples/support-triage/session.jsonl"),
        ("a/b/2.jsonl", "examples/coding-agent/session.jsonl"),
        ("edited.jsonl", "examples/broken/session-edited.jsonl"),
    ] {
        let target = dir.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(source), target).unwrap();
    }
    std::fs::write(dir.join("a/readme.txt"), "not a log").unwrap();
}

#[test]
fn export_writes_every_decision_and_names_the_logs_that_do_not_verify() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let out = dir.path().join("out.jsonl");
    let output = decision(&["export", dir.path().to_str().unwrap(), "--format", "jsonl", "-o", out.to_str().unwrap()]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.starts_with("exported 9 rows from 3 logs to "), "{stdout}");
    assert!(stdout.contains("records: 8 verified · 0 partial · 0 unverifiable · 1 mismatch"), "{stdout}");
    assert!(stdout.contains("logs: 1 do not verify") && stdout.contains("edited.jsonl"), "{stdout}");
    // Not a terminal: no progress display on standard error.
    assert!(output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 9);
}

#[test]
fn export_of_a_missing_path_or_an_empty_directory_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let missing = decision(&["export", dir.path().join("nope").to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope"));
    let empty = decision(&["export", dir.path().to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(empty.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("no session logs (*.jsonl) under"));
    assert!(!out.exists());
}

#[test]
fn replay_walks_directories() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let output = decision(&["replay", "--format", "json", "--jobs", "2", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "the edited log mismatches");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (document["records"].as_u64(), document["verified"].as_u64(), document["mismatch"].as_u64()),
        (Some(9), Some(8), Some(1))
    );
    let files: Vec<&str> = document["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files.len(), 3);
    assert!(
        files[0].ends_with("a/1.jsonl") && files[1].ends_with("a/b/2.jsonl") && files[2].ends_with("edited.jsonl"),
        "{files:?}"
    );
    let clean = dir.path().join("a");
    assert!(decision(&["replay", clean.to_str().unwrap()]).status.success());
}
