//! The deterministic providers (`mock`, `script:FILE`) and the fallback chain.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::time::Duration;

use decision_protocol::ask::{Questions, WireQuestion, validate_answers};
use decision_runtime::provider::{
    DecisionProvider, ErrorCode, FallbackChain, MOCK_WARNING, MockProvider, ProviderError, Request, Response,
    ScriptError, ScriptProvider,
};
use host_common::TempDir;
use serde_json::json;

fn questions() -> Questions {
    let mut q = Questions::new();
    q.insert("ok", WireQuestion::Noul { instructions: "?".into(), criteria: None });
    q.insert(
        "tool",
        WireQuestion::Choice {
            instructions: "?".into(),
            criteria: vec![("a".into(), "".into()), ("b".into(), "".into()), ("c".into(), "".into())],
        },
    );
    q.insert(
        "risk",
        WireQuestion::Score {
            instructions: "?".into(),
            criteria: vec!["r".into(), "w".into(), "x".into(), "d".into()],
        },
    );
    q
}

fn request() -> Request {
    Request::new(serde_json::Map::new(), questions())
}

#[test]
fn the_mock_answers_like_the_reference() {
    let response = MockProvider::with_latency(Duration::ZERO).decide(&request()).unwrap();
    assert_eq!(response.answers["ok"], json!({"type": "noul", "noul": 0.5}));
    let tool = &response.answers["tool"];
    assert_eq!(tool["choice"], "a", "the first option");
    assert_eq!(tool["probabilities"], json!({"a": 1.0 / 3.0, "b": 1.0 / 3.0, "c": 1.0 / 3.0}));
    assert_eq!(tool["confidence"], json!(1.0 / 3.0));
    let risk = &response.answers["risk"];
    assert_eq!(risk["score"], json!(1.5));
    assert_eq!(risk["legend"], json!({"0": "r", "1": "w", "2": "x", "3": "d"}));
    assert_eq!(risk["confidence"], json!(0.25));
    assert!(response.degraded);
    assert_eq!(response.warnings, [MOCK_WARNING]);
    assert_eq!((response.provider.as_str(), response.model.as_deref()), ("mock", Some("mock")));
    assert!(validate_answers(&questions(), &response.answers).is_ok(), "mock answers are valid answers");
    let timed = MockProvider::default().decide(&request()).unwrap();
    assert!(timed.latency >= Duration::from_millis(3), "reference default latency");
}

#[test]
fn a_script_is_consumed_in_order_per_question() {
    let script = json!({"ok": [{"noul": 0.9}, {"noul": 0.1}], "tool": [{"choice": "b", "probabilities": {"a": 0, "b": 1, "c": 0}}], "unused": []});
    let p = ScriptProvider::from_json("script:t", &script).unwrap();
    let first = p.decide(&request()).unwrap();
    assert_eq!(first.answers["ok"]["noul"], 0.9);
    assert_eq!(first.answers["tool"]["choice"], "b");
    assert!(first.degraded, "risk has no answer");
    let second = p.decide(&request()).unwrap();
    assert_eq!(second.answers["ok"]["noul"], 0.1);
    assert!(!second.answers.contains_key("tool"), "used up: never invented");
    let third = p.decide(&request()).unwrap();
    assert!(third.answers.is_empty());
    // Only asked ids are consumed.
    let mut only_ok = Questions::new();
    only_ok.insert("ok", WireQuestion::Noul { instructions: "?".into(), criteria: None });
    let p = ScriptProvider::from_json("script:t", &script).unwrap();
    p.decide(&Request::new(serde_json::Map::new(), only_ok)).unwrap();
    assert_eq!(p.decide(&request()).unwrap().answers["tool"]["choice"], "b");
}

#[test]
fn script_files_are_read_and_bad_ones_refused() {
    let tmp = TempDir::new("script");
    let dir = tmp.path();
    let good = dir.join("good.json");
    std::fs::write(&good, r#"{"ok": [{"noul": 0.7}]}"#).unwrap();
    let p = ScriptProvider::from_file(&good).unwrap();
    assert_eq!(p.name(), format!("script:{}", good.display()));
    assert_eq!(p.decide(&request()).unwrap().answers["ok"]["noul"], 0.7);
    let not_json = dir.join("bad.json");
    std::fs::write(&not_json, "{").unwrap();
    assert!(matches!(ScriptProvider::from_file(&not_json), Err(ScriptError::Json { .. })));
    let wrong = dir.join("wrong.json");
    std::fs::write(&wrong, r#"{"ok": {"noul": 0.7}}"#).unwrap();
    let err = ScriptProvider::from_file(&wrong).unwrap_err();
    assert!(err.to_string().contains("`ok` is not an array"), "{err}");
    assert!(matches!(ScriptProvider::from_file(&dir.join("none.json")), Err(ScriptError::Read { .. })));
}

struct Failing(&'static str, ErrorCode);

impl DecisionProvider for Failing {
    fn name(&self) -> &str {
        self.0
    }
    fn decide(&self, _: &Request) -> Result<Response, ProviderError> {
        Err(ProviderError::new(self.0, self.1, format!("{} is down", self.0)))
    }
}

#[test]
fn the_fallback_chain_marks_answers_from_later_providers_degraded() {
    let chain = FallbackChain::new(vec![
        Box::new(Failing("systemone", ErrorCode::Server)),
        Box::new(MockProvider::with_latency(Duration::ZERO)),
    ]);
    assert_eq!(chain.name(), "systemone→mock");
    let response = chain.decide(&request()).unwrap();
    assert!(response.degraded);
    assert_eq!(response.provider, "mock", "who actually served");
    assert_eq!(response.warnings[0], "systemone failed (SERVER): systemone is down");
    assert_eq!(response.warnings[1], "primary provider failed, degraded to mock");
    let script = ScriptProvider::from_json("script:t", &json!({"ok": [{"noul": 1}], "tool": [], "risk": []})).unwrap();
    let first_ok = FallbackChain::new(vec![Box::new(script), Box::new(Failing("never", ErrorCode::Server))]);
    let response = first_ok.decide(&request()).unwrap();
    assert!(!response.warnings.iter().any(|w| w.contains("degraded to")), "the primary served");
    let all_fail =
        FallbackChain::new(vec![Box::new(Failing("a", ErrorCode::Server)), Box::new(Failing("b", ErrorCode::Auth))]);
    let err = all_fail.decide(&request()).unwrap_err();
    assert_eq!((err.who.as_str(), err.code), ("b", ErrorCode::Auth), "the last error");
    assert_eq!(FallbackChain::new(vec![]).decide(&request()).unwrap_err().code, ErrorCode::Config);
}
