//! Messages say each thing once: no doubled prefixes ("block `a`: block `a` …", "line 5: …
//! at line 5 …").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::process::{Command, Output};

use common::TempDir;

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_block_without_a_frame_is_named_once() {
    let dir = TempDir::new("messages-frame");
    let contract = dir.file(
        "r.md",
        "schema: decision-contract/v1\n## b\nkind: rule\nwhen: after-tool —— p\npolicy:\n  - else → stop\n",
    );
    let state = dir.file("s.json", "{}");
    let (contract, state) = (contract.to_str().unwrap(), state.to_str().unwrap());
    for args in [
        vec!["frame", contract, "--block", "b", "--state", state],
        vec!["ask", contract, "--block", "b", "--state", state, "--provider", "mock"],
    ] {
        let out = decision(&args);
        let text = stderr(&out);
        if text.contains("frame") {
            assert_eq!(text.matches("block `b`").count(), 1, "{}: {text}", args[0]);
        }
    }
    let out = decision(&["frame", contract, "--block", "b", "--state", state]);
    assert_eq!(stderr(&out).trim(), "error[E_FRAME]: block `b` has no `frame:`");
}

#[test]
fn an_unreadable_log_line_is_named_once() {
    let dir = TempDir::new("messages-line");
    let log = dir.file("o.jsonl", "{\"tool\":\"a\"}\n{\"tool\":\"b\",\"method\" 1}\n");
    let out = decision(&["outcomes", "report", log.to_str().unwrap()]);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains(": line 2: not JSON at column "), "{text}");
    assert_eq!(text.matches("line 2").count(), 1, "{text}");
}

#[test]
fn a_history_entry_with_a_missing_field_is_reported_not_shown_as_undefined() {
    let dir = TempDir::new("messages-history");
    let contract = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");
    let bad = dir.file("s.json", r#"{"task": "t", "history": [{"tool": "read_file", "input": "a.py"}]}"#);
    let out = decision(&["frame", contract, "--block", "is_done", "--state", bad.to_str().unwrap()]);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("history[0] lacks `result`"), "{text}");
    let good =
        dir.file("g.json", r#"{"task": "t", "history": [{"tool": "read_file", "input": "a.py", "result": "x"}]}"#);
    let out = decision(&[
        "frame",
        contract,
        "--block",
        "is_done",
        "--state",
        good.to_str().unwrap(),
        "--profile",
        "reference",
        "--format",
        "json",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout.contains("read_file(a.py) → x") && !stdout.contains("undefined"), "{stdout}");
}
