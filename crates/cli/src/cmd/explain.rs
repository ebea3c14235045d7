//! `decision explain`: the contract as a readable table.

use std::path::PathBuf;
use std::process::ExitCode;

use decision_runtime::{api, terminal};

use super::contract_input::read_source;

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md to explain.
    file: PathBuf,
}

pub fn run(args: Args) -> ExitCode {
    let source = match read_source(&args.file) {
        Ok(s) => s,
        Err(message) => return super::usage_error(&message),
    };
    // The table quotes the contract: none of its text reaches the terminal raw.
    print!("{}", terminal::lines(&api::explain::cli_output(&args.file.display().to_string(), &source)));
    ExitCode::SUCCESS
}
