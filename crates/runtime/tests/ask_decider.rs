//! Questions compiled from the real reference contract, one request per step, validation
//! and policy evaluation in the decider.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use decision_core::contract::{Block, Contract};
use decision_core::policy::{apply_gates, compile_block, parse_gates};
use decision_protocol::ask::{
    AnswerProblem, CandidateProvider, CandidateRegistry, Candidates, QuestionError, Questions, ReadCells, WireQuestion,
    compile_questions,
};
use decision_protocol::digest::{frame_digest, request_digest, stringify};
use decision_runtime::decide::{DecideError, Decider, NodeSpec};
use decision_runtime::log::NodeDecisionEvent;
use decision_runtime::provider::{
    DecisionProvider, ErrorCode, MockProvider, ProviderError, Request, Response, ScriptProvider,
};
use serde_json::{Map, Value, json};

/// The bundled example contract: its blocks are the reference's seven, in the project's words.
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");

fn contract() -> Contract {
    let source = std::fs::read(FIXTURE).unwrap();
    let parsed = decision_core::parse(&source);
    assert!(parsed.diagnostics.iter().all(|d| !d.is_error()), "{:?}", parsed.diagnostics);
    parsed.contract
}

fn block<'a>(contract: &'a Contract, id: &str) -> &'a Block {
    contract.blocks.iter().find(|b| b.id == id).unwrap()
}

/// The reference `toolsFor` (runtime.md §2.8), enough for these tests.
struct ToolsFor {
    reads: Vec<String>,
}

impl CandidateProvider for ToolsFor {
    fn name(&self) -> &str {
        "toolsFor"
    }
    fn reads(&self) -> Vec<String> {
        self.reads.clone()
    }
    fn candidates(&self, cells: ReadCells<'_>) -> Candidates {
        assert!(cells.iter().all(|(k, _)| self.reads.contains(k)), "only declared cells are visible: {cells:?}");
        assert!(cells.get("task").is_none(), "an undeclared cell reads as absent");
        let done: Vec<&str> = cells
            .get("history")
            .and_then(Value::as_array)
            .map(|h| h.iter().filter_map(|s| s["tool"].as_str()).collect())
            .unwrap_or_default();
        let mut options = Vec::new();
        if !done.contains(&"list_dir") {
            options.push(("list_dir".into(), "The agent does not yet know which files exist.".into()));
        }
        if cells.get("canWrite") == Some(&json!(true)) && !done.contains(&"write_file") {
            options.push(("write_file".into(), "A file must be created or its content changed.".into()));
        }
        options.push(("done".into(), "Everything the task asks for has already been done.".into()));
        Candidates { options, instructions: None }
    }
}

/// The reference `fileOptions`: unread files.
struct FileOptions;

impl CandidateProvider for FileOptions {
    fn name(&self) -> &str {
        "fileOptions"
    }
    fn reads(&self) -> Vec<String> {
        vec!["files".into(), "readFiles".into()]
    }
    fn candidates(&self, cells: ReadCells<'_>) -> Candidates {
        let read: Vec<&Value> =
            cells.get("readFiles").and_then(Value::as_array).map(|r| r.iter().collect()).unwrap_or_default();
        let options = cells
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|f| !read.contains(f))
            .filter_map(Value::as_str)
            .map(|f| {
                (f.to_string(), format!("The task still needs the contents of {f}, and it has not been read yet."))
            })
            .collect();
        Candidates { options, instructions: Some("Which file should this tool call target?".into()) }
    }
}

fn registry() -> CandidateRegistry {
    let mut registry = CandidateRegistry::new();
    let reads = ["history", "files", "readFiles", "canWrite", "canDelete"].map(String::from).to_vec();
    registry.register(Box::new(ToolsFor { reads }));
    registry.register(Box::new(FileOptions));
    registry
}

fn cells() -> Map<String, Value> {
    json!({"task": "copy totalOf", "files": ["a.ts", "b.ts", "notes.md"], "readFiles": [], "history": [], "canWrite": true, "canDelete": false, "draft": "secret draft"})
        .as_object()
        .unwrap()
        .clone()
}

fn spec(contract: &Contract, id: &str, state: Value) -> NodeSpec {
    let block = block(contract, id);
    NodeSpec {
        id: id.into(),
        state: state.as_object().unwrap().clone(),
        questions: compile_questions(block, &cells(), &registry()).unwrap().questions,
        policy: compile_block(block).0,
        frame_digest: None,
        model: None,
    }
}

/// Counts requests and remembers the last one.
struct Recording<P> {
    inner: P,
    calls: AtomicUsize,
    last: Mutex<Option<Request>>,
}

impl<P: DecisionProvider> Recording<P> {
    fn new(inner: P) -> Arc<Self> {
        Arc::new(Recording { inner, calls: AtomicUsize::new(0), last: Mutex::new(None) })
    }
}

impl<P: DecisionProvider> DecisionProvider for Recording<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        *self.last.lock().unwrap() = Some(request.clone());
        self.inner.decide(request)
    }
}

fn mock() -> MockProvider {
    MockProvider::with_latency(Duration::ZERO)
}

#[test]
fn static_questions_compile_to_the_wire_shapes() {
    let c = contract();
    let needs = compile_questions(block(&c, "needs_tool"), &cells(), &registry()).unwrap();
    let text = serde_json::to_string(&needs.questions).unwrap();
    assert!(
        text.starts_with(r#"{"needs_tool":{"type":"noul","instructions":"The task still needs an action"#),
        "{text}"
    );
    assert!(text.contains(r#""criteria":{"true":"something the task asks for has not happened yet"#));
    let risk = compile_questions(block(&c, "grade_risk"), &cells(), &registry()).unwrap();
    assert_eq!(risk.questions.ids().collect::<Vec<_>>(), ["risk", "needs_auth"]);
    let json = risk.questions.to_json();
    assert_eq!(json["risk"]["type"], "score");
    assert_eq!(json["risk"]["criteria"], json!(["read-only", "reversible write", "irreversible", "destructive"]));
}

#[test]
fn dynamic_candidates_come_from_the_registered_provider() {
    let c = contract();
    let pick = compile_questions(block(&c, "pick_tool"), &cells(), &registry()).unwrap();
    assert_eq!(pick.questions.get("tool").unwrap().offered_ids(), ["list_dir", "write_file", "done"]);
    let mut later = cells();
    later.insert("history".into(), json!([{"tool": "list_dir"}]));
    later.insert("canWrite".into(), json!(false));
    let pick = compile_questions(block(&c, "pick_tool"), &later, &registry()).unwrap();
    assert_eq!(pick.questions.get("tool").unwrap().offered_ids(), ["done"], "candidates are rebuilt every step");
    let input = compile_questions(block(&c, "pick_input"), &cells(), &registry()).unwrap();
    assert_eq!(input.questions.get("file").unwrap().offered_ids(), ["a.ts", "b.ts", "notes.md"]);
    let mut all_read = cells();
    all_read.insert("readFiles".into(), json!(["a.ts", "b.ts", "notes.md"]));
    let none = compile_questions(block(&c, "pick_input"), &all_read, &registry()).unwrap();
    assert!(none.questions.is_empty());
    assert_eq!(none.not_asked, ["file"], "a choice over nothing is not asked");
}

#[test]
fn host_reads_must_equal_the_file_reads_both_ways() {
    let c = contract();
    let mut short = CandidateRegistry::new();
    short.register(Box::new(ToolsFor {
        reads: ["history", "files", "readFiles", "canWrite"].map(String::from).to_vec(),
    }));
    let err = compile_questions(block(&c, "pick_tool"), &cells(), &short).unwrap_err();
    assert_eq!(
        err,
        QuestionError::ReadsDiffer {
            block: "pick_tool".into(),
            provider: "toolsFor".into(),
            missing: vec!["canDelete".into()],
            extra: vec![]
        }
    );
    let mut long = CandidateRegistry::new();
    long.register(Box::new(ToolsFor {
        reads: ["history", "files", "readFiles", "canWrite", "canDelete", "draft"].map(String::from).to_vec(),
    }));
    assert!(matches!(
        compile_questions(block(&c, "pick_tool"), &cells(), &long),
        Err(QuestionError::ReadsDiffer { extra, .. }) if extra == ["draft"]
    ));
    let err = compile_questions(block(&c, "pick_tool"), &cells(), &CandidateRegistry::new()).unwrap_err();
    assert!(matches!(err, QuestionError::UnregisteredProvider { .. }));
}

#[test]
fn the_mock_reproduces_the_reference_loop_behaviour() {
    // runtime.md §1.4: only pick_tool, grade_risk and step_ok stop; needs_tool → use_tool,
    // is_done → keep_going, can_deliver → revise.
    let c = contract();
    let decider = Decider::new(Arc::new(mock()));
    let expected = [
        ("needs_tool", "use_tool"),
        ("pick_tool", "escalate"),
        ("pick_input", "escalate"),
        ("grade_risk", "ask_human"),
        ("step_ok", "stop"),
        ("is_done", "keep_going"),
        ("can_deliver", "revise"),
    ];
    for (id, action) in expected {
        let d = decider.decide(&spec(&c, id, json!({"task": "t"}))).unwrap();
        assert!(d.valid, "{id}: {:?}", d.problems);
        assert_eq!(d.action, action, "{id}: {}", d.reason);
        assert!(d.degraded, "the mock is always degraded");
    }
}

#[test]
fn nodes_that_share_a_step_share_one_request() {
    let c = contract();
    let provider = Recording::new(mock());
    let decider = Decider::new(provider.clone());
    let a = spec(&c, "needs_tool", json!({"task": "t", "earlier": ""}));
    let b = spec(&c, "pick_tool", json!({"task": "t", "files_known": []}));
    let out = decider.decide_many(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1);
    let sent = provider.last.lock().unwrap().clone().unwrap();
    assert_eq!(
        Value::Object(Map::clone(&sent.state)),
        json!({"task": "t", "earlier": "", "files_known": []}),
        "key union, first-seen order"
    );
    assert_eq!(sent.questions.ids().collect::<Vec<_>>(), ["needs_tool", "tool"]);
    assert_eq!(out[0].raw_answers.keys().collect::<Vec<_>>(), ["needs_tool"], "each node sees only its own ids");
    assert_eq!(out[1].raw_answers.keys().collect::<Vec<_>>(), ["tool"]);
    assert_eq!(out[0].batch_ids, ["needs_tool", "pick_tool"]);
    let merged = &*sent.state;
    assert_eq!(out[0].sent_frame_digest, frame_digest("needs_tool+pick_tool", merged));
    assert_eq!(out[0].request_digest, out[1].request_digest);
    assert_eq!(out[0].request_digest.len(), 16);
    let single = decider.decide(&a).unwrap();
    assert_eq!(single.sent_frame_digest, frame_digest("needs_tool", &a.state));
    let with_artifact = NodeSpec { frame_digest: Some("0123456789abcdef".into()), ..a };
    assert_eq!(decider.decide(&with_artifact).unwrap().sent_frame_digest, "0123456789abcdef");
}

#[test]
fn wiring_errors_are_refused_before_sending() {
    let c = contract();
    let provider = Recording::new(mock());
    let decider = Decider::new(provider.clone());
    let a = spec(&c, "needs_tool", json!({"task": "t"}));
    let b = spec(&c, "pick_tool", json!({"task": "other"}));
    assert_eq!(
        decider.decide_many(&[a.clone(), b]).unwrap_err(),
        DecideError::StateConflict { key: "task".into(), first: "needs_tool".into(), second: "pick_tool".into() }
    );
    let twin = NodeSpec { id: "again".into(), ..a.clone() };
    assert!(matches!(decider.decide_many(&[a, twin]), Err(DecideError::DuplicateQuestion { .. })));
    assert_eq!(decider.decide_many(&[]).unwrap_err(), DecideError::NoNodes);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 0);
}

#[test]
fn an_invalid_answer_escalates_with_a_typed_reason_and_keeps_the_raw_response() {
    let c = contract();
    let script = json!({"tool": [{"type": "choice", "choice": "rm_rf", "probabilities": {"list_dir": 0.5, "write_file": 0.3, "done": 0.2}, "confidence": 0.9}]});
    let provider = Recording::new(ScriptProvider::from_json("script:test", &script).unwrap());
    let decider = Decider::new(provider.clone());
    let d = decider.decide(&spec(&c, "pick_tool", json!({"task": "t"}))).unwrap();
    assert!(!d.valid);
    assert_eq!((d.action.as_str(), d.escalate, d.rule), ("escalate", true, None));
    assert_eq!(d.problems[0].problem, AnswerProblem::NotOffered { choice: "rm_rf".into() });
    assert!(d.reason.contains("choice `rm_rf` was not offered"), "{}", d.reason);
    assert_eq!(d.raw_answers["tool"]["choice"], "rm_rf", "kept for audit");
    assert!(d.answers.is_empty());
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1, "no decision retry");
    // The script is used up: the next answer is missing, which fails closed too.
    let d = decider.decide(&spec(&c, "pick_tool", json!({"task": "t"}))).unwrap();
    assert_eq!(d.problems[0].problem, AnswerProblem::Missing);
    assert_eq!(d.action, "escalate");
}

#[test]
fn a_valid_answer_is_evaluated_with_its_margin() {
    let c = contract();
    let script = json!({"tool": [{"type": "choice", "choice": "list_dir", "probabilities": {"list_dir": 0.71, "write_file": 0.19, "done": 0.1}, "confidence": 0.5}]});
    let decider = Decider::new(Arc::new(ScriptProvider::from_json("script:test", &script).unwrap()));
    let d = decider.decide(&spec(&c, "pick_tool", json!({"task": "t"}))).unwrap();
    assert!(d.valid);
    assert_eq!((d.action.as_str(), d.rule, d.reason.as_str()), ("call", Some(0), "top >= 0.6 → call"));
    let margin = d.margin.unwrap();
    assert!((margin.margin - 0.11).abs() < 1e-9);
    assert_eq!(margin.question, "tool");
}

#[test]
fn a_provider_failure_escalates_every_node_and_never_throws() {
    struct Down;
    impl DecisionProvider for Down {
        fn name(&self) -> &str {
            "down"
        }
        fn decide(&self, _: &Request) -> Result<Response, ProviderError> {
            Err(ProviderError::new("down", ErrorCode::Transport, "connection refused"))
        }
    }
    let c = contract();
    let decider = Decider::new(Arc::new(Down));
    let out = decider
        .decide_many(&[spec(&c, "needs_tool", json!({"task": "t"})), spec(&c, "pick_tool", json!({"task": "t"}))])
        .unwrap();
    for d in out {
        assert_eq!(d.action, "escalate");
        assert_eq!(d.reason, "down unavailable: connection refused");
        assert!(d.degraded && d.escalate && d.raw_answers.is_empty());
        assert_eq!(d.request_digest.len(), 16, "digests exist even when the request failed");
    }
}

#[test]
fn gates_change_the_threshold_and_show_in_the_reason() {
    let c = contract();
    let policies: Vec<_> = c.blocks.iter().map(|b| compile_block(b).0).collect();
    let gated = apply_gates(&c.blocks, &policies, &parse_gates("pick_tool.tool=0.3").unwrap()).unwrap();
    let mut node = spec(&c, "pick_tool", json!({"task": "t"}));
    node.policy = gated.iter().find(|p| p.block == "pick_tool").unwrap().clone();
    let d = Decider::new(Arc::new(mock())).decide(&node).unwrap();
    assert_eq!((d.action.as_str(), d.reason.as_str()), ("call", "top >= 0.3 → call"), "1/3 ≥ 0.3");
}

#[test]
fn a_multi_question_block_fails_closed_when_one_answer_is_bad() {
    let c = contract();
    let script = json!({
        "risk": [{"score": 0.2, "probabilities": {"0": 0.8, "1": 0.2, "2": 0, "3": 0}, "confidence": 0.7}],
        "needs_auth": [{"noul": true}]
    });
    let decider = Decider::new(Arc::new(ScriptProvider::from_json("script:test", &script).unwrap()));
    let d = decider.decide(&spec(&c, "grade_risk", json!({"tool": "read_file"}))).unwrap();
    assert_eq!(d.action, "escalate", "{}", d.reason);
    assert_eq!(d.problems.len(), 1);
    assert_eq!(d.problems[0].question, "needs_auth");
    assert_eq!(d.problems[0].problem, AnswerProblem::Boolean { field: "noul".into() });
    assert!(d.degraded, "an unrecognisable entry marks the response degraded");
}

#[test]
fn questions_serialise_in_insertion_order() {
    let mut q = Questions::new();
    q.insert("z", WireQuestion::Noul { instructions: "z".into(), criteria: None });
    q.insert("a", WireQuestion::Noul { instructions: "a".into(), criteria: None });
    assert_eq!(
        serde_json::to_string(&q).unwrap(),
        r#"{"z":{"type":"noul","instructions":"z"},"a":{"type":"noul","instructions":"a"}}"#
    );
}

#[test]
fn the_sent_questions_text_is_the_one_the_request_digest_hashed_and_never_outlives_its_value() {
    let c = contract();
    let decider = Decider::new(Arc::new(mock()));
    let a = spec(&c, "needs_tool", json!({"task": "t", "earlier": ""}));
    let b = spec(&c, "pick_tool", json!({"task": "t", "files_known": []}));
    let merged = decider.decide_many(&[a.clone(), b]).unwrap();
    let single = decider.decide(&a).unwrap();
    for decision in merged.iter().chain([&single]) {
        let text = decision.sent_questions_text().unwrap();
        assert_eq!(text, stringify(&decision.sent_questions));
        assert_eq!(decision.request_digest, request_digest(&decision.sent_frame_digest, &decision.sent_questions));
    }
    // Questions changed after the decision: the kept text is for the old ones and is not used.
    let mut changed = single.clone();
    changed.sent_questions = Arc::new(json!({"other": {"type": "noul"}}));
    assert_eq!(changed.sent_questions_text(), None);
    for decision in [&single, &changed] {
        let record = NodeDecisionEvent {
            decision,
            frame: None,
            node: "step",
            block: "needs_tool",
            position: "act",
            state_version: 1,
            evidence: None,
        };
        let mut written = String::new();
        record.write_to(&mut written);
        assert_eq!(written, stringify(&Value::Object(record.into_event())));
    }
}

#[test]
fn the_state_is_shared_not_copied_from_the_frame_to_the_request_and_the_decisions() {
    let c = contract();
    let provider = Recording::new(mock());
    let decider = Decider::new(provider.clone());
    let a = spec(&c, "needs_tool", json!({"task": "t", "earlier": ""}));
    let shared = Arc::new(a.state.clone());
    let alone = a.borrowed().with_shared_state(Arc::clone(&shared));
    let decision = decider.decide_refs(&[alone]).unwrap().pop().unwrap();
    assert!(Arc::ptr_eq(&decision.state, &shared), "a node alone sends its frame's state itself");
    assert!(Arc::ptr_eq(&provider.last.lock().unwrap().as_ref().unwrap().state, &shared));
    // Without a shared state the node's state is copied once, and is equal.
    let copied = decider.decide(&a).unwrap();
    assert!(!Arc::ptr_eq(&copied.state, &shared));
    assert_eq!(copied.state, shared);
    // The nodes of one request share the merged state.
    let b = spec(&c, "pick_tool", json!({"task": "t", "files_known": []}));
    let merged = decider.decide_many(&[a.clone(), b.clone()]).unwrap();
    assert!(Arc::ptr_eq(&merged[0].state, &merged[1].state));
    // A shared state, when given, is the state the node sends, alone or merged.
    let other = Arc::new(json!({"task": "t", "earlier": "shared"}).as_object().unwrap().clone());
    let given = a.borrowed().with_shared_state(Arc::clone(&other));
    let alone = decider.decide_refs(std::slice::from_ref(&given)).unwrap().pop().unwrap();
    assert_eq!(alone.state["earlier"], "shared");
    let together = decider.decide_refs(&[given, b.borrowed()]).unwrap();
    assert_eq!(together[0].state["earlier"], "shared");
}
