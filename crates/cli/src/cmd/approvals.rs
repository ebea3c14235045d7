//! `decision approvals LOG [--format json]`: the pending approvals of a session log;
//! `decision approve LOG ID [--deny [--reason TEXT]] [--input JSON]`: answer one, bound to the
//! fingerprint of the call it was made for. `decision resume LOG` then continues the run; a
//! call held by a running decision gateway (`decision mcp`, which holds its log) is answered
//! through the gateway's inbox instead, and the gateway runs or refuses it at once.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api::approve::{Answer, ApproveRequest};
use decision::api::{Code, Error};
use decision::log::SealKey;
use decision::log::approval::{Verdict, pending_document, read_approvals, record_answer, verdict_of, verdict_words};
use decision_mcp::inbox::{HandOffError, hand_off};
use serde_json::Value;

use super::contract_input::Format;
use decision::terminal::one_line as safe;

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
    /// The answer: the options every entrance takes (`--deny`, `--reason`, `--input`).
    #[command(flatten)]
    request: ApproveRequest,
    /// Output format (`json`: `{id, verdict, handedToGateway, inbox, next}`).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// What `approve` did: the answer recorded in the log, or handed to the gateway holding it.
struct Recorded {
    /// `approved`, `denied` or `approved with a modified input`.
    verdict: String,
    /// The inbox file the answer was handed over in, when a running gateway holds the log.
    handed: Option<PathBuf>,
}

pub fn list(args: ListArgs) -> ExitCode {
    let approvals = match read_approvals(&args.log) {
        Ok(all) => all,
        Err(e) => return super::fail(&Error::from(&e)),
    };
    let pending: Vec<_> = approvals.iter().filter(|a| a.is_pending()).collect();
    match args.format {
        Format::Json => println!("{}", pending_document(&approvals)),
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
        Ok(recorded) => {
            match args.format {
                Format::Human => println!("{}", human(&args, &recorded)),
                Format::Json => println!("{}", approve_json(&args, &recorded)),
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::fail(&error),
    }
}

fn human(args: &ApproveArgs, recorded: &Recorded) -> String {
    let id = safe(&args.id);
    let verdict = &recorded.verdict;
    match &recorded.handed {
        None => format!("{id} {verdict}; continue with: decision resume {}", args.log.display()),
        Some(file) => format!(
            "{id} {verdict}; the log is held by a running decision gateway, so the answer was handed to it ({}): it checks the answer, records it and {} the call",
            safe(&file.display().to_string()),
            if args.request.deny { "refuses" } else { "runs" }
        ),
    }
}

/// `--format json`: the approval, its verdict, and what happens next (`decision resume`, or
/// nothing when a running gateway took the answer).
fn approve_json(args: &ApproveArgs, recorded: &Recorded) -> Value {
    serde_json::json!({
        "id": args.id,
        "verdict": recorded.verdict,
        "handedToGateway": recorded.handed.is_some(),
        "inbox": recorded.handed.as_ref().map(|f| f.display().to_string()),
        "next": recorded.handed.is_none().then(|| format!("decision resume {}", args.log.display())),
    })
}

fn record(args: &ApproveArgs) -> Result<Recorded, Error> {
    let Answer { denial: deny, input } = args.request.answer()?;
    match record_answer(&args.log, &args.id, deny.as_deref(), input.as_deref()).map_err(|e| Error::from(&e)) {
        Ok(verdict) => Ok(Recorded { verdict: verdict.to_owned(), handed: None }),
        // A live writer holds the log: a running gateway takes the answer through its inbox.
        Err(error) if error.code == Code::LogHeld => hand_to_gateway(args, deny.as_deref(), input.as_deref()),
        Err(error) => Err(error),
    }
}

/// Answers a call held by the decision gateway that is writing the log: the answer is bound
/// here (under the log key on a keyed log) and handed to the gateway, which checks it, records
/// it and runs or refuses the call.
fn hand_to_gateway(args: &ApproveArgs, deny: Option<&str>, input: Option<&str>) -> Result<Recorded, Error> {
    let verdict: Verdict = verdict_of(deny, input).map_err(|e| Error::from(&e))?;
    let key = SealKey::from_env().map_err(|e| Error::usage(e.to_string()))?;
    let handed = hand_off(&args.log, &args.id, &verdict, key.as_ref()).map_err(|e| hand_off_error(&e))?;
    Ok(Recorded { verdict: verdict_words(&verdict).to_owned(), handed: Some(handed.file) })
}

/// A hand-off the gateway's inbox refused, in the one code vocabulary.
fn hand_off_error(error: &HandOffError) -> Error {
    let code = match error {
        HandOffError::Refused { .. } => Code::Unverified,
        HandOffError::NotAGateway(_) => Code::LogHeld,
        HandOffError::Inbox { .. } => Code::Io,
        _ => Code::Usage,
    };
    Error::new(code, error.to_string())
}
