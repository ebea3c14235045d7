//! `decision_runtime::api`: the CLI's documents from text, each with a failing and a passing
//! case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_protocol::digest::{frame_digest, request_digest, stringify};
use decision_protocol::frame::Mode;
use decision_runtime::api;
use decision_runtime::log::{DecisionEvent, FramedDecisionEvent};
use serde_json::{Map, Value, json};

const EXAMPLE: &str = include_str!("../../../examples/coding-agent/DECISION.md");

#[test]
fn check_reports_a_clean_file_and_a_broken_one() {
    let report = api::check::check_source(EXAMPLE.as_bytes(), None, false);
    let file = api::check::file_json(Some("x.md"), &report);
    assert_eq!(file["ok"], json!(true));
    assert_eq!(file["schema"], json!("decision-contract/v1"));
    assert_eq!(file["path"], json!("x.md"));
    let report = api::check::check_source(b"# t\n\n## a\nkind: nonsense\n", None, false);
    let file = api::check::file_json(None, &report);
    assert_eq!(file["ok"], json!(false));
    assert_eq!(file["path"], Value::Null);
    let first = &file["diagnostics"][0];
    assert!(first["code"].as_str().unwrap().starts_with("DC0"));
    assert!(first["line"].as_u64().unwrap() >= 1);
}

#[test]
fn explain_text_is_inside_the_document() {
    let doc = api::explain::document("x.md", EXAMPLE.as_bytes());
    let text = doc["text"].as_str().unwrap();
    assert_eq!(text, api::explain::cli_output("x.md", EXAMPLE.as_bytes()));
    let ids: Vec<&str> = doc["blocks"].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"pick_tool"));
    assert!(!text.contains("errors: run"));
    let broken = api::explain::cli_output("b.md", b"## a\n");
    assert!(broken.contains("errors: run `decision check b.md` for details"));
}

#[test]
fn frame_refuses_unknown_blocks_and_broken_contracts() {
    let contract = api::parse_contract("x.md", EXAMPLE.as_bytes()).unwrap();
    let missing = api::find_block("x.md", &contract, "nope").unwrap_err();
    assert_eq!(missing.code, api::Code::Usage);
    assert!(missing.message.contains("no block `nope` in x.md"), "{missing}");
    let broken = EXAMPLE.replacen("→ escalate", "→ escalatte", 1);
    let failed = api::parse_contract("b.md", broken.as_bytes()).unwrap_err();
    assert_eq!(failed.code, api::Code::Diagnostic("DC0108"));
    assert!(failed.message.starts_with("b.md does not parse:\n  b.md:"), "{failed}");
    assert_eq!(api::frame::parse_state("s.json", "[1]").unwrap_err().code, api::Code::Usage);
    let block = api::find_block("x.md", &contract, "pick_tool").unwrap();
    let state = api::frame::parse_state("s.json", r#"{"task": "find it"}"#).unwrap();
    let options = api::frame::FrameOptions { reference_profile: true, ..Default::default() };
    let doc = api::frame::document(block, &state, &options).unwrap();
    assert_eq!(doc["block"], json!("pick_tool"));
    assert_eq!(doc["requestDigest"].as_str().unwrap().len(), 16);
}

#[test]
fn a_prepared_frame_document_is_its_compiled_parts_with_the_blocks_own() {
    let contract = api::parse_contract("x.md", EXAMPLE.as_bytes()).unwrap();
    let state = api::frame::parse_state("s.json", r#"{"task": "find it", "history": [], "files": ["a.py"]}"#).unwrap();
    let (mut plain, mut dynamic) = (0, 0);
    for block in &contract.blocks {
        for mode in [Mode::Provenance, Mode::Reference] {
            let prepared = api::frame::PreparedFrame::reference(block, mode).unwrap();
            let (frame, request) = prepared.compile(&state);
            assert_eq!(prepared.block(), block.id);
            let mut parts = json!({
                "block": prepared.block(), "frame": frame, "questions": prepared.questions(), "requestDigest": request,
            });
            match prepared.dynamic() {
                Some(note) => {
                    parts["dynamic"] = note.clone();
                    dynamic += 1;
                }
                None => plain += 1,
            }
            // The same members in the same order, as the CLI's document has them.
            let options = api::frame::FrameOptions { reference_profile: true, mode, ..Default::default() };
            let cli = api::frame::document(block, &state, &options).unwrap();
            assert_eq!(prepared.document(&state).to_string(), parts.to_string());
            assert_eq!(cli.to_string(), parts.to_string());
        }
    }
    assert!(plain > 0 && dynamic > 0, "blocks with and without a `dynamic` note");
}

#[test]
fn a_framed_decision_event_writes_the_decision_event_of_its_frame_and_questions() {
    let contract = api::parse_contract("x.md", EXAMPLE.as_bytes()).unwrap();
    // A cell with an integer-like name (written first by JSON.stringify), text that needs
    // escaping, an untrusted cell (marked in provenance mode) and cells the blocks lack.
    let state = api::frame::parse_state(
        "s.json",
        r#"{"task": "find \"it\"\n\u2028", "history": [], "files": ["a.py"], "7": "seven", "output": "<b>",
            "cwd": "/w", "canWrite": true, "canDelete": false, "draft": "", "earlier": "", "lastResult": "ok",
            "lastTool": "read", "readFiles": []}"#,
    )
    .unwrap();
    let untrusted = ["output".to_owned(), "task".to_owned()];
    let answers = json!({"q": {"noul": 0.5}, "1": {"choice": "x"}}).as_object().unwrap().clone();
    let mut written = Vec::new();
    for block in &contract.blocks {
        for mode in [Mode::Provenance, Mode::Reference] {
            // A block that excludes a cell this state lacks cannot be framed from it.
            let Ok(prepared) = api::frame::PreparedFrame::of_state(block, &state, &untrusted, mode) else {
                continue;
            };
            let (artifact, request) = prepared.compile_artifact(&state);
            assert_eq!(prepared.questions_text(), stringify(prepared.questions()));
            for action in ["auto", "escalate"] {
                let framed = FramedDecisionEvent {
                    step: 3,
                    frame: &artifact,
                    request_digest: &request,
                    questions_text: prepared.questions_text(),
                    answers: &answers,
                    action,
                    reason: "a \"reason\"",
                    provider: "heuristic",
                };
                let owned = DecisionEvent {
                    step: 3,
                    id: artifact.node.clone(),
                    state: Map::clone(&artifact.state),
                    frame: Some(artifact.clone().into_value()),
                    request_digest: Some(request.clone()),
                    sent_frame_digest: Some(artifact.digest.clone()),
                    sent_questions: Some(prepared.questions().clone()),
                    batch_ids: Some(vec![artifact.node.clone()]),
                    questions: prepared.questions().clone(),
                    answers: Value::Object(answers.clone()),
                    action: action.into(),
                    reason: "a \"reason\"".into(),
                    provider: "heuristic".into(),
                    escalate: action == "escalate",
                    ..DecisionEvent::default()
                };
                let (mut framed_text, mut owned_text) = (String::new(), String::new());
                framed.write_to(&mut framed_text);
                owned.write_to(&mut owned_text);
                assert_eq!(framed_text, owned_text, "block {} in {mode:?}, {action}", block.id);
                assert_eq!(owned_text, stringify(&owned.to_value()));
                written.push(framed_text);
            }
        }
    }
    // Each block, mode and action wrote a record of its own: the comparison saw them differ.
    let distinct: std::collections::HashSet<&String> = written.iter().collect();
    assert_eq!(distinct.len(), written.len());
    assert!(written.len() >= 8, "at least two blocks framed: {}", written.len());
    assert!(written.iter().any(|text| text.contains("\"provenance\":[{\"key\":")), "an untrusted cell was marked");
}

#[test]
fn eval_escalates_on_an_invalid_answer_and_decides_on_a_valid_one() {
    let contract = api::parse_contract("x.md", EXAMPLE.as_bytes()).unwrap();
    let block = api::find_block("x.md", &contract, "needs_tool").unwrap();
    let policy = api::eval::gated_policy(&contract, block, &[]).unwrap();
    let questions = api::eval::block_questions(block, &api::eval::Candidates::new()).unwrap();
    let question = block.questions[0].id.clone();
    let bad = api::eval::parse_answers("a.json", &json!({ &question: {"choice": "maybe"} }).to_string()).unwrap();
    let outcome = api::eval::evaluate(block, &policy, &questions, &bad).to_json();
    assert_eq!(outcome["valid"], json!(false));
    assert_eq!(outcome["action"], json!("escalate"));
    let good = json!({ &question: {"type": "noul", "noul": 0.95} });
    let good = api::eval::parse_answers("a.json", &good.to_string()).unwrap();
    let outcome = api::eval::evaluate(block, &policy, &questions, &good).to_json();
    assert_eq!(outcome["valid"], json!(true), "{outcome}");
    assert!(api::eval::parse_answers("a.json", "[]").is_err());
    assert!(api::eval::parse_candidates("c.json", r#"{"tool": []}"#).is_err());
}

fn record_line(seq_run: u64, tamper: bool) -> String {
    let state: Map<String, Value> = json!({"task": "t"}).as_object().unwrap().clone();
    let digest = frame_digest("n", &state);
    let questions = json!({"q": {"type": "noul", "instructions": "i"}});
    let mut event = DecisionEvent {
        step: 1,
        id: "n".into(),
        frame: Some(json!({"node": "n", "state": state, "digest": digest})),
        request_digest: Some(request_digest(&digest, &questions)),
        sent_frame_digest: Some(digest.clone()),
        sent_questions: Some(questions.clone()),
        batch_ids: Some(vec!["n".into()]),
        state,
        questions,
        answers: json!({}),
        action: "continue".into(),
        reason: "r".into(),
        provider: "mock".into(),
        ..DecisionEvent::default()
    }
    .to_value();
    if tamper {
        event["state"]["task"] = json!("changed");
    }
    json!({"kind": "event", "run": seq_run, "at": 1, "e": event}).to_string()
}

#[test]
fn replay_of_text_matches_the_streamed_layout_and_finds_a_tampered_record() {
    let header = json!({"kind": "header", "v": 1, "id": "s", "createdAt": 1}).to_string();
    let log = format!("{header}\n{}\n{}\n", record_line(0, false), record_line(0, true));
    let request = api::replay::ReplayRequest { max_line: 1 << 20, ..Default::default() };
    let (doc, summary) = api::replay::verify_text("mem.jsonl", log.as_bytes(), &request);
    assert!(summary.failed());
    assert_eq!(doc["records"], json!(2));
    assert_eq!(doc["mismatch"], json!(1));
    assert_eq!(doc["results"].as_array().unwrap().len(), 1);
    assert_eq!(doc["results"][0]["line"], json!(3));
    // The in-memory document is the streamed one: head, results, tail.
    let head = summary.head().to_string();
    let tail = summary.tail().to_string();
    let results = doc["results"].as_array().unwrap().iter().map(Value::to_string).collect::<Vec<_>>().join(",");
    let streamed = format!("{},\"results\":[{results}],{}", &head[..head.len() - 1], &tail[1..]);
    assert_eq!(doc.to_string(), streamed);
    let (doc, summary) =
        api::replay::verify_text("mem.jsonl", format!("{header}\n{}\n", record_line(0, false)).as_bytes(), &request);
    assert!(!summary.failed());
    assert_eq!(doc["verified"], json!(1));
}

#[test]
fn a_single_record_verifies_alone_and_a_changed_one_mismatches() {
    let line = record_line(0, false);
    let verdict = api::replay::verify_record(line.as_bytes()).unwrap();
    assert_eq!(verdict["status"], json!("verified"), "{verdict}");
    let event: Value = serde_json::from_str(&line).unwrap();
    let verdict = api::replay::verify_record(event["e"].to_string().as_bytes()).unwrap();
    assert_eq!(verdict["status"], json!("verified"));
    let tampered = api::replay::verify_record(record_line(0, true).as_bytes()).unwrap();
    assert_eq!(tampered["status"], json!("mismatch"));
    assert!(api::replay::verify_record(b"{\"type\":\"tool\"}").is_err());
    assert!(api::replay::verify_record(b"not json").is_err());
}

#[test]
fn outcomes_documents() {
    let contracts = include_str!("../../../examples/outcomes/contracts.json");
    assert_eq!(api::outcomes::check_document("c.json", contracts)["ok"], json!(true));
    assert_eq!(api::outcomes::check_document("c.json", r#"{"contracts": [{"bogus": 1}]}"#)["ok"], json!(false));
    let set = decision_outcomes::load_contracts(contracts).unwrap();
    let contract = api::outcomes::contract_for(&set, "c.json", "catalog", "find_movies").unwrap();
    assert!(api::outcomes::contract_for(&set, "c.json", "catalog", "nope").is_err());
    let empty = json!({"status": "ok", "value": {"status": "success", "movies": []}});
    let validation = api::outcomes::validate(contract, "catalog", "find_movies", "o.json", &empty).unwrap();
    assert!(validation.violated());
    assert_eq!(validation.document["error_type"], json!("contract_violation"));
    let log = include_str!("../../../examples/outcomes/outcome-log.jsonl");
    assert!(api::outcomes::report("outcome-log.jsonl", log.as_bytes()).unwrap().is_object());
    let torn = api::outcomes::report("torn.jsonl", b"{not json\n").unwrap_err();
    assert_eq!((torn.code, torn.path.as_deref()), (api::Code::Report, Some("torn.jsonl")));
}
