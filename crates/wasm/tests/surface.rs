//! The exports' envelopes and refusals, natively (the Node tests run the same code as wasm
//! and compare it with the CLI).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_wasm::verify_record;
use serde_json::Value;

// The exports take their options as UTF-8 bytes, as the package passes them.
fn check(text: &[u8], options: &str) -> String {
    decision_wasm::check(text, options.as_bytes())
}

fn frame(text: &[u8], options: &str) -> String {
    decision_wasm::frame(text, options.as_bytes())
}

fn evaluate(text: &[u8], options: &str) -> String {
    decision_wasm::evaluate(text, options.as_bytes())
}

const TRIAGE: &str = include_str!("../../../examples/support-triage/DECISION.md");
const BROKEN: &str = include_str!("../../../js/test/fixtures/broken.md");

fn parse(envelope: &str) -> Value {
    serde_json::from_str(envelope).unwrap()
}

#[test]
fn a_clean_check_is_a_value() {
    let result = parse(&check(TRIAGE.as_bytes(), r#"{"path":"t.md"}"#));
    assert_eq!(result["value"]["ok"], true);
    assert_eq!(result["value"]["path"], "t.md");
    assert!(result.get("error").is_none());
}

#[test]
fn a_broken_check_is_still_a_value_with_its_diagnostics() {
    let result = parse(&check(BROKEN.as_bytes(), ""));
    assert_eq!(result["value"]["ok"], false);
    assert_eq!(result["value"]["diagnostics"][0]["code"], "DC0104");
}

#[test]
fn a_frame_of_a_broken_contract_is_refused_at_its_first_error() {
    let result = parse(&frame(BROKEN.as_bytes(), r#"{"block":"is_urgent","state":{}}"#));
    let error = &result["error"];
    assert_eq!(error["code"], "DC0104");
    assert_eq!(error["line"], 16);
    assert_eq!(error["column"], 12);
    assert_eq!(error["path"], "DECISION.md");
    assert_eq!(error["diagnostics"].as_array().unwrap().len(), 2);
    assert!(error["message"].as_str().unwrap().starts_with("DECISION.md does not parse:\n  DECISION.md:16:12: DC0104"));
}

#[test]
fn unknown_options_are_refused() {
    let result = parse(&evaluate(TRIAGE.as_bytes(), r#"{"block":"route","answers":{},"gate":["x"]}"#));
    assert_eq!(result["error"]["code"], "E_USAGE");
    assert!(result["error"]["message"].as_str().unwrap().contains("unknown field `gate`"));
}

#[test]
fn evaluate_escalates_an_invalid_answer() {
    let result =
        parse(&evaluate(TRIAGE.as_bytes(), r#"{"block":"is_actionable","answers":{"is_actionable":{"noul":2}}}"#));
    assert_eq!(result["value"]["valid"], false);
    assert_eq!(result["value"]["action"], "escalate");
}

#[test]
fn a_record_that_is_not_one_is_refused() {
    let result = parse(&verify_record(br#"{"type":"phase"}"#));
    assert_eq!(result["error"]["code"], "E_RECORD");
}

/// The options object is the command's typed request, its camelCase names standing for the
/// shared snake_case ones, with the inputs (`path`, `state`, …) beside it.
#[test]
fn options_are_the_command_s_request_in_camel_case_with_the_inputs_beside_it() {
    let denied = parse(&check(TRIAGE.as_bytes(), r#"{"path":"t.md","denyWarnings":true}"#));
    assert_eq!(denied["value"]["path"], "t.md");
    let snake = parse(&check(TRIAGE.as_bytes(), r#"{"deny_warnings":true}"#));
    assert_eq!(snake["value"]["ok"], denied["value"]["ok"], "either spelling is the same field");
    let unknown = parse(&check(TRIAGE.as_bytes(), r#"{"denyWarning":true}"#));
    assert_eq!(unknown["error"]["code"], "E_USAGE");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("unknown field `deny_warning`"), "{unknown}");
    let state = format!(r#""state":{}"#, include_str!("../../../examples/support-triage/state.json").trim());
    let marked =
        parse(&frame(TRIAGE.as_bytes(), &format!(r#"{{"block":"refund_risk",{state},"marking":"reference"}}"#)));
    assert!(marked.get("error").is_none(), "{marked}");
    let loud = parse(&frame(TRIAGE.as_bytes(), &format!(r#"{{"block":"refund_risk",{state},"marking":"loud"}}"#)));
    assert!(
        loud["error"]["message"].as_str().unwrap().contains("unknown marking `loud` (known: provenance, reference)")
    );
    let gates = parse(&evaluate(
        TRIAGE.as_bytes(),
        r#"{"block":"refund_risk","answers":{},"gates":{"refund_risk.refund_risk":"x"}}"#,
    ));
    assert_eq!(gates["error"]["code"], "E_USAGE", "{gates}");
}

#[test]
fn options_and_texts_that_are_not_utf8_are_a_usage_error_and_utf8_is_read() {
    let refused = parse(&decision_wasm::check(TRIAGE.as_bytes(), b"{\"path\":\"\xff\"}"));
    assert_eq!(refused["error"]["code"], "E_USAGE", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("not UTF-8 (byte 9)"), "{refused}");
    let named = parse(&decision_wasm::check(TRIAGE.as_bytes(), "{\"path\":\"é.md\"}".as_bytes()));
    assert_eq!(named["value"]["path"], "é.md", "{named}");
    let report = parse(&decision_wasm::outcomes_report(b"\xc3"));
    assert!(report["error"]["message"].as_str().unwrap().contains("not UTF-8 (byte 0)"), "{report}");
    // The digests read their JSON's bytes themselves: not UTF-8 is not JSON.
    let digest = parse(&decision_wasm::digest_request("0123456789abcdef", b"[\"\xff\"]"));
    assert_eq!(digest["error"]["code"], "E_USAGE", "{digest}");
    let digest = parse(&decision_wasm::digest_frame("n", "{\"a\":\"é\"}".as_bytes()));
    assert_eq!(digest["value"].as_str().map(str::len), Some(16), "{digest}");
}
