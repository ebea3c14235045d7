//! Property tests: validation never panics, and whatever it accepts satisfies every rule;
//! the mock always produces valid answers; the candidate table keeps its invariants.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::BTreeSet;

use decision_core::policy::Answer;
use decision_protocol::ask::{BorrowedObject, Questions, WireQuestion, normalize, validate_answer, validate_answers};
use decision_protocol::space::{
    Applicable, DecisionState, HostObject, OPERATION_HEAD, Operation, Snapshot, SpaceConfig,
};
use decision_runtime::provider::MockProvider;
use proptest::prelude::*;
use serde_json::{Value, json};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2.0f64..3.0).prop_map(|x| json!(x)),
        (0u8..=3).prop_map(|k| json!(k)),
        prop::sample::select(vec!["a", "b", "c", "", "noul", "choice", "score", "0", "1"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "type",
                        "choice",
                        "probabilities",
                        "confidence",
                        "noul",
                        "score",
                        "a",
                        "b",
                        "c",
                        "0",
                        "1",
                        "2"
                    ]),
                    inner
                ),
                0..6
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn question() -> impl Strategy<Value = WireQuestion> {
    prop_oneof![
        Just(WireQuestion::Noul { instructions: "?".into(), criteria: None }),
        (1usize..4).prop_map(|n| WireQuestion::Choice {
            instructions: "?".into(),
            criteria: ["a", "b", "c"].iter().take(n).map(|id| (id.to_string(), String::new())).collect(),
        }),
        (1usize..4).prop_map(|n| WireQuestion::Score { instructions: "?".into(), criteria: vec![String::new(); n] }),
    ]
}

/// Distributions that are sometimes valid, sometimes not.
fn probabilities(ids: Vec<String>) -> impl Strategy<Value = Value> {
    prop::collection::vec(0.0f64..1.0, ids.len()).prop_map(move |weights| {
        let total: f64 = weights.iter().sum::<f64>().max(1e-9);
        Value::Object(ids.iter().zip(&weights).map(|(id, w)| (id.clone(), json!(w / total))).collect())
    })
}

/// JSON text whose objects may repeat a key and spell a key with an escape (`\u0061` is `a`),
/// as a recorded log line may.
fn json_text(keys: Vec<&'static str>) -> impl Strategy<Value = String> {
    let leaf = json_value().prop_map(|value| value.to_string());
    leaf.prop_recursive(3, 24, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((prop::sample::select(keys.clone()), inner), 0..6).prop_map(|members| {
                let members: Vec<String> = members.iter().map(|(key, value)| format!("\"{key}\":{value}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// The text of an answer set to questions `q0` and `q1`, sometimes repeating or escaping an id.
fn answer_set_text() -> impl Strategy<Value = String> {
    let entry_keys =
        vec!["type", "choice", "probabilities", "confidence", "noul", "score", "a", "b", "\\u0061", "0", "1"];
    prop::collection::vec((prop::sample::select(vec!["q0", "q1", "q\\u0031"]), json_text(entry_keys)), 0..4).prop_map(
        |members| {
            let members: Vec<String> = members.iter().map(|(id, entry)| format!("\"{id}\":{entry}")).collect();
            format!("{{{}}}", members.join(","))
        },
    )
}

proptest! {
    #[test]
    fn answers_read_in_place_validate_as_the_same_text_read_into_a_map(
        first in question(),
        second in question(),
        text in answer_set_text(),
    ) {
        let mut asked = Questions::new();
        asked.insert("q0", first);
        asked.insert("q1", second);
        let map: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
        let borrowed: BorrowedObject<'_> = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(validate_answers(&asked, &borrowed), validate_answers(&asked, &map), "{}", text);
    }

    #[test]
    fn validation_never_panics_and_accepted_answers_obey_every_rule(q in question(), raw in json_value()) {
        check_accepted(&q, &raw);
        let accepted = validate_answer(&q, Some(&raw)).is_ok();
        let mut asked = Questions::new();
        asked.insert("q", q);
        let normalized = normalize(&asked, Some(&json!({"q": raw})), vec![]);
        prop_assert!(normalized.missing.is_empty(), "an entry is never lost");
        prop_assert!(!accepted || normalized.dropped.is_empty(), "what validation accepts is never dropped");
    }

    #[test]
    fn well_formed_distributions_are_accepted_exactly_when_the_choice_is_an_argmax(
        (ids, probabilities, pick) in (1usize..5).prop_flat_map(|n| {
            let ids: Vec<String> = (0..n).map(|i| format!("o{i}")).collect();
            (Just(ids.clone()), probabilities(ids), 0..n)
        })
    ) {
        let q = WireQuestion::Choice { instructions: "?".into(), criteria: ids.iter().map(|i| (i.clone(), String::new())).collect() };
        let choice = ids[pick].clone();
        let answer = json!({"choice": choice, "probabilities": probabilities});
        let max = probabilities.as_object().unwrap().values().map(|v| v.as_f64().unwrap()).fold(0.0, f64::max);
        let p = probabilities[&choice].as_f64().unwrap();
        let result = validate_answer(&q, Some(&answer));
        prop_assert_eq!(result.is_ok(), p >= max - 1e-6 - 1e-12, "{:?}", result);
        check_accepted(&q, &answer);
    }

    #[test]
    fn the_mock_always_answers_validly(q in question()) {
        prop_assert!(validate_answer(&q, Some(&MockProvider::answer(&q))).is_ok());
    }

    #[test]
    fn the_table_keeps_its_invariants(
        picks in prop::collection::vec((0u32..40, prop::sample::subsequence(vec!["CLICK", "TYPE_TEXT", "SELECT"], 0..=3)), 0..80),
        cap in 1usize..30,
    ) {
        let objects: Vec<HostObject<u32>> = picks
            .iter()
            .map(|(id, ops)| HostObject {
                id: *id,
                kind: "k".into(),
                label: format!("object {id}"),
                value: String::new(),
                state: vec![],
                applies: ops.iter().map(|o| Applicable::plain(o)).collect(),
            })
            .collect();
        let eligible = vec![
            Operation::new("CLICK", "c", true),
            Operation::new("TYPE_TEXT", "t", true),
            Operation::new("SELECT", "s", true),
            Operation::new("WAIT", "w", false),
        ];
        let state = DecisionState::build(Snapshot { revision: "r".into(), objects }, &eligible, &SpaceConfig { cap, ..SpaceConfig::default() });
        let distinct: BTreeSet<u32> = picks.iter().map(|(id, _)| *id).collect();
        prop_assert_eq!(state.rows().len(), distinct.len().min(cap));
        prop_assert_eq!(state.rows().len() + state.truncated().len(), distinct.len());
        for (i, row) in state.rows().iter().enumerate() {
            prop_assert_eq!(row.index, i + 1, "contiguous 1-based indices");
        }
        let truncated: BTreeSet<String> = state.truncated().iter().map(|t| t.index.to_string()).collect();
        for op in state.operations() {
            let head = format!("{}_target", op.to_lowercase());
            for id in state.target_ids(&head) {
                let row = id.parse::<usize>().unwrap() - 1;
                prop_assert!(state.row_operations(row).contains(&op), "{} offered for {}", id, op);
                prop_assert!(!truncated.contains(id));
            }
        }
        let offered = state.questions().get(OPERATION_HEAD).unwrap().offered_ids();
        prop_assert!(offered.ends_with(&["ABSTAIN".to_string(), "NO_ACTION".to_string()]));
        prop_assert!(offered.contains(&"WAIT".to_string()));
    }
}

fn check_accepted(q: &WireQuestion, raw: &Value) {
    let Ok(answer) = validate_answer(q, Some(raw)) else { return };
    let unit = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
    let distribution = |p: &std::collections::BTreeMap<String, f64>, offered: Vec<String>| {
        let keys: Vec<String> = p.keys().cloned().collect();
        let mut offered = offered;
        offered.sort();
        assert_eq!(keys, offered);
        assert!(p.values().all(|x| unit(*x)));
        assert!((p.values().sum::<f64>() - 1.0).abs() <= 0.02 + 1e-9);
    };
    match answer {
        Answer::Noul { noul } => assert!(unit(noul)),
        Answer::Choice { choice, probabilities, confidence } => {
            assert!(q.offered_ids().contains(&choice));
            distribution(&probabilities, q.offered_ids());
            let max = probabilities.values().copied().fold(0.0, f64::max);
            assert!(probabilities[&choice] >= max - 1e-6 - 1e-9);
            assert!(confidence.is_some_and(unit));
        }
        Answer::Score { score, probabilities, confidence } => {
            assert!(score >= 0.0 && score <= (q.arity() - 1) as f64);
            distribution(&probabilities, q.offered_ids());
            assert!(confidence.is_some_and(unit));
        }
    }
}
