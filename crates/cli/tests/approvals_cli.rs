//! Approvals as data: a gated call with nobody at a terminal halts the run awaiting approval;
//! `decision approve` (approve, deny, modified input) answers it from another process,
//! `decision resume` continues to the end, and replay verifies the approvals. Refused: resuming
//! an unanswered approval, answering twice, an input that is not a JSON string or not valid
//! for the tool, and a log whose pending call no longer matches its fingerprint.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{TempDir, decision};
use serde_json::Value;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

struct Run {
    dir: TempDir,
    log: PathBuf,
}

impl Run {
    /// "Delete keep.txt" with deletion allowed and no terminal: the gate asks a person.
    fn halted(tag: &str) -> Run {
        let dir = TempDir::new(tag);
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("keep.txt"), "precious").unwrap();
        std::fs::write(ws.join("old.txt"), "stale").unwrap();
        let log = dir.path().join("run.jsonl");
        let out = decision(&[
            "run",
            "--task",
            "Delete keep.txt",
            "--workdir",
            ws.to_str().unwrap(),
            "--allow-delete",
            "--log",
            log.to_str().unwrap(),
        ]);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
        assert!(stdout.contains("halt: awaiting_approval"), "{stdout}");
        assert!(stdout.contains("decision approve"), "{stdout}");
        Run { dir, log }
    }

    fn log(&self) -> &str {
        self.log.to_str().unwrap()
    }

    fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("ws").join(name)).ok()
    }

    fn pending(&self) -> Vec<Value> {
        let out = decision(&["approvals", self.log(), "--format", "json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap().as_array().unwrap().clone()
    }

    fn resume(&self) -> Output {
        let ws = self.dir.path().join("ws");
        decision(&["resume", self.log(), "--workdir", ws.to_str().unwrap(), "--allow-delete"])
    }

    fn replays(&self) -> String {
        let out = decision(&["replay", self.log()]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        stdout
    }
}

fn events(log: &Path, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["e"]["type"] == kind)
        .map(|v| v["e"].clone())
        .collect()
}

#[test]
fn a_pending_approval_is_recorded_with_its_call_and_nothing_runs() {
    let run = Run::halted("approvals-pending");
    let pending = run.pending();
    assert_eq!(pending.len(), 1);
    let approval = &pending[0];
    assert_eq!((approval["tool"].as_str(), approval["input"].as_str()), (Some("delete_file"), Some("keep.txt")));
    assert_eq!(approval["rule"], "score:risk >= 2 → ask_human");
    assert_eq!(approval["fingerprint"].as_str().unwrap().len(), 64);
    assert_eq!(approval["requestDigest"].as_str().unwrap().len(), 16);
    assert_eq!(run.file("keep.txt").as_deref(), Some("precious"));
    assert!(events(&run.log, "tool:call").iter().all(|c| c["tool"] != "delete_file"));
    assert_eq!(events(&run.log, "run:end")[0]["halt"], "awaiting_approval");
    // Unanswered: resume is refused.
    let out = run.resume();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("still pending"), "{}", text(&out.stderr));
    run.replays();
}

#[test]
fn an_approved_call_runs_on_resume_once_and_replay_verifies_it() {
    let run = Run::halted("approvals-approve");
    let id = run.pending()[0]["id"].as_str().unwrap().to_string();
    let out = decision(&["approve", run.log(), &id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(run.pending().is_empty());
    // The same approval cannot be answered again.
    let again = decision(&["approve", run.log(), &id, "--deny"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already answered"));
    let out = run.resume();
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(run.file("keep.txt"), None);
    let used = events(&run.log, "approval:used");
    assert_eq!(used.len(), 1);
    assert_eq!(used[0]["id"], id.as_str());
    let replay = run.replays();
    assert!(replay.contains("✓ approvals: 1 requested · 1 answered · 1 used"), "{replay}");
    // The JSON document carries the same check on the log's entry.
    let out = decision(&["replay", "--format", "json", run.log()]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let approvals = &doc["files"][0]["approvals"];
    assert_eq!((approvals["requested"].as_u64(), approvals["used"].as_u64()), (Some(1), Some(1)), "{doc}");
    assert_eq!(approvals["problems"], serde_json::json!([]));
    // An approval used a second time (its use copied) is a problem there too, and fails replay.
    let original = std::fs::read_to_string(&run.log).unwrap();
    let used = original.lines().find(|l| l.contains("\"approval:used\"")).unwrap().to_owned();
    std::fs::write(&run.log, format!("{original}{used}\n")).unwrap();
    let out = decision(&["replay", "--format", "json", run.log()]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = doc["files"][0]["approvals"]["problems"].as_array().unwrap().clone();
    assert!(problems.iter().any(|p| p.as_str().unwrap().contains("used twice")), "{problems:?}");
}

#[test]
fn a_denied_call_never_runs() {
    let run = Run::halted("approvals-deny");
    let id = run.pending()[0]["id"].as_str().unwrap().to_string();
    let out = decision(&["approve", run.log(), &id, "--deny", "--reason", "keep it"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run.resume();
    assert!(text(&out.stdout).contains("halt: denied"), "{}", text(&out.stdout));
    assert_eq!(run.file("keep.txt").as_deref(), Some("precious"));
    let authorize = events(&run.log, "authorize");
    assert_eq!(authorize.last().unwrap()["denial"], "keep it");
    assert!(run.replays().contains("✓ approvals"));
}

#[test]
fn a_modified_input_is_validated_re_gated_and_runs_instead() {
    let run = Run::halted("approvals-modify");
    let id = run.pending()[0]["id"].as_str().unwrap().to_string();
    let not_json = decision(&["approve", run.log(), &id, "--input", "old.txt"]);
    assert_eq!(not_json.status.code(), Some(2));
    assert!(text(&not_json.stderr).contains("JSON string"));
    let bad_path = decision(&["approve", run.log(), &id, "--input", "\"a\\nb\""]);
    assert_eq!(bad_path.status.code(), Some(2));
    assert!(text(&bad_path.stderr).contains("refused"), "{}", text(&bad_path.stderr));
    let out = decision(&["approve", run.log(), &id, "--input", "\"old.txt\""]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run.resume();
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    // The gate was asked again about the modified call, and the approval answered that call.
    let decisions = events(&run.log, "decision");
    let regated = decisions.iter().filter(|d| d["node"] == "grade_risk").count();
    assert_eq!(regated, 3, "list_dir, the original delete and the modified one");
    assert_eq!(run.file("old.txt"), None);
    assert_eq!(run.file("keep.txt").as_deref(), Some("precious"));
    assert!(run.replays().contains("✓ approvals"));
}

#[test]
fn a_log_whose_pending_call_was_changed_is_refused() {
    let run = Run::halted("approvals-tampered");
    let id = run.pending()[0]["id"].as_str().unwrap().to_string();
    // Someone changes the recorded call: the approval would now answer a different call.
    let original = std::fs::read_to_string(&run.log).unwrap();
    let changed = original.replace("\"input\":\"keep.txt\",\"fingerprint\"", "\"input\":\"old.txt\",\"fingerprint\"");
    assert_ne!(changed, original);
    std::fs::write(&run.log, changed).unwrap();
    // The change breaks the chain: the log is refused before any approval is looked at.
    let out = decision(&["approve", run.log(), &id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`prev` is not the SHA-256"), "{}", text(&out.stderr));
    std::fs::write(&run.log, original).unwrap();
    let unknown = decision(&["approve", run.log(), "ap-9-9-000000000000"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("no approval"));
}

#[test]
fn run_approve_and_resume_each_print_one_json_document_with_format_json() {
    let dir = TempDir::new("approvals-json");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("keep.txt"), "precious").unwrap();
    let log = dir.path().join("run.jsonl");
    let (log, ws) = (log.to_str().unwrap(), ws.to_str().unwrap());
    let json = |out: &Output| -> Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
    };
    let common = ["--workdir", ws, "--allow-delete", "--format", "json", "--quiet"];

    let mut args = vec!["run", "--task", "Delete keep.txt", "--log", log];
    args.extend(common);
    let out = decision(&args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let halted = json(&out);
    assert_eq!((halted["halt"].as_str(), halted["delivered"].as_bool()), (Some("awaiting_approval"), Some(false)));
    let awaiting = &halted["awaitingApproval"];
    assert_eq!(awaiting["tool"], "delete_file");
    let id = awaiting["id"].as_str().unwrap().to_owned();
    assert_eq!(awaiting["approve"], format!("decision approve {log} {id}"));
    assert_eq!(halted["log"], log);
    assert!(halted["head"].as_str().unwrap().contains(':'));

    let out = decision(&["approve", log, &id, "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let answered = json(&out);
    assert_eq!(answered["verdict"], "approved");
    assert_eq!((answered["handedToGateway"].as_bool(), answered["inbox"].is_null()), (Some(false), true));
    assert_eq!(answered["next"], format!("decision resume {log}"));

    let mut args = vec!["resume", log];
    args.extend(common);
    let out = decision(&args);
    let resumed = json(&out);
    assert!(resumed["awaitingApproval"].is_null(), "{resumed}");
    assert_ne!(resumed["halt"], "awaiting_approval");
    assert!(resumed["steps"].as_u64().unwrap() >= 1 && resumed["timeMs"]["wall"].is_u64(), "{resumed}");
    assert!(std::fs::read_to_string(format!("{ws}/keep.txt")).is_err(), "the approved delete ran");
}
