//! A decision-backend outage at each node fails closed exactly as runtime.md §6.3 says, and
//! the run still writes an honest report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::sync::Arc;

use decision_coding_host::generate::EVIDENCE_REPORT_LABEL;
use host_common::{Options, Outcome, Rules, TempDir, replay, run};

fn outage(question: &str, task: &str, options: Options) -> (TempDir, Outcome) {
    let dir = TempDir::new(&format!("outage-{question}"));
    let ws = dir.workspace(&[("a.txt", "alpha"), ("b.txt", "beta")]);
    let out = run(&dir, task, &ws, Arc::new(Rules::outage_at(question)), options);
    assert!(out.result.is_ok(), "an outage never stops the run: {:?}", out.result.as_ref().err());
    let s = out.summary();
    assert!(s.answer.starts_with(EVIDENCE_REPORT_LABEL), "the run still generates");
    assert_eq!(replay(&out.log).0, 0, "outage records verify too");
    let failed: Vec<_> = out
        .of_type("decision")
        .into_iter()
        .filter(|d| d["reason"].as_str().unwrap().contains("unavailable"))
        .cloned()
        .collect();
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|d| d["action"] == "escalate" && d["escalate"] == true && d["degraded"] == true));
    (dir, out)
}

#[test]
fn needs_tool_and_pick_tool_both_escalate_to_tool_unclear() {
    let (_dir, out) = outage("needs_tool", "What does a.txt say?", Options::default());
    assert_eq!(out.decisions()[..2], ["needs_tool→escalate", "pick_tool→escalate"]);
    assert_eq!(out.summary().halt.split('+').next(), Some("tool_unclear"));
    assert!(out.of_type("tool:call").is_empty());
    // Nothing was read: the report is written, never delivered, and the fallback is the why.
    let s = out.summary();
    assert!(!s.delivered, "{s:?}");
    assert!(s.halt_detail.as_deref().is_some_and(|why| why.contains("fell back to `escalate`")), "{s:?}");
}

#[test]
fn pick_input_escalates_to_input_unclear() {
    let (_dir, out) = outage("file", "What does a.txt say?", Options::default());
    assert!(out.decisions().contains(&"pick_input→escalate".to_string()));
    assert_eq!(out.summary().halt.split('+').next(), Some("input_unclear"));
    assert!(out.of_type("tool:call").iter().all(|c| c["tool"] != "read_file"));
}

#[test]
fn grade_risk_denies() {
    let (_dir, out) = outage("risk", "What does a.txt say?", Options::default());
    assert_eq!(out.decisions()[2], "grade_risk→escalate");
    assert_eq!(out.summary().halt.split('+').next(), Some("denied"));
    assert!(out.of_type("tool:call").is_empty(), "nothing ran");
    assert_eq!(out.of_type("authorize")[0]["approved"], false);
}

#[test]
fn step_ok_fails_the_step() {
    let (_dir, out) = outage("ok", "What does a.txt say?", Options::default());
    assert_eq!(out.summary().halt.split('+').next(), Some("step_failed"));
    assert_eq!(out.of_type("tool:call").len(), 1, "the tool ran once, then the loop ended");
    assert!(!out.summary().delivered, "a failed step ends the loop before the task is done");
}

#[test]
fn is_done_lets_the_loop_continue() {
    let (_dir, out) = outage("done", "What does a.txt say?", Options { max_steps: 3, ..Options::default() });
    let is_done: Vec<_> = out.decisions().into_iter().filter(|d| d.starts_with("is_done")).collect();
    assert!(is_done.len() >= 2, "the loop went on after the first outage: {is_done:?}");
    assert!(is_done.iter().all(|d| d == "is_done→escalate"));
    assert_ne!(out.summary().halt.split('+').next(), Some("task_done"));
}

#[test]
fn can_deliver_appends_escalate() {
    let (_dir, out) = outage("deliverable", "What does a.txt say?", Options::default());
    let s = out.summary();
    assert!(s.halt.ends_with("+escalate"), "{}", s.halt);
    assert!(!s.delivered);
    assert_eq!(s.model_calls, 1, "escalate ends the run without regenerating");
}
