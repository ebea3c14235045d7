//! Decision-path costs: answer validation plus policy evaluation per decision; building a
//! 250-row candidate table with its request; the System One round trip against a loopback
//! server, with and without connection reuse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use decision_core::diag::Span;
use decision_core::policy::{Comparison, CompiledPolicy, CompiledRule, Predicate, Probe, evaluate};
use decision_protocol::ask::{Questions, WireQuestion, validate_answers};
use decision_protocol::space::{Applicable, DecisionState, HostObject, Operation, Snapshot, SpaceConfig};
use decision_runtime::provider::{DecisionProvider, Request, SystemOneProvider};
use serde_json::{Map, Value, json};
use support::{Reply, Server};

fn rule(predicate: Predicate, action: &str, text: &str) -> CompiledRule {
    CompiledRule { predicate, action: action.into(), text: text.into(), span: Span::default() }
}

fn validation_and_policy(c: &mut Criterion) {
    let mut questions = Questions::new();
    questions.insert(
        "tool",
        WireQuestion::Choice {
            instructions: "Which tool should the agent call next?".into(),
            criteria: ["read_file", "list_dir", "write_file", "delete_file", "done"]
                .iter()
                .map(|id| (id.to_string(), "criterion".to_string()))
                .collect(),
        },
    );
    let policy = CompiledPolicy {
        block: "pick_tool".into(),
        rules: vec![
            rule(Predicate::compare(Probe::Top, Comparison::AtLeast, "tool", 0.6).unwrap(), "call", "top >= 0.6"),
            rule(Predicate::Fallback, "escalate", "else"),
        ],
    };
    let raw: Map<String, Value> =
        serde_json::from_value(json!({"tool": {"type": "choice", "choice": "list_dir", "confidence": 0.81,
        "probabilities": {"read_file": 0.05, "list_dir": 0.8, "write_file": 0.05, "delete_file": 0.05, "done": 0.05}}}))
        .unwrap();
    c.bench_function("validate+policy/pick_tool (5 options)", |b| {
        b.iter(|| {
            let answers = validate_answers(black_box(&questions), black_box(&raw)).unwrap();
            black_box(evaluate(&policy, &answers))
        })
    });

    let mut risk = Questions::new();
    risk.insert(
        "risk",
        WireQuestion::Score {
            instructions: "How risky?".into(),
            criteria: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        },
    );
    risk.insert("needs_auth", WireQuestion::Noul { instructions: "Authorise?".into(), criteria: None });
    let grade = CompiledPolicy {
        block: "grade_risk".into(),
        rules: vec![
            rule(
                Predicate::compare(Probe::Score, Comparison::AtLeast, "risk", 2.0).unwrap(),
                "ask_human",
                "score:risk >= 2",
            ),
            rule(
                Predicate::compare(Probe::Prob, Comparison::AtLeast, "needs_auth", 0.5).unwrap(),
                "ask_human",
                "prob:needs_auth >= 0.5",
            ),
            rule(
                Predicate::compare(Probe::Score, Comparison::AtLeast, "risk", 1.0).unwrap(),
                "auto_audit",
                "score:risk >= 1",
            ),
            rule(Predicate::Fallback, "auto", "else"),
        ],
    };
    let raw: Map<String, Value> = serde_json::from_value(json!({
        "risk": {"type": "score", "score": 0.4, "probabilities": {"0": 0.7, "1": 0.2, "2": 0.1, "3": 0.0}, "confidence": 0.5},
        "needs_auth": {"type": "noul", "noul": 0.1}
    }))
    .unwrap();
    c.bench_function("validate+policy/grade_risk (score + noul)", |b| {
        b.iter(|| {
            let answers = validate_answers(black_box(&risk), black_box(&raw)).unwrap();
            black_box(evaluate(&grade, &answers))
        })
    });
}

fn table_and_request(c: &mut Criterion) {
    let operations = vec![
        Operation::new("CLICK", "Click an element.", true),
        Operation::new("TYPE_TEXT", "Type into a field.", true),
        Operation::new("WAIT", "Wait.", false),
    ];
    let objects: Vec<HostObject<u32>> = (0..250)
        .map(|i| HostObject {
            id: i,
            kind: if i % 5 == 0 { "textbox" } else { "button" }.into(),
            label: format!("element number {i}"),
            value: if i % 5 == 0 { format!("value {i}") } else { String::new() },
            state: vec![],
            applies: if i % 5 == 0 {
                vec![Applicable::plain("TYPE_TEXT"), Applicable::plain("CLICK")]
            } else {
                vec![Applicable::plain("CLICK")]
            },
        })
        .collect();
    let snapshot = Snapshot { revision: "rev-1".into(), objects };
    let config = SpaceConfig::default();
    let context: Map<String, Value> = serde_json::from_value(json!({"goal": "book the cheapest flight"})).unwrap();
    // The snapshot is consumed by `build`; its copy is made outside the measurement.
    c.bench_function("space/250-row table + request", |b| {
        b.iter_batched(
            || snapshot.clone(),
            |snapshot| {
                let state = DecisionState::build(snapshot, &operations, &config);
                black_box(Request::new(state.state(&context), Arc::clone(state.questions())))
            },
            BatchSize::PerIteration,
        )
    });
    c.bench_function("space/250-row table only", |b| {
        b.iter_batched(
            || snapshot.clone(),
            |snapshot| black_box(DecisionState::build(snapshot, &operations, &config)),
            BatchSize::PerIteration,
        )
    });
    let built = DecisionState::build(snapshot.clone(), &operations, &config);
    c.bench_function("space/request of a built table", |b| {
        b.iter(|| black_box(Request::new(built.state(&context), Arc::clone(built.questions()))))
    });
    c.bench_function("space/250-row table + request, serialised", |b| {
        b.iter_batched(
            || snapshot.clone(),
            |snapshot| {
                let state = DecisionState::build(snapshot, &operations, &config);
                let request = Request::new(state.state(&context), Arc::clone(state.questions()));
                black_box(serde_json::to_vec(&request.wire_body(None)).unwrap())
            },
            BatchSize::PerIteration,
        )
    });
}

fn loopback(c: &mut Criterion) {
    let reply = Reply::json(200, &json!({"model": "jev", "answers": {"ok": {"type": "noul", "noul": 0.9}}}));
    let server = Server::start(move |_, _| reply.clone());
    let mut questions = Questions::new();
    questions.insert("ok", WireQuestion::Noul { instructions: "Did the call work?".into(), criteria: None });
    let mut request =
        Request::new(json!({"tool": "read_file", "output": "contents"}).as_object().unwrap().clone(), questions);
    request.timeout = Duration::from_secs(2);
    let reused = SystemOneProvider::new(&server.url());
    let fresh = SystemOneProvider::new(&server.url()).with_transport(1 << 20, false);
    let mut group = c.benchmark_group("loopback round trip");
    group.bench_function("connection reuse", |b| b.iter(|| black_box(reused.decide(&request).unwrap())));
    group.bench_function("new connection each", |b| b.iter(|| black_box(fresh.decide(&request).unwrap())));
    group.finish();
}

criterion_group!(benches, validation_and_policy, table_and_request, loopback);
criterion_main!(benches);
