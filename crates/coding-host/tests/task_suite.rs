//! The coding host's task suite (`tests/tasks/suite.json`): real questions and write tasks,
//! phrased as users write them, over three shipped workspaces (the flat
//! `examples/workspace`, the nested Rust tree `examples/tasks/nested`, and the package with
//! long files `examples/tasks/textkit`), run with the offline `heuristic` provider and the
//! deterministic evidence report.
//!
//! A task passes when the run delivers exactly when it must, its answer carries every piece of
//! evidence listed (and none of the texts it must lack), and the files are as listed
//! afterwards. At least 90% must pass. Whatever a task's verdict, every run must leave a log
//! that replays with no mismatch and an intact chain, and no file of any workspace may hold
//! the evidence report or prompt text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decision_coding_host::generate::{EVIDENCE_REPORT_LABEL, WRITE_INPUT_PROMPT};
use decision_coding_host::heuristic::HeuristicProvider;
use host_common::{Options, TempDir, replay, run};
use serde_json::Value;

const SUITE: &str = include_str!("tasks/suite.json");
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// The pass rate the heuristic must reach.
const REQUIRED: f64 = 0.9;

/// Copy the directory `from` into `to`, files and subdirectories.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file under `dir`, with its bytes.
fn all_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(all_files(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// Why the task failed, or `None` when it passed.
fn verdict(task: &Value, delivered: bool, answer: &str, ws: &Path) -> Option<String> {
    let mut problems = Vec::new();
    if task["delivered"].as_bool() != Some(delivered) {
        problems.push(format!("delivered: {delivered}, expected {}", task["delivered"]));
    }
    for needed in task["answer_contains"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !answer.contains(needed) {
            problems.push(format!("the answer lacks {needed:?}"));
        }
    }
    for banned in task["answer_lacks"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if answer.contains(banned) {
            problems.push(format!("the answer holds {banned:?}"));
        }
    }
    for (name, expected) in task["files_after"].as_object().into_iter().flatten() {
        let actual = std::fs::read_to_string(ws.join(name)).ok();
        if actual.as_deref() != expected.as_str() {
            problems.push(format!("{name} is {actual:?}, expected {expected}"));
        }
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

#[test]
fn the_heuristic_answers_the_task_suite() {
    let suite: Value = serde_json::from_str(SUITE).unwrap();
    let tasks = suite["tasks"].as_array().unwrap();
    let workspaces: std::collections::BTreeSet<&str> = tasks.iter().filter_map(|t| t["workspace"].as_str()).collect();
    assert!(tasks.len() >= 30 && workspaces.len() >= 3, "{} tasks over {} workspaces", tasks.len(), workspaces.len());
    let mut failed = Vec::new();
    for (index, task) in tasks.iter().enumerate() {
        let text = task["task"].as_str().unwrap();
        let dir = TempDir::new(&format!("suite-{index}"));
        let ws = dir.path().join("ws");
        copy_tree(&Path::new(REPO).join(task["workspace"].as_str().unwrap()), &ws);
        for (name, body) in task["setup"].as_object().into_iter().flatten() {
            let path = ws.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body.as_str().unwrap()).unwrap();
        }
        let options = Options {
            allow_write: task["allow_write"] == true,
            allow_delete: task["allow_delete"] == true,
            ..Options::default()
        };
        let out = run(&dir, text, &ws, Arc::new(HeuristicProvider), options);
        let summary = out.summary();
        // Every run, passed or not, leaves a log that verifies.
        let (mismatch, verified, intact) = replay(&out.log);
        assert_eq!((mismatch, intact), (0, true), "task {index} ({text}): the log does not replay");
        assert!(verified > 0, "task {index} ({text}): nothing verified");
        // No run writes its report or prompt text into a file.
        for (path, bytes) in all_files(&ws) {
            let body = String::from_utf8_lossy(&bytes);
            for marker in [EVIDENCE_REPORT_LABEL, WRITE_INPUT_PROMPT, "Tool results, in order:"] {
                assert!(!body.contains(marker), "task {index} ({text}) wrote {marker:?} into {}", path.display());
            }
        }
        if let Some(why) = verdict(task, summary.delivered, &summary.answer, &ws) {
            failed.push(format!("task {index} ({text}): {why}\n--- answer ---\n{}\n", summary.answer));
        }
    }
    let passed = tasks.len() - failed.len();
    let rate = passed as f64 / tasks.len() as f64;
    eprintln!("task suite: {passed} of {} passed ({:.0}%)", tasks.len(), rate * 100.0);
    for f in &failed {
        eprintln!("{f}");
    }
    assert!(
        rate >= REQUIRED,
        "{passed} of {} tasks passed, {:.0}% < 90%:\n{}",
        tasks.len(),
        rate * 100.0,
        failed.join("\n")
    );
}
