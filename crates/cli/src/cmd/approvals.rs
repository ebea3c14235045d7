//! `decision approvals LOG [--format json]`: the pending approvals of a session log;
//! `decision approve LOG ID [--deny [--reason TEXT]] [--input JSON]`: answer one, bound to the
//! fingerprint of the call it was made for. `decision resume LOG` then continues the run.

use std::path::PathBuf;
use std::process::ExitCode;

use decision_coding_host::approvals::{pending_json, read_approvals, record_answer};
use serde_json::Value;

use super::contract_input::Format;
use decision_runtime::terminal::one_line as safe;

#[derive(clap::Args)]
pub struct ListArgs {
    /// The session log.
    log: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

#[derive(clap::Args)]
pub struct ApproveArgs {
    /// The session log.
    log: PathBuf,
    /// The approval id (from `decision approvals`).
    id: String,
    /// Deny the call instead of approving it.
    #[arg(long)]
    deny: bool,
    /// Why it is denied (recorded, and shown to the run).
    #[arg(long, value_name = "TEXT", requires = "deny")]
    reason: Option<String>,
    /// Approve a modified input instead (a JSON string); it is validated now and put through
    /// the risk gate again when the run resumes.
    #[arg(long, value_name = "JSON", conflicts_with = "deny")]
    input: Option<String>,
}

pub fn list(args: ListArgs) -> ExitCode {
    let approvals = match read_approvals(&args.log) {
        Ok(all) => all,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let pending: Vec<_> = approvals.iter().filter(|a| a.answer.is_none() && !a.used).collect();
    match args.format {
        Format::Json => println!("{}", pending_json(&approvals)),
        Format::Human => {
            for a in &pending {
                println!("{}  step {}  {}({})", safe(&a.id), a.step, safe(&a.tool), safe(&a.input));
                println!("    gate: {}", safe(&a.rule));
            }
            println!("{} pending approval(s)", pending.len());
        }
    }
    ExitCode::SUCCESS
}

pub fn approve(args: ApproveArgs) -> ExitCode {
    match record(&args) {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(message) => super::usage_error(&message),
    }
}

fn record(args: &ApproveArgs) -> Result<String, String> {
    let input = match &args.input {
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::String(input)) => Some(input),
            _ => return Err(format!("--input must be a JSON string (for example '\"notes.md\"'), got {}", safe(text))),
        },
        None => None,
    };
    let deny = args.deny.then(|| args.reason.clone().unwrap_or_else(|| "denied by a person".into()));
    let verdict = record_answer(&args.log, &args.id, deny.as_deref(), input.as_deref()).map_err(|e| e.to_string())?;
    Ok(format!("{} {verdict}; continue with: decision resume {}", safe(&args.id), args.log.display()))
}
