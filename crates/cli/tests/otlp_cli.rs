//! `--otlp URL`: decisions reach a loopback OpenTelemetry collector as spans, one per row of
//! `decision export`, while a collector that is down never changes a run's outcome.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;
use common::collector::{Collector, attribute, closed_url};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_decision");
const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
const TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";

fn decision(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("DECISION_LOG_KEY").env_remove("OTEL_SERVICE_NAME");
    command.env_remove("OTEL_EXPORTER_OTLP_HEADERS").env_remove("OTEL_EXPORTER_OTLP_TRACES_HEADERS");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The rows `decision export` makes of `log`.
fn rows(log: &Path, dir: &Path) -> Vec<Value> {
    let out_path = dir.join("rows.jsonl");
    let out = decision(&["export", log.to_str().unwrap(), "--format", "jsonl", "-o", out_path.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::read_to_string(out_path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The bundled example task run into `log`, its decisions sent to `url`.
fn run_with_otlp(log: &Path, url: &str, env: &[(&str, &str)]) -> Output {
    let log = log.to_str().unwrap();
    decision(&["run", "--task", TASK, "--workdir", WORKSPACE, "--log", log, "--quiet", "--otlp", url], env)
}

#[test]
fn a_run_sends_one_span_per_decision_in_one_trace_while_it_runs() {
    let collector = Collector::start();
    let dir = TempDir::new("otlp-run");
    let log = dir.path().join("run.jsonl");
    let out = run_with_otlp(&log, &collector.url, &[("OTEL_SERVICE_NAME", "triage-agent")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = rows(&log, dir.path());
    let spans = collector.spans();
    assert!(!rows.is_empty());
    assert_eq!(spans.len(), rows.len(), "one span per row: {}", stderr(&out));
    assert!(stderr(&out).contains(&format!("otlp: {} span(s) sent to {}/v1/traces", rows.len(), collector.url)));
    let traces: BTreeSet<&Vec<u8>> = spans.iter().map(|(_, s)| &s.trace_id).collect();
    assert_eq!(traces.len(), 1, "one run, one trace");
    assert!(spans.iter().all(|(service, _)| service == "triage-agent"));
    let sent: Vec<(String, String)> = spans
        .iter()
        .map(|(_, s)| {
            (attribute(s, "decision.block").unwrap_or_default(), attribute(s, "decision.action").unwrap_or_default())
        })
        .collect();
    let logged: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (r["block"].as_str().unwrap_or_default().to_owned(), r["action"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    assert_eq!(sent, logged, "the spans say what the log says, in its order");
    assert!(spans.iter().all(|(_, s)| attribute(s, "decision.host").as_deref() == Some("coding-host")));
}

#[test]
fn a_collector_that_is_down_leaves_the_run_and_its_log_as_they_would_be() {
    let dir = TempDir::new("otlp-down");
    let log = dir.path().join("run.jsonl");
    let out = run_with_otlp(&log, &closed_url(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("otlp: 0 span(s) sent to"), "{}", stderr(&out));
    assert!(stderr(&out).contains("(the collector could not be reached)"), "{}", stderr(&out));
    let replay = decision(&["replay", log.to_str().unwrap(), "--require-seal"], &[]);
    assert_eq!(replay.status.code(), Some(0), "{}", stdout(&replay));
}

#[test]
fn export_sends_every_row_with_its_verdict_and_fails_when_spans_do_not_arrive() {
    let collector = Collector::start();
    let logs = [format!("{EXAMPLES}/support-triage/session.jsonl"), format!("{EXAMPLES}/broken/session-edited.jsonl")];
    let out = decision(&["export", &logs[0], &logs[1], "--otlp", &collector.url], &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let spans = collector.spans();
    assert_eq!(spans.len(), 6, "{}", stdout(&out));
    assert!(stdout(&out).contains(&format!("otlp: 6 span(s) sent to {}/v1/traces", collector.url)), "{}", stdout(&out));
    let failed =
        spans.iter().filter(|(_, s)| attribute(s, "decision.log_verdict").as_deref() == Some("failed")).count();
    assert_eq!(failed, 3, "the edited log's rows say it does not verify");

    // The file cannot be written: the command fails, and still says what became of the spans.
    let dir = TempDir::new("otlp-unwritable");
    let unwritable = dir.path().join("missing-directory/rows.parquet");
    let failed = decision(&["export", &logs[0], "-o", unwritable.to_str().unwrap(), "--otlp", &collector.url], &[]);
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
    assert!(stderr(&failed).contains(&format!("span(s) sent to {}/v1/traces", collector.url)), "{}", stderr(&failed));

    let down = decision(&["export", &logs[0], "--otlp", &closed_url()], &[]);
    assert_eq!(down.status.code(), Some(1), "{}", stdout(&down));
    assert!(stdout(&down).contains("not sent: 0 dropped (queue full), 3 failed"), "{}", stdout(&down));
}

#[test]
fn a_bad_url_or_header_variable_is_refused_before_anything_runs_and_no_secret_is_printed() {
    let dir = TempDir::new("otlp-bad");
    let log = dir.path().join("run.jsonl");
    let bad_url = decision(
        &[
            "run",
            "--task",
            TASK,
            "--workdir",
            WORKSPACE,
            "--log",
            log.to_str().unwrap(),
            "--otlp",
            "udp://127.0.0.1:4318",
        ],
        &[],
    );
    assert_eq!(bad_url.status.code(), Some(2));
    assert!(
        stderr(&bad_url).contains("error[E_USAGE]: --otlp wants an http:// or https:// URL"),
        "{}",
        stderr(&bad_url)
    );
    assert!(!log.exists(), "nothing ran");
    let bad_header = decision(
        &["export", &format!("{EXAMPLES}/support-triage/session.jsonl"), "--otlp", "http://127.0.0.1:9"],
        &[("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer sk-secret-1,broken")],
    );
    assert_eq!(bad_header.status.code(), Some(2));
    assert!(stderr(&bad_header).contains("OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not name=value"));
    assert!(!stderr(&bad_header).contains("sk-secret-1") && !stdout(&bad_header).contains("sk-secret-1"));
    let neither = decision(&["export", &format!("{EXAMPLES}/support-triage/session.jsonl")], &[]);
    assert_eq!(neither.status.code(), Some(2), "an export needs -o or --otlp");
}
