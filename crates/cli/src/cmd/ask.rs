//! `decision ask CONTRACT --block ID --state STATE.json --provider mock|script:FILE|systemone|openai
//! [--url URL] [--model M] [--log LOG]`: ask a decision provider one block's questions, validate
//! the answers, evaluate the policy, print the outcome, and record the decision when asked to.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use decision::api;
use decision::decide::NodeDecision;
use decision::log::{DecisionEvent, FsyncPolicy, LogHeader, SealKey, SessionLog, next_run, now_ms};
use decision::provider::{DecisionProvider, OpenAiMode};
use decision::terminal;

use super::contract_input::Format;
use super::contract_input::{load_contract, read_text};
use super::eval::block_questions;
use decision::api::provider::{Endpoint, parse_without_host};
use decision::api::{Code, Error};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OpenAiApi {
    Chat,
    Completions,
}

/// Where the host's state cells come from.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CellSource {
    /// The reference coding host's cells; node ids are the reference's (`loop.isDone`, …).
    Reference,
    /// The keys of STATE.json; the node id is the block id.
    State,
}

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md contract.
    contract: PathBuf,
    /// The block to ask.
    #[arg(long, value_name = "ID")]
    block: String,
    /// The host's state cells (a JSON object); the block's `frame:` compiles them into the
    /// state sent. A block without a frame sends this object as it is.
    #[arg(long, value_name = "STATE.json")]
    state: PathBuf,
    /// Whose state cells the frame reads: the reference host's 11 cells (with their trust),
    /// or the keys of STATE.json (trusted unless named by `--untrusted`).
    #[arg(long, value_enum, default_value_t = CellSource::Reference)]
    cells: CellSource,
    /// A host capability report (JSON): its `stateCells` are the cells the frame reads (the
    /// keys of STATE.json when it declares none), and a block that does not fit the host is
    /// refused before it is asked.
    #[arg(long, value_name = "FILE.json", conflicts_with = "cells")]
    capabilities: Option<PathBuf>,
    /// With `--cells state` or `--capabilities`: a cell that carries untrusted bytes; repeatable.
    #[arg(long, value_name = "CELL")]
    untrusted: Vec<String>,
    /// `mock`, `script:FILE`, `replay:LOG`, `systemone` (key in TYPESAFE_API_KEY) or `openai` (key, if any, in OPENAI_API_KEY).
    #[arg(long, value_name = "PROVIDER")]
    provider: String,
    /// The provider's base URL (System One: without `/v1/systemone`; OpenAI: the API root, e.g. `…/v1`).
    #[arg(long)]
    url: Option<String>,
    /// The model to name in the request.
    #[arg(long)]
    model: Option<String>,
    /// Which OpenAI-compatible endpoint to use.
    #[arg(long, value_enum, default_value_t = OpenAiApi::Chat)]
    openai_api: OpenAiApi,
    /// The whole call's time limit in milliseconds, every attempt and retry included.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
    /// The candidates a `dynamic:` block offers: `{"question": {"id": "criterion", …}}`.
    /// Without it the file's listed options are offered.
    #[arg(long, value_name = "CANDIDATES.json")]
    candidates: Option<PathBuf>,
    /// Threshold override `block.question=value`; repeatable.
    #[arg(long, value_name = "block.question=value")]
    gate: Vec<String>,
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
                Format::Json => println!("{}", api::ask::document(&args.block, &decision)),
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
    let block = api::find_block(&shown, &contract, &args.block)?;
    let gated = api::eval::gated_policy(&contract, block, &args.gate)?;
    let state = api::frame::parse_state(&args.state.display().to_string(), &read_text(&args.state)?)?;
    let source = cell_source(args.cells, args.capabilities.as_deref(), &args.untrusted)?;
    let host_file = args.capabilities.as_ref().map_or_else(String::new, |p| p.display().to_string());
    if let api::frame::CellSource::Capabilities { capabilities, .. } = &source {
        let host = format!("the host of {host_file} (`--capabilities`)");
        api::frame::refuse_misfit(&shown, &contract, block, capabilities, &host)?;
    }
    let questions = block_questions(block, args.candidates.as_deref())?;
    let provider = build_provider(args)?;
    let request =
        api::ask::Request { block, policy: &gated, questions, state, source: &source, model: args.model.clone() };
    // A frame that reads a cell the chosen host does not have names the host and the flag
    // that chooses another one.
    let prepared = api::ask::prepare(request, |source| match source {
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
    let decision = prepared.decide(provider, Duration::from_millis(args.timeout_ms))?;
    if let Some(path) = &args.log {
        record(path, &prepared.event(&decision))
            .map_err(|e| Error::new(Code::Io, format!("cannot record the decision: {e}")))?;
    }
    Ok(decision)
}

/// `--cells` or `--capabilities`, with `--untrusted` (shared by `ask` and `test`).
pub fn cell_source(
    cells: CellSource,
    capabilities: Option<&std::path::Path>,
    untrusted: &[String],
) -> Result<api::frame::CellSource, Error> {
    let named = !untrusted.is_empty();
    let untrusted = untrusted.to_vec();
    if let Some(path) = capabilities {
        let capabilities = super::contract_input::read_capabilities(path)?;
        return Ok(api::frame::CellSource::Capabilities { capabilities: Box::new(capabilities), untrusted });
    }
    match cells {
        CellSource::Reference if named => {
            Err(Error::usage("`--untrusted` names cells of the state: use it with `--cells state` or `--capabilities`"))
        }
        CellSource::Reference => Ok(api::frame::CellSource::Reference),
        CellSource::State => Ok(api::frame::CellSource::State { untrusted }),
    }
}

/// `--provider` with `--url`, `--model` and `--openai-api`.
fn build_provider(args: &Args) -> Result<Arc<dyn DecisionProvider>, Error> {
    // `ask` has no host: the heuristic's rules answer only the coding host's questions.
    let spec = parse_without_host(&args.provider)?;
    let openai_mode = match args.openai_api {
        OpenAiApi::Chat => OpenAiMode::Chat,
        OpenAiApi::Completions => OpenAiMode::Completions,
    };
    let endpoint = Endpoint { url: args.url.as_deref(), model: args.model.as_deref(), openai_mode };
    Ok(spec.build(&endpoint).map_err(Error::usage)?.provider)
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
