//! Export, as a user runs it: the bundled logs (one verifies, one was edited) into every format.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::fs::File;
use std::path::{Path, PathBuf};

use decision_export::{COLUMNS, ExportOptions, Format, SCHEMA_VERSION, expand_inputs, export, export_to_path};
use serde_json::Value;

fn example(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn jsonl_rows(logs: &[PathBuf]) -> (Vec<Value>, decision_export::ExportSummary) {
    let mut out = Vec::new();
    let summary = export(logs, Format::Jsonl, &mut out, &ExportOptions::default(), &mut |_| {}).unwrap();
    let rows = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (rows, summary)
}

#[test]
fn a_verified_log_gives_one_row_per_decision_with_its_fields() {
    let (rows, summary) = jsonl_rows(&[example("examples/support-triage/session.jsonl")]);
    assert_eq!(rows.len(), 3);
    assert_eq!((summary.logs, summary.rows, summary.verified, summary.mismatch, summary.failed_logs), (1, 3, 3, 0, 0));
    let route = &rows[1];
    assert_eq!(route["kind"], "decision");
    assert_eq!(route["run_id"], "ask-1796140765353");
    assert_eq!(route["run"], 1);
    assert_eq!(route["line"], 4);
    assert_eq!(route["seq"], 3);
    assert_eq!(route["block"], "route");
    assert_eq!(route["action"], "use");
    assert_eq!(route["rule"], "top >= 0.7 → use");
    assert_eq!(route["margin"], 0.12);
    assert_eq!(route["margin_question"], "queue");
    let answers: Value = serde_json::from_str(route["answers"].as_str().unwrap()).unwrap();
    assert_eq!(answers["queue"]["choice"], "billing");
    assert_eq!(route["frame_digest"], "b4012ae8dfbfed64");
    assert_eq!(route["request_digest"], "fc9df89fc8262dcf");
    assert_eq!(route["model"], "script");
    assert_eq!(route["latency_ms"], 0.0);
    assert_eq!(route["verdict"], "verified");
    assert_eq!(route["chain"], "intact");
    assert_eq!(route["seal"], "sealed");
    assert_eq!(route["log_verdict"], "ok");
    // What the log does not hold is null, not made up.
    assert_eq!(route["position"], Value::Null);
    assert_eq!(route["approval"], Value::Null);
    assert_eq!(route["floor"], Value::Null);
    assert_eq!(route["host"], Value::Null);
    // Every column, in order, on every row.
    let names: Vec<&str> = route.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(names, COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>());
}

#[test]
fn a_log_that_does_not_verify_is_exported_with_its_verdict() {
    let (rows, summary) = jsonl_rows(&[
        example("examples/support-triage/session.jsonl"),
        example("examples/broken/session-edited.jsonl"),
    ]);
    assert_eq!(rows.len(), 6);
    assert_eq!((summary.verified, summary.mismatch, summary.failed_logs), (5, 1, 1));
    assert!(summary.failed[0].ends_with("examples/broken/session-edited.jsonl"));
    let edited: Vec<&Value> =
        rows.iter().filter(|r| r["log"].as_str().unwrap().ends_with("session-edited.jsonl")).collect();
    assert_eq!(edited.len(), 3);
    assert!(edited.iter().all(|r| r["log_verdict"] == "failed" && r["chain"] == "broken"));
    let verdicts: Vec<&str> = edited.iter().map(|r| r["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["verified", "mismatch", "verified"]);
}

#[test]
fn the_floor_and_approvals_are_joined_to_their_decision() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gated.jsonl");
    let lines = [
        r#"{"kind":"header","v":2,"id":"run-1","createdAt":1}"#,
        r#"{"kind":"event","run":0,"at":1700000000000,"e":{"type":"run:start","task":"t","host":"mcp-gateway"}}"#,
        r#"{"kind":"event","run":0,"at":1700000000001,"e":{"type":"decision","step":2,"id":"loop.gradeRisk","action":"auto","reason":"else → auto","requestDigest":"abc","provider":"p","model":"m","latencyMs":12.5}}"#,
        r#"{"kind":"event","run":0,"at":1700000000002,"e":{"type":"gate:floor","step":2,"tool":"delete_file","decided":"auto","action":"ask_human","reason":"baseline"}}"#,
        r#"{"kind":"event","run":0,"at":1700000000003,"e":{"type":"approval:pending","step":2,"id":"ap-0-2-x","requestDigest":"abc"}}"#,
        r#"{"kind":"event","run":0,"at":1700000000004,"e":{"type":"decision:code","step":3,"id":"loop.stepOk","action":"stop","reason":"contract","decidedBy":"code"}}"#,
        r#"{"kind":"event","run":1,"at":1700000000005,"e":{"type":"approval:answer","id":"ap-0-2-x","approved":false,"reason":"no","by":"ops@example"}}"#,
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (rows, summary) = jsonl_rows(std::slice::from_ref(&log));
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let gate = &rows[0];
    assert_eq!(
        (gate["kind"].as_str(), gate["action"].as_str(), gate["floor"].as_str()),
        (Some("decision"), Some("auto"), Some("ask_human"))
    );
    assert_eq!((gate["approval"].as_str(), gate["approval_id"].as_str()), (Some("pending"), Some("ap-0-2-x")));
    assert_eq!(gate["host"], "mcp-gateway");
    assert_eq!(gate["latency_ms"], 12.5);
    assert_eq!(gate["ts"], 1_700_000_000_001_i64);
    assert_eq!(gate["verdict"], "unverifiable");
    assert_eq!(gate["chain"], "absent");
    let code = &rows[1];
    assert_eq!(
        (code["kind"].as_str(), code["action"].as_str(), code["verdict"].as_str()),
        (Some("decision:code"), Some("stop"), None)
    );
    let answer = &rows[2];
    assert_eq!(answer["kind"], "approval:answer");
    assert_eq!(
        (answer["approval"].as_str(), answer["approval_by"].as_str(), answer["rule"].as_str()),
        (Some("denied"), Some("ops@example"), Some("no"))
    );
    assert_eq!(summary.unverifiable, 1);
}

#[test]
fn a_member_of_an_unexpected_type_is_null_and_the_row_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("odd.jsonl");
    let line = r#"{"kind":"event","run":0,"at":"yesterday","e":{"type":"decision","step":"one","id":"b","action":"go","margin":7}}"#;
    std::fs::write(&log, format!("{line}\n")).unwrap();
    let (rows, _) = jsonl_rows(std::slice::from_ref(&log));
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0]["action"].as_str(), rows[0]["ts"].as_i64(), rows[0]["step"].as_f64()),
        (Some("go"), None, None)
    );
    assert_eq!(rows[0]["margin"], Value::Null);
    assert!(rows[0]["verdict"].is_string());
}

#[test]
fn directories_are_walked_for_logs_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("b/c")).unwrap();
    for name in ["b/c/2.jsonl", "a.jsonl", "notes.txt"] {
        std::fs::copy(example("examples/support-triage/session.jsonl"), dir.path().join(name)).unwrap();
    }
    let logs = expand_inputs(&[dir.path().to_path_buf()]).unwrap();
    let names: Vec<String> = logs.iter().map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string()).collect();
    assert_eq!(names, ["a.jsonl", "b/c/2.jsonl"]);
    assert!(expand_inputs(&[dir.path().join("missing")]).is_err());
}

#[test]
fn parquet_holds_the_schema_version_and_every_row() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("decisions.parquet");
    let logs = [example("examples/support-triage/session.jsonl"), example("examples/coding-agent/session.jsonl")];
    let summary = export_to_path(&logs, Format::Parquet, &out, &ExportOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(summary.rows, 6);
    let reader = SerializedFileReader::new(File::open(&out).unwrap()).unwrap();
    let meta = reader.metadata().file_metadata();
    assert_eq!(meta.num_rows(), 6);
    let version = meta.key_value_metadata().unwrap().iter().find(|kv| kv.key == "decision.export.schema").unwrap();
    assert_eq!(version.value.as_deref(), Some(SCHEMA_VERSION));
    let columns: Vec<String> = meta.schema_descr().columns().iter().map(|c| c.name().to_owned()).collect();
    assert_eq!(columns, COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>());
}

#[test]
fn csv_has_a_header_line_and_one_line_per_row() {
    let mut out = Vec::new();
    export(
        &[example("examples/coding-agent/session.jsonl")],
        Format::Csv,
        &mut out,
        &ExportOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let mut reader = csv::Reader::from_reader(out.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header, COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>());
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 3);
    assert_eq!(&records[0][8], "loop.needsTool");
    assert_eq!(&records[0][9], "", "a null is an empty field");
}

#[test]
fn a_failed_export_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    std::fs::write(&out, "before").unwrap();
    let missing = dir.path().join("missing.jsonl");
    let error = export_to_path(&[missing], Format::Parquet, &out, &ExportOptions::default(), &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("missing.jsonl"), "{error}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "before");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_log_read_once_and_a_log_read_twice_give_the_same_rows() {
    // Small logs are read once (their rows held until the log's verdict is known); larger ones
    // are replayed beforehand. Forcing the second way on every log must change nothing.
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.jsonl");
    let mut text = std::fs::read_to_string(example("examples/support-triage/session.jsonl")).unwrap();
    // A line that is not JSON, and a decision event that is not a record.
    text.push_str("not json\n{\"kind\":\"event\",\"run\":9,\"e\":{\"type\":\"decision\",\"step\":\"x\"}}\n");
    std::fs::write(&odd, text).unwrap();
    let logs = [
        example("examples/support-triage/session.jsonl"),
        example("examples/broken/session-edited.jsonl"),
        example("examples/coding-agent/session.jsonl"),
        odd,
    ];
    let mut once = Vec::new();
    let first = export(&logs, Format::Jsonl, &mut once, &ExportOptions::default(), &mut |_| {}).unwrap();
    let twice_options = ExportOptions { one_pass_bytes: 0, ..ExportOptions::default() };
    let mut twice = Vec::new();
    let second = export(&logs, Format::Jsonl, &mut twice, &twice_options, &mut |_| {}).unwrap();
    assert_eq!(String::from_utf8(once.clone()).unwrap(), String::from_utf8(twice).unwrap());
    assert_eq!(first, second);
    let rows: Vec<Value> = String::from_utf8(once).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let odd_rows: Vec<&Value> = rows.iter().filter(|r| r["log"].as_str().unwrap().ends_with("odd.jsonl")).collect();
    assert_eq!(odd_rows.len(), 4, "{odd_rows:?}");
    assert_eq!(odd_rows[3]["verdict"], "unverifiable", "{odd_rows:?}");
    assert_eq!(odd_rows[3]["line"], 9, "{odd_rows:?}");
    assert!(odd_rows.iter().all(|r| r["log_verdict"] == "failed"), "an unreadable line fails the log");
}
