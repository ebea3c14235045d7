//! The coding host's wall-clock budget: checked at each step boundary and before each tool
//! call, it halts the loop with `time_budget` (no tool call starts once it is spent), the answer
//! is still written and gated, and the log verifies. Without a budget nothing changes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::sync::Arc;
use std::time::Duration;

use decision_coding_host::generate::EvidenceReport;
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::{DenyAll, Human};
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task};
use decision_runtime::graph::{EventSink, MemorySink, Tee};
use decision_runtime::log::{ChainStatus, FsyncPolicy, LogHeader, ReplayOptions, SessionLog, replay_reader};
use host_common::TempDir;
use serde_json::Value;

/// A task the heuristic works on for several steps: list, then read each file.
const TASK: &str = "Summarize each file";

struct Budgeted {
    summary: RunSummary,
    events: Vec<Value>,
    log: std::path::PathBuf,
    _dir: TempDir,
}

impl Budgeted {
    fn of_type(&self, t: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == t).collect()
    }

    /// `node:outcome` for every transition, in order.
    fn path(&self) -> Vec<String> {
        self.of_type("transition").iter().map(|e| format!("{}:{}", e["node"], e["outcome"]).replace('"', "")).collect()
    }

    /// `block→action` of every decision in `step`.
    fn decisions_in(&self, step: u64) -> Vec<String> {
        self.of_type("decision")
            .iter()
            .filter(|e| e["step"] == step)
            .map(|e| format!("{}→{}", e["block"], e["action"]).replace('"', ""))
            .collect()
    }
}

fn run_with(tag: &str, max_steps: u64, time_budget: Option<Duration>) -> Budgeted {
    run_task_with(tag, TASK, max_steps, time_budget, false, Box::new(DenyAll))
}

fn run_task_with(
    tag: &str,
    task: &str,
    max_steps: u64,
    time_budget: Option<Duration>,
    allow_delete: bool,
    human: Box<dyn Human>,
) -> Budgeted {
    let dir = TempDir::new(tag);
    let ws = dir.workspace(&[("a.txt", "alpha"), ("b.txt", "beta"), ("c.txt", "gamma")]);
    let log = dir.path().join("session.jsonl");
    let header = LogHeader { id: "budget".into(), created_at_ms: 0, cwd: None };
    let memory = MemorySink::new();
    let sinks: Vec<Box<dyn EventSink>> =
        vec![Box::new(SessionLog::create(&log, &header, FsyncPolicy::Never).unwrap()), Box::new(memory.clone())];
    let config = RunConfig {
        max_steps,
        time_budget,
        allow_delete,
        contract_label: "test".into(),
        ..RunConfig::new(task, ws, dir.path().join("audit.jsonl"))
    };
    let with = Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator: Box::new(EvidenceReport),
        human,
        sink: Box::new(Tee::new(sinks)),
    };
    let summary = run_task(CODING_CONTRACT.as_bytes(), &config, with, None).expect("the run completes");
    Budgeted { summary, events: memory.events(), log, _dir: dir }
}

/// The log replays with no mismatch and an intact chain.
fn assert_log_verifies(log: &std::path::Path) {
    let file = std::fs::File::open(log).unwrap();
    let report = replay_reader(file, &ReplayOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(report.mismatch, 0);
    assert!(report.verified + report.partial > 0, "the decisions were checked");
    assert!(matches!(report.chain_status(), ChainStatus::Intact));
}

#[test]
fn a_spent_budget_starts_no_tool_call_and_still_reports() {
    let out = run_with("spent", 12, Some(Duration::from_nanos(1)));
    let s = &out.summary;
    assert!(s.halt.starts_with("time_budget"), "{s:?}");
    assert_eq!(s.steps, 1);
    // The step that had begun is decided to its gate; the call it chose does not start.
    assert_eq!(out.decisions_in(1)[..3], ["needs_tool→use_tool", "pick_tool→call", "grade_risk→auto"]);
    assert!(out.of_type("tool:call").is_empty(), "no tool ran");
    let path = out.path();
    let halted = path.iter().position(|p| p == "grade_risk:time_budget").expect("halted before the call");
    assert_eq!(path[halted + 1], "generate:drafted");
    // Like max_steps: the answer is still generated, says why the loop ended, and is gated.
    assert!(s.answer.contains("the time budget was spent (time_budget)"), "{}", s.answer);
    assert!(s.answer.contains("No tool was called"), "{}", s.answer);
    assert!(!s.delivered, "{s:?}");
    let start = out.of_type("run:start");
    assert_eq!(start[0]["timeBudgetSeconds"], 1e-9);
    let end = out.of_type("run:end");
    assert!(end[0]["halt"].as_str().unwrap().starts_with("time_budget"));
    assert_eq!(end[0]["steps"], 1);
    assert_log_verifies(&out.log);
}

/// A person who takes longer than the budget to approve.
struct SlowApproval(Duration);

impl Human for SlowApproval {
    fn authorize(&mut self, _tool: &str, _target: &str, _reason: &str) -> bool {
        std::thread::sleep(self.0);
        true
    }
}

#[test]
fn a_call_approved_after_the_budget_ran_out_does_not_start() {
    let budget = Duration::from_millis(400);
    let human = Box::new(SlowApproval(Duration::from_millis(600)));
    let out = run_task_with("slow-approval", "Delete a.txt", 12, Some(budget), true, human);
    assert!(out.summary.halt.starts_with("time_budget"), "{:?}", out.summary);
    assert_eq!(out.of_type("authorize")[0]["approved"], true, "the person approved");
    assert!(out.of_type("tool:call").iter().all(|c| c["tool"] != "delete_file"), "but the call did not start");
    assert!(out._dir.path().join("ws/a.txt").exists());
    assert!(out.path().contains(&"grade_risk:time_budget".to_owned()), "{:?}", out.path());
    assert_log_verifies(&out.log);
}

#[test]
fn without_a_budget_or_with_a_generous_one_the_run_is_unchanged() {
    let free = run_with("free", 12, None);
    assert_eq!(free.summary.halt, "task_done");
    assert!(free.summary.steps > 1, "{:?}", free.summary);
    assert!(free.of_type("run:start")[0].get("timeBudgetSeconds").is_none(), "nothing new in the log");
    assert!(!free.path().iter().any(|p| p.ends_with(":time_budget")));
    assert_log_verifies(&free.log);
    for (tag, budget) in [("hour", Duration::from_secs(3600)), ("forever", Duration::MAX)] {
        let generous = run_with(tag, 12, Some(budget));
        assert_eq!(generous.summary.halt, free.summary.halt, "{tag}");
        assert_eq!(generous.summary.steps, free.summary.steps, "{tag}");
        assert_eq!(generous.summary.answer, free.summary.answer, "{tag}");
        assert_eq!(generous.path(), free.path(), "{tag}");
    }
}

#[test]
fn a_spent_budget_stops_the_run_before_the_step_limit_can() {
    // The budget is checked before the step's tool call, the step limit only at its end.
    let out = run_with("both", 1, Some(Duration::from_nanos(1)));
    assert!(out.summary.halt.starts_with("time_budget"), "{:?}", out.summary);
    assert!(!out.path().contains(&"is_done:max_steps".to_owned()), "{:?}", out.path());
    // Without a budget the same run stops at the step limit.
    let out = run_with("steps-only", 1, None);
    // The delivery gate's check also refused the report (not every listed file was read).
    assert_eq!(out.summary.halt, "max_steps+revise");
    assert!(out.path().contains(&"is_done:max_steps".to_owned()), "{:?}", out.path());
    // Neither ceiling lets a run deliver: the files were never all read.
    assert!(!out.summary.delivered, "{:?}", out.summary);
    let why = out.summary.halt_detail.as_deref().unwrap_or_default();
    assert_eq!(
        why,
        "the step limit was reached before the task was done; the delivery gate answered `revise`, not `deliver`"
    );
}
