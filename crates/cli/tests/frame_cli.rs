//! `decision frame` over the bundled coding-agent contract, whose frames declare the same
//! fields as the reference's: the reference marking reproduces the reference digests; the
//! default marking adds provenance; errors exit 1 or 2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;
use serde_json::Value;

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

fn fixture() -> String {
    format!("{}/../../examples/coding-agent/DECISION.md", env!("CARGO_MANIFEST_DIR"))
}

fn json_frame(block: &str, state: &Path, extra: &[&str]) -> Value {
    let fixture = fixture();
    let mut args =
        vec!["frame", fixture.as_str(), "--block", block, "--state", state.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = decision(&args);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn reference_marking_reproduces_the_reference_digests() {
    let dir = TempDir::new("frame-reference");
    let bare = dir.file("bare.json", r#"{"task":"t","cwd":"/w"}"#);
    let doc = json_frame("pick_tool", &bare, &["--profile", "reference", "--marking", "reference"]);
    assert_eq!(doc["frame"]["node"], "loop.pickTool");
    assert_eq!(doc["frame"]["digest"], "37beaaf426522254", "vector V5");
    assert_eq!(doc["questions"]["tool"]["type"], "choice");
    assert!(doc["requestDigest"].as_str().unwrap().len() == 16);
    assert_eq!(doc["dynamic"]["provider"], "toolsFor");
    let keys: Vec<_> = doc["frame"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["node", "state", "digest", "fields", "untrusted", "truncated", "unfilled", "absent", "excluded"]);
}

#[test]
fn default_marking_adds_provenance_to_untrusted_lists() {
    let dir = TempDir::new("frame-default");
    let full = dir.file("full.json", r#"{"task":"t","cwd":"/w","files":["a.ts"],"readFiles":[]}"#);
    let doc = json_frame("pick_tool", &full, &["--profile", "reference"]);
    assert_eq!(doc["frame"]["state"]["files_known"]["value"][0], "a.ts");
    assert!(doc["frame"]["provenance"].as_array().unwrap().iter().any(|p| p["key"] == "files_known"));
    assert_ne!(doc["frame"]["digest"], "37beaaf426522254");
}

#[test]
fn human_output_names_the_digests() {
    let dir = TempDir::new("frame-human");
    let bare = dir.file("bare2.json", r#"{"task":"t"}"#);
    let out = decision(&[
        "frame",
        &fixture(),
        "--block",
        "grade_risk",
        "--state",
        bare.to_str().unwrap(),
        "--profile",
        "reference",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("node loop.gradeRisk"), "{text}");
    assert!(text.contains("frame digest:") && text.contains("request digest:"));
    assert!(text.contains("absent: base_risk"), "{text}");
}

#[test]
fn every_refusal_exits_2_with_its_code() {
    let dir = TempDir::new("frame-bad");
    let bare = dir.file("bare3.json", r#"{"task":"t"}"#);
    let state = bare.to_str().unwrap();
    assert_eq!(decision(&["frame", &fixture(), "--block", "nope", "--state", state]).status.code(), Some(2));
    let list = dir.file("list.json", "[1]");
    assert_eq!(
        decision(&["frame", &fixture(), "--block", "step_ok", "--state", list.to_str().unwrap()]).status.code(),
        Some(2)
    );
    assert_eq!(decision(&["frame", "/nonexistent.md", "--block", "x", "--state", state]).status.code(), Some(2));
    // Without the reference profile, `history` is not a cell of this host: the frame
    // cannot be compiled.
    let out = decision(&["frame", &fixture(), "--block", "step_ok", "--state", state]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error[E_FRAME]: ") && stderr.contains("not a state cell"), "{stderr}");
    let unknown = decision(&["frame", &fixture(), "--block", "nope", "--state", state]);
    assert!(String::from_utf8_lossy(&unknown.stderr).starts_with("error[E_USAGE]: no block `nope`"));
    let missing = decision(&["frame", "/nonexistent.md", "--block", "x", "--state", state]);
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("error[E_IO]: cannot read /nonexistent.md"));
    // A host capability report that cannot be read is a file problem, as every other input
    // is; one that does not parse is the request's.
    for command in [
        &["check", &fixture(), "--capabilities", "/nonexistent.json"][..],
        &[
            "ask",
            &fixture(),
            "--block",
            "needs_tool",
            "--state",
            state,
            "--provider",
            "mock",
            "--capabilities",
            "/nonexistent.json",
        ],
    ] {
        let out = decision(command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        assert!(stderr.starts_with("error[E_IO]: cannot read /nonexistent.json"), "{command:?}: {stderr}");
    }
    let not_json = dir.file("caps.json", "{not json");
    let out = decision(&["check", &fixture(), "--capabilities", not_json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with(&format!("error[E_USAGE]: {}: ", not_json.display())), "{stderr}");
}
