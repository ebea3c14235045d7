//! `--provider replay:LOG`: a recorded run re-executed from its log takes the same actions;
//! a changed task (so a changed state) or contract is a hard miss, never a live answer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{TempDir, decision};
use serde_json::Value;

const CONTRACT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";

fn run(dir: &Path, name: &str, contract: &str, task: &str, provider: &str) -> (Output, PathBuf) {
    let log = dir.join(name);
    let out = decision(&[
        "run",
        contract,
        "--task",
        task,
        "--workdir",
        WORKSPACE,
        "--provider",
        provider,
        "--log",
        log.to_str().unwrap(),
        "--quiet",
    ]);
    (out, log)
}

/// (node, step, action) of every decision in a log.
fn actions(log: &Path) -> Vec<(String, u64, String)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["e"]["type"] == "decision")
        .map(|v| {
            let e = &v["e"];
            (
                e["node"].as_str().unwrap().to_string(),
                e["step"].as_u64().unwrap(),
                e["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_replayed_run_takes_the_recorded_actions() {
    let dir = TempDir::new("replay-provider-same");
    let (out, recorded) = run(dir.path(), "first.jsonl", CONTRACT, TASK, "heuristic");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let provider = format!("replay:{}", recorded.display());
    let (out, replayed) = run(dir.path(), "again.jsonl", CONTRACT, TASK, &provider);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first = actions(&recorded);
    assert!(first.len() > 5, "the recorded run took {} decisions", first.len());
    assert_eq!(actions(&replayed), first);
    // The replayed log verifies as any other.
    assert!(decision(&["replay", replayed.to_str().unwrap()]).status.success());
}

#[test]
fn a_changed_state_or_contract_is_a_clear_miss() {
    let dir = TempDir::new("replay-provider-miss");
    let (_, recorded) = run(dir.path(), "first.jsonl", CONTRACT, TASK, "heuristic");
    let provider = format!("replay:{}", recorded.display());
    let (out, _) = run(dir.path(), "other-task.jsonl", CONTRACT, "Which file defines `with_tax`?", &provider);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("replay miss"), "{stderr}");

    // A question's wording changed: the first request differs, so nothing is served.
    let original = std::fs::read_to_string(CONTRACT).unwrap();
    let changed = original.replacen("ask: The task still needs an action", "ask: The task still requires an action", 1);
    assert_ne!(changed, original);
    let contract = dir.file("changed.md", &changed);
    let (out, log) = run(dir.path(), "changed.jsonl", contract.to_str().unwrap(), TASK, &provider);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("replay miss"), "{stderr}");
    assert!(actions(&log).iter().all(|(_, _, action)| action == "escalate"));
}

#[test]
fn a_log_without_decisions_is_refused_before_the_run() {
    let dir = TempDir::new("replay-provider-empty");
    let empty = dir.file("empty.jsonl", "{\"kind\":\"header\",\"v\":2,\"id\":\"s\"}\n");
    let (out, _) = run(dir.path(), "x.jsonl", CONTRACT, TASK, &format!("replay:{}", empty.display()));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no decision was recorded"));
}
