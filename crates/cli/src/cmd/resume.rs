//! `decision resume LOG`: continue an unfinished run from its session log (runtime.md §4.7).
//! The task, work directory and permissions come from the last `run:start`; the history,
//! known files and read files are rebuilt from the tool events; an in-flight call runs again.
//! The time budget, unless `--time-budget` gives another, is the one the run started with,
//! on a fresh clock.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use decision_coding_host::approvals::approval_to_resume;
use decision_coding_host::resume::resume_point;
use decision_coding_host::{CODING_CONTRACT, DEFAULT_MAX_STEPS, RunConfig};
use decision_runtime::terminal;
use serde_json::Value;

use super::run::{Common, audit_next_to, execute_approved, open_log, outcome_contracts};

#[derive(clap::Args)]
pub struct Args {
    /// The session log of the run to continue (the resumed run is appended to it).
    log: PathBuf,
    /// The DECISION.md contract (default: the bundled coding-agent contract).
    #[arg(long, value_name = "FILE")]
    contract: Option<PathBuf>,
    /// The step limit (default: the one the run started with).
    #[arg(long, value_parser = super::run::parse_max_steps)]
    max_steps: Option<u64>,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: Args) -> ExitCode {
    // A run that halted awaiting an approval continues from its answer (refused while the
    // approval is unanswered or when the log no longer matches its fingerprint).
    let approval = match approval_to_resume(&args.log) {
        Ok(approval) => approval,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let point = match resume_point(&args.log) {
        Ok(point) => point,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let (source, label) = match &args.contract {
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => (bytes, path.display().to_string()),
            Err(e) => return super::usage_error(&format!("cannot read {}: {e}", path.display())),
        },
        None => (CODING_CONTRACT.as_bytes().to_vec(), "bundled:examples/coding-agent/DECISION.md".to_string()),
    };
    let outcome_contracts = match outcome_contracts(&args.common) {
        Ok(set) => set,
        Err(message) => return super::usage_error(&message),
    };
    let flag = |key: &str| point.start.get(key).and_then(Value::as_bool).unwrap_or(false);
    let time_budget = match (args.common.time_budget, point.start.get("timeBudgetSeconds")) {
        (Some(budget), _) => Some(budget),
        (None, None) => None,
        (None, Some(recorded)) => match recorded.as_f64().and_then(|s| Duration::try_from_secs_f64(s).ok()) {
            Some(budget) => Some(budget),
            None => {
                return super::usage_error(&format!(
                    "{}: the run's timeBudgetSeconds ({recorded}) is not a duration; give --time-budget",
                    args.log.display()
                ));
            }
        },
    };
    let config = RunConfig {
        task: point.task.clone(),
        workdir: PathBuf::from(&point.workdir),
        max_steps: args
            .max_steps
            .or_else(|| point.start.get("maxSteps").and_then(Value::as_u64))
            .unwrap_or(DEFAULT_MAX_STEPS),
        time_budget,
        allow_write: flag("allowWrite"),
        allow_delete: flag("allowDelete"),
        earlier: None,
        audit_path: args.common.audit.clone().unwrap_or_else(|| audit_next_to(&args.log)),
        contract_label: label,
        outcome_contracts,
    };
    if !args.common.quiet {
        eprintln!(
            "resuming run {} of {} at step {} ({} earlier step(s); last halt: {})",
            point.run,
            args.log.display(),
            point.state.next_step,
            point.state.history.len(),
            terminal::one_line(point.halt.as_deref().unwrap_or("none, the run never ended"))
        );
        if let Some((step, tool, input)) = &point.in_flight {
            let call = format!("{tool} {}", input.lines().next().unwrap_or_default());
            eprintln!(
                "step {step} was in flight ({}): its call was recorded, its result was not; the step is decided again",
                terminal::one_line(&call)
            );
            if !matches!(tool.as_str(), "list_dir" | "read_file") {
                eprintln!(
                    "  {} changes files: if it took effect before the process stopped, running it again acts a second time",
                    terminal::one_line(tool)
                );
            }
        }
    }
    let log = match open_log(&args.log, &config.workdir, Some(point.run + 1)) {
        Ok(log) => log,
        Err(message) => return super::usage_error(&message),
    };
    if let Some(approval) = &approval
        && !args.common.quiet
    {
        let verdict = match approval.answer.as_ref().map(|a| a.approved) {
            Some(true) => "approved",
            _ => "denied",
        };
        eprintln!(
            "continuing from approval {} ({verdict}): {} at step {} goes through the risk gate again",
            terminal::one_line(&approval.id),
            terminal::one_line(&approval.tool),
            approval.step
        );
    }
    execute_approved(&source, &config, &args.common, log, &args.log, Some(&point.state), approval.as_ref())
}
