//! `decision resume LOG`: continue an unfinished run from its session log (runtime.md §4.7).
//!
//! Nothing runs before the whole log verifies: the log is locked (one writer at a time), then
//! its header, chain, seals, keyed MAC (a keyed log is refused without its key), the head
//! given with `--head`, every record and every approval's binding are checked, and the first
//! line that fails is named. The task comes from the last `run:start`; the work directory and
//! permissions are the operator's (`--workdir`, `--allow-write`, `--allow-delete`, checked
//! against the recorded work directory), or, on a keyed log verified under its key, the
//! recorded ones. The history, known files and read files are rebuilt from the tool events;
//! an in-flight call runs again. The time budget, unless `--time-budget` gives another, is the
//! one the run started with, on a fresh clock.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use decision::log::approval::{VerifyOptions, verify_log};
use decision::log::{LogHead, SEAL_KEY_VARIABLE, SealKey};
use decision::terminal;
use decision_coding_host::approvals::{approval_from_ledger, refuse_log_in_workdir};
use decision_coding_host::resume::resume_point;
use decision_coding_host::{CODING_CONTRACT, DEFAULT_MAX_STEPS, RunConfig};
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
    /// The work directory, given again: it must be the one the run recorded. Needed unless
    /// the log is keyed and verified under $DECISION_LOG_KEY; with it, the permissions are
    /// the flags given here (none unless given).
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Offer and permit `write_file` (with --workdir).
    #[arg(long, requires = "workdir")]
    allow_write: bool,
    /// Offer and permit `delete_file` (with --workdir).
    #[arg(long, requires = "workdir")]
    allow_delete: bool,
    /// A head kept from an earlier run (`SEQ:HASH`): the log must still hold that line.
    #[arg(long, value_name = "SEQ:HASH")]
    head: Option<LogHead>,
    /// Refuse unless the log is keyed and verified under $DECISION_LOG_KEY.
    #[arg(long)]
    require_key: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: Args) -> ExitCode {
    let key = match SealKey::from_env() {
        Ok(key) => key,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    // The lock first: what is verified is what the resumed run appends to.
    let mut log = match open_log(&args.log, None, Some(0)) {
        Ok(log) => log,
        Err(message) => return super::usage_error(&message),
    };
    let options = VerifyOptions { key: key.clone(), head: args.head, require_key: args.require_key, max_line: None };
    let verified = match verify_log(&args.log, &options) {
        Ok(verified) => verified,
        Err(refusal) => return super::usage_error(&format!("nothing was resumed: {refusal}")),
    };
    // A run that halted awaiting an approval continues from its answer (refused while the
    // approval is unanswered or when the log no longer matches its fingerprint).
    let approval = match approval_from_ledger(&verified.ledger) {
        Ok(approval) => approval,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let point = match resume_point(&args.log) {
        Ok(point) => point,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let next = match next_run_index(&args.log, point.run) {
        Ok(next) => next,
        Err(message) => return super::usage_error(&message),
    };
    log.set_run(next);
    let flag = |key: &str| point.start.get(key).and_then(Value::as_bool).unwrap_or(false);
    let (workdir, allow_write, allow_delete) = match &args.workdir {
        Some(given) => {
            let same = std::fs::canonicalize(given).ok().zip(std::fs::canonicalize(&point.workdir).ok());
            if same.is_none_or(|(given, recorded)| given != recorded) {
                return super::usage_error(&format!(
                    "--workdir {} is not the work directory the run recorded ({}): a run is resumed where it ran",
                    given.display(),
                    terminal::one_line(&point.workdir)
                ));
            }
            (given.clone(), args.allow_write, args.allow_delete)
        }
        None if verified.authenticated => (PathBuf::from(&point.workdir), flag("allowWrite"), flag("allowDelete")),
        None => {
            return super::usage_error(&format!(
                "{}: the log is not keyed, so its work directory and permissions are not authenticated; give them again: decision resume {} --workdir DIR [--allow-write] [--allow-delete] (or keep the log keyed with ${SEAL_KEY_VARIABLE})",
                args.log.display(),
                args.log.display()
            ));
        }
    };
    if let Err(message) = refuse_log_in_workdir(&args.log, &workdir) {
        return super::usage_error(&message);
    }
    let (source, label) = match &args.contract {
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => (bytes, path.display().to_string()),
            Err(e) => return super::io_error(&format!("cannot read {}: {e}", path.display())),
        },
        None => (CODING_CONTRACT.as_bytes().to_vec(), "bundled:examples/coding-agent/DECISION.md".to_string()),
    };
    let outcome_contracts = match outcome_contracts(&args.common) {
        Ok(set) => set,
        Err(message) => return super::usage_error(&message),
    };
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
        workdir,
        max_steps: args
            .max_steps
            .or_else(|| point.start.get("maxSteps").and_then(Value::as_u64))
            .unwrap_or(DEFAULT_MAX_STEPS),
        time_budget,
        allow_write,
        allow_delete,
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

/// The run index the resumed run writes: one after the log's last. The last possible index
/// has no next one: refused, never wrapped round to run 0 (which would make the log's runs
/// ambiguous).
fn next_run_index(log: &std::path::Path, last: u64) -> Result<u64, String> {
    last.checked_add(1).ok_or_else(|| {
        format!(
            "nothing was resumed: {} ends with run {last}, the last run index there is; start a new log with `decision run`",
            terminal::one_line(&log.display().to_string())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::next_run_index;

    #[test]
    fn the_last_run_index_has_no_next_one() {
        let log = std::path::Path::new("session.jsonl");
        assert_eq!(next_run_index(log, 0), Ok(1));
        assert_eq!(next_run_index(log, u64::MAX - 1), Ok(u64::MAX));
        let refused = next_run_index(log, u64::MAX).unwrap_err();
        assert!(refused.contains("ends with run 18446744073709551615"), "{refused}");
    }
}
