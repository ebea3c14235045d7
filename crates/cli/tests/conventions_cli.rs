//! The command line's conventions: shell completions, a refused log path that says what to
//! do, JSON documents that name every file given, reports that say what they left out and
//! what they checked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{TempDir, decision};
use serde_json::Value;

const CONTRACT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished run of the heuristic host, logged at `dir/run.jsonl`.
fn recorded_run(dir: &Path) -> PathBuf {
    let log = dir.join("run.jsonl");
    let out = heuristic_run(&log);
    assert!(out.status.success(), "{}", text(&out.stderr));
    log
}

/// `decision run` of the heuristic host on the bundled workspace, logged at `log`.
fn heuristic_run(log: &Path) -> Output {
    decision(&[
        "run",
        "--task",
        TASK,
        "--workdir",
        WORKSPACE,
        "--provider",
        "heuristic",
        "--log",
        log.to_str().unwrap(),
    ])
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_decision()"),
        ("zsh", "#compdef decision"),
        ("fish", "complete -c decision"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = decision(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        // Every command is offered, the newest included.
        assert!(script.contains("what-if") && script.contains("completions"), "{shell}");
    }
    let out = decision(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn run_with_an_existing_log_explains_and_suggests() {
    let dir = TempDir::new("run-existing-log");
    let log = recorded_run(dir.path());
    let before = std::fs::read(&log).unwrap();
    let out = heuristic_run(&log);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("already exists, and a session log is never overwritten"), "{stderr}");
    assert!(stderr.contains("--log") && stderr.contains(&format!("decision resume {}", log.display())), "{stderr}");
    assert!(!stderr.contains("os error 17"), "{stderr}");
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");
}

#[test]
fn check_json_names_a_file_it_could_not_read() {
    let dir = TempDir::new("check-missing");
    let missing = dir.path().join("missing.md");
    let out = decision(&["check", "--format", "json", missing.to_str().unwrap(), CONTRACT]);
    assert_eq!(out.status.code(), Some(2));
    let document: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = document["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{document:#}");
    assert_eq!(files[0]["path"], missing.to_str().unwrap());
    assert_eq!(files[0]["ok"], false);
    assert!(files[0]["error"].as_str().unwrap().starts_with("cannot read "), "{document:#}");
    assert_eq!((files[1]["path"].as_str(), files[1]["ok"].as_bool()), (Some(CONTRACT), Some(true)));
}

#[test]
fn replay_with_a_contract_says_the_policy_check_ran() {
    let dir = TempDir::new("replay-contract");
    let log = recorded_run(dir.path());
    let with = decision(&["replay", "--contract", CONTRACT, log.to_str().unwrap()]);
    assert_eq!(with.status.code(), Some(0), "{}", text(&with.stdout));
    let report = text(&with.stdout);
    assert!(
        report.contains(&format!("policy: each decision's action was checked against the policy of {CONTRACT}")),
        "{report}"
    );
    let without = text(&decision(&["replay", log.to_str().unwrap()]).stdout);
    assert!(!without.contains("policy: each decision"), "{without}");
}

#[test]
fn a_chain_report_says_how_many_breaks_it_did_not_list() {
    let dir = TempDir::new("replay-breaks");
    let log = recorded_run(dir.path());
    // Every line after the header loses its link (the chain field renamed): more breaks than
    // the report lists.
    let original = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = original.lines().map(str::to_owned).collect();
    let event = lines.iter().find(|l| l.contains(r#""type":"decision""#)).unwrap().clone();
    while lines.len() < 150 {
        lines.push(event.clone());
    }
    let broken = dir.file("broken.jsonl", &(lines.join("\n") + "\n"));
    let out = decision(&["replay", broken.to_str().unwrap()]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    let listed = report.lines().filter(|l| l.starts_with("  ✗ line ")).count();
    let counted: usize = report
        .lines()
        .find_map(|l| l.strip_prefix("chain: broken (")?.strip_suffix(" breaks)")?.parse().ok())
        .unwrap_or_else(|| panic!("{report}"));
    assert!(counted > listed, "{report}");
    assert!(report.contains(&format!("  … and {} more", counted - listed)), "{report}");
}

#[test]
fn explain_json_is_the_table_as_data() {
    let out = decision(&["explain", "--format", "json", CONTRACT]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let document: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(document["blocks"].as_array().unwrap().len(), 7, "{document:#}");
    assert_eq!(document["errors"], 0);
    // `text` is exactly the table the human format prints.
    let table = text(&decision(&["explain", CONTRACT]).stdout);
    assert_eq!(document["text"].as_str().unwrap(), table);
}
