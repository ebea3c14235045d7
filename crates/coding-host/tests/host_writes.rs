//! The write rules: no run writes the evidence report or prompt text into a file, whatever
//! the generator returns; without a generator only content the task gives word for word is
//! written; an existing file is replaced only when the task says so; a run whose write did not
//! happen is never `delivered`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::sync::Arc;
use std::time::Duration;

use decision_coding_host::generate::{
    EVIDENCE_REPORT_LABEL, EvidenceReport, GenerateError, GenerateRequest, Generated, Generator, WRITE_INPUT_PROMPT,
};
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::DenyAll;
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task};
use decision_runtime::graph::{EventSink, MemorySink};
use host_common::TempDir;

/// What a test generator makes of a request.
type Write = fn(&GenerateRequest<'_>) -> String;

/// A generator that writes whatever its function makes of the request.
struct Writes(Write);

impl Generator for Writes {
    fn name(&self) -> &str {
        "test-writer"
    }

    fn generate(&self, r: &GenerateRequest<'_>) -> Result<Generated, GenerateError> {
        Ok(Generated { text: (self.0)(r), latency: Duration::ZERO, input_tokens: None, output_tokens: None })
    }
}

fn run(dir: &TempDir, task: &str, files: &[(&str, &str)], generator: Box<dyn Generator>) -> RunSummary {
    let ws = dir.workspace(files);
    let config = RunConfig { allow_write: true, ..RunConfig::new(task, &ws, dir.path().join("audit.jsonl")) };
    let sink: Box<dyn EventSink> = Box::new(MemorySink::new());
    let with = Collaborators { provider: Arc::new(HeuristicProvider), generator, human: Box::new(DenyAll), sink };
    run_task(CODING_CONTRACT.as_bytes(), &config, with, None).unwrap()
}

fn no_file_holds_run_text(dir: &TempDir) {
    for entry in std::fs::read_dir(dir.path().join("ws")).unwrap() {
        let body = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        for marker in [EVIDENCE_REPORT_LABEL, WRITE_INPUT_PROMPT, "Tool results, in order:", "You have already decided"]
        {
            assert!(!body.contains(marker), "a file holds {marker:?}: {body}");
        }
    }
}

#[test]
fn a_generator_that_echoes_its_prompt_or_the_report_writes_nothing() {
    let echoes: [(&str, Write); 3] = [
        ("the prompt", |r| r.task.to_owned()),
        ("the instructions", |r| r.instructions.to_owned()),
        ("the report", |r| EvidenceReport.generate(r).unwrap().text),
    ];
    for (what, echo) in echoes {
        let dir = TempDir::new("writes-echo");
        let s = run(
            &dir,
            "Create summary.md with a summary of the project",
            &[("a.py", "x = 1\n")],
            Box::new(Writes(echo)),
        );
        assert!(!dir.path().join("ws/summary.md").exists(), "{what} was written");
        assert!(!s.delivered, "{what}: {s:?}");
        assert_eq!(s.halt.split('+').next(), Some("write_refused"), "{what}: {s:?}");
        assert!(s.halt_detail.as_deref().unwrap_or_default().contains("never written into a file"), "{s:?}");
        no_file_holds_run_text(&dir);
    }
    // Content a generator really wrote for the file is written.
    let dir = TempDir::new("writes-real");
    let s = run(
        &dir,
        "Create summary.md with a summary of the project",
        &[("a.py", "x = 1\n")],
        Box::new(Writes(|_| "One module, a.py.\n".into())),
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("ws/summary.md")).unwrap(), "One module, a.py.\n");
    assert!(s.delivered || s.halt.contains('+'), "{s:?}");
}

#[test]
fn without_a_generator_only_quoted_content_is_written_and_nothing_is_replaced() {
    let dir = TempDir::new("writes-none");
    let s =
        run(&dir, "Create summary.md with a summary of the project", &[("a.py", "x = 1\n")], Box::new(EvidenceReport));
    assert!(!dir.path().join("ws/summary.md").exists());
    assert!(!s.delivered);
    assert!(s.answer.contains("no generator is configured to write it (--generator-url)"), "{}", s.answer);
    no_file_holds_run_text(&dir);

    let dir = TempDir::new("writes-quoted");
    let s = run(
        &dir,
        "Create CHANGELOG.md containing the line 'v0.1: first release'",
        &[("a.py", "x\n")],
        Box::new(EvidenceReport),
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("ws/CHANGELOG.md")).unwrap(), "v0.1: first release\n");
    assert!(s.delivered, "{s:?}");

    let dir = TempDir::new("writes-existing");
    let s = run(&dir, "Create a.py containing 'y = 2'", &[("a.py", "x = 1\n")], Box::new(EvidenceReport));
    assert_eq!(std::fs::read_to_string(dir.path().join("ws/a.py")).unwrap(), "x = 1\n", "never replaced unasked");
    assert!(!s.delivered && s.answer.contains("does not say to overwrite"), "{}", s.answer);
    let dir = TempDir::new("writes-overwrite");
    let s = run(&dir, "Overwrite a.py with the text 'y = 2'", &[("a.py", "x = 1\n")], Box::new(EvidenceReport));
    assert_eq!(std::fs::read_to_string(dir.path().join("ws/a.py")).unwrap(), "y = 2");
    assert!(s.delivered, "{s:?}");

    let dir = TempDir::new("writes-append");
    let s = run(&dir, "Append the line 'z = 3' to a.py", &[("a.py", "x = 1")], Box::new(EvidenceReport));
    assert_eq!(std::fs::read_to_string(dir.path().join("ws/a.py")).unwrap(), "x = 1\nz = 3\n");
    assert!(s.delivered, "{s:?}");
    let dir = TempDir::new("writes-append-none");
    let s = run(&dir, "Add a line at the end of a.py", &[("a.py", "x = 1\n")], Box::new(EvidenceReport));
    assert_eq!(std::fs::read_to_string(dir.path().join("ws/a.py")).unwrap(), "x = 1\n");
    assert!(!s.delivered, "an action that did not happen is never delivered: {s:?}");
}
