//! Policy evaluation alone (answers already validated): the per-decision cost a host pays
//! after the provider answered. The policies are compiled from their text, as a host does,
//! so the benchmark does not depend on how predicates are represented.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decision_core::contract::{Primitive, Question};
use decision_core::diag::Span;
use decision_core::policy::{Answer, Answers, CompiledPolicy, CompiledRule, compile_predicate, evaluate};

fn question(id: &str, primitive: Primitive) -> Question {
    Question { id: id.into(), ask: "a".into(), primitive, options: vec![], span: Span::default() }
}

fn policy(questions: &[Question], rules: &[(&str, &str)]) -> CompiledPolicy {
    let rules = rules
        .iter()
        .map(|(text, action)| CompiledRule {
            predicate: compile_predicate(text, questions).unwrap(),
            action: (*action).into(),
            text: (*text).into(),
            span: Span::default(),
        })
        .collect();
    CompiledPolicy { block: "b".into(), rules }
}

fn probabilities(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, p)| (k.to_string(), *p)).collect()
}

fn policy_eval(c: &mut Criterion) {
    let tool = [question("tool", Primitive::Choice)];
    let pick_tool = policy(&tool, &[("top >= 0.6", "call"), ("else", "escalate")]);
    let choice = Answers::from([(
        "tool".to_string(),
        Answer::Choice {
            choice: "list_dir".into(),
            probabilities: probabilities(&[("read_file", 0.05), ("list_dir", 0.8), ("done", 0.15)]),
            confidence: Some(0.8),
        },
    )]);
    c.bench_function("policy/pick_tool (top >= on a choice)", |b| {
        b.iter(|| black_box(evaluate(black_box(&pick_tool), black_box(&choice))))
    });

    let risk = [question("risk", Primitive::Score), question("needs_auth", Primitive::Noul)];
    let grade_risk = policy(
        &risk,
        &[
            ("score:risk >= 2", "ask_human"),
            ("prob:needs_auth >= 0.5", "ask_human"),
            ("score:risk >= 1", "auto_audit"),
            ("else", "auto"),
        ],
    );
    // Falls through to `else`: every rule is tried and every threshold enters the margin.
    let graded = Answers::from([
        (
            "risk".to_string(),
            Answer::Score {
                score: 0.4,
                probabilities: probabilities(&[("0", 0.7), ("1", 0.3)]),
                confidence: Some(0.5),
            },
        ),
        ("needs_auth".to_string(), Answer::Noul { noul: 0.1 }),
    ]);
    c.bench_function("policy/grade_risk (score + prob, falls to else)", |b| {
        b.iter(|| black_box(evaluate(black_box(&grade_risk), black_box(&graded))))
    });

    let done = [question("done", Primitive::Noul)];
    let below = policy(
        &done,
        &[
            ("top < 0.55", "keep_going"),
            ("prob:done < 0.2", "stop"),
            ("prob:done < 0.3", "stop"),
            ("prob:done >= 0.9", "finish"),
            ("else", "keep_going"),
        ],
    );
    let noul = Answers::from([("done".to_string(), Answer::Noul { noul: 0.7 })]);
    c.bench_function("policy/below tiers (top < and prob < on a noul)", |b| {
        b.iter(|| black_box(evaluate(black_box(&below), black_box(&noul))))
    });
}

criterion_group!(benches, policy_eval);
criterion_main!(benches);
