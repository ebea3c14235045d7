//! Tool outcomes in the decision loop: a result that breaks its deliverable contract is a
//! deterministic step result — recorded as a `tool:outcome` event, stated in the step's result,
//! and deciding `step_ok` by code without asking the model — while a result that holds goes
//! through `step_ok` as before. The session log then feeds the outcomes report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::io::BufReader;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use decision_coding_host::generate::EvidenceReport;
use decision_coding_host::human::DenyAll;
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task};
use decision_outcomes::{ContractSet, load_contracts};
use decision_runtime::graph::{EventSink, MemorySink, Tee};
use decision_runtime::log::{FsyncPolicy, LogHeader, SessionLog};
use host_common::{Rules, TempDir, choose, level, noul, replay};
use serde_json::Value;

/// Counts the requests that asked `step_ok`'s question (`ok`).
fn list_dir_rules(asked_ok: Arc<AtomicUsize>) -> Rules {
    Rules::new(move |id, q, _, n| match id {
        "needs_tool" => Some(noul(if n == 0 { 0.9 } else { 0.1 })),
        "tool" => Some(choose(q, "list_dir", 0.9)),
        "risk" => Some(level(q, 0)),
        "needs_auth" => Some(noul(0.1)),
        "ok" => {
            asked_ok.fetch_add(1, Ordering::SeqCst);
            Some(noul(0.9))
        }
        "done" => Some(noul(0.9)),
        "deliverable" => Some(noul(0.9)),
        "unsupported" => Some(noul(0.1)),
        _ => None,
    })
}

struct Ran {
    summary: RunSummary,
    events: Vec<Value>,
    log: std::path::PathBuf,
}

impl Ran {
    fn of_type(&self, t: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == t).collect()
    }

    fn blocks_decided(&self) -> Vec<&str> {
        self.of_type("decision").iter().map(|e| e["block"].as_str().unwrap()).collect()
    }

    fn path(&self) -> Vec<String> {
        self.of_type("transition").iter().map(|e| format!("{}:{}", e["node"], e["outcome"]).replace('"', "")).collect()
    }
}

fn run_with(dir: &TempDir, files: &[(&str, &str)], task: &str, contracts: Option<ContractSet>, provider: Rules) -> Ran {
    let ws = dir.workspace(files);
    let log = dir.path().join("session.jsonl");
    let header = LogHeader { id: "outcomes".into(), created_at_ms: 0, cwd: None };
    let memory = MemorySink::new();
    let sinks: Vec<Box<dyn EventSink>> =
        vec![Box::new(SessionLog::create(&log, &header, FsyncPolicy::Never).unwrap()), Box::new(memory.clone())];
    let config = RunConfig {
        max_steps: 4,
        contract_label: "test".into(),
        outcome_contracts: contracts.map(Arc::new),
        ..RunConfig::new(task, ws, dir.path().join("audit.jsonl"))
    };
    let with = Collaborators {
        provider: Arc::new(provider),
        generator: Box::new(EvidenceReport),
        human: Box::new(DenyAll),
        sink: Box::new(Tee::new(sinks)),
    };
    let summary = run_task(CODING_CONTRACT.as_bytes(), &config, with, None).unwrap();
    Ran { summary, events: memory.events(), log }
}

#[test]
fn an_empty_listing_breaks_its_contract_and_code_decides_step_ok() {
    let dir = TempDir::new("outcome-violated");
    let asked_ok = Arc::new(AtomicUsize::new(0));
    let ran = run_with(&dir, &[], "list the files", None, list_dir_rules(asked_ok.clone()));

    // The model was never asked `step_ok`: no request carried its question, no decision record.
    assert_eq!(asked_ok.load(Ordering::SeqCst), 0);
    assert!(!ran.blocks_decided().contains(&"step_ok"), "{:?}", ran.blocks_decided());
    // The outcome is recorded as evidence: the typed violation, with its verdict.
    let outcomes = ran.of_type("tool:outcome");
    assert_eq!(outcomes.len(), 1);
    let event = outcomes[0];
    assert_eq!((event["tool"].as_str(), event["method"].as_str()), (Some("files"), Some("list_dir")));
    assert_eq!(event["contract"], "violated");
    assert_eq!(event["outcome"]["status"], "error");
    assert_eq!(event["outcome"]["error_type"], "contract_violation");
    assert_eq!(event["outcome"]["retriable"], false);
    assert_eq!(event["outcome"]["metadata"]["mismatch"], "min_items_violation");
    assert_eq!(event["outcome"]["metadata"]["path"], "");
    assert_eq!(event["step"], 1);
    // The decision is recorded as made by code, and the stop path is taken.
    let code = ran.of_type("decision:code");
    assert_eq!(code.len(), 1);
    assert_eq!((code[0]["block"].as_str(), code[0]["action"].as_str()), (Some("step_ok"), Some("stop")));
    assert_eq!(code[0]["decidedBy"], "code");
    assert!(code[0]["reason"].as_str().unwrap().starts_with("contract_violation: "));
    assert_eq!(code[0]["basis"]["error_type"], "contract_violation");
    assert_eq!(ran.path(), ["step:call", "grade_risk:ran", "step_ok:stop", "generate:drafted", "can_deliver:deliver"]);
    assert_eq!(ran.summary.halt, "step_failed");
    assert_eq!((ran.summary.code_decisions, ran.summary.contract_violations), (1, 1));
    // The step's result says so: it is what the answer is written from.
    assert!(
        ran.summary.answer.contains("list_dir(.) → contract_violation: outcome of files.list_dir"),
        "{}",
        ran.summary.answer
    );
    // Resuming from the log sees the step's result as the run saw it (the run ended, so it is
    // rebuilt for inspection; `resume_point` refuses to continue it).
    let point = decision_coding_host::resume::rebuild_point(&ran.log).unwrap();
    let result = point.state.history[0]["result"].as_str().unwrap();
    assert!(result.starts_with("contract_violation: outcome of files.list_dir"), "{result}");
    // The log still verifies: the code decision is no decision record.
    let (mismatches, verified, intact) = replay(&ran.log);
    assert_eq!((mismatches, intact), (0, true));
    assert_eq!(verified, ran.of_type("decision").len() as u64);
}

#[test]
fn a_listing_that_holds_goes_through_step_ok_as_before() {
    let dir = TempDir::new("outcome-held");
    let asked_ok = Arc::new(AtomicUsize::new(0));
    let ran = run_with(&dir, &[("a.txt", "alpha")], "list the files", None, list_dir_rules(asked_ok.clone()));
    assert_eq!(asked_ok.load(Ordering::SeqCst), 1, "the model judges the step");
    assert!(ran.blocks_decided().contains(&"step_ok"));
    assert!(ran.of_type("decision:code").is_empty());
    let outcomes = ran.of_type("tool:outcome");
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0]["contract"], "held");
    assert_eq!(outcomes[0]["outcome"]["status"], "ok");
    assert_eq!(outcomes[0]["outcome"]["value"], serde_json::json!(["a.txt"]), "the outcome is unchanged");
    assert_eq!(outcomes[0]["weak_success"], serde_json::json!([]));
    assert_eq!(ran.path()[..3], ["step:call", "grade_risk:ran", "step_ok:continue"]);
    assert_eq!((ran.summary.code_decisions, ran.summary.contract_violations), (0, 0));
    assert!(ran.summary.answer.contains("list_dir(.) → a.txt"), "{}", ran.summary.answer);
}

#[test]
fn a_configured_contract_comes_first_and_weak_success_is_only_recorded() {
    // The configured file declares list_dir without a deliverable: nothing is checked, so the
    // empty listing is a success that the model judges; its weak-success flag is recorded and
    // changes nothing.
    let contracts =
        load_contracts(r#"{"contracts": [{"tool": "files", "method": "list_dir", "purpose": "anything"}]}"#).unwrap();
    let dir = TempDir::new("outcome-configured");
    let asked_ok = Arc::new(AtomicUsize::new(0));
    let ran = run_with(&dir, &[], "list the files", Some(contracts), list_dir_rules(asked_ok.clone()));
    assert_eq!(asked_ok.load(Ordering::SeqCst), 1);
    let outcomes = ran.of_type("tool:outcome");
    assert_eq!(outcomes[0]["contract"], "not_applied");
    assert_eq!(outcomes[0]["outcome"]["status"], "ok", "the flag does not make it a failure");
    assert_eq!(outcomes[0]["outcome"]["value"], serde_json::json!([]));
    assert_eq!(outcomes[0]["weak_success"], serde_json::json!(["empty_array_success"]));
    assert!(ran.of_type("decision:code").is_empty());
    assert_eq!(ran.summary.contract_violations, 0);
}

#[test]
fn a_failed_call_is_not_validated_and_the_model_still_judges_it() {
    // read_file on a file that is not UTF-8 fails: the tool's own error is recorded as such.
    let dir = TempDir::new("outcome-error");
    let asked_ok = Arc::new(AtomicUsize::new(0));
    let counter = asked_ok.clone();
    let rules = Rules::new(move |id, q, _, n| match id {
        "needs_tool" => Some(noul(if n < 2 { 0.9 } else { 0.1 })),
        "tool" => Some(choose(q, if n == 0 { "list_dir" } else { "read_file" }, 0.9)),
        "risk" => Some(level(q, 0)),
        "needs_auth" => Some(noul(0.1)),
        "ok" => {
            counter.fetch_add(1, Ordering::SeqCst);
            Some(noul(0.9))
        }
        "done" => Some(noul(0.1)),
        _ => None,
    });
    let ws = dir.workspace(&[]);
    std::fs::write(ws.join("bin.dat"), [0xff_u8, 0xfe, 0x00]).unwrap();
    let ran = run_with(&dir, &[], "read bin.dat", None, rules);
    let outcomes = ran.of_type("tool:outcome");
    let read = outcomes.iter().find(|e| e["method"] == "read_file").expect("read_file ran");
    assert_eq!(read["contract"], "not_applied");
    assert_eq!(read["outcome"]["error_type"], "execution");
    assert!(read["outcome"]["error_message"].as_str().unwrap().contains("not UTF-8"));
    assert_eq!(asked_ok.load(Ordering::SeqCst), 2, "both steps were judged by the model");
    // No step was decided by code (the host's check of the draft may still send it back:
    // the read failed, so the answer holds nothing read).
    assert!(ran.of_type("decision:code").iter().all(|e| e["node"] == "can_deliver"));
}

#[test]
fn the_session_log_feeds_the_outcomes_report() {
    let dir = TempDir::new("outcome-report");
    let ran = run_with(&dir, &[], "list the files", None, list_dir_rules(Arc::new(AtomicUsize::new(0))));
    let report = decision_outcomes::report(BufReader::new(std::fs::File::open(&ran.log).unwrap())).unwrap();
    assert_eq!(report.outcome_events, 1);
    assert_eq!(report.tools.len(), 1);
    let entry = &report.tools[0];
    assert_eq!((entry.tool.as_str(), entry.method.as_str()), ("files", "list_dir"));
    assert_eq!((entry.stats.calls, entry.stats.errors), (1, 1));
    assert_eq!((entry.stats.contract_held, entry.stats.contract_violated), (0, 1));
    assert_eq!(entry.stats.mismatches.get("min_items_violation"), Some(&1));
    assert_eq!(entry.stats.contract_pass_rate(), Some(0.0));
    // Every other line of the log (header, decisions, transitions…) is counted and skipped.
    assert_eq!(report.other_lines as usize, report.lines - 1);
}

/// The generic runtime's side: a node that code has decided is not asked, and code may only
/// take an action the block's policy can take (or `escalate`, legal everywhere).
mod code_decisions {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use decision_coding_host::CODING_CONTRACT;
    use decision_coding_host::heuristic::HeuristicProvider;
    use decision_core::vocab::{ACTIONS, POSITIONS, REFERENCE_CELLS};
    use decision_protocol::frame::Projections;
    use decision_protocol::frame::projections::HostState;
    use decision_runtime::graph::{
        CodeDecision, Dispatch, Graph, GraphContext, GraphHost, HandlerError, HostAdapter, Invocation, MemorySink,
        RunError,
    };
    use decision_runtime::provider::{DecisionProvider, ProviderError, Request, Response};
    use serde_json::json;

    struct Counted(AtomicUsize);

    impl DecisionProvider for Counted {
        fn name(&self) -> &str {
            "counted"
        }
        fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            HeuristicProvider.decide(request)
        }
    }

    struct Judged {
        cells: HostState,
        code: Mutex<Option<CodeDecision>>,
        handled: Vec<(String, String)>,
    }

    impl GraphContext for Judged {
        fn cells(&self) -> &HostState {
            &self.cells
        }
        fn code_decision(&mut self, _invocation: &Invocation) -> Option<CodeDecision> {
            self.code.lock().unwrap().take()
        }
    }

    fn handler(j: &mut Judged, d: &mut Dispatch<'_>) -> Result<String, HandlerError> {
        let reason = d.decisions.first().map(|x| x.reason.clone()).unwrap_or_default();
        j.handled.push((d.action.to_owned(), reason));
        Ok(d.action.to_owned())
    }

    fn start(sink: MemorySink, provider: Arc<Counted>) -> GraphHost<Judged> {
        let mut adapter = HostAdapter::new("tests/host_outcomes.rs").projections(Projections::standard());
        for cell in REFERENCE_CELLS {
            adapter = adapter.state_cell(cell.name, cell.ty, cell.untrusted);
        }
        for (position, actions) in POSITIONS {
            adapter = adapter.position(position, actions);
        }
        for action in ACTIONS {
            adapter = adapter.action(action, handler);
        }
        let graph = Graph::new("step_ok")
            .decide("step_ok", &["step_ok"])
            .edge("step_ok", "continue", "end")
            .edge("step_ok", "stop", "end")
            .edge("step_ok", "escalate", "end")
            .terminal("end");
        GraphHost::start(adapter.event_sink(Box::new(sink)), graph, step_ok_contract().as_bytes(), provider).unwrap()
    }

    /// The bundled contract's header and its `step_ok` block alone.
    fn step_ok_contract() -> String {
        let head = CODING_CONTRACT.split("\n## ").next().unwrap();
        let block = CODING_CONTRACT.split("\n## ").find(|b| b.starts_with("step_ok\n")).unwrap();
        format!("{head}\n## {block}")
    }

    fn judged(action: Option<&str>) -> Judged {
        let cells = json!({"task": "t", "lastTool": "list_dir", "lastResult": "", "history": [], "readFiles": []});
        Judged {
            cells: cells.as_object().unwrap().clone(),
            code: Mutex::new(action.map(|a| CodeDecision {
                action: a.into(),
                reason: format!("code says {a}"),
                evidence: json!({"why": "test"}),
            })),
            handled: Vec::new(),
        }
    }

    #[test]
    fn a_code_decision_is_dispatched_without_a_request_and_recorded() {
        for action in ["stop", "continue", "escalate"] {
            let (sink, provider) = (MemorySink::new(), Arc::new(Counted(AtomicUsize::new(0))));
            let mut ctx = judged(Some(action));
            let outcome = start(sink.clone(), provider.clone()).run(&mut ctx).unwrap();
            assert_eq!(provider.0.load(Ordering::SeqCst), 0, "{action}: nothing was sent");
            assert_eq!((outcome.stats.requests, outcome.stats.decisions, outcome.stats.code_decisions), (0, 0, 1));
            assert_eq!(ctx.handled, [(action.to_owned(), format!("code says {action}"))]);
            assert!(sink.of_type("decision").is_empty());
            let code = sink.of_type("decision:code");
            assert_eq!(code.len(), 1);
            assert_eq!(code[0]["action"], action);
            assert_eq!(code[0]["decidedBy"], "code");
            assert_eq!(code[0]["basis"], json!({"why": "test"}));
            assert_eq!((code[0]["node"].as_str(), code[0]["block"].as_str()), (Some("step_ok"), Some("step_ok")));
            assert_eq!(outcome.transitions[0].label, action);
        }
    }

    #[test]
    fn without_a_code_decision_the_model_is_asked() {
        let (sink, provider) = (MemorySink::new(), Arc::new(Counted(AtomicUsize::new(0))));
        let mut ctx = judged(None);
        let outcome = start(sink.clone(), provider.clone()).run(&mut ctx).unwrap();
        assert_eq!(provider.0.load(Ordering::SeqCst), 1);
        assert_eq!((outcome.stats.requests, outcome.stats.code_decisions), (1, 0));
        assert_eq!(sink.of_type("decision").len(), 1);
        assert!(sink.of_type("decision:code").is_empty());
    }

    #[test]
    fn code_cannot_take_an_action_the_policy_cannot() {
        let (sink, provider) = (MemorySink::new(), Arc::new(Counted(AtomicUsize::new(0))));
        let mut ctx = judged(Some("deliver"));
        let error = start(sink.clone(), provider.clone()).run(&mut ctx).unwrap_err();
        assert!(
            matches!(&error, RunError::CodeDecision { node, block, action }
                if node == "step_ok" && block == "step_ok" && action == "deliver"),
            "{error}"
        );
        assert!(ctx.handled.is_empty(), "nothing was dispatched");
        assert!(sink.of_type("decision:code").is_empty(), "nothing was recorded as decided");
        assert_eq!(provider.0.load(Ordering::SeqCst), 0);
    }
}
