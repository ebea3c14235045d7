//! The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 that speaks the
//! chat and completions protocols with log-probabilities.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use decision_core::diag::Span;
use decision_core::policy::{Comparison, CompiledPolicy, CompiledRule, Predicate, Probe};
use decision_protocol::ask::{Questions, WireQuestion};
use decision_runtime::decide::{Decider, NodeSpec};
use decision_runtime::provider::{
    ApiKey, DecisionProvider, ErrorCode, OpenAiMode, OpenAiProvider, Request, RetryPolicy, Retrying,
};
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const KEY: &str = "sk-openai-NEVER-LOGGED-91";

/// The prompt text of a recorded request, in either protocol.
fn prompt(req: &Recorded) -> String {
    let body = req.json();
    match body.get("messages") {
        Some(messages) => messages[1]["content"].as_str().unwrap().to_string(),
        None => body["prompt"].as_str().unwrap().to_string(),
    }
}

/// A chat reply whose first token has these alternatives.
fn chat(top: &[(&str, f64)]) -> Reply {
    let list: Vec<Value> = top.iter().map(|(t, p)| json!({"token": t, "logprob": p.ln()})).collect();
    Reply::json(
        200,
        &json!({"choices": [{"message": {"content": top[0].0}, "logprobs": {"content": [{"token": top[0].0, "logprob": top[0].1.ln(), "top_logprobs": list}]}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 1}}),
    )
}

/// A legacy completions reply (vLLM, llama.cpp's `/v1/completions`).
fn completion(top: &[(&str, f64)]) -> Reply {
    let map: serde_json::Map<String, Value> = top.iter().map(|(t, p)| (t.to_string(), json!(p.ln()))).collect();
    Reply::json(
        200,
        &json!({"choices": [{"text": top[0].0, "logprobs": {"tokens": [top[0].0], "top_logprobs": [map]}}]}),
    )
}

fn questions() -> Questions {
    let mut q = Questions::new();
    q.insert(
        "tool",
        WireQuestion::Choice {
            instructions: "Which tool next?".into(),
            criteria: vec![
                ("list_dir".into(), "files unknown".into()),
                ("read_file".into(), "need contents".into()),
                ("done".into(), "finished".into()),
            ],
        },
    );
    q.insert(
        "ok",
        WireQuestion::Noul { instructions: "Did it work?".into(), criteria: Some(("worked".into(), "failed".into())) },
    );
    q.insert(
        "risk",
        WireQuestion::Score {
            instructions: "How risky?".into(),
            criteria: vec!["low".into(), "mid".into(), "high".into()],
        },
    );
    q
}

/// Answers by question: the server reads the question line of the prompt.
fn model_server(mode: OpenAiMode) -> Server {
    Server::start(move |req, _| {
        let text = prompt(req);
        let top: Vec<(&str, f64)> = if text.contains("Which tool next?") {
            // Mass off the offered labels (" the", "D") must not count; " B" and "B" are one label.
            vec![(" B", 0.5), ("B", 0.1), ("A", 0.2), ("C", 0.1), (" the", 0.05), ("D", 0.05)]
        } else if text.contains("Did it work?") {
            vec![("A", 0.8), ("B", 0.2)]
        } else {
            vec![("A", 0.2), ("B", 0.3), ("C", 0.5)]
        };
        match mode {
            OpenAiMode::Chat => chat(&top),
            OpenAiMode::Completions => completion(&top),
        }
    })
}

fn request() -> Request {
    let mut r = Request::new(json!({"task": "read notes.md"}).as_object().unwrap().clone(), questions());
    r.timeout = Duration::from_secs(2);
    r
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9
}

#[test]
fn chat_probabilities_cover_exactly_the_offered_options() {
    let server = model_server(OpenAiMode::Chat);
    let p = OpenAiProvider::new(&format!("{}/v1/", server.url()), "qwen", OpenAiMode::Chat).with_key(ApiKey::new(KEY));
    let response = p.decide(&request()).unwrap();
    let tool = &response.answers["tool"];
    assert_eq!(tool["choice"], "read_file");
    let probabilities = tool["probabilities"].as_object().unwrap();
    assert_eq!(probabilities.keys().collect::<Vec<_>>(), ["list_dir", "read_file", "done"]);
    assert!(close(&probabilities["read_file"], 0.6 / 0.9));
    assert!(close(&probabilities["list_dir"], 0.2 / 0.9));
    assert!(close(&response.answers["ok"]["noul"], 0.8));
    assert!(close(&response.answers["risk"]["score"], 0.3 + 2.0 * 0.5));
    assert!(!response.degraded, "{:?}", response.warnings);
    assert_eq!(response.usage.unwrap().input_tokens, Some(300));
    let sent = server.requests();
    assert_eq!(sent.len(), 3, "one completion per question");
    for req in &sent {
        assert_eq!(req.path, "/v1/chat/completions");
        assert_eq!(req.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        let body = req.json();
        assert_eq!(
            (body["max_tokens"].clone(), body["logprobs"].clone(), body["top_logprobs"].clone()),
            (json!(1), json!(true), json!(20))
        );
        assert_eq!(body["model"], "qwen");
        assert!(prompt(req).contains("\"task\": \"read notes.md\""));
    }
}

#[test]
fn completions_protocol_gives_the_same_answers() {
    let server = model_server(OpenAiMode::Completions);
    let p = OpenAiProvider::new(&format!("{}/v1", server.url()), "llama", OpenAiMode::Completions);
    let response = p.decide(&request()).unwrap();
    assert_eq!(response.answers["tool"]["choice"], "read_file");
    assert!(close(&response.answers["ok"]["noul"], 0.8));
    let sent = server.requests();
    assert!(sent.iter().all(|r| r.path == "/v1/completions" && r.json()["logprobs"] == 20));
    assert!(sent.iter().all(|r| r.header("authorization").is_none()));
}

#[test]
fn answers_pass_validation_and_drive_the_policy() {
    let server = model_server(OpenAiMode::Chat);
    let p = OpenAiProvider::new(&format!("{}/v1", server.url()), "m", OpenAiMode::Chat);
    let mut questions = Questions::new();
    questions.insert("tool", questions_tool());
    let spec = NodeSpec {
        id: "pick_tool".into(),
        state: json!({"task": "t"}).as_object().unwrap().clone(),
        questions,
        policy: CompiledPolicy {
            block: "pick_tool".into(),
            rules: vec![
                CompiledRule {
                    predicate: Predicate::compare(Probe::Top, Comparison::AtLeast, "tool", 0.6).unwrap(),
                    action: "call".into(),
                    text: "top >= 0.6".into(),
                    span: Span::default(),
                },
                CompiledRule {
                    predicate: Predicate::Fallback,
                    action: "escalate".into(),
                    text: "else".into(),
                    span: Span::default(),
                },
            ],
        },
        frame_digest: None,
        model: None,
    };
    let d = Decider::new(Arc::new(p)).decide(&spec).unwrap();
    assert!(d.valid, "{:?}", d.problems);
    assert_eq!(d.action, "call", "{}", d.reason);
}

fn questions_tool() -> WireQuestion {
    questions().get("tool").unwrap().clone()
}

#[test]
fn no_offered_label_among_the_tokens_leaves_the_answer_missing() {
    let server = Server::scripted(vec![chat(&[("Sure", 0.9), ("I", 0.1)])]);
    let p = OpenAiProvider::new(&server.url(), "m", OpenAiMode::Chat);
    let response = p.decide(&request()).unwrap();
    assert!(response.answers.is_empty());
    assert!(response.degraded);
    assert!(response.warnings.iter().any(|w| w.contains("no offered option")), "{:?}", response.warnings);
    let server = Server::scripted(vec![Reply::json(200, &json!({"choices": [{"message": {"content": "A"}}]}))]);
    let response = OpenAiProvider::new(&server.url(), "m", OpenAiMode::Chat).decide(&request()).unwrap();
    assert!(response.warnings.iter().any(|w| w.contains("no log-probabilities")));
}

#[test]
fn little_mass_on_the_offered_labels_is_marked_degraded() {
    let server = Server::scripted(vec![chat(&[("Well", 0.7), ("A", 0.2), ("B", 0.1)])]);
    let response = OpenAiProvider::new(&server.url(), "m", OpenAiMode::Chat).decide(&request()).unwrap();
    assert!(response.degraded);
    assert_eq!(response.answers.len(), 3);
}

#[test]
fn http_failures_are_classified_retried_and_never_leak_the_key() {
    let server = Server::start(|req, n| {
        if n == 0 {
            Reply::text(429, &format!("rate limited for {}", req.header("authorization").unwrap_or_default()))
                .header("Retry-After", "0")
        } else {
            chat(&[("A", 0.9), ("B", 0.1)])
        }
    });
    let mut one = Questions::new();
    one.insert("ok", WireQuestion::Noul { instructions: "?".into(), criteria: None });
    let request = Request { questions: one.into(), ..request() };
    let p = OpenAiProvider::new(&server.url(), "m", OpenAiMode::Chat).with_key(ApiKey::new(KEY));
    let err = p.decide(&request).unwrap_err();
    assert_eq!(err.code, ErrorCode::RateLimit);
    assert!(!format!("{err} {err:?} {p:?}").contains(KEY), "{err}");
    let policy =
        RetryPolicy { max_retries: 2, initial: Duration::from_millis(5), max: Duration::from_millis(20), jitter: 0.0 };
    let server2 = Server::scripted(vec![Reply::text(503, "busy"), chat(&[("A", 0.9), ("B", 0.1)])]);
    let p = Retrying::new(OpenAiProvider::new(&server2.url(), "m", OpenAiMode::Chat), policy);
    assert!(close(&p.decide(&request).unwrap().answers["ok"]["noul"], 0.9));
    let slow = Server::scripted(vec![chat(&[("A", 1.0)]).after(Duration::from_millis(300))]);
    let quick = Request { timeout: Duration::from_millis(50), ..request };
    assert_eq!(
        OpenAiProvider::new(&slow.url(), "m", OpenAiMode::Chat).decide(&quick).unwrap_err().code,
        ErrorCode::Timeout
    );
    let bad = Server::scripted(vec![Reply::text(200, "not json")]);
    assert_eq!(
        OpenAiProvider::new(&bad.url(), "m", OpenAiMode::Chat).decide(&quick).unwrap_err().code,
        ErrorCode::Transport
    );
}

#[test]
fn positive_log_probabilities_and_duplicate_keys_are_malformed_answers() {
    let one = || {
        let mut q = Questions::new();
        q.insert(
            "ok",
            WireQuestion::Noul { instructions: "Did it work?".into(), criteria: Some(("yes".into(), "no".into())) },
        );
        q
    };
    let ask = |body: &str| {
        let server = Server::scripted(vec![Reply::text(200, body)]);
        let p = OpenAiProvider::new(&format!("{}/v1/", server.url()), "m", OpenAiMode::Chat);
        p.decide(&Request { questions: one().into(), ..request() }).unwrap()
    };
    // Renormalising `A: +2, B: +1` would give a confident, valid-looking answer.
    let positive = r#"{"choices": [{"message": {"content": "A"}, "logprobs": {"content": [{"token": "A", "logprob": 2.0,
        "top_logprobs": [{"token": "A", "logprob": 2.0}, {"token": "B", "logprob": 1.0}]}]}}]}"#;
    let response = ask(positive);
    assert_eq!(response.answers["ok"]["type"], "malformed", "{:?}", response.answers);
    let problems = decision_protocol::ask::validate_answers(&one(), &response.answers).unwrap_err();
    assert!(problems[0].to_string().contains("the log-probability of token \"A\" is 2, above 0"), "{}", problems[0]);
    let duplicate = r#"{"choices": [{"message": {"content": "A"}, "logprobs": {"content": [{"token": "A", "logprob": -0.1,
        "top_logprobs": [{"token": "A", "logprob": -0.1, "logprob": -3.0}, {"token": "B", "logprob": -2.4}]}]}}]}"#;
    let response = ask(duplicate);
    assert_eq!(response.answers["ok"]["problem"], "duplicate key `logprob` in the reply");
    // Log-probabilities at most 0 are read as before.
    let fine = r#"{"choices": [{"message": {"content": "A"}, "logprobs": {"content": [{"token": "A", "logprob": 0.0,
        "top_logprobs": [{"token": "A", "logprob": 0.0}, {"token": "B", "logprob": -30.0}]}]}}]}"#;
    assert_eq!(ask(fine).answers["ok"]["type"], "noul");
}
