//! `decision ask CONTRACT --block ID --state STATE.json --provider mock|script:FILE|systemone|openai
//! [--url URL] [--model M] [--log LOG]`: ask a decision provider one block's questions, validate
//! the answers, evaluate the policy, print the outcome, and record the decision when asked to.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api;
use decision::decide::NodeDecision;
use decision::log::{DecisionEvent, FsyncPolicy, LogHeader, SealKey, SessionLog, next_run, now_ms};
use decision::terminal;

use super::contract_input::Format;
use super::contract_input::{load_contract, read_text};
use super::eval::block_questions;
use decision::api::ask::AskRequest;
use decision::api::{Code, Error};

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md contract.
    contract: PathBuf,
    /// The block, the cells, the provider and the gates: the options every entrance takes.
    #[command(flatten)]
    request: AskRequest,
    /// The host's state cells (a JSON object); the block's `frame:` compiles them into the
    /// state sent. A block without a frame sends this object as it is.
    #[arg(long, value_name = "STATE.json")]
    state: PathBuf,
    /// A host capability report (JSON): its `stateCells` are the cells the frame reads (the
    /// keys of STATE.json when it declares none), and a block that does not fit the host is
    /// refused before it is asked.
    #[arg(long, value_name = "FILE.json", conflicts_with = "cells")]
    capabilities: Option<PathBuf>,
    /// The candidates a `dynamic:` block offers: `{"question": {"id": "criterion", …}}`.
    /// Without it the file's listed options are offered.
    #[arg(long, value_name = "CANDIDATES.json")]
    candidates: Option<PathBuf>,
    /// Append the decision to this session log (created when missing).
    #[arg(long, value_name = "LOG")]
    log: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match ask(&args) {
        Ok(decision) => {
            match args.format {
                Format::Json => {
                    println!("{}", api::ask::document(args.request.block.as_deref().unwrap_or(""), &decision))
                }
                Format::Human => print!("{}", terminal::lines(&api::ask::text(&decision))),
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::fail(&error),
    }
}

fn ask(args: &Args) -> Result<NodeDecision, Error> {
    let contract = load_contract(&args.contract)?;
    let shown = args.contract.display().to_string();
    let block = api::find_block(&shown, &contract, args.request.block()?)?;
    let gated = api::eval::gated_policy(&contract, block, &args.request.gates)?;
    let state = api::frame::parse_state(&args.state.display().to_string(), &read_text(&args.state)?)?;
    let capabilities = args.capabilities.as_deref().map(super::contract_input::read_capabilities).transpose()?;
    let source = args.request.cell_source(capabilities)?;
    let host_file = args.capabilities.as_ref().map_or_else(String::new, |p| p.display().to_string());
    if let api::frame::CellSource::Capabilities { capabilities, .. } = &source {
        let host = format!("the host of {host_file} (`--capabilities`)");
        api::frame::refuse_misfit(&shown, &contract, block, capabilities, &host)?;
    }
    let questions = block_questions(block, args.candidates.as_deref())?;
    let provider = args.request.provider()?;
    let ask =
        api::ask::Ask { block, policy: &gated, questions, state, source: &source, model: args.request.model.clone() };
    // A frame that reads a cell the chosen host does not have names the host and the flag
    // that chooses another one.
    let prepared = api::ask::prepare(ask, |source| match source {
        api::frame::CellSource::Reference => format!(
            "the cells asked against are the reference coding host's, the default; a host with its own cells \
             gives `--cells state`, which takes them from the keys of {}, or `--capabilities FILE.json`",
            args.state.display()
        ),
        api::frame::CellSource::State { .. } => {
            format!("the cells asked against are the keys of {}, from `--cells state`", args.state.display())
        }
        api::frame::CellSource::Capabilities { .. } => {
            format!("the cells asked against are those of the host in {host_file}, from `--capabilities`")
        }
    })?;
    let decision = prepared.decide(provider, args.request.timeout())?;
    if let Some(path) = &args.log {
        record(path, &prepared.event(&decision))
            .map_err(|e| Error::new(Code::Io, format!("cannot record the decision: {e}")))?;
    }
    Ok(decision)
}

fn record(path: &std::path::Path, event: &DecisionEvent) -> Result<(), String> {
    // Each `ask` is a run of one decision: it continues the log's chain as its next run and
    // ends it with a seal, so replay reads a finished log.
    let mut log = if path.exists() {
        let run = next_run(path).map_err(|e| e.to_string())?;
        SessionLog::open(path, FsyncPolicy::EveryLine).map(|mut log| {
            log.set_run(run);
            log
        })
    } else {
        let cwd = std::env::current_dir().ok().map(|p| p.display().to_string());
        SessionLog::create(
            path,
            &LogHeader { id: format!("ask-{}", now_ms()), created_at_ms: now_ms(), cwd },
            FsyncPolicy::EveryLine,
        )
    }
    .map_err(|e| e.to_string())?;
    log.set_seal_key(SealKey::from_env().map_err(|e| e.to_string())?);
    log.append_decision(event).map_err(|e| e.to_string())?;
    log.seal().map(drop).map_err(|e| e.to_string())
}
