//! `decision eval` and `decision ask` end to end, against the bundled coding-agent contract
//! (its seven blocks are the reference's, with the same questions and policies) and, for
//! System One, a real HTTP server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;
#[path = "../../runtime/tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;
use serde_json::{Value, json};
use support::{Reply, Server};

/// The bundled coding-agent contract.
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).env_remove("TYPESAFE_API_KEY").output().unwrap()
}

fn json_of(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

struct Dir(TempDir);

impl Dir {
    fn new(name: &str) -> Dir {
        Dir(TempDir::new(&format!("eval-{name}")))
    }
    fn file(&self, name: &str, value: &Value) -> String {
        self.0.file(name, &value.to_string()).display().to_string()
    }
    fn path(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }
}

fn pick_tool_answer(p: f64) -> Value {
    // Every tool the bundled contract's `pick_tool` offers.
    let others = [
        "read_file",
        "list_files",
        "search",
        "find_definition",
        "list_symbols",
        "find_references",
        "write_file",
        "append_file",
        "move_file",
        "delete_file",
        "done",
    ];
    let rest = (1.0 - p) / others.len() as f64;
    let mut probabilities: serde_json::Map<String, Value> =
        others.iter().map(|t| ((*t).to_owned(), json!(rest))).collect();
    probabilities.insert("list_dir".into(), json!(p));
    json!({"tool": {"type": "choice", "choice": "list_dir", "confidence": 0.5, "probabilities": probabilities}})
}

#[test]
fn eval_prints_the_decision_as_json() {
    let dir = Dir::new("valid");
    let answers = dir.file("a.json", &pick_tool_answer(0.71));
    let out = json_of(&decision(&["eval", FIXTURE, "--block", "pick_tool", "--answers", &answers, "--format", "json"]));
    assert_eq!(out["block"], "pick_tool");
    assert_eq!(out["valid"], true);
    assert_eq!(out["problems"], json!([]));
    assert_eq!(out["action"], "call");
    assert_eq!(out["reason"], "top >= 0.6 → call");
    assert_eq!(out["rule"], 0);
    let margin = out["margin"].as_object().unwrap();
    assert_eq!(margin.keys().collect::<Vec<_>>(), ["question", "threshold", "value", "margin"]);
    assert_eq!((margin["question"].clone(), margin["threshold"].clone()), (json!("tool"), json!(0.6)));
    assert!((margin["margin"].as_f64().unwrap() - 0.11).abs() < 1e-9);
}

#[test]
fn eval_fails_closed_on_an_invalid_answer_and_still_exits_zero() {
    let dir = Dir::new("invalid");
    let mut answer = pick_tool_answer(0.71);
    answer["tool"]["choice"] = json!("rm_rf");
    let answers = dir.file("a.json", &answer);
    let out = json_of(&decision(&["eval", FIXTURE, "--block", "pick_tool", "--answers", &answers, "--format", "json"]));
    assert_eq!((out["valid"].clone(), out["action"].clone()), (json!(false), json!("escalate")));
    assert_eq!(out["problems"], json!([{"question": "tool", "problem": "not_offered", "choice": "rm_rf"}]));
    assert_eq!((out["rule"].clone(), out["margin"].clone()), (Value::Null, Value::Null));
    let missing = dir.file("m.json", &json!({}));
    let out =
        json_of(&decision(&["eval", FIXTURE, "--block", "grade_risk", "--answers", &missing, "--format", "json"]));
    assert_eq!(out["problems"].as_array().unwrap().len(), 2, "both questions unanswered");
    assert_eq!(out["action"], "escalate");
}

#[test]
fn eval_applies_gates_and_shows_them_in_the_reason() {
    let dir = Dir::new("gates");
    let answers = dir.file("a.json", &pick_tool_answer(0.71));
    let out = json_of(&decision(&[
        "eval",
        FIXTURE,
        "--block",
        "pick_tool",
        "--answers",
        &answers,
        "--gate",
        "pick_tool.tool=0.8",
        "--format",
        "json",
    ]));
    assert_eq!(out["action"], "escalate");
    assert_eq!(out["margin"]["threshold"], 0.8);
    // The catch-all decided; the reason still shows that the gate was raised.
    assert_eq!(out["reason"], "else → escalate (gate: top >= 0.6 → call is now top >= 0.8 → call)");
    let risk = dir.file(
        "r.json",
        &json!({
            "risk": {"score": 1.2, "probabilities": {"0": 0.2, "1": 0.5, "2": 0.2, "3": 0.1}, "confidence": 0.3},
            "needs_auth": {"noul": 0.1}
        }),
    );
    let args = ["eval", FIXTURE, "--block", "grade_risk", "--answers", &risk, "--format", "json"];
    assert_eq!(json_of(&decision(&args))["action"], "auto_audit");
    let gated: Vec<&str> = args.iter().copied().chain(["--gate", "grade_risk.risk[1]=1.5"]).collect();
    let out = json_of(&decision(&gated));
    assert_eq!(
        (out["action"].clone(), out["reason"].clone()),
        (
            json!("auto"),
            json!("else → auto (gate: score:risk >= 1 → auto_audit is now score:risk >= 1.5 → auto_audit)")
        )
    );
    let both: Vec<&str> = args.iter().copied().chain(["--gate", "grade_risk.risk=3,grade_risk.risk[1]=1"]).collect();
    assert_eq!(json_of(&decision(&both))["action"], "auto_audit");
}

#[test]
fn eval_usage_and_input_errors_exit_two() {
    let dir = Dir::new("errors");
    let answers = dir.file("a.json", &pick_tool_answer(0.7));
    let not_object = dir.file("n.json", &json!([1, 2]));
    std::fs::write(dir.path("bad.json"), "{").unwrap();
    let bad = dir.path("bad.json");
    let cases: Vec<Vec<&str>> = vec![
        vec!["eval", FIXTURE, "--block", "nope", "--answers", &answers],
        vec!["eval", FIXTURE, "--block", "pick_tool", "--answers", "/nonexistent/a.json"],
        vec!["eval", FIXTURE, "--block", "pick_tool", "--answers", &not_object],
        vec!["eval", FIXTURE, "--block", "pick_tool", "--answers", &bad],
        vec!["eval", FIXTURE, "--block", "pick_tool", "--answers", &answers, "--gate", "pick_tool.tool"],
        vec!["eval", FIXTURE, "--block", "pick_tool", "--answers", &answers, "--gate", "pick_tool.nope=0.5"],
        vec!["eval", FIXTURE, "--block", "pick_tool", "--answers", &answers, "--gate", "grade_risk.risk=0.5"],
        vec!["eval", "/nonexistent/DECISION.md", "--block", "pick_tool", "--answers", &answers],
        vec!["eval", FIXTURE, "--block", "pick_tool"],
    ];
    for args in cases {
        let out = decision(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}: a clear message");
    }
}

#[test]
fn eval_human_output_names_action_reason_and_margin() {
    let dir = Dir::new("human");
    let answers = dir.file("a.json", &pick_tool_answer(0.71));
    let out = decision(&["eval", FIXTURE, "--block", "pick_tool", "--answers", &answers]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("pick_tool: call\n  reason: top >= 0.6 → call\n  margin: 0.1100"), "{text}");
}

#[test]
fn dynamic_candidates_define_the_offered_set() {
    let dir = Dir::new("candidates");
    let candidates = dir.file("c.json", &json!({"file": {"a.ts": "unread", "b.ts": "unread"}}));
    let answer = dir.file("a.json", &json!({"file": {"choice": "b.ts", "probabilities": {"a.ts": 0.3, "b.ts": 0.7}}}));
    let args = ["eval", FIXTURE, "--block", "pick_input", "--answers", &answer, "--format", "json"];
    let with: Vec<&str> = args.iter().copied().chain(["--candidates", &candidates]).collect();
    assert_eq!(json_of(&decision(&with))["action"], "use");
    let out = json_of(&decision(&args));
    assert_eq!(out["valid"], false, "without candidates the file's listed option is the offered set");
}

#[test]
fn ask_with_the_mock_compiles_the_frame_and_records_a_verifiable_decision() {
    let dir = Dir::new("ask-mock");
    let cells = dir.file("cells.json", &json!({"task": "list the files", "files": [], "readFiles": [], "history": []}));
    let log = dir.path("session.jsonl");
    let out = json_of(&decision(&[
        "ask",
        FIXTURE,
        "--block",
        "needs_tool",
        "--state",
        &cells,
        "--provider",
        "mock",
        "--log",
        &log,
        "--format",
        "json",
    ]));
    assert_eq!((out["block"].clone(), out["action"].clone()), (json!("needs_tool"), json!("use_tool")));
    assert_eq!(out["answers"]["needs_tool"]["noul"], 0.5);
    assert_eq!(out["margin"]["margin"], 0.0);
    assert_eq!(out["degraded"], true);
    // Appending to the same log works, and replay verifies both records.
    json_of(&decision(&[
        "ask",
        FIXTURE,
        "--block",
        "step_ok",
        "--state",
        &cells,
        "--provider",
        "mock",
        "--log",
        &log,
        "--format",
        "json",
    ]));
    let replay = decision(&["replay", &log, "--format", "json"]);
    let text = String::from_utf8_lossy(&replay.stdout);
    assert_eq!(replay.status.code(), Some(0), "{text}");
    assert!(text.contains("\"verified\":2") || text.contains("\"verified\": 2"), "{text}");
}

#[test]
fn ask_with_a_script_fails_closed_on_a_scripted_bad_answer() {
    let dir = Dir::new("ask-script");
    let cells = dir.file("cells.json", &json!({"task": "t"}));
    let script = dir.file("script.json", &json!({"done": [{"noul": 0.9}, {"noul": 1.7}]}));
    let provider = format!("script:{script}");
    let args = ["ask", FIXTURE, "--block", "is_done", "--state", &cells, "--provider", &provider, "--format", "json"];
    let first = json_of(&decision(&args));
    assert_eq!(first["action"], "finish");
    // A new process re-reads the script: the first answer again. The second answer needs two asks in one process,
    // so check the bad value through eval instead.
    let bad = dir.file("bad.json", &json!({"done": {"noul": 1.7}}));
    let out = json_of(&decision(&["eval", FIXTURE, "--block", "is_done", "--answers", &bad, "--format", "json"]));
    assert_eq!((out["valid"].clone(), out["action"].clone()), (json!(false), json!("escalate")));
    assert_eq!(
        decision(&["ask", FIXTURE, "--block", "is_done", "--state", &cells, "--provider", "script:/nonexistent.json"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        decision(&["ask", FIXTURE, "--block", "is_done", "--state", &cells, "--provider", "bogus"]).status.code(),
        Some(2)
    );
}

#[test]
fn ask_speaks_system_one_to_a_loopback_server() {
    let server = Server::start(|req, _| {
        let body: Value = req.json();
        assert_eq!(body["model"], "jev-test");
        assert_eq!(body["state"]["tool"], "read_file", "the frame of step_ok");
        Reply::json(200, &json!({"model": "jev-test", "answers": {"ok": {"type": "noul", "noul": 0.93}}}))
    });
    let dir = Dir::new("ask-systemone");
    let cells = dir.file("cells.json", &json!({"task": "t", "lastTool": "read_file", "lastResult": "contents"}));
    let url = server.url();
    let out = json_of(&decision(&[
        "ask",
        FIXTURE,
        "--block",
        "step_ok",
        "--state",
        &cells,
        "--provider",
        "systemone",
        "--url",
        &url,
        "--model",
        "jev-test",
        "--format",
        "json",
    ]));
    assert_eq!((out["action"].clone(), out["valid"].clone()), (json!("continue"), json!(true)));
    assert_eq!(out["model"], "jev-test");
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/systemone");
    assert!(sent.json()["state"]["output"].as_str().unwrap().contains("⟨untrusted"), "the frame was compiled");
    // The official endpoint without a key is refused before anything is sent.
    let refused = decision(&["ask", FIXTURE, "--block", "step_ok", "--state", &cells, "--provider", "systemone"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("TYPESAFE_API_KEY"));
    assert!(Path::new(FIXTURE).exists());
}
