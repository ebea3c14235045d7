//! The contracts file: loading, the `constraints` form, and the lint — every unknown or
//! misplaced keyword is a located error (line and column of the offending key).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_outcomes::{Deliverable, LintError, Shape, load_contracts};
use serde_json::json;

fn errors(text: &str) -> Vec<LintError> {
    load_contracts(text).expect_err("expected lint errors").0
}

fn single_deliverable(deliverable: &str) -> String {
    format!("{{\"contracts\": [{{\"tool\": \"t\", \"method\": \"m\",\n\"deliverable\": {deliverable}}}]}}")
}

fn deliverable_of(text: &str) -> Deliverable {
    let set = load_contracts(text).unwrap_or_else(|errors| panic!("{errors:?}"));
    set.get("t", "m").unwrap().deliverable.clone().unwrap()
}

/// (line, column, pointer) of each error.
fn places(errors: &[LintError]) -> Vec<(usize, usize, &str)> {
    errors.iter().map(|e| (e.line, e.column, e.pointer.as_str())).collect()
}

#[test]
fn the_example_file_loads_with_every_field() {
    let set = load_contracts(include_str!("../../../examples/outcomes/contracts.json")).unwrap();
    assert_eq!(set.len(), 4);
    let movies = set.get("catalog", "find_movies").unwrap();
    assert_eq!(
        movies.acceptance.as_deref(),
        Some("Every movie the user could still see tonight, not guidance on where to look.")
    );
    assert_eq!(movies.failure_policy, Some(json!("Return low_utility when the listings page cannot be parsed.")));
    assert!(movies.purpose.is_some());
    let Some(Deliverable { shape: Shape::Object(object), .. }) = &movies.deliverable else { panic!("object") };
    assert_eq!(object.required().iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["status", "movies"]);
    assert_eq!(object.required()[1].aliases, ["films"]);
    let web = set.get("web", "research").unwrap();
    assert_eq!(web.failure_policy.as_ref().unwrap()["on_boundary"], "wrong_tool_boundary");
    assert!(set.get("catalog", "other").is_none());
}

#[test]
fn the_constraints_form_means_the_same_as_direct_keywords() {
    let seed = deliverable_of(&single_deliverable(
        r#"{"type": "object", "required": ["status", "movies"],
            "constraints": {"properties": {"movies": {"type": "array", "min_items": 1}}}}"#,
    ));
    let direct = deliverable_of(&single_deliverable(
        r#"{"type": "object", "required": ["status", "movies"],
            "properties": {"movies": {"type": "array", "min_items": 1}}}"#,
    ));
    assert_eq!(seed, direct);
    let array_seed = deliverable_of(&single_deliverable(r#"{"type": "array", "constraints": {"min_items": 1}}"#));
    let array_direct = deliverable_of(&single_deliverable(r#"{"type": "array", "min_items": 1}"#));
    assert_eq!(array_seed, array_direct);
}

#[test]
fn min_items_on_an_object_is_a_located_error() {
    let text = single_deliverable("{\"type\": \"object\", \"required\": [\"items\"],\n  \"min_items\": 1}");
    let found = errors(&text);
    assert_eq!(places(&found), [(3, 3, "/contracts/0/deliverable/min_items")]);
    assert!(found[0].message.contains("`min_items` cannot apply to `type: object`"), "{}", found[0].message);
    // The same misplacement through the seed's `constraints` form.
    let text = single_deliverable("{\"type\": \"object\",\n \"constraints\": {\"min_items\": 1}}");
    assert_eq!(places(&errors(&text)), [(3, 18, "/contracts/0/deliverable/constraints/min_items")]);
}

#[test]
fn every_type_specific_keyword_is_rejected_on_the_wrong_type() {
    let cases = [
        (r#"{"type": "array", "required": ["a"]}"#, "required"),
        (r#"{"type": "string", "properties": {}}"#, "properties"),
        (r#"{"type": "number", "aliases": {}}"#, "aliases"),
        (r#"{"type": "object", "items": {"type": "string"}}"#, "items"),
        (r#"{"type": "object", "max_items": 3}"#, "max_items"),
        (r#"{"type": "array", "non_empty": true}"#, "non_empty"),
        (r#"{"type": "integer", "min_items": 1}"#, "min_items"),
        (r#"{"min_items": 1}"#, "min_items"),
        (r#"{"required": ["a"]}"#, "required"),
    ];
    for (deliverable, keyword) in cases {
        let found = errors(&single_deliverable(deliverable));
        assert_eq!(found.len(), 1, "{deliverable}: {found:?}");
        assert_eq!(found[0].pointer, format!("/contracts/0/deliverable/{keyword}"), "{deliverable}");
        assert_eq!(found[0].line, 2);
        assert!(found[0].message.starts_with(&format!("`{keyword}` cannot apply")), "{}", found[0].message);
    }
    // The same keywords on their own type load.
    for deliverable in [
        r#"{"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}, "aliases": {"a": ["b"]}}"#,
        r#"{"type": "array", "items": {"type": "string"}, "min_items": 1, "max_items": 3}"#,
        r#"{"type": "string", "non_empty": true, "enum": ["x"]}"#,
        r#"{"enum": [1, "x", null]}"#,
        r#"{}"#,
    ] {
        deliverable_of(&single_deliverable(deliverable));
    }
}

#[test]
fn unknown_keywords_get_a_did_you_mean() {
    let found = errors(&single_deliverable(r#"{"type": "object", "propertys": {}}"#));
    assert!(
        found[0].message.starts_with("unknown deliverable keyword `propertys`; did you mean `properties`?"),
        "{}",
        found[0].message
    );
    let found = errors(&single_deliverable(r#"{"type": "array", "minItems": 1}"#));
    assert!(found[0].message.contains("did you mean `min_items`?"), "{}", found[0].message);
    let found = errors(&single_deliverable(r#"{"type": "strng"}"#));
    assert!(found[0].message.contains("did you mean `string`?"), "{}", found[0].message);
    let found = errors(r#"{"contracts": [{"tool": "t", "methd": "m", "deliverable": {"type": "string"}}]}"#);
    assert!(
        found.iter().any(|e| e.message.contains("unknown key `methd` in a contract; did you mean `method`?")),
        "{found:?}"
    );
    let found = errors(r#"{"contract": []}"#);
    assert!(found.iter().any(|e| e.message.contains("did you mean `contracts`?")), "{found:?}");
    // Nothing close: no guess.
    let found = errors(&single_deliverable(r#"{"type": "array", "zzzzzz": 1}"#));
    assert!(!found[0].message.contains("did you mean"), "{}", found[0].message);
}

#[test]
fn unknown_keywords_are_errors_never_ignored() {
    let found = errors(&single_deliverable(r#"{"type": "array", "minItems": 1}"#));
    assert_eq!(places(&found), [(2, 34, "/contracts/0/deliverable/minItems")]);
    assert!(found[0].message.contains("unknown deliverable keyword `minItems`"));
    let found = errors(&single_deliverable(r#"{"type": "object", "constraints": {"min_length": 1}}"#));
    assert_eq!(found[0].pointer, "/contracts/0/deliverable/constraints/min_length");
    let found = errors(&single_deliverable(r#"{"type": "object", "constraints": ["accurate conversion"]}"#));
    assert!(found[0].message.contains("`constraints` must be an object"), "prose constraints are rejected");
    let found = errors(r#"{"contracts": [{"tool": "t", "method": "m", "owner": "x"}], "version": 1}"#);
    assert_eq!(found.iter().map(|e| e.pointer.as_str()).collect::<Vec<_>>(), ["/contracts/0/owner", "/version"]);
}

#[test]
fn bad_values_are_located_errors() {
    let cases = [
        (r#"{"type": "Object"}"#, "/contracts/0/deliverable/type", "unknown type \"Object\""),
        (r#"{"type": " object"}"#, "/contracts/0/deliverable/type", "unknown type"),
        (r#"{"type": 1}"#, "/contracts/0/deliverable/type", "`type` must be a string"),
        (r#"{"type": "array", "min_items": -1}"#, "/contracts/0/deliverable/min_items", "non-negative integer"),
        (r#"{"type": "array", "min_items": 1.5}"#, "/contracts/0/deliverable/min_items", "non-negative integer"),
        (r#"{"type": "array", "min_items": "1"}"#, "/contracts/0/deliverable/min_items", "non-negative integer"),
        (r#"{"type": "array", "min_items": 3, "max_items": 2}"#, "/contracts/0/deliverable/max_items", "less than"),
        (r#"{"type": "object", "required": "a"}"#, "/contracts/0/deliverable/required", "array of strings"),
        (r#"{"type": "object", "required": ["a", "a"]}"#, "/contracts/0/deliverable/required/1", "twice"),
        (r#"{"type": "object", "required": [""]}"#, "/contracts/0/deliverable/required/0", "empty key"),
        (r#"{"type": "string", "enum": []}"#, "/contracts/0/deliverable/enum", "at least one"),
        (r#"{"type": "string", "enum": ["a", 1]}"#, "/contracts/0/deliverable/enum/1", "not of the declared type"),
        (r#"{"type": "integer", "enum": [1, 1.0]}"#, "/contracts/0/deliverable/enum/1", "twice"),
        (r#"{"type": "string", "non_empty": "yes"}"#, "/contracts/0/deliverable/non_empty", "true or false"),
        (r#"{"type": "object", "aliases": {"a": ["b"]}}"#, "/contracts/0/deliverable/aliases/a", "neither required"),
        (
            r#"{"type": "object", "required": ["a", "b"], "aliases": {"a": ["b"]}}"#,
            "/contracts/0/deliverable/aliases/a/0",
            "already a declared key",
        ),
        (
            r#"{"type": "object", "required": ["a", "b"], "aliases": {"a": ["x"], "b": ["x"]}}"#,
            "/contracts/0/deliverable/aliases/b/0",
            "already a declared key or alias",
        ),
        (
            r#"{"type": "object", "properties": {"a": {"type": "array", "min_items": 1, "min_items": 2}}}"#,
            "/contracts/0/deliverable/properties/a/min_items",
            "duplicate key",
        ),
        (
            r#"{"type": "array", "min_items": 1, "constraints": {"min_items": 2}}"#,
            "/contracts/0/deliverable/constraints/min_items",
            "both directly and in `constraints`",
        ),
        (
            r#"{"type": "array", "constraints": {"type": "object"}}"#,
            "/contracts/0/deliverable/constraints/type",
            "cannot be written inside `constraints`",
        ),
        (r#"[]"#, "/contracts/0/deliverable", "must be an object"),
    ];
    for (deliverable, pointer, message) in cases {
        let found = errors(&single_deliverable(deliverable));
        assert!(
            found.iter().any(|e| e.pointer == pointer && e.message.contains(message) && e.line == 2),
            "{deliverable}: expected `{message}` at {pointer}, got {found:?}"
        );
    }
}

#[test]
fn nested_deliverables_are_linted_to_any_depth_even_next_to_other_errors() {
    let text = single_deliverable(
        r#"{"type": "object", "min_items": 1, "properties": {"a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "string", "max_items": 1}}}}}}"#,
    );
    let pointers: Vec<String> = errors(&text).into_iter().map(|e| e.pointer).collect();
    assert_eq!(
        pointers,
        ["/contracts/0/deliverable/min_items", "/contracts/0/deliverable/properties/a/items/properties/b/max_items"]
    );
}

#[test]
fn contract_entries_are_checked() {
    let found = errors(r#"{"contracts": [{"method": "m"}, {"tool": "", "method": "m"}, {"tool": "t", "method": 3}]}"#);
    let messages: Vec<&str> = found.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        ["a contract needs `tool`", "`tool` must not be empty", "`method` must be a string, not a number"]
    );
    let found = errors(r#"{"contracts": [{"tool": "t", "method": "m"}, {"tool": "t", "method": "m"}]}"#);
    assert_eq!(places(&found), [(1, 46, "/contracts/1")]);
    assert!(found[0].message.contains("a second contract for tool `t` method `m`"));
    let found = errors(r#"{"contracts": [{"tool": "t", "method": "m", "acceptance": ["x"], "failure_policy": 3}]}"#);
    assert_eq!(found.len(), 2);
    assert_eq!(errors(r#"{"contract": []}"#).len(), 2, "unknown key and missing `contracts`");
    assert_eq!(errors(r#"{"contracts": {}}"#)[0].pointer, "/contracts");
    assert!(load_contracts(r#"{"contracts": []}"#).unwrap().is_empty());
}

#[test]
fn json_syntax_errors_are_located() {
    let found = errors("{\"contracts\": [\n  {\"tool\": \"t\",}\n]}");
    assert_eq!((found[0].line, found[0].column), (2, 16));
    assert!(found[0].message.starts_with("invalid JSON"));
}

#[test]
fn the_bad_example_reports_each_problem_in_file_order() {
    let found = errors(include_str!("../../../examples/outcomes/bad-contracts.json"));
    let pointers: Vec<&str> = found.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/contracts/0/deliverable/min_items",
            "/contracts/1/deliverable/type",
            "/contracts/1/deliverable/constraints",
            "/contracts/2/deliverable/constraints/min_items",
            "/contracts/2/deliverable/constraints/propertys",
            "/contracts/2/deliverable/non_empty",
            "/contracts/2/owner",
        ]
    );
    assert_eq!((found[0].line, found[0].column), (9, 9));
}
