//! The human gate in the library: `QueueApprovals` halts a run awaiting approval with the call
//! recorded, an answer appended by another writer is bound to its fingerprint, and
//! `run_task_approved` resumes to the end; `verify_approvals` checks the finished log.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use decision_coding_host::approvals::{
    AWAITING_APPROVAL, ApprovalError, QueueApprovals, RecordedAnswers, approval_to_resume, read_approvals,
    record_answer_with, verify_approvals,
};
use decision_coding_host::generate::EvidenceReport;
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::Human;
use decision_coding_host::resume::resume_point;
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task, run_task_approved};
use decision_runtime::log::{FsyncPolicy, LogHeader, SessionLog};

fn config(ws: &Path, log: &Path) -> RunConfig {
    RunConfig { allow_delete: true, ..RunConfig::new("Delete keep.txt", ws, log.with_extension("audit.jsonl")) }
}

fn with(human: Box<dyn Human>, sink: SessionLog) -> Collaborators {
    Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator: Box::new(EvidenceReport),
        human,
        sink: Box::new(sink.with_group_commit()),
    }
}

fn first_run(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, RunSummary) {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("keep.txt"), "precious").unwrap();
    let log = dir.join("run.jsonl");
    let header = LogHeader { id: "approvals".into(), created_at_ms: 0, cwd: None };
    let sink = SessionLog::create(&log, &header, FsyncPolicy::Never).unwrap();
    let summary =
        run_task(CODING_CONTRACT.as_bytes(), &config(&ws, &log), with(Box::new(QueueApprovals), sink), None).unwrap();
    (ws, log, summary)
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("decision-host-approvals-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn queued_answered_and_resumed_through_the_api() {
    let dir = scratch("api");
    let (ws, log, summary) = first_run(&dir);
    assert_eq!(summary.halt, AWAITING_APPROVAL);
    assert!(!summary.delivered);
    assert!(ws.join("keep.txt").exists());
    let approvals = read_approvals(&log).unwrap();
    assert_eq!(approvals.len(), 1);
    let id = approvals[0].id.clone();
    assert!(matches!(approval_to_resume(&log), Err(ApprovalError::StillPending { .. })));

    assert_eq!(record_answer_with(&log, &id, None, None, None).unwrap(), "approved");

    let approval = approval_to_resume(&log).unwrap().unwrap();
    let point = resume_point(&log).unwrap();
    let mut sink = SessionLog::open(&log, FsyncPolicy::Never).unwrap();
    sink.set_run(point.run + 1);
    let human = Box::new(RecordedAnswers::new(approval.clone()));
    let summary =
        run_task_approved(CODING_CONTRACT.as_bytes(), &config(&ws, &log), with(human, sink), &point.state, &approval)
            .unwrap();
    assert!(summary.delivered, "{summary:?}");
    assert!(!ws.join("keep.txt").exists());
    let audit = verify_approvals(&log).unwrap();
    assert_eq!((audit.approvals, audit.answered, audit.used), (1, 1, 1));
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
    // Used once: nothing is left to resume from.
    assert!(approval_to_resume(&log).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
