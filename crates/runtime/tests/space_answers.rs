//! Adversarial answers to the heads of an indexed decision state (mirroring jev-ultrafast's
//! invalid operation/target tests, question-space.md §A5 and §A10). Every rejection means no
//! observation: nothing can act.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_protocol::ask::AnswerProblem;
use decision_protocol::space::{
    ABSTAIN, Applicable, DecisionState, Evidence, HostObject, NO_ACTION, Operation, ParamOption, Snapshot, SpaceConfig,
    SpaceRejection,
};
use serde_json::{Map, Value, json};

fn object(id: &'static str, label: &str, applies: Vec<Applicable>) -> HostObject<&'static str> {
    HostObject { id, kind: "element".into(), label: label.into(), value: String::new(), state: vec![], applies }
}

fn state() -> DecisionState<&'static str> {
    let snapshot = Snapshot {
        revision: "rev-7".into(),
        objects: vec![
            object("node-10", "Search", vec![Applicable::plain("TYPE_TEXT"), Applicable::plain("CLICK")]),
            object("node-20", "Go", vec![Applicable::plain("CLICK")]),
            object(
                "node-30",
                "Sort",
                vec![Applicable::with_options(
                    "SELECT",
                    vec![
                        ParamOption { label: "Price".into(), value: "price".into() },
                        ParamOption { label: "Date".into(), value: "date".into() },
                    ],
                )],
            ),
            object("node-40", "Hidden", vec![Applicable::plain("CLICK")]),
        ],
    };
    let operations = vec![
        Operation::new("CLICK", "Click an element.", true),
        Operation::new("TYPE_TEXT", "Type into a field.", true),
        Operation::new("SELECT", "Pick a dropdown value.", true),
        Operation::new("WAIT", "Wait.", false),
    ];
    DecisionState::build(snapshot, &operations, &SpaceConfig { cap: 3, ..SpaceConfig::default() })
}

fn evidence() -> Evidence {
    Evidence {
        request_digest: "0123456789abcdef".into(),
        model: "jev-1.13.0".into(),
        provider: "systemone".into(),
        policy: "web@1".into(),
    }
}

/// A valid answer picking `choice` among `ids` with probability 0.7.
fn pick(choice: &str, ids: &[&str]) -> Value {
    let (top, rest) = if ids.len() == 1 { (1.0, 0.0) } else { (0.7, 0.3 / (ids.len() - 1) as f64) };
    let probabilities: Map<String, Value> =
        ids.iter().map(|id| (id.to_string(), json!(if *id == choice { top } else { rest }))).collect();
    json!({"type": "choice", "choice": choice, "probabilities": probabilities, "confidence": 0.6})
}

const OPS: [&str; 6] = ["CLICK", "TYPE_TEXT", "SELECT", "WAIT", ABSTAIN, NO_ACTION];

fn answers(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn interpret(pairs: &[(&str, Value)]) -> Result<decision_protocol::space::Observation<&'static str>, SpaceRejection> {
    state().interpret("rev-7", &answers(pairs), &evidence())
}

#[test]
fn only_the_selected_operations_target_head_executes() {
    let obs = interpret(&[
        ("operation", pick("TYPE_TEXT", &OPS)),
        ("type_text_target", pick("1", &["1"])),
        ("click_target", json!({"choice": "invented"})),
    ])
    .unwrap();
    assert_eq!(obs.operation, "TYPE_TEXT");
    let target = obs.target.unwrap();
    assert_eq!((target.target_id.as_str(), target.row, target.id), ("1", 1, "node-10"));
    assert_eq!(obs.unused_heads.keys().collect::<Vec<_>>(), ["click_target"], "kept for audit only");
    assert_eq!(obs.revision, "rev-7");
    assert!((obs.operation_probability - 0.7).abs() < 1e-12);
    assert_eq!(
        state().questions().ids().collect::<Vec<_>>(),
        ["operation", "click_target", "type_text_target", "select_target"]
    );
}

#[test]
fn click_cannot_consume_a_target_it_was_not_offered() {
    let mut click = pick("999", &["1", "2", "999"]);
    click["choice"] = json!("999");
    let err = interpret(&[("operation", pick("CLICK", &OPS)), ("click_target", click)]).unwrap_err();
    assert_eq!(
        err,
        SpaceRejection::InvalidHead {
            head: "click_target".into(),
            problem: AnswerProblem::NotOffered { choice: "999".into() }
        }
    );
    // The text field's target id is fine for CLICK only because CLICK offers row 1 too;
    // SELECT never offers a plain row id.
    let err =
        interpret(&[("operation", pick("SELECT", &OPS)), ("select_target", pick("3", &["3:1", "3:2"]))]).unwrap_err();
    assert!(
        matches!(err, SpaceRejection::InvalidHead { ref head, problem: AnswerProblem::NotOffered { .. } } if head == "select_target"),
        "{err}"
    );
}

#[test]
fn a_truncated_row_is_never_selectable() {
    let err =
        interpret(&[("operation", pick("CLICK", &OPS)), ("click_target", pick("4", &["1", "2", "4"]))]).unwrap_err();
    assert_eq!(err, SpaceRejection::TruncatedRow { head: "click_target".into(), choice: "4".into() });
    assert_eq!(state().truncated()[0].id, "node-40");
}

#[test]
fn the_six_mutations_of_the_operation_head_are_rejected() {
    let base = pick("CLICK", &OPS);
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut v = base.clone();
    v["choice"] = json!("invented");
    cases.push(("unknown", v));
    let mut v = base.clone();
    v["probabilities"]["WAIT"] = Value::Null; // what a NaN becomes in JSON
    cases.push(("nan", v));
    let mut v = base.clone();
    v["probabilities"].as_object_mut().unwrap().remove("WAIT");
    cases.push(("missing", v));
    let mut v = base.clone();
    v["probabilities"]["WAIT"] = json!(-1);
    cases.push(("negative", v));
    let mut v = base.clone();
    v["choice"] = json!("WAIT");
    cases.push(("non_max", v));
    let mut v = base.clone();
    v["confidence"] = json!(5);
    cases.push(("confidence", v));
    let mut v = base.clone();
    v["probabilities"]["CLICK"] = json!(true);
    cases.push(("bool_probability", v));
    let mut v = base;
    v["confidence"] = json!(true);
    cases.push(("bool_confidence", v));
    for (name, operation) in cases {
        let err = interpret(&[("operation", operation), ("click_target", pick("2", &["1", "2"]))]).unwrap_err();
        assert!(matches!(err, SpaceRejection::InvalidHead { ref head, .. } if head == "operation"), "{name}: {err}");
    }
    assert!(interpret(&[("operation", pick("CLICK", &OPS)), ("click_target", pick("2", &["1", "2"]))]).is_ok());
}

#[test]
fn the_selected_target_head_must_be_present_and_valid() {
    let err = interpret(&[("operation", pick("CLICK", &OPS))]).unwrap_err();
    assert_eq!(err, SpaceRejection::InvalidHead { head: "click_target".into(), problem: AnswerProblem::Missing });
    let mut not_max = pick("2", &["1", "2"]);
    not_max["choice"] = json!("1");
    let err = interpret(&[("operation", pick("CLICK", &OPS)), ("click_target", not_max)]).unwrap_err();
    assert!(matches!(err, SpaceRejection::InvalidHead { problem: AnswerProblem::NotArgmax { .. }, .. }));
    let err = interpret(&[("operation", pick("CLICK", &OPS)), ("click_target", pick("1", &["1"]))]).unwrap_err();
    assert!(matches!(err, SpaceRejection::InvalidHead { problem: AnswerProblem::KeysDiffer { .. }, .. }));
}

#[test]
fn operations_that_were_not_offered_fail_closed() {
    for invented in ["DONE", "PASS", "approve", "publish", "click"] {
        let mut op = pick("CLICK", &OPS);
        op["choice"] = json!(invented);
        assert!(interpret(&[("operation", op), ("click_target", pick("1", &["1", "2"]))]).is_err(), "{invented}");
    }
}

#[test]
fn answers_carry_no_free_form_field() {
    for field in ["path", "selector", "approve", "tool_call", "value", "text"] {
        let mut op = pick("WAIT", &OPS);
        op[field] = json!("rm -rf /");
        let err = interpret(&[("operation", op)]).unwrap_err();
        assert_eq!(err, SpaceRejection::FreeFormField { head: "operation".into(), field: field.into() });
        let mut target = pick("1", &["1", "2"]);
        target[field] = json!("#login");
        let err = interpret(&[("operation", pick("CLICK", &OPS)), ("click_target", target)]).unwrap_err();
        assert_eq!(err, SpaceRejection::FreeFormField { head: "click_target".into(), field: field.into() });
    }
}

#[test]
fn controls_abstain_and_no_action_need_no_target_and_ignore_every_target_head() {
    for op in ["WAIT", ABSTAIN, NO_ACTION] {
        let obs = interpret(&[
            ("operation", pick(op, &OPS)),
            ("click_target", json!("garbage")),
            ("select_target", json!(null)),
        ])
        .unwrap();
        assert_eq!(obs.operation, op);
        assert!(obs.target.is_none());
        assert_eq!(obs.unused_heads.len(), 2);
    }
}

#[test]
fn enumerated_values_map_back_to_the_host_value() {
    let obs =
        interpret(&[("operation", pick("SELECT", &OPS)), ("select_target", pick("3:2", &["3:1", "3:2"]))]).unwrap();
    let target = obs.target.unwrap();
    assert_eq!((target.row, target.id, target.option_value.as_deref()), (3, "node-30", Some("date")));
}

#[test]
fn an_answer_for_another_revision_never_becomes_an_observation() {
    let good = answers(&[("operation", pick("WAIT", &OPS))]);
    let err = state().interpret("rev-6", &good, &evidence()).unwrap_err();
    assert_eq!(err, SpaceRejection::StaleRevision { current: "rev-7".into(), answered: "rev-6".into() });
    assert!(state().interpret("rev-7", &good, &evidence()).is_ok());
}

#[test]
fn incomplete_evidence_yields_no_observation() {
    let good = answers(&[("operation", pick("WAIT", &OPS))]);
    let partial = Evidence { model: String::new(), policy: " ".into(), ..evidence() };
    let err = state().interpret("rev-7", &good, &partial).unwrap_err();
    assert_eq!(err, SpaceRejection::IncompleteEvidence { missing: vec!["model", "policy"] });
}
