//! Property tests: loading and validation never panic; a value that holds is returned unchanged;
//! any other ok value becomes exactly one typed `contract_violation`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_outcomes::{Mismatch, Outcome, ValidationVerdict, load_contracts};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e6f64..1.0e6).prop_map(Value::from),
        "[a-c ]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-d/~]{1,2}", inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// A deliverable built from random keywords, valid or not.
fn deliverable_json() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        Just("object"),
        Just("array"),
        Just("string"),
        Just("number"),
        Just("integer"),
        Just("boolean"),
        Just("null"),
        Just("numeric")
    ];
    let leaf = (
        proptest::option::of(kind),
        proptest::option::of(0u64..3),
        proptest::option::of(0u64..3),
        proptest::option::of(any::<bool>()),
        proptest::option::of(prop::collection::vec(json_value(), 1..3)),
        proptest::option::of(prop::collection::vec("[a-d]", 0..3)),
    )
        .prop_map(|(kind, min, max, non_empty, enumeration, required)| {
            let mut deliverable = Map::new();
            if let Some(kind) = kind {
                deliverable.insert("type".into(), json!(kind));
            }
            if let Some(min) = min {
                deliverable.insert("min_items".into(), json!(min));
            }
            if let Some(max) = max {
                deliverable.insert("max_items".into(), json!(max));
            }
            if let Some(flag) = non_empty {
                deliverable.insert("non_empty".into(), json!(flag));
            }
            if let Some(values) = enumeration {
                deliverable.insert("enum".into(), Value::Array(values));
            }
            if let Some(keys) = required {
                deliverable.insert("required".into(), json!(keys));
            }
            Value::Object(deliverable)
        });
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
            prop::collection::vec(("[a-d]", inner.clone()), 0..3).prop_map(|properties| {
                json!({"type": "object", "properties": properties.into_iter().collect::<Map<String, Value>>()})
            }),
            inner.prop_map(|properties| json!({"type": "object", "constraints": {"properties": {"a": properties}}})),
        ]
    })
}

/// A deliverable that `value` satisfies, as tight as the value allows.
fn deliverable_for(value: &Value, with_enum: bool) -> Value {
    let mut deliverable = match value {
        Value::Null => json!({"type": "null"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Number(number) if number.is_i64() || number.is_u64() => json!({"type": "integer"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::String(text) => json!({"type": "string", "non_empty": !text.trim().is_empty()}),
        Value::Array(items) => {
            let mut array = json!({"type": "array", "min_items": items.len(), "max_items": items.len()});
            if let Some(first) = items.first()
                && items.iter().all(|item| item == first)
            {
                array["items"] = deliverable_for(first, false);
            }
            array
        }
        Value::Object(members) => json!({
            "type": "object",
            "required": members.keys().collect::<Vec<_>>(),
            "properties": members.iter().map(|(k, v)| (k.clone(), deliverable_for(v, false))).collect::<Map<_, _>>(),
        }),
    };
    if with_enum {
        deliverable["enum"] = json!([value]);
    }
    deliverable
}

fn file_with(deliverable: &Value) -> String {
    json!({"contracts": [{"tool": "t", "method": "m", "deliverable": deliverable}]}).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn loading_and_validation_never_panic(deliverable in deliverable_json(), value in json_value()) {
        if let Ok(set) = load_contracts(&file_with(&deliverable)) {
            let outcome = Outcome::ok(value);
            let validated = set.get("t", "m").unwrap().validate(outcome.clone());
            match validated.verdict {
                ValidationVerdict::Held { .. } => prop_assert_eq!(validated.outcome, outcome),
                ValidationVerdict::Violated(violation) => {
                    prop_assert!(Mismatch::ALL.contains(&violation.mismatch));
                    let error = validated.outcome.tool_error().unwrap();
                    prop_assert_eq!(error.error_type.as_str(), "contract_violation");
                    prop_assert!(!error.retriable);
                    prop_assert_eq!(error.metadata["mismatch"].as_str(), Some(violation.mismatch.as_str()));
                    let path = error.metadata["path"].as_str().unwrap();
                    prop_assert!(path.is_empty() || path.starts_with('/'));
                }
                other => prop_assert!(false, "unexpected verdict {:?}", other),
            }
        }
    }

    #[test]
    fn a_value_that_holds_is_returned_unchanged(value in json_value(), with_enum in any::<bool>()) {
        // Outcomes arrive as JSON text, like contracts; parse both the same way so floats
        // compare as the parser reads them.
        let value: Value = serde_json::from_str(&value.to_string()).unwrap();
        let deliverable = deliverable_for(&value, with_enum);
        let set = load_contracts(&file_with(&deliverable)).unwrap_or_else(|e| panic!("{deliverable}: {e:?}"));
        let outcome = Outcome::ok(value).with_identity("t", "m");
        let validated = set.get("t", "m").unwrap().validate(outcome.clone());
        prop_assert_eq!(validated.verdict, ValidationVerdict::Held { aliases_used: vec![] });
        prop_assert_eq!(validated.outcome, outcome);
    }

    #[test]
    fn the_loader_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = load_contracts(&text);
    }

    #[test]
    fn the_loader_never_panics_on_arbitrary_json(value in json_value()) {
        let _ = load_contracts(&value.to_string());
        let _ = load_contracts(&json!({"contracts": [value]}).to_string());
    }
}

fn outcome_event_line() -> impl Strategy<Value = Value> {
    let outcome = prop_oneof![
        json_value().prop_map(|value| json!({"status": "ok", "value": value})),
        (prop_oneof![Just("wrong_tool_boundary"), Just("contract_violation"), Just("low_utility")], json_value())
            .prop_map(|(kind, extra)| json!({"status": "error", "error_type": kind,
                "metadata": {"boundary_axes": ["a"], "mismatch": "min_items_violation", "path": "/x", "extra": extra}})),
    ];
    (
        outcome,
        prop_oneof![Just("m1"), Just("m2")],
        proptest::option::of(prop_oneof![Just("a"), Just("b")]),
        proptest::option::of(0u64..400_000),
        proptest::option::of(prop_oneof![Just("held"), Just("violated"), Just("not_applied")]),
        0u8..3,
    )
        .prop_map(|(outcome, method, trace, at, contract, form)| {
            let mut event = json!({"tool": "t", "method": method, "outcome": outcome});
            if let Some(trace) = trace {
                event["trace_id"] = json!(trace);
            }
            if let Some(at) = at {
                event["at"] = json!(at);
            }
            if let Some(contract) = contract {
                event["contract"] = json!(contract);
            }
            match form {
                0 => event,
                1 => {
                    event["type"] = json!("tool:outcome");
                    json!({"kind": "event", "run": 0, "e": event})
                }
                _ => {
                    event["kind"] = json!("tool:outcome");
                    event
                }
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The fast reader and the careful one (forced by a repeated member, which the fast reader
    /// refuses) give the same report.
    #[test]
    fn both_log_readers_give_the_same_report(lines in prop::collection::vec(outcome_event_line(), 1..20)) {
        let plain: Vec<String> = lines.iter().map(Value::to_string).collect();
        let forced: Vec<String> = plain
            .iter()
            .map(|line| format!("{{\"depth\":0,\"depth\":0,{}", line.strip_prefix('{').unwrap()))
            .collect();
        let fast = decision_outcomes::report(plain.join("\n").as_bytes()).unwrap();
        let careful = decision_outcomes::report(forced.join("\n").as_bytes()).unwrap();
        prop_assert_eq!(fast.to_json(), careful.to_json());
    }
}
