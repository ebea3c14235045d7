//! Resume (runtime.md §4.7): rebuild an unfinished run's state from its session log.
//!
//! Only events after the last `run:start` count. `tool:call` and `tool:result` are paired by
//! step to rebuild the history (a result whose `tool:outcome` broke its contract is the
//! violation, as the run saw it); `files` come from `list_dir` and `list_files` outputs and `readFiles` from
//! `read_file` inputs. The first call without a result is in flight: it is left out of the
//! history and its step runs again.
//!
//! A run that has ended is refused, unless it stopped at a ceiling — its step limit
//! (`max_steps`) or its time budget (`time_budget`), which runtime.md §4.7 keeps resumable —
//! or on an error (a backend or the log failed before the work was done). Every other halt
//! (`task_done`, `agent_done`, `answered_directly`, `denied`, …) means the run did what it
//! was going to do: continuing it would repeat its work after its answer was handed over.

use std::path::{Path, PathBuf};

use decision_runtime::lines::DEFAULT_MAX_LINE;
use decision_runtime::log::approval::{ApprovalError, read_ledger};

use serde_json::{Value, json};
use thiserror::Error;

use super::outcomes::violation_result;
use super::run::ResumeState;
use decision_outcomes::report::OUTCOME_EVENT_TYPE;

/// What the log says about the run to continue.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumePoint {
    /// The task of the last run (`task` of its `run:start`).
    pub task: String,
    /// The work directory the last run used (`cwd` of its `run:start`), as it was written.
    pub workdir: String,
    /// The last run's index in the log; the resumed run is the next one.
    pub run: u64,
    /// The history and file cells rebuilt from the log, and the step to run next.
    pub state: ResumeState,
    /// `(step, tool, input)` of a call that never returned.
    pub in_flight: Option<(u64, String, String)>,
    /// The last run's `run:start` (its options: maxSteps, allowWrite, allowDelete, contract).
    pub start: Value,
    /// The last run's halt, when it ended.
    pub halt: Option<String>,
}

/// Why a log cannot be resumed from. The `Display` text is what `decision resume` prints.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The session log could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The log's path.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The log at this path has no `run:start` event to rebuild a run from.
    #[error("{0}: the log has no usable run:start")]
    NoStart(PathBuf),
    /// The last run ended with a halt that is not resumable (see the module documentation).
    #[error(
        "{path}: run {run} already ended (halt `{halt}`); only a run stopped by its step limit, its time budget or an error can be resumed — start a new run with `decision run`"
    )]
    Ended {
        /// The log's path.
        path: PathBuf,
        /// The run's index in the log.
        run: u64,
        /// The halt it ended with.
        halt: String,
    },
}

/// Halts after which a run may be continued (the part before any `+…` suffix counts); a run
/// awaiting an approval continues once the approval is answered.
pub(crate) const RESUMABLE_HALTS: [&str; 4] =
    ["max_steps", "time_budget", "error", super::approvals::AWAITING_APPROVAL];

/// Whether a run that ended with `halt` may be resumed.
pub(crate) fn is_resumable_halt(halt: &str) -> bool {
    let base = halt.split('+').next().unwrap_or_default();
    RESUMABLE_HALTS.contains(&base)
}

/// Read the log and rebuild the state of its last run, refusing a run that has ended (see the
/// module documentation).
pub fn resume_point(path: &Path) -> Result<ResumePoint, ResumeError> {
    let point = rebuild_point(path)?;
    match point.halt.as_deref().filter(|halt| !is_resumable_halt(halt)) {
        Some(halt) => Err(ResumeError::Ended { path: path.to_path_buf(), run: point.run, halt: halt.to_owned() }),
        None => Ok(point),
    }
}

/// Read the log and rebuild the state of its last run, whether or not it may be resumed
/// (for inspecting what a resume would see).
pub fn rebuild_point(path: &Path) -> Result<ResumePoint, ResumeError> {
    // One streaming pass (no line over 16 MiB is held); only the events of the last run are
    // kept: a `run:start` starts the list again.
    let mut events: Vec<(u64, Value)> = Vec::new();
    let wanted = ["run:start", "run:end", "tool:call", "tool:result", OUTCOME_EVENT_TYPE];
    read_ledger(path, None, DEFAULT_MAX_LINE, &wanted, &mut |line| {
        let event = Value::Object(line.event.clone());
        if event_type(&event) == "run:start" && event.get("task").and_then(Value::as_str).is_some() {
            events.clear();
        }
        events.push((line.run, event));
    })
    .map_err(|e| match e {
        ApprovalError::Read { path, source } => ResumeError::Read { path, source },
        other => ResumeError::Read { path: path.to_path_buf(), source: std::io::Error::other(other.to_string()) },
    })?;
    let start_at = events
        .iter()
        .rposition(|(_, e)| event_type(e) == "run:start" && e.get("task").and_then(Value::as_str).is_some())
        .ok_or_else(|| ResumeError::NoStart(path.to_path_buf()))?;
    let tail = events.get(start_at..).unwrap_or_default();
    let (run, start) = tail.first().cloned().ok_or_else(|| ResumeError::NoStart(path.to_path_buf()))?;
    let halt = tail
        .iter()
        .rev()
        .find(|(_, e)| event_type(e) == "run:end")
        .and_then(|(_, e)| e.get("halt").and_then(Value::as_str).map(str::to_owned));
    let mut history = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut read_files: Vec<String> = Vec::new();
    let mut in_flight = None;
    let mut last_step = None;
    let calls = tail.iter().filter(|(_, e)| event_type(e) == "tool:call");
    for (_, call) in calls {
        let step = call.get("step").and_then(Value::as_u64).unwrap_or(0);
        let tool = call.get("tool").and_then(Value::as_str).unwrap_or_default().to_owned();
        let input = call.get("input").and_then(Value::as_str).unwrap_or_default().to_owned();
        let result = tail
            .iter()
            .find(|(_, e)| event_type(e) == "tool:result" && e.get("step").and_then(Value::as_u64) == Some(step));
        let Some((_, result)) = result else {
            in_flight = Some((step, tool, input));
            break;
        };
        let mut output = result.get("output").and_then(Value::as_str).unwrap_or_default().to_owned();
        // A result that broke its deliverable contract was recorded as the violation.
        let violated = tail.iter().find(|(_, e)| {
            event_type(e) == OUTCOME_EVENT_TYPE
                && e.get("step").and_then(Value::as_u64) == Some(step)
                && e.get("contract").and_then(Value::as_str) == Some("violated")
        });
        if let Some((_, outcome)) = violated {
            let message = outcome.pointer("/outcome/error_message").and_then(Value::as_str).unwrap_or_default();
            output = violation_result(message, &output);
        }
        if tool == "list_dir" || tool == "list_files" {
            // `list_files` ends with a bracketed line saying what was left out: not an entry.
            for line in
                output.lines().map(str::trim).filter(|l| !l.is_empty() && !l.ends_with('/') && !l.starts_with('['))
            {
                if !files.iter().any(|f| f == line) {
                    files.push(line.to_owned());
                }
            }
        } else if tool == "read_file" {
            let name = input.trim().to_owned();
            if !read_files.contains(&name) {
                read_files.push(name);
            }
        }
        history.push(json!({"step": step, "tool": tool, "input": input, "result": output}));
        last_step = Some(step);
    }
    let next_step = match (&in_flight, last_step) {
        (Some((step, _, _)), _) => *step,
        (None, Some(step)) => step + 1,
        (None, None) => 0,
    };
    Ok(ResumePoint {
        task: start.get("task").and_then(Value::as_str).unwrap_or_default().to_owned(),
        workdir: start.get("cwd").and_then(Value::as_str).unwrap_or_default().to_owned(),
        run,
        state: ResumeState { history, files, read_files, next_step },
        in_flight,
        start,
        halt,
    })
}

fn event_type(e: &Value) -> &str {
    e.get("type").and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ceilings_and_errors_are_resumable() {
        for halt in
            ["max_steps", "time_budget", "error", "awaiting_approval", "max_steps+escalate", "time_budget+revise"]
        {
            assert!(is_resumable_halt(halt), "{halt}");
        }
        for halt in ["task_done", "agent_done", "answered_directly", "denied", "step_failed", "task_done+revise", ""] {
            assert!(!is_resumable_halt(halt), "{halt}");
        }
    }

    #[test]
    fn an_ended_run_is_refused_and_a_torn_line_is_skipped() {
        let dir = std::env::temp_dir().join(format!("resume-ended-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("ended.jsonl");
        let start = r#"{"kind":"event","run":0,"at":1,"e":{"type":"run:start","task":"t","cwd":"/w"}}"#;
        let end = r#"{"kind":"event","run":0,"at":2,"e":{"type":"run:end","halt":"task_done","steps":1}}"#;
        std::fs::write(&log, format!("{start}\n{end}\n")).unwrap();
        let refused = resume_point(&log).unwrap_err();
        assert!(matches!(&refused, ResumeError::Ended { run: 0, halt, .. } if halt == "task_done"), "{refused}");
        // A torn last line cut inside a UTF-8 sequence does not stop the reader.
        let mut torn = format!("{start}\n").into_bytes();
        torn.extend_from_slice(
            "{\"kind\":\"event\",\"run\":0,\"e\":{\"type\":\"x\",\"t\":\"é".as_bytes().split_last().unwrap().1,
        );
        std::fs::write(&log, torn).unwrap();
        assert_eq!(resume_point(&log).unwrap().task, "t");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
