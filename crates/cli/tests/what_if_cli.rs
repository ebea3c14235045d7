//! `decision what-if`: a recorded run re-evaluated under changed thresholds and a changed
//! contract, with not-comparable decisions listed and bad input refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{TempDir, decision};
use serde_json::Value;

const CONTRACT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");

/// A deterministic two-step run of the heuristic host (list, then the code index), logged in `dir`.
fn recorded_run(dir: &Path) -> PathBuf {
    let log = dir.join("run.jsonl");
    let out = decision(&[
        "run",
        "--task",
        "Which file defines the function `apply_discount`, and what does it return?",
        "--workdir",
        WORKSPACE,
        "--provider",
        "heuristic",
        "--log",
        log.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    log
}

fn json_report(args: &[&str]) -> Value {
    let out = decision(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_recorded_contract_changes_nothing() {
    let dir = TempDir::new("what-if-same");
    let log = recorded_run(dir.path());
    let report = json_report(&["what-if", log.to_str().unwrap(), "--contract", CONTRACT, "--format", "json"]);
    assert_eq!(report["decisions"], 11);
    assert_eq!(report["changed"], 0);
    assert_eq!(report["not_comparable"], 0);
}

#[test]
fn a_gate_change_lists_each_changed_decision_with_rule_and_margin() {
    let dir = TempDir::new("what-if-gate");
    let log = recorded_run(dir.path());
    let log = log.to_str().unwrap();
    let report = json_report(&[
        "what-if",
        log,
        "--contract",
        CONTRACT,
        "--gate",
        "grade_risk.needs_auth=0.1",
        "--format",
        "json",
    ]);
    assert_eq!(report["changed"], 2, "{report:#}");
    assert_eq!(report["by_action"]["auto → ask_human"], 2);
    assert_eq!(report["by_block"]["grade_risk"]["changed"], 2);
    let first = &report["changes"][0];
    assert_eq!((first["node"].as_str(), first["step"].as_f64()), (Some("grade_risk"), Some(1.0)));
    assert_eq!((first["old"].as_str(), first["new"].as_str()), (Some("auto"), Some("ask_human")));
    assert_eq!(first["rule"], "prob:needs_auth >= 0.1 → ask_human");
    assert!((first["margin"].as_f64().unwrap() - 0.05).abs() < 1e-9);

    let text = decision(&["what-if", log, "--contract", CONTRACT, "--gate", "grade_risk.needs_auth=0.1"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("auto → ask_human: 2"), "{text}");
    assert!(text.contains("changed: 2"), "{text}");
}

#[test]
fn changed_questions_are_listed_as_not_comparable() {
    let dir = TempDir::new("what-if-questions");
    let log = recorded_run(dir.path());
    let original = std::fs::read_to_string(CONTRACT).unwrap();
    // One risk level fewer: recorded risk answers no longer answer the new question.
    let changed = original.replace("- irreversible\n- destructive\n", "- irreversible\n");
    assert_ne!(changed, original);
    let contract = dir.file("changed.md", &changed);
    let report =
        json_report(&["what-if", log.to_str().unwrap(), "--contract", contract.to_str().unwrap(), "--format", "json"]);
    assert_eq!(report["not_comparable"], 2, "{report:#}");
    assert_eq!(report["compared"], 9);
    let reason = report["not_comparable_list"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("question `risk` offers"), "{reason}");
}

#[test]
fn bad_gates_and_missing_logs_are_usage_errors() {
    let dir = TempDir::new("what-if-bad");
    let log = recorded_run(dir.path());
    let out = decision(&["what-if", log.to_str().unwrap(), "--contract", CONTRACT, "--gate", "grade_risk.nope=0.1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    let missing = dir.path().join("missing.jsonl");
    let out = decision(&["what-if", missing.to_str().unwrap(), "--contract", CONTRACT]);
    assert_eq!(out.status.code(), Some(2));
}

/// A record without its block (as another writer may leave it) is counted under its decision
/// id in the by-block summary, never under `?`; steps are written as the integers they are.
#[test]
fn decisions_not_compared_are_summarised_by_name_and_steps_are_integers() {
    let dir = TempDir::new("what-if-unnamed");
    let log = recorded_run(dir.path());
    let text = std::fs::read_to_string(&log).unwrap();
    let without_blocks = dir.file("no-blocks.jsonl", &text.replace(r#","block":"grade_risk""#, ""));
    let original = std::fs::read_to_string(CONTRACT).unwrap();
    let contract = dir.file("changed.md", &original.replace("- irreversible\n- destructive\n", "- irreversible\n"));
    let args = ["what-if", without_blocks.to_str().unwrap(), "--contract", contract.to_str().unwrap()];
    let report = json_report(&[&args[..], &["--format", "json"]].concat());
    assert!(report["not_comparable"].as_u64().unwrap() >= 1, "{report:#}");
    let by_block = report["by_block"].as_object().unwrap();
    assert!(!by_block.contains_key("?"), "{report:#}");
    assert!(by_block["loop.gradeRisk"]["not_comparable"].as_u64().unwrap() >= 1, "{report:#}");
    let step = &report["not_comparable_list"][0]["step"];
    assert!(step.is_u64(), "an integral step is an integer: {step}");
    let human = String::from_utf8(decision(&args).stdout).unwrap();
    assert!(human.contains("  loop.gradeRisk ") && !human.contains("  ? "), "{human}");
}
