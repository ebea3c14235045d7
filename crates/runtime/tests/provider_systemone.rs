//! The System One provider against a real HTTP server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use decision_protocol::ask::{Questions, WireQuestion};
use decision_runtime::provider::{
    ApiKey, DecisionProvider, ErrorCode, FallbackChain, MockProvider, Request, RetryPolicy, Retrying, SystemOneProvider,
};
use serde_json::json;
use support::{Reply, Server};

const KEY: &str = "sk-test-DO-NOT-LEAK-7f3a";

fn questions() -> Questions {
    let mut q = Questions::new();
    q.insert(
        "needs_tool",
        WireQuestion::Noul { instructions: "Work left?".into(), criteria: Some(("yes".into(), "no".into())) },
    );
    q.insert(
        "tool",
        WireQuestion::Choice {
            instructions: "Which tool?".into(),
            criteria: vec![("list_dir".into(), "unknown files".into()), ("done".into(), "finished".into())],
        },
    );
    q
}

fn request() -> Request {
    let mut r = Request::new(json!({"task": "t", "earlier": ""}).as_object().unwrap().clone(), questions());
    r.timeout = Duration::from_millis(500);
    r
}

fn good_reply() -> Reply {
    Reply::json(
        200,
        &json!({"model": "jev-1.13.0", "answers": {
            "needs_tool": {"type": "noul", "noul": 0.95},
            "tool": {"type": "choice", "choice": "list_dir", "confidence": 0.81, "probabilities": {"list_dir": 0.9, "done": 0.1}}
        }, "usage": {"input_tokens": 318, "output_tokens": 0}}),
    )
}

fn provider(server: &Server) -> SystemOneProvider {
    SystemOneProvider::new(&format!("{}/", server.url())).with_key(ApiKey::new(KEY))
}

fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy { max_retries, initial: Duration::from_millis(5), max: Duration::from_millis(50), jitter: 0.2 }
}

#[test]
fn posts_model_state_questions_with_bearer_key_and_reads_the_reply() {
    let server = Server::scripted(vec![good_reply()]);
    let p = provider(&server).with_default_model(Some("jev-1.13.0".into()));
    let response = p.decide(&request()).unwrap();
    let sent = &server.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/systemone"));
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = sent.body_text();
    assert!(body.starts_with(r#"{"model":"jev-1.13.0","state":{"task":"t","earlier":""},"questions":{"needs_tool":{"type":"noul","instructions":"Work left?","criteria":{"true":"yes","false":"no"}}"#), "{body}");
    assert_eq!(response.answers["tool"]["choice"], "list_dir");
    assert_eq!(response.model.as_deref(), Some("jev-1.13.0"));
    assert_eq!(response.usage.unwrap().input_tokens, Some(318));
    assert!(!response.degraded);
    assert!(response.provider.starts_with("systemone@127.0.0.1"));
}

#[test]
fn model_key_is_omitted_when_unset_and_request_model_wins() {
    let server = Server::scripted(vec![good_reply()]);
    let p = SystemOneProvider::new(&server.url()).with_default_model(Some("default".into()));
    p.decide(&request()).unwrap();
    let mut named = request();
    named.model = Some("named".into());
    p.decide(&named).unwrap();
    SystemOneProvider::new(&server.url()).decide(&request()).unwrap();
    let sent = server.requests();
    assert_eq!(sent[0].json()["model"], "default");
    assert_eq!(sent[1].json()["model"], "named");
    assert!(sent[2].json().get("model").is_none());
    assert!(sent[2].header("authorization").is_none(), "no key, no header");
}

#[test]
fn missing_and_unrecognisable_answers_mark_the_response_degraded() {
    let server = Server::scripted(vec![Reply::json(
        200,
        &json!({"answers": {"tool": {"type": "choice", "choice": 3}}, "warnings": ["from server"]}),
    )]);
    let response = provider(&server).decide(&request()).unwrap();
    assert!(response.degraded);
    assert_eq!(response.answers["tool"]["choice"], 3, "kept for audit; validation rejects it");
    assert_eq!(response.warnings[0], "from server");
    assert!(response.warnings[1].ends_with("1/2 question(s): needs_tool"), "{:?}", response.warnings);
    assert!(response.warnings[2].contains("dropped: tool"));
}

#[test]
fn server_errors_are_retried_then_succeed() {
    let server = Server::scripted(vec![Reply::text(503, "busy"), Reply::text(529, "system_overloaded"), good_reply()]);
    let p = Retrying::new(provider(&server), fast_retries(3));
    let response = p.decide(&request()).unwrap();
    assert_eq!(server.requests().len(), 3);
    assert!(response.warnings[0].starts_with("SERVER, retrying in"), "{:?}", response.warnings);
}

#[test]
fn exhausted_retries_end_with_the_last_http_error() {
    let server = Server::scripted(vec![Reply::text(429, "slow down")]);
    let err = Retrying::new(provider(&server), fast_retries(2)).decide(&request()).unwrap_err();
    assert_eq!(server.requests().len(), 3, "one attempt and two retries");
    assert_eq!(err.code, ErrorCode::RateLimit);
    assert!(err.message.contains("HTTP 429 (RATE_LIMIT): slow down"), "{}", err.message);
}

#[test]
fn retry_after_is_honoured_and_a_long_one_gives_up_at_once() {
    let server = Server::scripted(vec![Reply::text(503, "later").header("Retry-After", "1"), good_reply()]);
    let policy = RetryPolicy { max: Duration::from_secs(2), ..fast_retries(3) };
    let started = Instant::now();
    let response = Retrying::new(provider(&server), policy).decide(&request()).unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(response.warnings[0], "SERVER, retrying in 1000ms (the server asked for it)");

    let server = Server::scripted(vec![Reply::text(429, "later").header("Retry-After", "1"), good_reply()]);
    let started = Instant::now();
    let err = Retrying::new(provider(&server), fast_retries(3)).decide(&request()).unwrap_err();
    assert!(started.elapsed() < Duration::from_millis(900));
    assert_eq!(server.requests().len(), 1, "Retry-After beyond the cap: no retry");
    assert_eq!((err.code, err.retry_after), (ErrorCode::RateLimit, Some(Duration::from_secs(1))));
}

#[test]
fn client_errors_are_classified_and_not_retried() {
    for (status, body, code) in [
        (401, "bad key", ErrorCode::Auth),
        (403, "forbidden", ErrorCode::Auth),
        (400, "maximum context length exceeded", ErrorCode::ContextWindowExceeded),
        (400, "bad questions", ErrorCode::InvalidRequest),
        (413, "too big", ErrorCode::InvalidRequest),
        (429, "insufficient balance", ErrorCode::Quota),
        (404, "no route", ErrorCode::Http(404)),
    ] {
        let server = Server::scripted(vec![Reply::text(status, body)]);
        let err = Retrying::new(provider(&server), fast_retries(3)).decide(&request()).unwrap_err();
        assert_eq!(err.code, code, "{status} {body}");
        assert_eq!(err.status, Some(status));
        assert_eq!(server.requests().len(), 1, "{status} is not retried");
    }
}

#[test]
fn a_slow_reply_times_out_and_counts_as_retryable() {
    let server = Server::scripted(vec![good_reply().after(Duration::from_millis(400)), good_reply()]);
    let mut slow = request();
    slow.timeout = Duration::from_millis(100);
    let started = Instant::now();
    let err = provider(&server).decide(&slow).unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);
    assert!(started.elapsed() < Duration::from_millis(350), "{:?}", started.elapsed());
    let response = Retrying::new(provider(&server), fast_retries(1)).decide(&slow).unwrap();
    assert_eq!(response.answers.len(), 2);
}

#[test]
fn invalid_json_and_empty_replies_are_classified() {
    let server = Server::scripted(vec![Reply::text(200, "{\"answers\": ")]);
    let err = provider(&server).decide(&request()).unwrap_err();
    assert_eq!(err.code, ErrorCode::Transport);
    assert!(err.message.contains("invalid JSON"), "{}", err.message);
    let server = Server::scripted(vec![Reply::json(200, &json!({"answers": []}))]);
    assert_eq!(provider(&server).decide(&request()).unwrap_err().code, ErrorCode::EmptyResponse);
}

#[test]
fn oversized_replies_are_refused_without_retry() {
    let huge = format!("{{\"answers\": {{}}, \"pad\": \"{}\"}}", "x".repeat(64 * 1024));
    let server = Server::scripted(vec![Reply::text(200, &huge)]);
    let p = Retrying::new(provider(&server).with_transport(4096, true), fast_retries(3));
    let err = p.decide(&request()).unwrap_err();
    assert_eq!(err.code, ErrorCode::ResponseTooLarge);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn dropped_connections_are_transport_errors_and_retried() {
    let server = Server::scripted(vec![Reply::dropped(), good_reply()]);
    let err = provider(&server).decide(&request()).unwrap_err();
    assert_eq!(err.code, ErrorCode::Transport);
    let response = Retrying::new(provider(&server), fast_retries(2)).decide(&request()).unwrap();
    assert_eq!(response.answers.len(), 2);
    let refused = SystemOneProvider::new("http://127.0.0.1:1").decide(&request()).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Transport);
}

#[test]
fn one_agent_reuses_its_connection() {
    let server = Server::scripted(vec![good_reply()]);
    let p = provider(&server);
    for _ in 0..5 {
        p.decide(&request()).unwrap();
    }
    assert_eq!(server.connections(), 1);
    let fresh = provider(&server).with_transport(1 << 20, false);
    for _ in 0..3 {
        fresh.decide(&request()).unwrap();
    }
    assert_eq!(server.connections(), 4, "without reuse every request opens a connection");
}

#[test]
fn the_api_key_never_appears_in_errors_or_debug_output() {
    // A hostile server echoes the request headers back in its error body.
    let server = Server::start(|req, _| {
        let echoed: String = req.headers.iter().map(|(n, v)| format!("{n}: {v}\n")).collect();
        Reply::text(if req.path.ends_with("401") { 401 } else { 500 }, &echoed)
    });
    let p = provider(&server);
    let err = p.decide(&request()).unwrap_err();
    assert!(err.message.contains("Bearer ***"), "the echo is there, redacted: {}", err.message);
    for text in [err.to_string(), format!("{err:?}"), format!("{p:?}")] {
        assert!(!text.contains(KEY), "{text}");
    }
    let retrying = Retrying::new(provider(&server), fast_retries(1));
    let chain = FallbackChain::new(vec![Box::new(retrying), Box::new(MockProvider::with_latency(Duration::ZERO))]);
    let response = chain.decide(&request()).unwrap();
    assert!(response.degraded);
    for warning in &response.warnings {
        assert!(!warning.contains(KEY), "{warning}");
    }
    let slow = Server::scripted(vec![good_reply().after(Duration::from_millis(300))]);
    let mut quick = request();
    quick.timeout = Duration::from_millis(50);
    let err = provider(&slow).decide(&quick).unwrap_err();
    assert!(!format!("{err} {err:?}").contains(KEY));
}

#[test]
fn a_reply_echoing_the_authorization_header_keeps_no_key_in_any_field() {
    let server = Server::start(|req, _| {
        let auth = req.header("authorization").unwrap_or_default().to_owned();
        Reply::json(
            200,
            &json!({"model": auth, "warnings": [format!("you sent {auth}")], "answers": {
                "needs_tool": {"type": "noul", "noul": 0.95, "note": auth},
                "tool": {"type": "choice", "choice": "list_dir", "probabilities": {"list_dir": 0.9, "done": 0.1}, auth.clone(): 1}
            }}),
        )
    });
    let response = provider(&server).decide(&request()).unwrap();
    let everything = format!("{:?} {:?} {:?}", response.answers, response.model, response.warnings);
    assert!(!everything.contains(KEY), "{everything}");
    assert!(everything.contains("Bearer ***"), "the echo is kept, redacted: {everything}");
    assert_eq!(response.answers["needs_tool"]["noul"], 0.95);
}

#[test]
fn duplicate_keys_make_the_answer_they_touch_malformed() {
    let body = r#"{"answers": {"needs_tool": {"type": "noul", "noul": 0.95, "noul": 0.05},
        "tool": {"type": "choice", "choice": "list_dir", "probabilities": {"list_dir": 0.9, "done": 0.1}}}}"#;
    let server = Server::scripted(vec![Reply::text(200, body)]);
    let response = provider(&server).decide(&request()).unwrap();
    assert_eq!(
        response.answers["needs_tool"],
        json!({"type": "malformed", "problem": "duplicate key `noul` in the answer"})
    );
    let problems = decision_protocol::ask::validate_answers(&questions(), &response.answers).unwrap_err();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].to_string(), "`needs_tool`: the reply is malformed: duplicate key `noul` in the answer");
    // Two answers to one question are one malformed answer.
    let body = r#"{"answers": {"needs_tool": {"type": "noul", "noul": 0.95}, "needs_tool": {"type": "noul", "noul": 0.1},
        "tool": {"type": "choice", "choice": "done", "probabilities": {"list_dir": 0.1, "done": 0.9}}}}"#;
    let server = Server::scripted(vec![Reply::text(200, body)]);
    let response = provider(&server).decide(&request()).unwrap();
    assert_eq!(response.answers["needs_tool"]["type"], "malformed");
    assert_eq!(response.answers["tool"]["choice"], "done", "the other answer stands");
    // A duplicate outside the answers makes the whole reply unusable.
    let server = Server::scripted(vec![Reply::text(200, r#"{"answers": {}, "answers": {}}"#)]);
    let error = provider(&server).decide(&request()).unwrap_err();
    assert!(error.message.contains("the key `answers` twice"), "{}", error.message);
}
