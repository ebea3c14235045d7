//! The key never appears anywhere: a decision server and a generator that echo the
//! `authorization` header in every field of a 200 reply leave no trace of the key in the
//! output or the session log.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;
#[path = "../../runtime/tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};

use common::TempDir;
use serde_json::{Map, Value, json};
use support::{Recorded, Reply, Server};

const KEY: &str = "sk-echoed-NEVER-SHOWN-9c1e";
const TASK: &str = "Summarize each file";

/// A valid answer to every question asked, each carrying the echoed header.
fn echo_answers(request: &Recorded, auth: &str) -> Value {
    let body = request.json();
    let mut answers = Map::new();
    for (id, question) in body["questions"].as_object().unwrap() {
        let answer = match question["type"].as_str().unwrap() {
            "noul" => json!({"type": "noul", "noul": 0.9, "echo": auth}),
            "choice" => {
                let ids: Vec<&String> = question["criteria"].as_object().unwrap().keys().collect();
                let probabilities: Map<String, Value> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, id)| ((*id).clone(), json!(if i == 0 { 1.0 } else { 0.0 })))
                    .collect();
                json!({"type": "choice", "choice": ids[0], "probabilities": probabilities, "echo": auth})
            }
            _ => {
                let levels = question["criteria"].as_array().unwrap().len();
                let probabilities: Map<String, Value> =
                    (0..levels).map(|k| (k.to_string(), json!(if k == 0 { 1.0 } else { 0.0 }))).collect();
                json!({"type": "score", "score": 0, "probabilities": probabilities, "echo": auth})
            }
        };
        answers.insert(id.clone(), answer);
    }
    json!({"answers": answers, "model": auth, "warnings": [format!("request had {auth}")], "usage": {"note": auth}})
}

#[test]
fn a_server_echoing_the_authorization_header_cannot_put_the_key_in_stdout_or_the_log() {
    let server = Server::start(|request, _| {
        let auth = request.header("authorization").unwrap_or_default().to_owned();
        if request.path.ends_with("/chat/completions") {
            Reply::json(200, &json!({"choices": [{"message": {"content": format!("The answer. You sent: {auth}")}}]}))
        } else {
            Reply::json(200, &echo_answers(request, &auth))
        }
    });
    let tmp = TempDir::new("secrets-echo");
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "alpha").unwrap();
    let log = tmp.path().join("run.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(["run", "--task", TASK, "--workdir", ws.to_str().unwrap(), "--provider", "systemone"])
        .args(["--url", &server.url(), "--generator-url", &format!("{}/v1", server.url())])
        .args(["--log", log.to_str().unwrap()])
        // A gated call is denied at once (no approval queue): the run goes on to generation.
        .args(["--approvals", "deny"])
        .env("TYPESAFE_API_KEY", KEY)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("DECISION_GENERATOR_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(server.requests().iter().all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}")[..])));
    assert!(written.contains("Bearer ***"), "the echoes were recorded, redacted");
    assert!(stdout.contains("You sent: Bearer ***"), "{stdout}");
    for (place, text) in [("stdout", &*stdout), ("stderr", &*stderr), ("the log", &*written)] {
        assert!(!text.contains(KEY), "the key is in {place}");
    }
}
