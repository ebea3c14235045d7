//! The code floor under the authorisation gate, in the running loop: a decision backend that
//! calls every tool harmless (`risk = 0`, `needs_auth = 0.01`) cannot make a tool that changes
//! files run without a person (delete) or without an audit record (write). The bundled contract
//! offers no move; the floor under it is tested in `host::floor`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;
#[path = "../../runtime/tests/support/mod.rs"]
mod support;

use std::sync::Arc;

use decision_runtime::provider::{DecisionProvider, ScriptProvider, SystemOneProvider};
use host_common::{Options, ScriptedHuman, TempDir, replay, run};
use serde_json::{Map, Value, json};
use support::{Recorded, Reply, Server};

/// The answer a careless (or hostile) backend gives to each question: the call is harmless,
/// every step went well, the answer is deliverable, and the tool is the one that changes files.
/// Until the file names are known, the directory is listed first.
fn careless_answer(id: &str, question: &Value, state: &Value, wanted_tool: &str) -> Value {
    let files_known = state["files_known"].as_array().is_some_and(|f| !f.is_empty());
    let wanted_tool = if files_known { wanted_tool } else { "list_dir" };
    match (id, question["type"].as_str()) {
        ("risk", _) => json!({"type": "score", "score": 0, "probabilities": {"0": 1.0, "1": 0.0, "2": 0.0, "3": 0.0}}),
        ("needs_auth", _) => json!({"type": "noul", "noul": 0.01}),
        ("unsupported", _) => json!({"type": "noul", "noul": 0.02}),
        // Never done: the loop goes on until the tool that changes files is offered and picked.
        ("done", _) => json!({"type": "noul", "noul": 0.03}),
        (_, Some("choice")) => {
            let offered: Vec<&String> =
                question["criteria"].as_object().map(|c| c.keys().collect()).unwrap_or_default();
            let pick = offered.iter().find(|o| o.as_str() == wanted_tool).or(offered.first()).unwrap().to_string();
            let rest = 0.02 / (offered.len().max(2) - 1) as f64;
            let probabilities: Map<String, Value> =
                offered.iter().map(|o| (o.to_string(), json!(if **o == pick { 0.98 } else { rest }))).collect();
            json!({"type": "choice", "choice": pick, "probabilities": probabilities})
        }
        _ => json!({"type": "noul", "noul": 0.97}),
    }
}

/// A System One server on 127.0.0.1 answering every request carelessly.
fn careless_server(wanted_tool: &'static str) -> Server {
    Server::start(move |request: &Recorded, _| {
        let body = request.json();
        let questions = body["questions"].as_object().cloned().unwrap_or_default();
        let answers: Map<String, Value> =
            questions.iter().map(|(id, q)| (id.clone(), careless_answer(id, q, &body["state"], wanted_tool))).collect();
        Reply::json(200, &json!({"model": "careless-1", "answers": answers}))
    })
}

fn over_http(server: &Server) -> Arc<dyn DecisionProvider> {
    Arc::new(SystemOneProvider::new(&server.url()))
}

#[test]
fn a_delete_the_backend_calls_harmless_still_asks_a_person() {
    let server = careless_server("delete_file");
    let dir = TempDir::new("floor-delete");
    let ws = dir.workspace(&[("keep.txt", "precious")]);
    let human = ScriptedHuman { approve: false, ..ScriptedHuman::default() };
    let asked = human.asked.clone();
    let options = Options { allow_delete: true, human: Box::new(human), ..Options::default() };
    let out = run(&dir, "Delete keep.txt", &ws, over_http(&server), options);
    out.summary();
    assert_eq!(asked.lock().unwrap().as_slice(), ["delete_file(keep.txt)"], "a person was asked");
    assert_eq!(std::fs::read_to_string(ws.join("keep.txt")).unwrap(), "precious", "and the refusal held");
    assert!(out.of_type("tool:call").iter().all(|c| c["tool"] != "delete_file"));
    // The decision record says what the policy said on the model's word; the floor is beside it.
    let gate = out.of_type("decision").into_iter().find(|d| d["block"] == "grade_risk").unwrap().clone();
    assert_eq!(gate["action"], "auto");
    let floors = out.of_type("gate:floor");
    assert_eq!(floors.len(), 1);
    assert_eq!((floors[0]["decided"].as_str(), floors[0]["action"].as_str()), (Some("auto"), Some("ask_human")));
    assert_eq!((floors[0]["baseRisk"].as_u64(), floors[0]["modelRisk"].as_f64()), (Some(3), Some(0.0)));
    let (mismatch, verified, intact) = replay(&out.log);
    assert_eq!((mismatch, intact), (0, true));
    assert!(verified > 0);
}

#[test]
fn a_write_the_backend_calls_harmless_is_audited() {
    let server = careless_server("write_file");
    let dir = TempDir::new("floor-write");
    let ws = dir.workspace(&[("notes.txt", "notes")]);
    // Listed, read, written: the careless backend would go on to append, so the run stops there.
    let options = Options { allow_write: true, max_steps: 3, ..Options::default() };
    // The content is given word for word: without a generator nothing else is ever written.
    let out = run(&dir, "Create s.txt containing 'hello'", &ws, over_http(&server), options);
    out.summary();
    assert!(ws.join("s.txt").exists(), "the write ran, audited");
    let floors = out.of_type("gate:floor");
    assert_eq!(floors.len(), 1, "{:?}", out.decisions());
    assert_eq!((floors[0]["decided"].as_str(), floors[0]["action"].as_str()), (Some("auto"), Some("auto_audit")));
    let audit = std::fs::read_to_string(&out.audit).unwrap();
    assert_eq!(audit.lines().count(), 1, "one audit record: {audit}");
    assert!(audit.contains("write_file") && audit.contains("risk baseline of 1"), "{audit}");
    assert_eq!(replay(&out.log).0, 0);
}

#[test]
fn a_script_that_calls_a_delete_harmless_still_asks_a_person() {
    let script = json!({
        "needs_tool": [{"type": "noul", "noul": 0.97}],
        "tool": [{"type": "choice", "choice": "delete_file",
                  "probabilities": {"delete_file": 0.97, "list_dir": 0.02, "list_files": 0.0, "done": 0.01}}],
        "risk": [{"type": "score", "score": 0, "probabilities": {"0": 1.0, "1": 0.0, "2": 0.0, "3": 0.0}}],
        "needs_auth": [{"type": "noul", "noul": 0.01}],
        "deliverable": [{"type": "noul", "noul": 0.97}],
        "unsupported": [{"type": "noul", "noul": 0.02}],
    });
    let provider = Arc::new(ScriptProvider::from_json("script:careless", &script).unwrap());
    let dir = TempDir::new("floor-script");
    let ws = dir.workspace(&[("keep.txt", "precious")]);
    let human = ScriptedHuman { approve: false, ..ScriptedHuman::default() };
    let asked = human.asked.clone();
    let options = Options { allow_delete: true, human: Box::new(human), ..Options::default() };
    let out = run(&dir, "Delete keep.txt", &ws, provider, options);
    assert_eq!(out.summary().halt.split('+').next(), Some("denied"), "{:?}", out.decisions());
    assert_eq!(asked.lock().unwrap().as_slice(), ["delete_file(keep.txt)"]);
    assert!(ws.join("keep.txt").exists());
    assert_eq!(out.of_type("gate:floor").len(), 1);
}
