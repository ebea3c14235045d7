//! `decision run` and `decision resume` with a time budget, a chat generator (and its output
//! cap) on a loopback server, and a gated call with nobody at a terminal to approve it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;
#[path = "../../runtime/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::TempDir;
use serde_json::{Value, json};
use support::{Reply, Server};

const KEY: &str = "sk-cli-NEVER-PRINTED-42";
/// A task the heuristic works on for several steps: list, then read each file.
const TASK: &str = "Summarize each file";

/// `decision ARGS` with no generator or key from the environment and no terminal on stdin.
fn decision_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_decision"));
    command
        .args(args)
        .env_remove("DECISION_GENERATOR_URL")
        .env_remove("DECISION_GENERATOR_MODEL")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn decision(args: &[&str]) -> Output {
    decision_with(args, &[])
}

struct Temp(TempDir);

impl Temp {
    fn new(tag: &str) -> Temp {
        let dir = TempDir::new(&format!("run-host-{tag}"));
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        for (name, body) in [("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")] {
            std::fs::write(dir.path().join("ws").join(name), body).unwrap();
        }
        Temp(dir)
    }

    fn ws(&self) -> String {
        s(&self.0.path().join("ws")).to_owned()
    }

    fn log(&self) -> PathBuf {
        self.0.path().join("run.jsonl")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The events of the log, in order.
fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "event")
        .map(|v| v["e"].clone())
        .collect()
}

fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

fn assert_replays(log: &Path) {
    let replay = decision(&["replay", s(log)]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stdout));
    assert!(text(&replay.stdout).contains("chain: intact"), "{}", text(&replay.stdout));
}

#[test]
fn a_spent_time_budget_halts_with_time_budget_and_the_log_verifies() {
    let dir = Temp::new("spent");
    let log = dir.log();
    let out = decision(&["run", "--task", TASK, "--workdir", &dir.ws(), "--time-budget", "0.000001", "--log", s(&log)]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // No tool call starts once the budget is spent: nothing was done, so nothing is delivered.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("halt: time_budget+revise (not delivered)"), "{stdout}");
    assert!(stdout.contains("The tool loop ended: the time budget was spent (time_budget)."), "{stdout}");
    assert!(stdout.contains("steps: 1 "), "{stdout}");
    let events = events(&log);
    assert_eq!(of_type(&events, "run:start")[0]["timeBudgetSeconds"], 0.000001);
    assert!(of_type(&events, "run:end")[0]["halt"].as_str().unwrap().starts_with("time_budget"));
    assert!(of_type(&events, "tool:call").is_empty(), "no tool ran");
    assert_replays(&log);
}

#[test]
fn without_a_budget_the_same_run_goes_on_to_the_end() {
    let dir = Temp::new("free");
    let log = dir.log();
    let out = decision(&["run", "--task", TASK, "--workdir", &dir.ws(), "--log", s(&log), "--quiet"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("halt: task_done (delivered)"), "{stdout}");
    assert!(!stdout.contains("steps: 1 "), "{stdout}");
    assert!(of_type(&events(&log), "run:start")[0].get("timeBudgetSeconds").is_none());
    // A budget that is not spent changes nothing.
    let dir = Temp::new("roomy");
    let roomy = decision(&[
        "run",
        "--task",
        TASK,
        "--workdir",
        &dir.ws(),
        "--time-budget",
        "600",
        "--quiet",
        "--log",
        s(&dir.log()),
    ]);
    let roomy_stdout = text(&roomy.stdout);
    let answer = |out: &str| out.split("\n\nhalt:").next().unwrap().to_owned();
    assert_eq!(answer(&roomy_stdout), answer(&stdout));
    assert!(roomy_stdout.contains("halt: task_done (delivered)"), "{roomy_stdout}");
}

#[test]
fn a_time_budget_must_be_a_positive_number_of_seconds() {
    let dir = Temp::new("invalid");
    for bad in ["0", "0.0", "-1", "abc", "NaN", "inf", "", "1e400"] {
        let flag = format!("--time-budget={bad}");
        let out = decision(&["run", "--task", TASK, "--workdir", &dir.ws(), &flag, "--log", s(&dir.log())]);
        assert_eq!(out.status.code(), Some(2), "`{bad}`: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("--time-budget"), "`{bad}`: {}", text(&out.stderr));
        assert!(!dir.log().exists(), "`{bad}`: nothing ran");
    }
    for (index, good) in ["2.5", " 30 ", "1e3"].into_iter().enumerate() {
        let log = dir.0.path().join(format!("good-{index}.jsonl"));
        let out = decision(&[
            "run",
            "--task",
            TASK,
            "--workdir",
            &dir.ws(),
            "--time-budget",
            good,
            "--quiet",
            "--log",
            s(&log),
        ]);
        assert_eq!(out.status.code(), Some(0), "`{good}`: {}", text(&out.stderr));
    }
}

#[test]
fn resume_keeps_the_recorded_budget_on_a_fresh_clock_unless_given_another() {
    let spent = |dir: &Temp| {
        let log = dir.log();
        let first =
            decision(&["run", "--task", TASK, "--workdir", &dir.ws(), "--time-budget", "0.000001", "--log", s(&log)]);
        assert!(text(&first.stdout).contains("halt: time_budget"), "{}", text(&first.stdout));
        log
    };
    // The recorded budget applies again: no call had run, so the resumed run starts at step 1
    // again and halts before its call.
    let dir = Temp::new("resume-recorded");
    let log = spent(&dir);
    let again = decision(&["resume", s(&log), "--workdir", &dir.ws(), "--quiet"]);
    assert!(text(&again.stdout).contains("halt: time_budget"), "{}", text(&again.stdout));
    assert!(text(&again.stdout).contains("steps: 1 "), "{}", text(&again.stdout));
    let events_a = events(&log);
    let starts = of_type(&events_a, "run:start");
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[1]["timeBudgetSeconds"], 0.000001);
    assert_replays(&log);
    // A recorded budget that is not a duration is refused, not ignored.
    let tampered =
        std::fs::read_to_string(&log).unwrap().replace("\"timeBudgetSeconds\":0.000001", "\"timeBudgetSeconds\":-5");
    let bad_log = dir.0.path().join("tampered.jsonl");
    std::fs::write(&bad_log, tampered).unwrap();
    // (The changed line breaks the chain: the whole log is verified before anything is read.)
    let refused = decision(&["resume", s(&bad_log), "--workdir", &dir.ws()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("nothing was resumed"), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("`prev` is not the SHA-256"), "{}", text(&refused.stderr));
    // Another budget, given on the command line, replaces the recorded one.
    let dir = Temp::new("resume-replaced");
    let log = spent(&dir);
    let resumed = decision(&["resume", s(&log), "--workdir", &dir.ws(), "--time-budget", "600", "--quiet"]);
    assert!(text(&resumed.stdout).contains("halt: task_done (delivered)"), "{}", text(&resumed.stdout));
    assert_eq!(of_type(&events(&log), "run:start")[1]["timeBudgetSeconds"], 600.0);
    assert_replays(&log);
}

fn chat(content: &str) -> Reply {
    Reply::json(
        200,
        &json!({"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": 50, "completion_tokens": 5}}),
    )
}

#[test]
fn the_generator_writes_the_answer_with_the_output_cap_and_the_key() {
    let server = Server::scripted(vec![chat("a.txt says alpha.")]);
    let dir = Temp::new("generator");
    let log = dir.log();
    let url = format!("{}/v1", server.url());
    let out = decision_with(
        &[
            "run",
            "--task",
            "What does a.txt say?",
            "--workdir",
            &dir.ws(),
            "--generator-url",
            &url,
            "--generator-model",
            "tiny",
            "--max-output-tokens",
            "48",
            "--log",
            s(&log),
        ],
        &[("OPENAI_API_KEY", KEY)],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("a.txt says alpha.\n\nhalt: task_done (delivered)"), "{stdout}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].json();
    assert_eq!((body["model"].clone(), body["max_tokens"].clone()), (json!("tiny"), json!(48)));
    assert_eq!(requests[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_replays(&log);
    // Without the flag, no cap is sent.
    let server = Server::scripted(vec![chat("a.txt says alpha.")]);
    let url = format!("{}/v1", server.url());
    let out = decision(&[
        "run",
        "--task",
        "What does a.txt say?",
        "--workdir",
        &dir.ws(),
        "--generator-url",
        &url,
        "--quiet",
        "--log",
        s(&dir.0.path().join("uncapped.jsonl")),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(server.requests()[0].json().get("max_tokens").is_none());
}

#[test]
fn an_output_cap_needs_a_generator_and_a_positive_count() {
    let dir = Temp::new("cap");
    let log = dir.log();
    let out = decision(&["run", "--task", TASK, "--workdir", &dir.ws(), "--max-output-tokens", "64", "--log", s(&log)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--max-output-tokens") && text(&out.stderr).contains("--generator-url"));
    assert!(of_type(&events(&log), "run:start").is_empty(), "nothing ran");
    for bad in ["0", "-3", "many"] {
        let flag = format!("--max-output-tokens={bad}");
        let url = "http://127.0.0.1:9/v1";
        let out = decision(&["run", "--task", TASK, "--workdir", &dir.ws(), "--generator-url", url, &flag]);
        assert_eq!(out.status.code(), Some(2), "`{bad}`: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("--max-output-tokens"), "`{bad}`: {}", text(&out.stderr));
    }
}

#[test]
fn a_failing_generator_exits_1_with_the_status_and_never_the_key() {
    let server = Server::scripted(vec![Reply::json(500, &json!({"error": format!("no capacity for Bearer {KEY}")}))]);
    let dir = Temp::new("generator-fails");
    let log = dir.log();
    let url = format!("{}/v1", server.url());
    let out = decision_with(
        &["run", "--task", "What does a.txt say?", "--workdir", &dir.ws(), "--generator-url", &url, "--log", s(&log)],
        &[("OPENAI_API_KEY", KEY)],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("generation failed") && stderr.contains("HTTP 500"), "{stderr}");
    assert!(stderr.contains("verify with: decision replay"), "{stderr}");
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    assert!(!std::fs::read_to_string(&log).unwrap().contains(KEY));
    assert_eq!(of_type(&events(&log), "run:end")[0]["halt"], "error");
    assert_replays(&log);
}

#[test]
fn with_approvals_denied_a_gated_call_is_refused_without_a_prompt() {
    let dir = Temp::new("no-terminal");
    std::fs::write(dir.0.path().join("ws").join("keep.txt"), "precious").unwrap();
    // `--approvals deny`: nobody is asked, so the delete the gate sends to a person is refused.
    // (Without it and without a terminal, the call becomes a pending approval: see approvals_cli.)
    let out = decision(&[
        "run",
        "--task",
        "Delete keep.txt",
        "--workdir",
        &dir.ws(),
        "--allow-delete",
        "--approvals",
        "deny",
        "--log",
        s(&dir.log()),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("halt: denied"), "{stdout}\n{stderr}");
    assert!(stderr.contains("authorisation for delete_file: denied"), "{stderr}");
    // It says why, and names the tool and the target.
    assert!(
        stderr.contains("authorisation denied for delete_file keep.txt: nobody can be asked, since stdin and stderr are not both a terminal"),
        "{stderr}"
    );
    assert!(!stderr.contains("[y/N]"), "no prompt was shown: {stderr}");
    assert_eq!(std::fs::read_to_string(dir.0.path().join("ws").join("keep.txt")).unwrap(), "precious");
}
