//! The generic Level-2 runtime on a graph that is not the reference loop: the issue-triage
//! graph of format.md §6.3 with the external host's own triage contract (and, in the
//! reference conformance part, the reference's custom-graph contract). Loops, branches, retries,
//! escalation and terminal states; invocation identities; a transition with no consumer
//! refused; start refusals that list every problem with its location; and the capability
//! report checked against this host, with every negative case of §6.3.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use decision_coding_host::candidates::{FileOptions, ToolsFor};
use decision_core::policy::Answer;
use decision_core::vocab::{ACTIONS, CellType, POSITIONS, REFERENCE_CELLS};
use decision_protocol::ask::WireQuestion;
use decision_protocol::frame::Projections;
use decision_protocol::frame::projections::HostState;
use decision_runtime::graph::report::{self, HostDescription};
use decision_runtime::graph::{
    Dispatch, Graph, GraphContext, GraphHost, HandlerError, HostAdapter, Location, MemorySink, RunError, Step, codes,
};
use decision_runtime::provider::{DecisionProvider, ProviderError, Request, Response};
use serde_json::{Map, Value, json};

#[path = "../../core/tests/reference/mod.rs"]
mod reference;

/// The triage contract the repository ships with its external host.
const TRIAGE: &str = include_str!("../../../examples/external-host/triage.DECISION.md");
/// The bundled coding-agent contract.
const CODING: &str = include_str!("../../../examples/coding-agent/DECISION.md");

/// A reference fixture, or `None` (after a printed skip line) without the reference files.
fn fixture(name: &str) -> Option<&'static str> {
    reference::text(&format!("fixtures/jevloop/{name}"))
}

struct Triage {
    cells: HostState,
    /// Outcomes the host phases report, in order.
    script: Mutex<VecDeque<&'static str>>,
    reviews: VecDeque<bool>,
}

impl GraphContext for Triage {
    fn cells(&self) -> &HostState {
        &self.cells
    }
}

impl Triage {
    fn new(script: &[&'static str], reviews: &[bool]) -> Self {
        let cells = json!({"task": "fix the failing test", "output": "assertion failed", "evidence": "patch applied"});
        Triage {
            cells: cells.as_object().unwrap().clone(),
            script: Mutex::new(script.iter().copied().collect()),
            reviews: reviews.iter().copied().collect(),
        }
    }

    fn next(&self) -> Result<String, HandlerError> {
        self.script
            .lock()
            .unwrap()
            .pop_front()
            .map(str::to_owned)
            .ok_or_else(|| HandlerError("script exhausted".into()))
    }
}

fn on_action(t: &mut Triage, d: &mut Dispatch<'_>) -> Result<String, HandlerError> {
    match d.action {
        // `call` follows the chosen option: the outcome is the option id.
        "call" => d.decisions[0]
            .answers
            .values()
            .find_map(|a| match a {
                Answer::Choice { choice, .. } => Some(choice.clone()),
                _ => None,
            })
            .ok_or_else(|| HandlerError("call without a choice".into())),
        "escalate" => Ok("escalate".into()),
        "ask_human" => Ok(if t.reviews.pop_front().unwrap_or(false) { "approved" } else { "rejected" }.into()),
        "finish" => Ok("approved".into()),
        other => Err(HandlerError(format!("the triage host does not dispatch `{other}`"))),
    }
}

fn adapter(sink: Option<MemorySink>) -> HostAdapter<Triage> {
    let mut a = HostAdapter::new("crates/coding-host/tests/graph_triage.rs")
        .projections(Projections::standard())
        .candidates(Box::new(ToolsFor))
        .candidates(Box::new(FileOptions))
        .state_cell("output", CellType::String, true)
        .state_cell("evidence", CellType::String, false)
        .state_cell("answer", CellType::String, false)
        .position("host:issue-triage", &["call"])
        .position("host:test-failure", &["call"])
        .position("host:review", &["ask_human", "finish"])
        .evidence("evidence", |t: &Triage| t.cells.get("evidence").cloned().unwrap_or(Value::Null));
    for cell in REFERENCE_CELLS {
        a = a.state_cell(cell.name, cell.ty, cell.untrusted);
    }
    for (position, actions) in POSITIONS {
        a = a.position(position, actions);
    }
    for action in ACTIONS {
        a = a.action(action, on_action);
    }
    match sink {
        Some(sink) => a.event_sink(Box::new(sink)),
        None => a,
    }
}

fn phase(t: &mut Triage, _s: &mut Step<'_>) -> Result<String, HandlerError> {
    t.next()
}

fn graph() -> Graph<Triage> {
    Graph::new("classify_issue")
        .decide("classify_issue", &["classify_issue"])
        .edge("classify_issue", "inspect", "inspect_repository")
        .edge("classify_issue", "escalate", "request_review")
        .phase("inspect_repository", phase)
        .edge("inspect_repository", "found", "plan_patch")
        .edge("inspect_repository", "missing", "request_review")
        .edge("inspect_repository", "retry", "inspect_repository")
        .phase("plan_patch", phase)
        .starts_step("plan_patch")
        .edge("plan_patch", "ready", "run_tests")
        .edge("plan_patch", "revise", "plan_patch")
        .phase("run_tests", phase)
        .edge("run_tests", "pass", "prepare_candidate")
        .edge("run_tests", "fail", "interpret_failure")
        .edge("run_tests", "retry", "run_tests")
        .decide("interpret_failure", &["interpret_failure"])
        .edge("interpret_failure", "fixable", "plan_patch")
        .edge("interpret_failure", "blocked", "request_review")
        .phase("prepare_candidate", phase)
        .edge("prepare_candidate", "deliver", "done")
        .edge("prepare_candidate", "revise", "plan_patch")
        .decide("request_review", &["request_review"])
        .edge("request_review", "approved", "done")
        .edge("request_review", "rejected", "plan_patch")
        .terminal("done")
}

/// Answers: every choice picks its first option with `p`, every noul is `review`.
struct Fixed {
    p: Mutex<VecDeque<f64>>,
    review: f64,
}

impl DecisionProvider for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }
    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let mut answers = Map::new();
        for (id, q) in request.questions.iter() {
            let answer = match q {
                WireQuestion::Choice { criteria, .. } => {
                    let p = self.p.lock().unwrap().pop_front().unwrap_or(0.9);
                    let n = criteria.len() as f64;
                    let probs: Map<String, Value> = criteria
                        .iter()
                        .enumerate()
                        .map(|(i, (o, _))| (o.clone(), json!(if i == 0 { p } else { (1.0 - p) / (n - 1.0) })))
                        .collect();
                    json!({"type": "choice", "choice": criteria[0].0, "probabilities": probs})
                }
                WireQuestion::Noul { .. } => json!({"type": "noul", "noul": self.review}),
                WireQuestion::Score { .. } => continue,
            };
            answers.insert(id.to_owned(), answer);
        }
        Ok(Response { answers, provider: "fixed".into(), ..Response::default() })
    }
}

fn provider(ps: &[f64], review: f64) -> Arc<dyn DecisionProvider> {
    Arc::new(Fixed { p: Mutex::new(ps.iter().copied().collect()), review })
}

fn start(sink: &MemorySink, ps: &[f64], review: f64) -> GraphHost<Triage> {
    GraphHost::start(adapter(Some(sink.clone())), graph(), TRIAGE.as_bytes(), provider(ps, review))
        .unwrap_or_else(|refusal| panic!("{refusal}"))
}

#[test]
fn the_triage_graph_runs_with_loops_retries_and_branches() {
    let sink = MemorySink::new();
    let mut host = start(&sink, &[0.9, 0.9], 0.1);
    let mut triage = Triage::new(&["retry", "found", "ready", "fail", "ready", "pass", "deliver"], &[]);
    let outcome = host.run(&mut triage).unwrap();
    assert_eq!(outcome.terminal, "done");
    let path: Vec<String> = outcome.transitions.iter().map(|t| format!("{}:{}", t.node, t.label)).collect();
    assert_eq!(
        path,
        [
            "classify_issue:inspect",
            "inspect_repository:retry",
            "inspect_repository:found",
            "plan_patch:ready",
            "run_tests:fail",
            "interpret_failure:fixable",
            "plan_patch:ready",
            "run_tests:pass",
            "prepare_candidate:deliver"
        ]
    );
    // The same node runs again with a new state version and visit number.
    let inspect: Vec<_> = outcome.transitions.iter().filter(|t| t.node == "inspect_repository").collect();
    assert_eq!((inspect[0].visit, inspect[1].visit), (1, 2));
    assert!(inspect[0].state_version < inspect[1].state_version);
    let plans: Vec<_> = outcome.transitions.iter().filter(|t| t.node == "plan_patch").collect();
    assert_eq!((plans[0].step, plans[1].step), (1, 2), "plan_patch starts a step");
    // Every transition and decision is recorded with its identity.
    let events = sink.events();
    assert_eq!(sink.of_type("transition").len(), 9);
    let decisions = sink.of_type("decision");
    assert_eq!(decisions.len(), 2);
    assert_eq!(decisions[0]["position"], "host:issue-triage");
    assert_eq!(decisions[1]["node"], "interpret_failure");
    assert!(decisions.iter().all(|d| d["requestDigest"].as_str().unwrap().len() == 16));
    assert!(events.iter().all(|e| e["type"] != "transition" || e.get("to").is_some()));
}

#[test]
fn escalation_reaches_review_and_the_terminal_state() {
    let sink = MemorySink::new();
    let mut host = start(&sink, &[0.5], 0.9);
    let mut triage = Triage::new(&[], &[true]);
    let outcome = host.run(&mut triage).unwrap();
    let path: Vec<String> = outcome.transitions.iter().map(|t| format!("{}:{}", t.node, t.label)).collect();
    assert_eq!(path, ["classify_issue:escalate", "request_review:approved"]);
    assert_eq!(outcome.transitions[0].action.as_deref(), Some("escalate"));
    assert_eq!(outcome.transitions[1].action.as_deref(), Some("ask_human"));
}

#[test]
fn a_transition_with_no_consumer_is_refused() {
    let sink = MemorySink::new();
    // interpret_failure escalates, and its node has no `escalate` edge.
    let mut host = start(&sink, &[0.9, 0.5], 0.1);
    let mut triage = Triage::new(&["found", "ready", "fail"], &[]);
    let err = host.run(&mut triage).unwrap_err();
    assert!(
        matches!(&err, RunError::NoConsumer { node, label, .. } if node == "interpret_failure" && label == "escalate"),
        "{err}"
    );
    let refused = sink.of_type("transition").pop().unwrap();
    assert_eq!(refused["outcome"], "escalate");
    assert!(refused.get("to").is_none());
    assert!(refused["refused"].as_str().unwrap().contains("no transition consumes"));
}

#[test]
fn the_fixture_contract_is_refused_at_its_policy_line() {
    let Some(custom) = fixture("custom-graph.DECISION.md") else { return };
    let sink = MemorySink::new();
    let refusal = GraphHost::start(adapter(Some(sink.clone())), graph(), custom.as_bytes(), provider(&[], 0.1))
        .err()
        .expect("the fixture's request_review policy does not compile");
    assert_eq!(refusal.problems.len(), 1, "{refusal}");
    let p = &refusal.problems[0];
    assert_eq!(p.layer, "policy");
    assert_eq!(p.location, Location::Contract { line: 65, column: p_column(p), block: Some("request_review".into()) });
    assert!(sink.events().is_empty(), "nothing was dispatched or recorded");
}

fn p_column(p: &decision_runtime::graph::Problem) -> u32 {
    match &p.location {
        Location::Contract { column, .. } => *column,
        _ => 0,
    }
}

#[test]
fn every_start_problem_is_listed_with_its_location() {
    // No host positions, an edge to nowhere, a block no node decides, an unreachable node,
    // an action that needs evidence without a provider, and no event sink.
    let mut a = HostAdapter::<Triage>::new("broken").projections(Projections::standard());
    for cell in REFERENCE_CELLS {
        a = a.state_cell(cell.name, cell.ty, cell.untrusted);
    }
    for action in ACTIONS {
        a = a.action(action, on_action);
    }
    let g = Graph::new("classify_issue")
        .decide("classify_issue", &["classify_issue"])
        .edge("classify_issue", "inspect", "nowhere")
        .decide("interpret_failure", &["interpret_failure"])
        .edge("interpret_failure", "fixable", "done")
        .terminal("done");
    let contract = "schema: decision-contract/v1\n\n## classify_issue\n\nkind: choice\nwhen: host:issue-triage —— t\n\n### route\n\nask: a?\n\n- inspect — i\n- other — o\n\npolicy:\n  - top >= 0.6 → call\n  - else → escalate\n\n## interpret_failure\n\nkind: noul\nwhen: after-generate —— t\n\nask: b?\n\n- true — y\n- false — n\n\npolicy:\n  - prob:interpret_failure >= 0.5 → deliver\n  - else → revise\n\n## request_review\n\nkind: noul\nwhen: host:review —— t\n\nask: c?\n\n- true — y\n- false — n\n\npolicy:\n  - else → finish\n";
    let refusal = GraphHost::start(a, g, contract.as_bytes(), provider(&[], 0.1)).err().unwrap();
    let text = refusal.to_string();
    let has = |code: &str| refusal.problems.iter().any(|p| p.code == code);
    assert!(has(decision_core::diag::codes::A_POSITION), "{text}");
    assert!(has(codes::NO_CONSUMER) && text.contains("graph node `classify_issue`, outcome `inspect`"), "{text}");
    assert!(has(codes::UNINVOKED_BLOCK) && text.contains("(block `request_review`)"), "{text}");
    assert!(has(codes::UNREACHABLE), "{text}");
    assert!(has(codes::EVIDENCE), "{text}");
    assert!(has(codes::NO_SINK), "{text}");
    let located =
        refusal.problems.iter().filter(|p| matches!(p.location, Location::Contract { line, .. } if line > 0)).count();
    assert!(located >= 3, "contract problems carry lines: {text}");
}

fn description() -> HostDescription {
    report::describe(&adapter(None), &graph())
}

/// The contracts a report must carry: the repository's own.
fn contracts() -> Vec<(String, Vec<u8>)> {
    vec![("DECISION.md".into(), CODING.into()), ("triage.DECISION.md".into(), TRIAGE.into())]
}

fn check(report: &str) -> Vec<String> {
    report::check("report", report, &description(), &contracts())
}

#[test]
fn the_fixture_report_checks_against_this_host() {
    let (Some(local), Some(custom), Some(fixture_report)) =
        (fixture("DECISION.md"), fixture("custom-graph.DECISION.md"), fixture("external-host.capabilities.json"))
    else {
        return;
    };
    let reference_contracts =
        vec![("DECISION.md".into(), local.into()), ("custom-graph.DECISION.md".into(), custom.into())];
    let problems = report::check("report", fixture_report, &description(), &reference_contracts);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_generated_report_checks_against_this_host() {
    // A generated report checks too, and states the proved features.
    let generated = report::generate(&description());
    assert_eq!(generated["graphFeatures"], json!(["branch", "retry", "escalation", "terminal-state"]));
    assert_eq!(generated["terminalStates"], json!(["done"]));
    assert_eq!(generated["level"], 2);
    assert!(check(&generated.to_string()).is_empty());
}

/// The generated report, edited.
fn mutated(edit: impl FnOnce(&mut Value)) -> Vec<String> {
    let mut v = report::generate(&description());
    edit(&mut v);
    check(&v.to_string())
}

#[test]
fn every_negative_report_is_reported() {
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        ("extra position", mutated(|v| v["hostPositions"]["host:made-up"] = json!(["call"])), "host:made-up"),
        (
            "after-tool changed",
            mutated(|v| v["positions"]["after-tool"] = json!(["continue"])),
            "positions[after-tool]",
        ),
        (
            "one projection fewer",
            mutated(|v| {
                v["projections"].as_array_mut().unwrap().retain(|p| p != "resultMaybe");
            }),
            "projections lacks resultMaybe",
        ),
        (
            "nonexistent node",
            mutated(|v| v["customGraphNodes"].as_array_mut().unwrap().push(json!("deploy"))),
            "`deploy`",
        ),
        (
            "done as a node",
            mutated(|v| v["customGraphNodes"].as_array_mut().unwrap().push(json!("done"))),
            "`done`, which is not a source node",
        ),
        (
            "undemonstrable feature",
            mutated(|v| v["graphFeatures"].as_array_mut().unwrap().push(json!("parallel-fanout"))),
            "parallel-fanout",
        ),
        ("future schema", mutated(|v| v["contractSchema"] = json!("decision-contract/v99")), "decision-contract/v99"),
        (
            "dispatch before check",
            mutated(|v| v["conformance"]["dispatchAfterCapabilityCheck"] = json!(false)),
            "dispatchAfterCapabilityCheck",
        ),
        ("level", mutated(|v| v["level"] = json!(1)), "level is 1"),
        ("missing field", mutated(|v| drop(v.as_object_mut().unwrap().remove("customGraphNodes"))), "missing fields"),
        (
            "provider reads",
            mutated(|v| v["dynamicProviderReads"]["fileOptions"] = json!(["files"])),
            "dynamicProviderReads[fileOptions]",
        ),
        ("terminal listed as missing", mutated(|v| v["terminalStates"] = json!([])), "terminalStates lacks `done`"),
    ];
    for (name, problems, needle) in cases {
        assert!(problems.iter().any(|p| p.contains(needle)), "{name}: expected `{needle}` in {problems:#?}");
    }
    // Removing a projection also makes the report insufficient for the contracts.
    let insufficient = mutated(|v| {
        v["projections"].as_array_mut().unwrap().retain(|p| p != "resultMaybe");
    });
    assert!(insufficient.iter().any(|p| p.contains("do not carry DECISION.md")), "{insufficient:#?}");
}
