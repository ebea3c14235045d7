//! `decision eval CONTRACT --block ID --answers ANSWERS.json [--gate block.question=value]... [--format json]`:
//! validate given answers (the `answers` object of a System One response) and evaluate the
//! block's policy on them. An invalid answer fails closed: `valid: false`, action `escalate`.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api::eval::{EvalRequest, Evaluation};
use decision::api::{self, Error};
use decision::ask::Questions;
use decision::contract::Block;
use decision::terminal;

use super::contract_input::{Format, load_contract, read_text};

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md contract.
    contract: PathBuf,
    /// The block and the gates: the options every entrance takes.
    #[command(flatten)]
    request: EvalRequest,
    /// The answers: a JSON object mapping question ids to answers.
    #[arg(long, value_name = "ANSWERS.json")]
    answers: PathBuf,
    /// The candidates a `dynamic:` block offered: `{"question": {"id": "criterion", …}}` or
    /// `{"question": ["id", …]}`. Without it the file's listed options are the offered set.
    #[arg(long, value_name = "CANDIDATES.json")]
    candidates: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match evaluate(&args) {
        Ok(outcome) => {
            match args.format {
                Format::Json => println!("{}", outcome.to_json()),
                Format::Human => print!("{}", terminal::lines(&outcome.to_text())),
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::fail(&error),
    }
}

fn evaluate(args: &Args) -> Result<Evaluation, Error> {
    let contract = load_contract(&args.contract)?;
    let block = api::find_block(&args.contract.display().to_string(), &contract, args.request.block()?)?;
    let gated = api::eval::gated_policy(&contract, block, &args.request.gates)?;
    let text = read_text(&args.answers)?;
    let answers = api::eval::parse_answers(&args.answers.display().to_string(), &text)?;
    let questions = block_questions(block, args.candidates.as_deref())?;
    Ok(api::eval::evaluate(block, &gated, &questions, &answers))
}

/// A block's questions as offered: a `dynamic:` block's choice question offers the
/// candidates in `candidates` (a file), else the options the file lists.
pub fn block_questions(block: &Block, candidates: Option<&std::path::Path>) -> Result<Questions, Error> {
    let given = match candidates {
        Some(path) => {
            let text = read_text(path)?;
            api::eval::parse_candidates(&path.display().to_string(), &text)?
        }
        None => api::eval::Candidates::new(),
    };
    api::eval::block_questions(block, &given)
}
