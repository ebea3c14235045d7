//! Building the indexed decision state: one row per host object, compatible targets per
//! head, `row:option` ids, the candidate cap (the L08-01 table-building fixture).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_protocol::space::{
    ABSTAIN, Applicable, DecisionState, HostObject, NO_ACTION, OPERATION_HEAD, Operation, ParamOption, Snapshot,
    SpaceConfig,
};
use serde_json::{Map, json};

fn object(id: u32, kind: &str, label: &str, value: &str, applies: Vec<Applicable>) -> HostObject<u32> {
    HostObject { id, kind: kind.into(), label: label.into(), value: value.into(), state: vec![], applies }
}

fn operations() -> Vec<Operation> {
    vec![
        Operation::new("CLICK", "Click an element.", true),
        Operation::new("TYPE_TEXT", "Enter or replace text in an editable field.", true),
        Operation::new("SELECT", "Select an observed dropdown value.", true),
        Operation::new("WAIT", "Wait for the page to update.", false),
    ]
}

/// The §A3 worked example: a text field (node 10) reported twice, once per operation,
/// and a button (node 20).
fn worked_example() -> Snapshot<u32> {
    Snapshot {
        revision: "rev-1".into(),
        objects: vec![
            object(10, "textbox", "Search", "", vec![Applicable::plain("TYPE_TEXT")]),
            object(10, "textbox", "Open Search", "", vec![Applicable::plain("CLICK")]),
            object(20, "button", "Go", "", vec![Applicable::plain("CLICK")]),
        ],
    }
}

#[test]
fn one_row_per_host_object_in_order_of_first_appearance() {
    let state = DecisionState::build(worked_example(), &operations(), &SpaceConfig::default());
    let rows = state.rows();
    assert_eq!(rows.len(), 2, "node 10 appears twice but gets one index");
    assert_eq!((rows[0].index, rows[0].label.as_str()), (1, "Search"));
    assert_eq!(state.row_operations(0), ["TYPE_TEXT", "CLICK"]);
    assert_eq!((rows[1].index, rows[1].label.as_str()), (2, "Go"));
    assert_eq!(state.row_operations(1), ["CLICK"]);
}

#[test]
fn each_target_head_lists_only_compatible_rows() {
    let state = DecisionState::build(worked_example(), &operations(), &SpaceConfig::default());
    assert_eq!(state.target_ids("type_text_target"), ["1"]);
    assert_eq!(state.target_ids("click_target"), ["1", "2"]);
    assert!(state.target_ids("select_target").is_empty(), "no row supports SELECT");
    let questions = state.questions();
    assert_eq!(questions.ids().collect::<Vec<_>>(), [OPERATION_HEAD, "click_target", "type_text_target"]);
    let ops = questions.get(OPERATION_HEAD).unwrap().offered_ids();
    assert_eq!(ops, ["CLICK", "TYPE_TEXT", "WAIT", ABSTAIN, NO_ACTION], "SELECT has no target: not offered");
    let click = questions.to_json()["click_target"].clone();
    assert!(click["instructions"].as_str().unwrap().starts_with("Assume the next operation is CLICK"));
    assert_eq!(click["criteria"]["2"], "[2] Go (button); current value: \"\"");
}

#[test]
fn only_eligible_operations_are_offered() {
    let eligible = vec![Operation::new("TYPE_TEXT", "Type.", true)];
    let state = DecisionState::build(worked_example(), &eligible, &SpaceConfig::default());
    assert_eq!(state.operations(), ["TYPE_TEXT"]);
    assert_eq!(state.questions().ids().collect::<Vec<_>>(), [OPERATION_HEAD, "type_text_target"]);
    let reserved = vec![Operation::new(ABSTAIN, "sneaky", false), Operation::new("CLICK", "Click.", true)];
    let state = DecisionState::build(worked_example(), &reserved, &SpaceConfig::default());
    let offered = state.questions().get(OPERATION_HEAD).unwrap().offered_ids();
    assert_eq!(offered, ["CLICK", ABSTAIN, NO_ACTION], "a host cannot redefine ABSTAIN");
}

#[test]
fn enumerated_parameter_values_are_row_option_ids() {
    let country = vec![
        ParamOption { label: "France".into(), value: "fr".into() },
        ParamOption { label: "Japan".into(), value: "jp".into() },
    ];
    let snapshot = Snapshot {
        revision: "r".into(),
        objects: vec![
            object(1, "button", "Go", "", vec![Applicable::plain("CLICK")]),
            object(2, "combobox", "Country", "Spain", vec![Applicable::with_options("SELECT", country)]),
        ],
    };
    let state = DecisionState::build(snapshot, &operations(), &SpaceConfig::default());
    assert_eq!(state.target_ids("select_target"), ["2:1", "2:2"]);
    assert_eq!(state.row_operations(1), ["SELECT"]);
    let criteria = state.questions().to_json()["select_target"]["criteria"].clone();
    assert_eq!(criteria["2:2"], "[2:2] Country → Japan (combobox); current value: \"Spain\"");
    let sent = serde_json::to_string(&state.state(&Map::new())).unwrap();
    assert!(!sent.contains("\"jp\""), "host values are never sent: {sent}");
}

#[test]
fn rows_past_the_cap_are_recorded_and_never_offered() {
    let objects =
        (1..=5).map(|i| object(100 + i, "file", &format!("f{i}"), "", vec![Applicable::plain("CLICK")])).collect();
    let snapshot = Snapshot { revision: "r".into(), objects };
    let config = SpaceConfig { cap: 3, ..SpaceConfig::default() };
    let state = DecisionState::build(snapshot.clone(), &operations(), &config);
    assert_eq!(state.rows().len(), 3);
    let truncated: Vec<_> = state.truncated().iter().map(|t| (t.index, t.id)).collect();
    assert_eq!(truncated, [(4, 104), (5, 105)]);
    assert_eq!(state.target_ids("click_target"), ["1", "2", "3"]);
    let sent = state.state(&Map::new());
    assert_eq!(sent["truncated_rows"], 2);
    assert_eq!(sent["rows"].as_array().unwrap().len(), 3);
    // A repeat of a truncated object does not take a visible row either.
    let mut again = snapshot.clone();
    again.objects.push(object(105, "file", "f5 again", "", vec![Applicable::plain("CLICK")]));
    assert_eq!(DecisionState::build(again, &operations(), &config).truncated().len(), 2);
}

#[test]
fn host_identities_never_reach_the_request() {
    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    struct Secret(&'static str);
    let snapshot = Snapshot {
        revision: "rev-9".into(),
        objects: vec![HostObject {
            id: Secret("/home/user/.ssh/id_rsa"),
            kind: "file".into(),
            label: "key file".into(),
            value: "unread".into(),
            state: vec![("checked".into(), "true".into())],
            applies: vec![Applicable::plain("CLICK")],
        }],
    };
    let state = DecisionState::build(snapshot, &operations(), &SpaceConfig::default());
    let context = json!({"goal": "tidy up"}).as_object().unwrap().clone();
    let body = serde_json::to_string(&json!({"state": state.state(&context), "questions": state.questions().as_ref()}))
        .unwrap();
    assert!(!body.contains("id_rsa"), "{body}");
    assert!(body.contains("\"revision\":\"rev-9\""));
    assert!(body.contains(r#""columns":["index","kind","label","value","state"]"#), "{body}");
    assert!(
        body.contains(r#""rows":[[1,"file","key file","unread",{"checked":"true"}]]"#),
        "row state reaches the table: {body}"
    );
    assert!(body.contains("; checked=true"), "and the criteria");
    assert!(body.contains("\"goal\":\"tidy up\""));
}

#[test]
fn a_250_row_table_fits_one_request() {
    let objects = (0..300)
        .map(|i| object(i, "finding", &format!("finding {i}"), "open", vec![Applicable::plain("CLICK")]))
        .collect();
    let state =
        DecisionState::build(Snapshot { revision: "r".into(), objects }, &operations(), &SpaceConfig::default());
    assert_eq!(state.rows().len(), 250);
    assert_eq!(state.truncated().len(), 50);
    assert_eq!(state.target_ids("click_target").len(), 250);
    assert_eq!(state.revision(), "r");
}
