//! `decision explain`: the contract as a readable table, or as data (`--format json`).

use std::path::PathBuf;
use std::process::ExitCode;

use decision::{api, terminal};

use super::contract_input::{Format, read_source};

#[derive(clap::Args)]
pub struct Args {
    /// Output format: the table, or the same content as a JSON document (with `text`, the
    /// table itself), as the npm package's and the Python package's `explain` return it.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The DECISION.md to explain.
    file: PathBuf,
}

pub fn run(args: Args) -> ExitCode {
    let source = match read_source(&args.file) {
        Ok(s) => s,
        Err(message) => return super::usage_error(&message),
    };
    let path = args.file.display().to_string();
    match args.format {
        // The table quotes the contract: none of its text reaches the terminal raw.
        Format::Human => print!("{}", terminal::lines(&api::explain::cli_output(&path, &source))),
        // JSON escapes every control character itself.
        Format::Json => println!("{}", api::explain::document(&path, &source)),
    }
    ExitCode::SUCCESS
}
