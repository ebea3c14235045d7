//! `decision ask --cells state`: a host that is not the reference coding host asks with its
//! own state cells, marks the ones it names untrusted, and records a verifiable decision.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::process::{Command, Output};

use common::TempDir;
use serde_json::Value;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/support-triage");

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

fn example(name: &str) -> String {
    format!("{EXAMPLE}/{name}")
}

#[test]
fn a_host_with_its_own_cells_asks_and_records_a_verifiable_decision() {
    let dir = TempDir::new("ask-cells");
    let log = dir.path().join("session.jsonl").display().to_string();
    let provider = format!("script:{}", example("script.json"));
    let (contract, state) = (example("DECISION.md"), example("state.json"));
    let args = [
        "ask",
        &contract,
        "--block",
        "is_actionable",
        "--state",
        &state,
        "--cells",
        "state",
        "--untrusted",
        "body",
        "--provider",
        &provider,
        "--log",
        &log,
        "--format",
        "json",
    ];
    let out = decision(&args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["node"].as_str(), doc["action"].as_str()), (Some("is_actionable"), Some("continue")));
    let line = std::fs::read_to_string(&log).unwrap();
    let record: Value = serde_json::from_str(line.lines().nth(1).unwrap()).unwrap();
    let sent = &record["e"]["state"];
    assert!(sent["body"].as_str().unwrap().starts_with("⟨untrusted"), "the named cell is marked: {sent}");
    assert!(!sent["subject"].as_str().unwrap().starts_with("⟨untrusted"), "cells not named stay trusted: {sent}");
    assert!(sent.get("customer").is_none(), "an excluded cell is not sent: {sent}");
    assert_eq!(decision(&["replay", &log]).status.code(), Some(0));

    // Each ask is a run of its own, sealed: a second one continues the chain as run 1.
    assert_eq!(decision(&args).status.code(), Some(0));
    let replayed = decision(&["replay", "--require-seal", "--format", "json", &log]);
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stdout));
    let report: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!((report["records"].as_u64(), report["runs"].as_u64()), (Some(2), Some(2)), "{report}");
    assert_eq!(report["files"][0]["seal"], "sealed", "{report}");
    assert_eq!(report["files"][0]["chain"], "intact", "{report}");
}

#[test]
fn the_reference_cells_refuse_a_contract_with_other_cells_and_untrusted_needs_state_cells() {
    let provider = format!("script:{}", example("script.json"));
    let (contract, state) = (example("DECISION.md"), example("state.json"));
    let base = ["ask", &contract, "--block", "is_actionable", "--state", &state, "--provider", &provider];
    let out = decision(&base);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("subject"), "{stderr}");
    // The error names the host asked against and the flag that chooses another.
    assert!(stderr.contains("the reference coding host's") && stderr.contains("`--cells state`"), "{stderr}");
    let mut args = base.to_vec();
    args.extend(["--untrusted", "body"]);
    let out = decision(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cells state"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_host_named_by_its_capabilities_asks_with_its_cells_and_is_refused_where_the_block_does_not_fit() {
    let dir = TempDir::new("ask-capabilities");
    let provider = format!("script:{}", example("script.json"));
    let (contract, state, capabilities) = (example("DECISION.md"), example("state.json"), example("capabilities.json"));
    let ask = |capabilities: &str, extra: &[&str]| {
        let mut args = vec!["ask", &contract, "--block", "is_actionable", "--state", &state, "--provider", &provider];
        args.extend(["--capabilities", capabilities, "--format", "json"]);
        args.extend(extra);
        decision(&args)
    };
    let out = ask(&capabilities, &["--untrusted", "body"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["node"].as_str(), doc["action"].as_str()), (Some("is_actionable"), Some("continue")));

    // A host without the cell the frame reads: refused, naming the host's file and the flag.
    let mut report: Value = serde_json::from_str(&std::fs::read_to_string(&capabilities).unwrap()).unwrap();
    report["stateCells"] = serde_json::json!(["body", "channel", "customer", "tier", "product", "earlier", "orders"]);
    let narrow = dir.file("narrow.json", &report.to_string()).display().to_string();
    let out = ask(&narrow, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("narrow.json") && stderr.contains("`--capabilities`") && stderr.contains("subject"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was asked");

    // One host at a time.
    let out = ask(&capabilities, &["--cells", "state"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
