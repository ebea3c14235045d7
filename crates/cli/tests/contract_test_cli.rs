//! `decision test`: the bundled contracts' own tests pass and reach every rule; a failing case
//! exits 1 with its diff; uncovered rules are listed; a contract without tests is refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::process::{Command, Output, Stdio};

use common::TempDir;
use serde_json::Value;

const CODING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");
const TRIAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/support-triage/DECISION.md");

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).stdin(Stdio::null()).output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_bundled_contracts_pass_their_tests_and_reach_every_rule() {
    for contract in [CODING, TRIAGE] {
        let out = decision(&["test", contract, "--format", "json"]);
        assert!(out.status.success(), "{contract}: {}", String::from_utf8_lossy(&out.stdout));
        let report = json(&out);
        assert_eq!(report["failed"], 0);
        assert!(report["passed"].as_u64().unwrap() >= 12);
        for block in report["coverage"].as_array().unwrap() {
            assert_eq!(block["uncovered"], Value::Array(vec![]), "{contract}: {block}");
        }
    }
}

#[test]
fn a_failing_case_exits_1_with_a_diff_and_uncovered_rules_are_listed() {
    let dir = TempDir::new("contract-test-fail");
    let tests = dir.file(
        "t.json",
        r#"{"tests": [
          {"name": "wrong expectation", "block": "step_ok", "answers": {"ok": {"noul": 0.3}},
           "expect": {"action": "continue", "rule": "prob:ok >= 0.6 → continue"}},
          {"name": "right", "block": "is_done", "answers": {"done": {"noul": 0.9}}, "expect": {"action": "finish"}}
        ]}"#,
    );
    let out = decision(&["test", CODING, tests.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("FAIL step_ok · wrong expectation"), "{text}");
    assert!(text.contains("action: expected continue, got stop"), "{text}");
    assert!(text.contains("rule: expected prob:ok >= 0.6 → continue, got else → stop"), "{text}");
    assert!(text.contains("ok   is_done · right"), "{text}");
    assert!(text.contains("not reached: line"), "{text}");
    let report = json(&decision(&["test", CODING, tests.to_str().unwrap(), "--format", "json"]));
    assert_eq!((report["passed"].as_u64(), report["failed"].as_u64()), (Some(1), Some(1)));
    let is_done = report["coverage"].as_array().unwrap().iter().find(|b| b["block"] == "is_done").unwrap();
    assert_eq!(is_done["uncovered"][0]["rule"], "else → keep_going");
}

#[test]
fn no_tests_beside_the_contract_and_a_malformed_file_are_usage_errors() {
    let dir = TempDir::new("contract-test-missing");
    let contract = dir.file("DECISION.md", &std::fs::read_to_string(CODING).unwrap());
    let out = decision(&["test", contract.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("DECISION.tests.json"));
    let bad = dir.file("bad.json", r#"{"tests": [{"name": "x", "block": "step_ok"}]}"#);
    let out = decision(&["test", contract.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a test file"));
}
