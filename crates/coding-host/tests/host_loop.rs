//! The reference coding host end to end, without a language model: the seed's minimum
//! integration path, a read task, a write task, a destructive call denied with the files
//! untouched, a symlink out of the work directory refused, and the bundled README task.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::sync::Arc;

use decision_coding_host::generate::EVIDENCE_REPORT_LABEL;
use decision_coding_host::heuristic::HeuristicProvider;
use host_common::{Options, Rules, ScriptedHuman, TempDir, choose, level, noul, replay, run};
use serde_json::Value;

#[test]
fn minimum_integration_needs_tool_pick_tool_step_ok_is_done() {
    let dir = TempDir::new("minimum");
    let ws = dir.workspace(&[("a.txt", "alpha")]);
    // A fully deterministic provider: every answer is fixed by question id.
    let provider = Rules::new(|id, q, _, _| match id {
        "needs_tool" => Some(noul(0.9)),
        "tool" => Some(choose(q, "list_dir", 0.9)),
        "risk" => Some(level(q, 0)),
        "needs_auth" => Some(noul(0.1)),
        "ok" => Some(noul(0.9)),
        "done" => Some(noul(0.9)),
        "deliverable" => Some(noul(0.9)),
        "unsupported" => Some(noul(0.1)),
        _ => None,
    });
    let out = run(&dir, "list the files", &ws, Arc::new(provider), Options::default());
    assert_eq!(
        out.decisions(),
        [
            "needs_tool→use_tool",
            "pick_tool→call",
            "grade_risk→auto",
            "step_ok→continue",
            "is_done→finish",
            "can_deliver→deliver"
        ]
    );
    assert_eq!(
        out.path(),
        [
            "step:call",
            "grade_risk:ran",
            "step_ok:continue",
            "is_done:finish",
            "generate:drafted",
            "can_deliver:deliver"
        ]
    );
    let s = out.summary();
    assert_eq!((s.halt.as_str(), s.delivered, s.steps, s.model_calls), ("task_done", true, 1, 1));
    assert_eq!((s.decisions, s.requests), (6, 5), "needs_tool and pick_tool share one request");
    // Each transition carries the invocation's identity, and state versions only grow.
    let versions: Vec<u64> = out.of_type("transition").iter().map(|t| t["stateVersion"].as_u64().unwrap()).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert!(out.of_type("transition").iter().all(|t| t["step"] == 1 && t["visit"] == 1));
    let (mismatch, checked, intact) = replay(&out.log);
    assert_eq!((mismatch, checked, intact), (0, 6, true));
    // Merged records: the first two share a batch and a request digest.
    let d = out.of_type("decision");
    assert_eq!(d[0]["batchIds"], d[1]["batchIds"]);
    assert_eq!(d[0]["requestDigest"], d[1]["requestDigest"]);
    assert_ne!(d[0]["frame"]["digest"], d[1]["frame"]["digest"]);
    assert_eq!(d[0]["position"], "step-start");
}

#[test]
fn a_read_task_reads_the_file_it_names_and_delivers() {
    let dir = TempDir::new("read");
    let ws = dir.workspace(&[("a.txt", "alpha"), ("b.txt", "the secret word is banana"), ("c.txt", "gamma")]);
    let out = run(&dir, "What does b.txt say?", &ws, Arc::new(HeuristicProvider), Options::default());
    let s = out.summary();
    assert!(s.delivered, "{s:?}");
    let reads: Vec<&str> = out
        .of_type("tool:call")
        .iter()
        .filter(|c| c["tool"] == "read_file")
        .map(|c| c["input"].as_str().unwrap())
        .collect();
    assert_eq!(reads, ["b.txt"], "the named file is read, and only it");
    assert!(s.answer.starts_with(EVIDENCE_REPORT_LABEL));
    assert!(s.answer.contains("banana"));
    assert_eq!(replay(&out.log).0, 0);
}

#[test]
fn a_write_task_writes_inside_the_work_directory() {
    let dir = TempDir::new("write");
    let ws = dir.workspace(&[("a.txt", "alpha")]);
    let task = "Create hello.txt containing \"hello, world\"";
    let out = run(&dir, task, &ws, Arc::new(HeuristicProvider), Options { allow_write: true, ..Options::default() });
    let s = out.summary();
    assert!(s.delivered, "{s:?}");
    assert_eq!(std::fs::read_to_string(ws.join("hello.txt")).unwrap(), "hello, world");
    // write_file's baseline is 1: the gate audits it, and the audit record is on disk.
    assert_eq!(s.audits, 1);
    let audit = std::fs::read_to_string(&out.audit).unwrap();
    let record: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(record["tool"], "write_file");
    assert!(record["target"].as_str().unwrap().starts_with("hello.txt"));
    assert!(record["risk"].as_f64().unwrap() >= 1.0);
    // Without --allow-write the tool is never offered, and nothing is written.
    let dir2 = TempDir::new("write-off");
    let ws2 = dir2.workspace(&[("a.txt", "alpha")]);
    let out = run(&dir2, task, &ws2, Arc::new(HeuristicProvider), Options::default());
    assert!(!ws2.join("hello.txt").exists());
    assert!(out.of_type("decision").iter().all(|d| d["sentQuestions"]["tool"]["criteria"].get("write_file").is_none()));
}

#[test]
fn a_destructive_call_is_denied_and_the_files_are_untouched() {
    let dir = TempDir::new("delete");
    let ws = dir.workspace(&[("keep.txt", "precious"), ("other.txt", "also precious")]);
    let human = ScriptedHuman { approve: false, ..ScriptedHuman::default() };
    let asked = human.asked.clone();
    let options = Options { allow_delete: true, human: Box::new(human), ..Options::default() };
    let out = run(&dir, "Delete keep.txt", &ws, Arc::new(HeuristicProvider), options);
    let s = out.summary();
    assert_eq!(s.halt.split('+').next(), Some("denied"));
    assert_eq!(asked.lock().unwrap().as_slice(), ["delete_file(keep.txt)"]);
    assert!(out.of_type("tool:call").iter().all(|c| c["tool"] != "delete_file"), "the call never ran");
    assert_eq!(std::fs::read_to_string(ws.join("keep.txt")).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(ws.join("other.txt")).unwrap(), "also precious");
    let auth = out.of_type("authorize");
    assert_eq!(auth.len(), 1);
    assert_eq!(auth[0]["approved"], false);
    // The denied step is withdrawn from history; the run still writes an honest report, which
    // the delivery gate sends back once (the deletion did not happen) and never delivers.
    assert_eq!(s.model_calls, 2);
    assert!(!s.delivered);
    assert!(s.answer.contains("not authorised"));
    // Approved, the same call runs.
    let dir2 = TempDir::new("delete-ok");
    let ws2 = dir2.workspace(&[("keep.txt", "precious")]);
    let human = ScriptedHuman { approve: true, ..ScriptedHuman::default() };
    let options = Options { allow_delete: true, human: Box::new(human), ..Options::default() };
    let out = run(&dir2, "Delete keep.txt", &ws2, Arc::new(HeuristicProvider), options);
    assert!(out.summary().delivered, "{:?}", out.summary());
    assert!(!ws2.join("keep.txt").exists());
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_work_directory_is_refused() {
    let dir = TempDir::new("symlink");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "top secret").unwrap();
    let ws = dir.workspace(&[("a.txt", "alpha")]);
    std::os::unix::fs::symlink(&outside, ws.join("escape.txt")).unwrap();
    let out = run(&dir, "What does escape.txt say?", &ws, Arc::new(HeuristicProvider), Options::default());
    let results = out.of_type("tool:result");
    let read = results.iter().find(|r| r["tool"] == "read_file").expect("the read was attempted");
    let output = read["output"].as_str().unwrap();
    assert!(output.starts_with("error: path escapes the working directory"), "{output}");
    assert!(out.events.iter().all(|e| !e.to_string().contains("top secret")), "the secret never entered the run");
    let s = out.summary();
    assert_eq!(s.halt.split('+').next(), Some("step_failed"));
    // The report says why the loop ended, and a run whose step failed is never delivered.
    assert!(!s.delivered, "{s:?}");
    let why = s.halt_detail.as_deref().unwrap_or_default();
    assert!(why.contains("read_file(escape.txt) → error: path escapes the working directory"), "{why}");
}

/// A read-all task whose read fails part way: the files after it were never read, so the
/// report the host writes from the others is not delivered (it was, when the failed step's
/// halt was not among the undelivered ones).
#[cfg(unix)]
#[test]
fn a_read_all_task_that_stops_on_a_failed_read_is_not_delivered() {
    let dir = TempDir::new("read-all-fails");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "elsewhere").unwrap();
    let ws = dir.workspace(&[("a.txt", "alpha"), ("c.txt", "gamma")]);
    std::os::unix::fs::symlink(&outside, ws.join("b.txt")).unwrap();
    let out = run(&dir, "Summarize each file", &ws, Arc::new(HeuristicProvider), Options::default());
    let s = out.summary();
    assert_eq!(s.halt, "step_failed+revise", "the delivery gate refused the report too: {s:?}");
    assert!(!s.delivered, "{s:?}");
    assert!(s.halt_detail.as_deref().unwrap_or_default().contains("read_file(b.txt)"), "{s:?}");
    // The same task over readable files is delivered.
    let dir = TempDir::new("read-all");
    let ws = dir.workspace(&[("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")]);
    let s = run(&dir, "Summarize each file", &ws, Arc::new(HeuristicProvider), Options::default()).summary().clone();
    assert_eq!((s.halt.as_str(), s.delivered), ("task_done", true), "{s:?}");
}

/// A tree whose listing is longer than a page: the host lists every page before it says it
/// read every file, and the report is delivered only once each file of each page was read.
#[test]
fn a_read_all_task_over_a_listing_of_several_pages_reads_every_file() {
    let dir = TempDir::new("read-all-pages");
    // 150 names of about 60 characters: 9,000 characters, two pages.
    let names: Vec<String> =
        (0..150).map(|i| format!("notes/a-rather-long-directory-name/meeting-{i:03}-summary-of-it.txt")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "minutes")).collect();
    let ws = dir.workspace(&files);
    let options = Options { max_steps: 200, ..Options::default() };
    let out = run(&dir, "Summarize each file", &ws, Arc::new(HeuristicProvider), options);
    let s = out.summary().clone();
    // The heuristic ends with `done` once no file is left to read.
    assert!(s.delivered && ["task_done", "agent_done"].contains(&s.halt.as_str()), "{}: {:?}", s.halt, s.halt_detail);
    let listings: Vec<String> = out
        .of_type("tool:call")
        .iter()
        .filter(|c| c["tool"] == "list_files")
        .map(|c| c["input"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(listings.len(), 2, "{listings:?}");
    assert_eq!(listings[0], ".");
    assert!(listings[1].starts_with(".:") && listings[1].ends_with('-'), "{listings:?}");
    let read: std::collections::HashSet<String> = out
        .of_type("tool:call")
        .iter()
        .filter(|c| c["tool"] == "read_file")
        .map(|c| c["input"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(names.iter().all(|n| read.contains(n)), "{} of {} read", read.len(), names.len());
    let (mismatch, _, intact) = replay(&out.log);
    assert_eq!((mismatch, intact), (0, true));
}

#[test]
fn the_bundled_readme_task_is_delivered_offline() {
    let dir = TempDir::new("readme");
    let ws = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
    let task = "Which file defines the function `apply_discount`, and what does it return?";
    let out = run(&dir, task, std::path::Path::new(ws), Arc::new(HeuristicProvider), Options::default());
    let s = out.summary();
    assert!(s.delivered, "{s:?}");
    assert_eq!(s.halt, "task_done");
    assert!(s.answer.contains("pricing.py:6:     return price * (100 - percent) / 100"), "{}", s.answer);
    let (mismatch, _, intact) = replay(&out.log);
    assert_eq!((mismatch, intact), (0, true));
}

#[test]
fn frames_that_disagree_on_a_shared_key_are_asked_in_separate_requests() {
    // A contract where needs_tool cuts files_known at 15 and pick_tool at 20 (as the reference
    // file does): with 18 files the merged state would hold two different lists under one key.
    // The reference throws; this host splits the request.
    let contract = decision_coding_host::CODING_CONTRACT.replacen(
        "  + files_known   20     filesMaybe     —— \"both files\"",
        "  + files_known   15     filesMaybe     —— \"both files\"",
        1,
    );
    assert_ne!(contract, decision_coding_host::CODING_CONTRACT, "the anchor must match");
    let dir = TempDir::new("split");
    let names: Vec<String> = (0..18).map(|i| format!("f{i:02}.txt")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x")).collect();
    let ws = dir.workspace(&files);
    let out = run(
        &dir,
        "Summarize each file",
        &ws,
        Arc::new(HeuristicProvider),
        Options { contract: Some(contract), max_steps: 4, ..Options::default() },
    );
    let s = out.summary();
    assert_eq!(s.halt.split('+').next(), Some("max_steps"), "{s:?}");
    let splits = out.of_type("request:split");
    assert!(!splits.is_empty());
    assert_eq!(splits[0]["key"], "files_known");
    // Split decisions are solo records: they verify fully.
    let solo = out
        .of_type("decision")
        .iter()
        .filter(|d| d["block"] == "needs_tool" && d["batchIds"].as_array().unwrap().len() == 1)
        .count();
    assert!(solo >= 1);
    assert_eq!(replay(&out.log).0, 0);
}
