//! `decision check` and `decision explain` as a user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;
#[path = "../../core/tests/reference/mod.rs"]
mod reference;

use std::process::{Command, Output};

use common::TempDir;

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

/// A reference fixture's path, or `None` (after a printed skip line) without the reference files.
fn fixture(name: &str) -> Option<String> {
    reference::path(&format!("fixtures/jevloop/{name}")).map(|p| p.display().to_string())
}

/// A file of the repository's `examples/`.
fn shipped(path: &str) -> String {
    format!("{}/../../examples/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn example() -> String {
    format!("{}/../../examples/coding-agent/DECISION.md", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_bundled_example_and_the_reference_file_pass_with_the_reference_profile() {
    let mut files = vec![example()];
    files.extend(fixture("DECISION.md"));
    let mut args = vec!["check", "--profile", "reference"];
    args.extend(files.iter().map(String::as_str));
    let out = decision(&args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.matches(": ok — 0 errors, 0 warnings").count(), files.len(), "{stdout}");
}

#[test]
fn json_output_is_one_document_with_located_diagnostics() {
    let dir = TempDir::new("check-json");
    let bad = dir.file(
        "bad.md",
        "## foo\nkind: choise\nwhen: after-tool\nask: q\n- a — x\n- b — y\npolicy:\n  - top >= 0.6 → ask_humam\n",
    );
    let out = decision(&["check", "--format", "json", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = &doc["files"][0];
    assert_eq!(file["ok"], false);
    assert_eq!(file["schema"], serde_json::Value::Null);
    assert_eq!(file["summary"]["blocks"], 1);
    let diagnostics = file["diagnostics"].as_array().unwrap();
    let kind = diagnostics.iter().find(|d| d["code"] == "DC0109").unwrap();
    assert_eq!((kind["line"].as_u64(), kind["column"].as_u64()), (Some(2), Some(7)));
    assert_eq!(kind["layer"], "parse");
    assert_eq!(kind["block"], "foo");
    assert_eq!(kind["help"], "did you mean `choice`?");
    let action = diagnostics.iter().find(|d| d["code"] == "DC0108").unwrap();
    assert_eq!(action["help"], "did you mean `ask_human`?");
    assert!(diagnostics.iter().any(|d| d["layer"] == "schema"));
    let warning = diagnostics.iter().find(|d| d["severity"] == "warning").unwrap();
    assert_eq!(warning["code"], "DC0514");
    for key in ["code", "severity", "layer", "message", "line", "column", "block", "help"] {
        assert!(kind.get(key).is_some(), "{key}");
    }
}

#[test]
fn deny_warnings_turns_warnings_into_errors() {
    let text = "schema: decision-contract/v1\n\n## done\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\npolicy:\n  - prob:done >= 0.6 → finish\nframe:\n  + task 10 —— r\n";
    let dir = TempDir::new("check-deny");
    let file = dir.file("warn.md", text);
    let path = file.to_str().unwrap();
    assert_eq!(decision(&["check", path]).status.code(), Some(0));
    let denied = decision(&["check", "--deny", "warnings", "--format", "json", path]);
    assert_eq!(denied.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&denied.stdout).unwrap();
    assert_eq!(doc["files"][0]["diagnostics"][0]["severity"], "error");
}

#[test]
fn human_output_shows_the_source_line_and_help() {
    let dir = TempDir::new("check-human");
    let bad = dir.file(
        "human.md",
        "schema: decision-contract/v1\n\n## foo\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\npolicy:\n  - prob:foo >= 0.6 → ask_humam\n  - else → stop\n",
    );
    let out = decision(&["check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    // Diagnostics and then the summary, both on stdout: a redirect keeps them together.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("DC0108"), "{stdout}");
    assert!(stdout.contains("  - prob:foo >= 0.6 → ask_humam"), "{stdout}");
    assert!(stdout.contains("did you mean `ask_human`?"), "{stdout}");
    assert!(stdout.contains("human.md:10:"), "{stdout}");
    let summary = stdout.find("human.md: FAILED").unwrap();
    assert!(stdout.find("DC0108").unwrap() < summary, "the diagnostics come first: {stdout}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn capabilities_files_run_the_adapter_layer() {
    let caps = shipped("external-host/capabilities.json");
    let triage = shipped("external-host/triage.DECISION.md");
    let out = decision(&["check", "--format", "json", "--capabilities", &caps, &triage]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    // The host does not handle `auto` at `host:review`: the adapter layer says so.
    let dir = TempDir::new("check-caps");
    let bad = dir.file("triage.md", &std::fs::read_to_string(&triage).unwrap().replace("else → finish", "else → auto"));
    let out = decision(&["check", "--format", "json", "--capabilities", &caps, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let diagnostics = doc["files"][0]["diagnostics"].as_array().unwrap();
    assert!(diagnostics.iter().any(|d| d["layer"] == "adapter" && d["severity"] == "error"), "{diagnostics:?}");
}

#[test]
fn the_reference_custom_graph_has_one_policy_error_under_its_capabilities() {
    let (Some(caps), Some(custom)) = (fixture("external-host.capabilities.json"), fixture("custom-graph.DECISION.md"))
    else {
        return;
    };
    let out = decision(&["check", "--format", "json", "--capabilities", &caps, &custom]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let diagnostics = doc["files"][0]["diagnostics"].as_array().unwrap();
    let errors: Vec<_> = diagnostics.iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{diagnostics:?}");
    assert_eq!(errors[0]["layer"], "policy");
    assert_eq!(errors[0]["line"], 65);
}

#[test]
fn usage_and_io_problems_exit_2() {
    let out = decision(&["check", "/definitely/not/here.md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /definitely/not/here.md"));
    assert_eq!(decision(&["check"]).status.code(), Some(2));
    assert_eq!(decision(&["check", "--profile", "nope", &example()]).status.code(), Some(2));
    assert_eq!(decision(&["check", "--capabilities", "/nope.json", &example()]).status.code(), Some(2));
    let dir = TempDir::new("check-usage");
    let malformed = dir.file("caps.json", "{\"positions\": 3}");
    let out = decision(&["check", "--capabilities", malformed.to_str().unwrap(), &example()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}

#[test]
fn explain_prints_the_contract_as_a_table() {
    let out = decision(&["explain", &example()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("7 decisions, 9 questions"));
    assert!(text.contains("## grade_risk (line"));
    assert!(text.contains("[authorisation gate]"));
    assert!(text.contains("score:risk >= 2"));
    assert!(text.contains("+ task"));
    assert!(text.contains("- cwd"));
    assert!(text.contains("dynamic   toolsFor(ctx: history, files, readFiles, canWrite, canDelete) → candidates"));
}
