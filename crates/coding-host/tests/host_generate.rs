//! The OpenAI-compatible chat generator against a real HTTP server on 127.0.0.1: the request
//! it sends, the reply it reads, every way the reply can fail, and the coding host writing its
//! answer through it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;
#[path = "../../runtime/tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use decision_coding_host::generate::{
    ChatGenerator, GenerateError, GenerateRequest, Generated, Generator, MAX_REPLY_BYTES, revise_instruction,
};
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::DenyAll;
use decision_coding_host::{CODING_CONTRACT, Collaborators, HostError, RunConfig, RunSummary, run_task};
use decision_runtime::graph::{EventSink, MemorySink, Tee};
use decision_runtime::log::{FsyncPolicy, LogHeader, SessionLog};
use decision_runtime::provider::ApiKey;
use host_common::{TempDir, replay};
use serde_json::{Value, json};
use support::{Recorded, Reply, Server};

const KEY: &str = "sk-chat-NEVER-LOGGED-77";
const INSTRUCTIONS: &str = "Answer from the evidence only. Quote file names.";

/// A chat reply with `content` and token usage.
fn answer(content: &str, prompt_tokens: u64, completion_tokens: u64) -> Reply {
    Reply::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}),
    )
}

fn generator(server: &Server) -> ChatGenerator {
    ChatGenerator::new(&format!("{}/v1/", server.url()), "qwen-test", ApiKey::new(KEY))
        .with_timeout(Duration::from_secs(5))
}

const EVIDENCE: [&str; 2] = ["list_dir(.) → a.txt\nb.txt", "read_file(a.txt) → alpha"];

fn generate(g: &ChatGenerator, revise: Option<&str>) -> Result<Generated, GenerateError> {
    let evidence: Vec<String> = EVIDENCE.iter().map(|s| s.to_string()).collect();
    g.generate(&GenerateRequest {
        task: "What does a.txt say?",
        instructions: INSTRUCTIONS,
        evidence: &evidence,
        history: &[],
        halt: "task_done",
        revise,
        deadline: None,
        detail: None,
    })
}

/// The error of a generation that must fail; it names the generator and never holds the key.
fn failure(g: &ChatGenerator) -> String {
    let error = generate(g, None).expect_err("the generation fails");
    assert_eq!(error.who, g.name());
    let shown = error.to_string();
    assert!(shown.starts_with(&format!("generation failed ({}): ", g.name())), "{shown}");
    assert!(!shown.contains(KEY) && !format!("{error:?}").contains(KEY), "the key leaked: {shown}");
    shown
}

fn only_request(server: &Server) -> Recorded {
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].clone()
}

#[test]
fn a_reply_gives_the_text_the_latency_and_the_token_counts() {
    let server = Server::scripted(vec![answer("a.txt says alpha.", 321, 12).after(Duration::from_millis(60))]);
    let g = generator(&server);
    assert_eq!(g.name(), format!("chat@{}", server.addr));
    let out = generate(&g, None).unwrap();
    assert_eq!(out.text, "a.txt says alpha.");
    assert_eq!((out.input_tokens, out.output_tokens), (Some(321), Some(12)));
    assert!(out.latency >= Duration::from_millis(60), "{:?}", out.latency);
    assert!(out.latency < Duration::from_secs(5), "{:?}", out.latency);
    // Without `usage`, the counts are unknown rather than zero.
    let server = Server::scripted(vec![Reply::json(200, &json!({"choices": [{"message": {"content": "ok"}}]}))]);
    let out = generate(&generator(&server), None).unwrap();
    assert_eq!((out.text.as_str(), out.input_tokens, out.output_tokens), ("ok", None, None));
}

#[test]
fn the_request_holds_the_model_the_instructions_the_task_and_each_evidence_line() {
    let server = Server::scripted(vec![answer("fine", 1, 1)]);
    generate(&generator(&server), None).unwrap();
    let sent = only_request(&server);
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/chat/completions"));
    let body = sent.json();
    assert_eq!(body["model"], "qwen-test");
    assert_eq!(body["temperature"], 0);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0], json!({"role": "system", "content": INSTRUCTIONS}));
    assert_eq!(messages[1]["role"], "user");
    let user = messages[1]["content"].as_str().unwrap();
    assert!(user.starts_with("Task: What does a.txt say?\n"), "{user}");
    for line in EVIDENCE {
        assert!(user.contains(&format!("- {line}\n")), "{line:?} in {user}");
    }
    assert!(!user.contains("delivery gate"), "no revision was asked: {user}");
    assert!(body.get("max_tokens").is_none(), "no cap was set: {body}");
}

#[test]
fn a_revision_sends_the_gate_reason_as_an_instruction() {
    let server = Server::scripted(vec![answer("fixed", 1, 1)]);
    generate(&generator(&server), Some("it names a file nobody read")).unwrap();
    let body = only_request(&server).json();
    let user = body["messages"][1]["content"].as_str().unwrap();
    let instruction = revise_instruction("it names a file nobody read");
    assert!(user.ends_with(&format!("\n{instruction}")), "{user}");
    assert!(instruction.contains("it names a file nobody read"));
}

#[test]
fn max_tokens_is_sent_only_when_a_cap_is_set() {
    let server = Server::scripted(vec![answer("short", 1, 1)]);
    generate(&generator(&server).with_max_tokens(Some(64)), None).unwrap();
    assert_eq!(only_request(&server).json()["max_tokens"], 64);
    let server = Server::scripted(vec![answer("long", 1, 1)]);
    generate(&generator(&server).with_max_tokens(None), None).unwrap();
    assert!(only_request(&server).json().get("max_tokens").is_none());
}

#[test]
fn the_key_is_sent_as_a_bearer_token_and_only_when_there_is_one() {
    let server = Server::scripted(vec![answer("ok", 1, 1)]);
    generate(&generator(&server), None).unwrap();
    assert_eq!(only_request(&server).header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let server = Server::scripted(vec![answer("ok", 1, 1)]);
    generate(&ChatGenerator::new(&server.url(), "m", None), None).unwrap();
    let sent = only_request(&server);
    assert_eq!(sent.path, "/chat/completions");
    assert_eq!(sent.header("authorization"), None);
}

#[test]
fn an_http_error_names_the_status_and_the_server_message_without_the_key() {
    let server = Server::scripted(vec![Reply::json(
        500,
        &json!({"error": {"message": format!("model crashed while serving Bearer {KEY}"), "type": "server_error"}}),
    )]);
    let shown = failure(&generator(&server));
    assert!(shown.contains("HTTP 500"), "{shown}");
    assert!(shown.contains("model crashed") && shown.contains("Bearer ***"), "{shown}");
    // An error page that is not JSON still names the status.
    let server = Server::scripted(vec![Reply::text(502, "<html>bad gateway</html>")]);
    assert!(failure(&generator(&server)).contains("HTTP 502"));
}

#[test]
fn a_key_echoed_where_the_message_is_clipped_leaves_no_fragment() {
    // Wherever the clip falls, the key was scrubbed before it: not even its start survives.
    for padding in 150..=200 {
        let echoed = format!("{}{KEY}", "x".repeat(padding));
        let server = Server::scripted(vec![Reply::json(401, &json!({ "error": echoed }))]);
        let shown = failure(&generator(&server));
        assert!(shown.contains("HTTP 401"), "{shown}");
        assert!(!shown.contains("sk-ch"), "padding {padding}: {shown}");
    }
}

#[test]
fn a_reply_without_message_content_is_an_error() {
    for reply in [
        json!({"choices": []}),
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": []}}]}),
        json!({"choices": [{"message": {"content": 42}}]}),
        json!({"choices": [{"text": "a completions reply"}]}),
        json!({"error": "not chat"}),
    ] {
        let server = Server::scripted(vec![Reply::json(200, &reply)]);
        let shown = failure(&generator(&server));
        assert!(shown.contains("no choices[0].message.content"), "{reply}: {shown}");
    }
}

#[test]
fn a_reply_that_is_not_json_is_an_error() {
    for body in ["this is not json", "{\"choices\": [", ""] {
        let server = Server::scripted(vec![Reply::text(200, body)]);
        let shown = failure(&generator(&server));
        assert!(shown.contains("HTTP 200: unreadable reply"), "{body:?}: {shown}");
    }
}

#[test]
fn a_server_slower_than_the_timeout_is_an_error_in_time() {
    let server = Server::scripted(vec![answer("too late", 1, 1).after(Duration::from_secs(3))]);
    let g = generator(&server).with_timeout(Duration::from_millis(250));
    let started = Instant::now();
    let shown = failure(&g);
    assert!(started.elapsed() < Duration::from_secs(2), "gave up after {:?}", started.elapsed());
    assert!(shown.to_lowercase().contains("timeout"), "{shown}");
    // The same server within the timeout answers.
    let server = Server::scripted(vec![answer("in time", 1, 1).after(Duration::from_millis(50))]);
    assert_eq!(generate(&generator(&server), None).unwrap().text, "in time");
}

#[test]
fn an_oversized_reply_is_an_error_and_one_under_the_limit_is_read() {
    let limit = usize::try_from(MAX_REPLY_BYTES).unwrap();
    let framing = json!({"choices": [{"message": {"content": ""}}]}).to_string().len();
    let under = "x".repeat(limit - framing - 16);
    let server = Server::scripted(vec![Reply::json(200, &json!({"choices": [{"message": {"content": under}}]}))]);
    assert_eq!(generate(&generator(&server), None).unwrap().text.len(), under.len());
    let over = "x".repeat(limit + 1);
    let server = Server::scripted(vec![Reply::json(200, &json!({"choices": [{"message": {"content": over}}]}))]);
    let shown = failure(&generator(&server));
    assert!(shown.contains("unreadable reply"), "{}", &shown[..shown.len().min(300)]);
    assert!(shown.len() < 1000, "the error does not carry the reply");
}

#[test]
fn an_unreachable_endpoint_is_an_error() {
    // Bind, learn the port, close: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let g = ChatGenerator::new(&format!("http://127.0.0.1:{port}/v1"), "m", ApiKey::new(KEY))
        .with_timeout(Duration::from_secs(2));
    failure(&g);
}

struct HostRun {
    result: Result<RunSummary, HostError>,
    events: Vec<Value>,
    log: std::path::PathBuf,
}

impl HostRun {
    fn of_type(&self, t: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == t).collect()
    }
}

/// The coding host, as `decision run` assembles it, with `generator` writing the answer.
fn run_with(dir: &TempDir, task: &str, workdir: &Path, generator: Box<dyn Generator>) -> HostRun {
    let log = dir.path().join("session.jsonl");
    let header = LogHeader { id: "generate".into(), created_at_ms: 0, cwd: None };
    let memory = MemorySink::new();
    let sinks: Vec<Box<dyn EventSink>> =
        vec![Box::new(SessionLog::create(&log, &header, FsyncPolicy::Never).unwrap()), Box::new(memory.clone())];
    let config = RunConfig {
        max_steps: 12,
        contract_label: "test".into(),
        ..RunConfig::new(task, workdir, dir.path().join("audit.jsonl"))
    };
    let with = Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator,
        human: Box::new(DenyAll),
        sink: Box::new(Tee::new(sinks)),
    };
    let result = run_task(CODING_CONTRACT.as_bytes(), &config, with, None);
    HostRun { result, events: memory.events(), log }
}

#[test]
fn the_host_delivers_the_servers_answer() {
    let dir = TempDir::new("chat-run");
    let ws = dir.workspace(&[("a.txt", "alpha"), ("b.txt", "beta")]);
    let server = Server::scripted(vec![answer("a.txt says alpha.", 210, 7)]);
    let out = run_with(&dir, "What does a.txt say?", &ws, Box::new(generator(&server)));
    let s = out.result.as_ref().unwrap();
    assert_eq!(s.answer, "a.txt says alpha.");
    assert!(s.delivered, "{s:?}");
    assert_eq!(s.model_calls, 1);
    let sent = only_request(&server).json();
    // The system message is the contract's `## generator` section.
    let system = sent["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You have already decided what to do"), "{system}");
    assert!(system.trim_end().ends_with("Do not guess."), "{system}");
    assert!(CODING_CONTRACT.contains(system.trim()), "{system}");
    // A read's result starts with the host's header line, then the file's text.
    let user = sent["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("read_file(a.txt) → [a.txt: whole file, 1 line]\nalpha"), "{sent}");
    let generated = out.of_type("generate");
    assert_eq!(generated.len(), 1);
    assert_eq!(generated[0]["kind"], format!("generate (chat@{})", server.addr));
    assert_eq!((generated[0]["inputTokens"].clone(), generated[0]["outputTokens"].clone()), (json!(210), json!(7)));
    let end = out.of_type("run:end");
    assert_eq!(end[0]["answer"], "a.txt says alpha.");
    let (mismatch, _, intact) = replay(&out.log);
    assert_eq!((mismatch, intact), (0, true));
}

#[test]
fn a_draft_the_gate_sends_back_is_rewritten_with_its_reason() {
    let dir = TempDir::new("chat-revise");
    let ws = dir.workspace(&[("a.txt", "alpha")]);
    // The first draft cites a file that was never read: the delivery gate asks for a revision.
    let server = Server::scripted(vec![answer("zeta.txt says alpha.", 1, 1), answer("a.txt says alpha.", 1, 1)]);
    let out = run_with(&dir, "What does a.txt say?", &ws, Box::new(generator(&server)));
    let s = out.result.as_ref().unwrap();
    assert_eq!(s.answer, "a.txt says alpha.");
    assert!(s.delivered, "{s:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json()["messages"][1]["content"].as_str().unwrap().to_owned();
    let second = requests[1].json()["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(!first.contains("delivery gate"), "{first}");
    let reason = out.of_type("decision").iter().rev().find(|d| d["action"] == "revise").unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(second.ends_with(&revise_instruction(&reason)), "{second}");
}

#[test]
fn a_failing_generator_ends_the_run_with_an_error_halt_not_a_panic() {
    let dir = TempDir::new("chat-fail");
    let ws = dir.workspace(&[("a.txt", "alpha")]);
    let server = Server::scripted(vec![Reply::json(500, &json!({"error": format!("overloaded; key {KEY}")}))]);
    let out = run_with(&dir, "What does a.txt say?", &ws, Box::new(generator(&server)));
    let error = out.result.as_ref().expect_err("the run reports the failure").to_string();
    assert!(error.contains("generation failed") && error.contains("HTTP 500"), "{error}");
    assert!(!error.contains(KEY), "{error}");
    // The log still ends the run, says why, and verifies; the key is nowhere in it.
    let end = out.of_type("run:end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["halt"], "error");
    assert_eq!(end[0]["answer"], "");
    assert!(end[0]["error"].as_str().unwrap().contains("HTTP 500"), "{}", end[0]);
    let log = std::fs::read_to_string(&out.log).unwrap();
    assert!(!log.contains(KEY));
    let (mismatch, _, intact) = replay(&out.log);
    assert_eq!((mismatch, intact), (0, true));
}
