//! `decision outcomes check|validate|report`: output and exit codes, run on the built binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::TempDir;
use serde_json::{Value, json};

fn example(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "..", "examples", "outcomes", name].iter().collect();
    path.to_string_lossy().into_owned()
}

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision")).args(args).output().unwrap()
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn temp_file(dir: &TempDir, name: &str, contents: &str) -> String {
    dir.file(name, contents).to_string_lossy().into_owned()
}

#[test]
fn check_accepts_the_example_contracts() {
    let output = decision(&["outcomes", "check", &example("contracts.json")]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("ok — 4 contract(s)"));
    let output = decision(&["outcomes", "check", &example("contracts.json"), "--format", "json"]);
    assert_eq!(stdout_json(&output)["contracts"], 4);
}

#[test]
fn check_locates_every_problem_and_exits_1() {
    let path = example("bad-contracts.json");
    let output = decision(&["outcomes", "check", &path]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(
        text.contains(&format!("{path}:9:9: `min_items` cannot apply to `type: object`")),
        "the misplaced key is located: {text}"
    );
    assert!(text.contains(":16:17: unknown type \"numeric\""), "{text}");
    let output = decision(&["outcomes", "check", &path, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report = stdout_json(&output);
    assert_eq!(report["ok"], false);
    assert_eq!(report["errors"].as_array().unwrap().len(), 7);
    assert_eq!(
        report["errors"][0],
        json!({"line": 9, "column": 9, "pointer": "/contracts/0/deliverable/min_items",
               "message": "`min_items` cannot apply to `type: object`: it applies only to `type: array`; to require items in a member, put it under `properties.<key>` with `type: array`"})
    );
}

#[test]
fn check_exits_2_on_io_problems() {
    let output = decision(&["outcomes", "check", "/nonexistent/contracts.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot read"));
}

fn validate(outcome: &str, tool: &str, method: &str) -> Output {
    decision(&[
        "outcomes",
        "validate",
        &example("contracts.json"),
        "--tool",
        tool,
        "--method",
        method,
        "--outcome",
        outcome,
        "--format",
        "json",
    ])
}

#[test]
fn validate_prints_a_holding_outcome_unchanged_and_exits_0() {
    for name in ["outcomes/movies-ok.json", "outcomes/movies-films-alias.json", "outcomes/movies-low-utility.json"] {
        let path = example(name);
        let output = validate(&path, "catalog", "find_movies");
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        let original: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(stdout_json(&output), original, "{name} is printed unchanged");
    }
    // A weak success with no constraint against it stays ok: no coercion by status string.
    let output = validate(&example("outcomes/headlines-weak.json"), "news", "headlines");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_json(&output)["value"]["status"], "success_no_parse");
}

#[test]
fn validate_prints_the_typed_violation_and_exits_1() {
    let output = validate(&example("outcomes/movies-empty.json"), "catalog", "find_movies");
    assert_eq!(output.status.code(), Some(1));
    let violation = stdout_json(&output);
    assert_eq!(violation["status"], "error");
    assert_eq!(violation["tool"], "catalog");
    assert_eq!(violation["method"], "find_movies");
    assert_eq!(violation["error_type"], "contract_violation");
    assert_eq!(violation["retriable"], false);
    assert_eq!(
        violation["metadata"],
        json!({"mismatch": "min_items_violation", "path": "/movies", "expected_shape": "array",
               "actual_shape": "array", "missing_keys": [], "expected_min_items": 1, "actual_items": 0})
    );
    let output = validate(&example("outcomes/movies-missing-keys.json"), "catalog", "find_movies");
    assert_eq!(output.status.code(), Some(1));
    let metadata = &stdout_json(&output)["metadata"];
    assert_eq!(
        (metadata["path"].as_str(), &metadata["missing_keys"]),
        (Some("/movies/0"), &json!(["title", "showtimes"]))
    );
}

#[test]
fn validate_human_format_summarises_on_stderr() {
    let args = |outcome: &str| {
        decision(&[
            "outcomes",
            "validate",
            &example("contracts.json"),
            "--tool",
            "catalog",
            "--method",
            "find_movies",
            "--outcome",
            &example(outcome),
        ])
    };
    let output = args("outcomes/movies-films-alias.json");
    assert_eq!(output.status.code(), Some(0));
    assert!(stderr(&output).contains("declared alias used: `films` for `movies`"), "{}", stderr(&output));
    let output = args("outcomes/movies-empty.json");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("contract_violation (min_items_violation)"));
}

#[test]
fn validate_exits_2_on_usage_and_input_errors() {
    let contracts = example("contracts.json");
    let ok = example("outcomes/movies-ok.json");
    let dir = TempDir::new("outcomes-validate");
    let not_json = temp_file(&dir, "not-json.json", "{\"status\": ");
    let bad_contracts = example("bad-contracts.json");
    let domain_object = example("outcomes/domain-object.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--tool", "nope", "--method", "find_movies", "--outcome", &ok], "no contract for tool `nope`"),
        (vec!["--tool", "catalog", "--method", "find_movies", "--outcome", "/nonexistent.json"], "cannot read"),
        (vec!["--tool", "catalog", "--method", "find_movies", "--outcome", &not_json], "invalid JSON"),
        (vec!["--tool", "catalog", "--method", "find_movies", "--outcome", &domain_object], "unknown member `movies`"),
        (vec!["--tool", "rss", "--method", "parse", "--outcome", &ok], "the outcome's tool is `catalog`"),
    ];
    for (extra, message) in cases {
        let mut args = vec!["outcomes", "validate", contracts.as_str()];
        args.extend(extra);
        let output = decision(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(message), "{args:?}: {}", stderr(&output));
    }
    let output = decision(&["outcomes", "validate", &bad_contracts, "--tool", "t", "--method", "m", "--outcome", &ok]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not a valid contracts file"));
    let output = decision(&["outcomes", "validate", &contracts, "--tool", "catalog", "--outcome", &ok]);
    assert_eq!(output.status.code(), Some(2), "a missing --method is a usage error");
}

#[test]
fn report_gives_the_documented_recommendations() {
    let output = decision(&["outcomes", "report", &example("outcome-log.jsonl"), "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = stdout_json(&output);
    let kinds: Vec<(String, Vec<String>)> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let name = format!("{}.{}", tool["tool"].as_str().unwrap(), tool["method"].as_str().unwrap());
            let kinds = tool["recommendations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["kind"].as_str().unwrap().to_owned())
                .collect();
            (name, kinds)
        })
        .collect();
    let expected = [
        ("catalog.find_movies", vec!["reforge_implementation"]),
        ("news.headlines", vec!["strengthen_constraints"]),
        ("rss.parse", vec![]),
        ("web.research", vec!["split_boundary"]),
    ];
    let expected: Vec<(String, Vec<String>)> = expected
        .into_iter()
        .map(|(name, kinds)| (name.to_owned(), kinds.into_iter().map(str::to_owned).collect()))
        .collect();
    assert_eq!(kinds, expected);
    let text = decision(&["outcomes", "report", &example("outcome-log.jsonl")]);
    assert_eq!(text.status.code(), Some(0));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("advisory: split_boundary"), "{text}");
    assert!(text.contains("14 outcome event(s) from 19 line(s)"), "{text}");
}

#[test]
fn report_exits_2_on_a_malformed_log() {
    let dir = TempDir::new("outcomes-report");
    let log = temp_file(
        &dir,
        "bad-log.jsonl",
        "{\"tool\":\"t\",\"method\":\"m\",\"outcome\":{\"status\":\"ok\",\"value\":1}}\nnope\n{}\n",
    );
    let output = decision(&["outcomes", "report", &log]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("line 2: not JSON"), "{}", stderr(&output));
    let output = decision(&["outcomes", "report", "/nonexistent.jsonl"]);
    assert_eq!(output.status.code(), Some(2));
}
