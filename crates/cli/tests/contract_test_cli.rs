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

#[test]
fn a_host_with_its_own_cells_tests_frames_with_cells_state_or_its_capabilities() {
    let dir = TempDir::new("contract-test-cells");
    let state = serde_json::json!({
        "subject": "Charged twice", "body": "Please refund the second charge", "channel": "email",
        "customer": "Dana", "tier": "team", "product": "Ledgerly", "earlier": "", "orders": [],
        "amount": "49.00 EUR", "draft": ""
    });
    let case = serde_json::json!({"tests": [{
        "name": "the subject is sent, the customer is not",
        "block": "is_actionable",
        "state": state,
        "answers": {"is_actionable": {"noul": 0.9}},
        "expect": {"action": "continue", "frame": {"subject": "Charged twice"}}
    }]});
    let tests = dir.file("cells.tests.json", &case.to_string()).display().to_string();
    let capabilities = TRIAGE.replace("DECISION.md", "capabilities.json");

    // The default host is the reference coding host: the frame does not compile, and the
    // report names that host and the flags that choose another.
    let out = decision(&["test", TRIAGE, &tests]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("the reference coding host's cells"), "{stdout}");
    assert!(stdout.contains("`--cells state`") && stdout.contains("`--capabilities FILE.json`"), "{stdout}");

    for host in [
        vec!["--cells", "state"],
        vec!["--capabilities", &capabilities],
        vec!["--cells", "state", "--untrusted", "body"],
    ] {
        let mut args = vec!["test", TRIAGE, &tests, "--format", "json"];
        args.extend(host.iter().copied());
        let out = decision(&args);
        assert_eq!(out.status.code(), Some(0), "{host:?}: {}", String::from_utf8_lossy(&out.stdout));
        assert_eq!(json(&out)["passed"], 1);
    }

    // A host without the cell: the case fails, naming the adapter error.
    let mut report: Value = serde_json::from_str(&std::fs::read_to_string(&capabilities).unwrap()).unwrap();
    report["stateCells"] = serde_json::json!(["body", "channel", "customer", "tier", "product", "earlier", "orders"]);
    let narrow = dir.file("narrow.json", &report.to_string()).display().to_string();
    let out = decision(&["test", TRIAGE, &tests, "--capabilities", &narrow, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let diff = json(&out)["cases"][0]["diff"][0].as_str().unwrap().to_owned();
    assert!(diff.contains("does not fit the host") && diff.contains("subject"), "{diff}");
    // `--untrusted` names cells of a host that has them.
    assert_eq!(decision(&["test", TRIAGE, &tests, "--untrusted", "body"]).status.code(), Some(2));
}
