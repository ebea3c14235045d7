//! Validation: each constraint and each mismatch, with a passing and a failing example; no
//! coercion of success; error outcomes untouched; exact violation metadata.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
// A test reads its fixtures from disk; the crate itself does no I/O.
#![allow(clippy::disallowed_methods)]

use decision_outcomes::{Outcome, ToolContract, ValidationVerdict, load_contracts};
use serde_json::{Value, json};

fn contract(deliverable: Value) -> ToolContract {
    let file = json!({"contracts": [{"tool": "t", "method": "m", "deliverable": deliverable}]});
    let set = load_contracts(&file.to_string()).unwrap_or_else(|errors| panic!("{errors:?}"));
    set.get("t", "m").unwrap().clone()
}

/// Validate `value` as an ok outcome; `Ok(())` when it holds (and is unchanged), else the metadata.
fn check(deliverable: Value, value: Value) -> Result<(), Value> {
    let outcome = Outcome::ok(value.clone());
    let validated = contract(deliverable).validate(outcome.clone());
    match validated.verdict {
        ValidationVerdict::Held { .. } => {
            assert_eq!(validated.outcome, outcome, "a value that holds is returned unchanged");
            Ok(())
        }
        ValidationVerdict::Violated(_) => {
            let error = validated.outcome.tool_error().expect("a violation is an error outcome");
            assert_eq!(error.error_type, "contract_violation");
            assert!(!error.retriable);
            assert_eq!(validated.outcome.tool.as_deref(), Some("t"));
            assert_eq!(validated.outcome.method.as_deref(), Some("m"));
            Err(Value::Object(error.metadata.clone()))
        }
        other => panic!("unexpected verdict {other:?}"),
    }
}

fn mismatch(result: Result<(), Value>) -> (String, String) {
    let metadata = result.expect_err("expected a violation");
    (metadata["mismatch"].as_str().unwrap().to_owned(), metadata["path"].as_str().unwrap().to_owned())
}

#[test]
fn every_type_admits_its_values_and_rejects_others() {
    let cases = [
        ("object", json!({}), json!([])),
        ("array", json!([]), json!({})),
        ("string", json!(""), json!(1)),
        ("number", json!(1.5), json!("1.5")),
        ("number", json!(2), json!(null)),
        ("integer", json!(3), json!(3.5)),
        ("integer", json!(3.0), json!("3")),
        ("boolean", json!(false), json!(0)),
        ("null", json!(null), json!(false)),
    ];
    for (kind, good, bad) in cases {
        assert_eq!(check(json!({"type": kind}), good.clone()), Ok(()), "{kind} admits {good}");
        let metadata = check(json!({"type": kind}), bad.clone()).expect_err("type mismatch");
        assert_eq!(metadata["mismatch"], "type_mismatch", "{kind} rejects {bad}");
        assert_eq!(metadata["expected_shape"], kind);
    }
}

#[test]
fn type_mismatch_metadata_is_exact() {
    let metadata = check(json!({"type": "object", "required": ["a"]}), json!([1, 2])).unwrap_err();
    assert_eq!(
        metadata,
        json!({"mismatch": "type_mismatch", "path": "", "expected_shape": "object", "actual_shape": "array",
               "missing_keys": []})
    );
    let metadata = check(json!({"type": "string"}), json!(1.5)).unwrap_err();
    assert_eq!(metadata["actual_shape"], "number");
}

#[test]
fn required_keys_all_missing_keys_are_reported_in_declaration_order() {
    let deliverable = json!({"type": "object", "required": ["status", "movies", "source"]});
    assert_eq!(check(deliverable.clone(), json!({"status": "x", "movies": [], "source": "y"})), Ok(()));
    let metadata = check(deliverable, json!({"movies": [1]})).unwrap_err();
    assert_eq!(
        metadata,
        json!({"mismatch": "missing_required_key", "path": "", "expected_shape": "object",
               "actual_shape": "object", "missing_keys": ["status", "source"]})
    );
}

#[test]
fn key_matching_is_exact_without_folding() {
    let deliverable = json!({"type": "object", "required": ["movieList"]});
    let metadata = check(deliverable.clone(), json!({"movie_list": []})).unwrap_err();
    assert_eq!(metadata["missing_keys"], json!(["movieList"]));
    assert!(check(deliverable.clone(), json!({"MovieList": []})).is_err());
    assert!(check(deliverable, json!({" movieList": []})).is_err());
}

#[test]
fn declared_aliases_satisfy_keys_and_are_recorded() {
    let deliverable = json!({"type": "object", "required": ["movies"],
        "properties": {"movies": {"type": "array", "min_items": 1}, "note": {"type": "string"}},
        "aliases": {"movies": ["films", "titles"], "note": ["remark"]}});
    let contract = contract(deliverable);
    let outcome = Outcome::ok(json!({"titles": [1], "remark": "r"}));
    let validated = contract.validate(outcome.clone());
    assert_eq!(validated.outcome, outcome, "aliases are recorded, the value is not rewritten");
    let ValidationVerdict::Held { aliases_used } = validated.verdict else { panic!("should hold") };
    let used: Vec<(&str, &str)> = aliases_used.iter().map(|u| (u.key.as_str(), u.alias.as_str())).collect();
    assert_eq!(used, [("movies", "titles"), ("note", "remark")]);
    // Constraints follow the alias, and the path names the key actually present.
    let failed = contract.validate(Outcome::ok(json!({"films": []})));
    let error = failed.outcome.tool_error().unwrap();
    assert_eq!(error.metadata["path"], "/films");
    assert_eq!(error.metadata["mismatch"], "min_items_violation");
    // The exact key wins over an alias.
    let exact = contract.validate(Outcome::ok(json!({"movies": [1], "films": []})));
    assert_eq!(exact.verdict, ValidationVerdict::Held { aliases_used: vec![] });
    // An undeclared alternative is not folded in.
    assert!(contract.validate(Outcome::ok(json!({"Movies": [1]}))).outcome.tool_error().is_some());
}

#[test]
fn min_items_at_the_root_and_on_a_property() {
    assert_eq!(check(json!({"type": "array", "min_items": 1}), json!([0])), Ok(()));
    assert_eq!(
        check(json!({"type": "array", "min_items": 1}), json!([])).unwrap_err(),
        json!({"mismatch": "min_items_violation", "path": "", "expected_shape": "array", "actual_shape": "array",
               "missing_keys": [], "expected_min_items": 1, "actual_items": 0})
    );
    let deliverable = json!({"type": "object", "required": ["status", "movies"],
        "properties": {"movies": {"type": "array", "min_items": 2}}});
    assert_eq!(check(deliverable.clone(), json!({"status": "success", "movies": [1, 2]})), Ok(()));
    let metadata = check(deliverable, json!({"status": "success", "movies": [1]})).unwrap_err();
    assert_eq!(metadata["path"], "/movies");
    assert_eq!(metadata["expected_min_items"], 2);
    assert_eq!(metadata["actual_items"], 1);
    assert!(metadata.get("expected_max_items").is_none());
}

#[test]
fn max_items() {
    let deliverable = json!({"type": "array", "max_items": 2});
    assert_eq!(check(deliverable.clone(), json!([1, 2])), Ok(()));
    assert_eq!(
        check(deliverable, json!([1, 2, 3])).unwrap_err(),
        json!({"mismatch": "max_items_violation", "path": "", "expected_shape": "array", "actual_shape": "array",
               "missing_keys": [], "expected_max_items": 2, "actual_items": 3})
    );
}

#[test]
fn enum_values() {
    let deliverable = json!({"type": "string", "enum": ["G", "PG"]});
    assert_eq!(check(deliverable.clone(), json!("PG")), Ok(()));
    assert_eq!(
        check(deliverable, json!("pg")).unwrap_err(),
        json!({"mismatch": "enum_mismatch", "path": "", "expected_shape": "string", "actual_shape": "string",
               "missing_keys": []})
    );
    // Numbers compare by value; a type-less enum may mix kinds.
    assert_eq!(check(json!({"type": "number", "enum": [1, 2.5]}), json!(1.0)), Ok(()));
    assert_eq!(check(json!({"enum": [null, "x"]}), json!(null)), Ok(()));
    let metadata = check(json!({"enum": [null, "x"]}), json!(0)).unwrap_err();
    assert_eq!(
        (metadata["expected_shape"].as_str(), metadata["actual_shape"].as_str()),
        (Some("any"), Some("integer"))
    );
}

#[test]
fn an_enum_mismatch_names_the_value_and_the_allowed_values() {
    let message = |deliverable: Value, value: Value| {
        let validated = contract(deliverable).validate(Outcome::ok(value));
        validated.outcome.tool_error().expect("a violation").message.clone()
    };
    let text = message(json!({"type": "string", "enum": ["G", "PG"]}), json!("pg"));
    assert!(
        text.ends_with("the value is \"pg\", which is not one of the declared enum values (\"G\", \"PG\")"),
        "{text}"
    );
    // Nested, of another kind, and a long value clipped (control characters stay escaped).
    let long = format!("\u{1b}[2J{}", "x".repeat(500));
    let text = message(json!({"type": "object", "properties": {"rating": {"enum": [1, 2]}}}), json!({"rating": long}));
    assert!(text.contains("`/rating` is \"\\u001b[2Jxxx"), "{text}");
    assert!(text.contains("…, which is not one of the declared enum values (1, 2)"), "{text}");
    assert!(text.len() < 300, "{text}");
}

#[test]
fn non_empty_strings() {
    let deliverable = json!({"type": "string", "non_empty": true});
    assert_eq!(check(deliverable.clone(), json!("Arrival")), Ok(()));
    for blank in ["", "   ", "\n\t"] {
        assert_eq!(
            check(deliverable.clone(), json!(blank)).unwrap_err(),
            json!({"mismatch": "empty_value", "path": "", "expected_shape": "string", "actual_shape": "string",
                   "missing_keys": []})
        );
    }
    assert_eq!(check(json!({"type": "string", "non_empty": false}), json!("")), Ok(()));
}

#[test]
fn nested_items_report_json_pointer_paths() {
    let deliverable = json!({"type": "object", "required": ["movies"], "properties": {"movies": {
        "type": "array", "items": {"type": "object", "required": ["title"],
        "properties": {"title": {"type": "string", "non_empty": true},
                       "tags": {"type": "array", "items": {"type": "string"}}}}}}});
    assert_eq!(check(deliverable.clone(), json!({"movies": [{"title": "A", "tags": ["x"]}]})), Ok(()));
    assert_eq!(
        mismatch(check(deliverable.clone(), json!({"movies": [{"title": "A"}, {}]}))),
        ("missing_required_key".into(), "/movies/1".into())
    );
    assert_eq!(
        mismatch(check(deliverable.clone(), json!({"movies": [{"title": " "}]}))),
        ("empty_value".into(), "/movies/0/title".into())
    );
    assert_eq!(
        mismatch(check(deliverable.clone(), json!({"movies": [{"title": "A", "tags": ["x", 2]}]}))),
        ("type_mismatch".into(), "/movies/0/tags/1".into())
    );
    // Keys with `/` and `~` are escaped in the pointer.
    let escaped = json!({"type": "object", "properties": {"a/b~c": {"type": "integer"}}});
    assert_eq!(mismatch(check(escaped, json!({"a/b~c": "x"}))), ("type_mismatch".into(), "/a~1b~0c".into()));
}

#[test]
fn first_failure_in_declaration_order_wins() {
    let deliverable = json!({"type": "object", "required": ["a"], "properties": {
        "b": {"type": "string"}, "c": {"type": "array", "min_items": 1}}});
    // `a` missing is reported before any property problem.
    assert_eq!(mismatch(check(deliverable.clone(), json!({"b": 1, "c": []}))).0, "missing_required_key");
    assert_eq!(mismatch(check(deliverable.clone(), json!({"a": 1, "b": 1, "c": []}))).1, "/b");
    assert_eq!(mismatch(check(deliverable, json!({"a": 1, "b": "x", "c": []}))).1, "/c");
    // min_items before max_items before items.
    let array = json!({"type": "array", "min_items": 2, "items": {"type": "string"}});
    assert_eq!(mismatch(check(array, json!([1]))).0, "min_items_violation");
}

#[test]
fn a_declared_property_that_is_absent_is_not_a_failure() {
    let deliverable = json!({"type": "object", "properties": {"movies": {"type": "array", "min_items": 1}}});
    assert_eq!(check(deliverable, json!({"status": "ok"})), Ok(()));
}

#[test]
fn an_empty_result_fails_only_when_the_contract_says_so() {
    let loose = json!({"type": "object", "required": ["status", "movies"]});
    let strict = json!({"type": "object", "required": ["status", "movies"],
        "constraints": {"properties": {"movies": {"type": "array", "min_items": 1}}}});
    let empty = json!({"status": "success_no_parse", "movies": [], "message": "fetched page but found no listings"});
    assert_eq!(check(loose, empty.clone()), Ok(()));
    let metadata = check(strict, empty).unwrap_err();
    assert_eq!(metadata["mismatch"], "min_items_violation");
    assert_eq!(metadata["path"], "/movies");
    assert_eq!(metadata["expected_min_items"], 1);
    assert_eq!(metadata["actual_items"], 0);
}

#[test]
fn success_is_never_coerced_by_status_strings() {
    let contract = contract(json!({"type": "object", "required": ["status", "movies"]}));
    for status in [
        "success_no_parse",
        "success_but_unusable",
        "partial_success_unusable",
        "empty_result",
        "no_useful_result",
        "low_utility",
        "error",
        "failed",
    ] {
        let outcome = Outcome::ok(json!({"status": status, "movies": []}));
        let validated = contract.validate(outcome.clone());
        assert_eq!(validated.outcome, outcome, "status {status} must not rewrite the outcome");
        assert!(matches!(validated.verdict, ValidationVerdict::Held { .. }));
    }
    // Without a deliverable nothing is checked at all.
    let bare = load_contracts(r#"{"contracts":[{"tool":"t","method":"m"}]}"#).unwrap();
    let outcome = Outcome::ok(json!({"status": "low_utility"}));
    let validated = bare.get("t", "m").unwrap().validate(outcome.clone());
    assert_eq!((validated.outcome, validated.verdict), (outcome, ValidationVerdict::NoDeliverable));
}

#[test]
fn error_outcomes_are_not_validated() {
    let contract = contract(json!({"type": "array", "min_items": 1}));
    for document in [
        json!({"status": "error", "error_type": "low_utility", "error_message": "thin", "retriable": false, "metadata": {}}),
        json!({"status": "error", "error_type": "wrong_tool_boundary", "error_message": "split",
               "metadata": {"boundary_axes": ["fetch", "parse"]}}),
        json!({"status": "error", "error_type": "timeout", "error_message": "slow", "retriable": true}),
    ] {
        let outcome = Outcome::from_json(&document).unwrap();
        let validated = contract.validate(outcome.clone());
        assert_eq!(validated.outcome, outcome);
        assert_eq!(validated.verdict, ValidationVerdict::ErrorNotValidated);
        assert_eq!(validated.verdict.as_str(), "not_applied");
    }
}

#[test]
fn the_seed_example_fails_as_the_plan_describes() {
    let set = load_contracts(include_str!("../../../examples/outcomes/contracts.json")).unwrap();
    let empty = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/outcomes/outcomes/movies-empty.json"
    ))
    .unwrap();
    let outcome = Outcome::from_json(&serde_json::from_str(&empty).unwrap()).unwrap();
    let validated = set.validate("catalog", "find_movies", outcome);
    let error = validated.outcome.tool_error().unwrap();
    assert_eq!(error.error_type, "contract_violation");
    assert_eq!(
        Value::Object(error.metadata.clone()),
        json!({"mismatch": "min_items_violation", "path": "/movies", "expected_shape": "array",
               "actual_shape": "array", "missing_keys": [], "expected_min_items": 1, "actual_items": 0})
    );
    assert!(error.message.contains("min_items_violation"), "{}", error.message);
}

#[test]
fn large_objects_are_checked_the_same_way_as_small_ones() {
    // More than 16 members takes the map-lookup path instead of the member scan.
    let deliverable = json!({"type": "object", "required": ["a", "b", "c"],
        "properties": {"b": {"type": "string"}, "c": {"type": "array", "min_items": 1}}});
    let mut large: serde_json::Map<String, Value> = (0..20).map(|i| (format!("x{i}"), json!(i))).collect();
    for (small, expected) in [
        (json!({"b": "s", "c": [1]}), Some(("missing_required_key", ""))),
        (json!({"a": 1, "b": 2, "c": [1]}), Some(("type_mismatch", "/b"))),
        (json!({"a": 1, "b": "s", "c": []}), Some(("min_items_violation", "/c"))),
        (json!({"a": 1, "b": "s", "c": [1]}), None),
    ] {
        large.retain(|key, _| key.starts_with('x'));
        large.extend(small.as_object().unwrap().clone());
        for value in [small.clone(), Value::Object(large.clone())] {
            let result = check(deliverable.clone(), value.clone());
            match expected {
                None => assert_eq!(result, Ok(()), "{value}"),
                Some((kind, path)) => {
                    let metadata = result.unwrap_err();
                    assert_eq!((metadata["mismatch"].as_str(), metadata["path"].as_str()), (Some(kind), Some(path)));
                    if kind == "missing_required_key" {
                        assert_eq!(metadata["missing_keys"], json!(["a"]));
                    }
                }
            }
        }
    }
}
