//! The commands in `docs/session-log.md` that write a session log (a ```` ```sh ```` block, not
//! run by `documented_commands.rs` because they write a file) run as written, in a scratch
//! directory that sees the repository's `examples/`, and write a log that replays verified
//! with the actions of the shipped `examples/support-triage/session.jsonl`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Command;

use common::TempDir;
use serde_json::Value;

const DOC: &str = include_str!("../../../docs/session-log.md");

/// The `decision …` lines of the document's `sh` blocks.
fn documented_commands() -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in DOC.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
        } else if in_sh && line.starts_with("decision ") {
            commands.push(line.to_string());
        }
    }
    commands
}

fn actions(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v["e"]["type"] == "decision")
        .map(|v| v["e"]["action"].as_str().unwrap().to_string())
        .collect()
}

#[cfg(unix)]
#[test]
fn the_documented_log_commands_write_a_log_that_replays_verified() {
    let commands = documented_commands();
    assert!(commands.len() >= 4, "the sh block of docs/session-log.md: {commands:?}");
    let dir = TempDir::new("documented-log");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::os::unix::fs::symlink(&examples, dir.path().join("examples")).unwrap();
    for command in &commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_decision")).args(&args).current_dir(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let written = std::fs::read_to_string(dir.path().join("session.jsonl")).unwrap();
    let shipped = std::fs::read_to_string(examples.join("support-triage/session.jsonl")).unwrap();
    assert_eq!(actions(&written), actions(&shipped));
    assert_eq!(actions(&written), ["continue", "use", "auto_audit"]);
}
