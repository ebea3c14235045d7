//! `decision adapter-report [--check FILE] [--contract FILE]…`: generate the reference coding
//! host's capability report from its registrations and graph, or check a report file against
//! them (format.md §6.3). Exit 0 when the report matches, 1 on any drift, 2 on I/O problems.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::graph::report::{check, generate};
use decision_coding_host::{CODING_CONTRACT, coding_description};

#[derive(clap::Args)]
pub struct Args {
    /// Check this report instead of printing a new one.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
    /// Contracts the reported capabilities must carry (default: the bundled coding-agent contract).
    #[arg(long, value_name = "FILE")]
    contract: Vec<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let host = coding_description();
    let Some(path) = args.check else {
        match serde_json::to_string_pretty(&generate(&host)) {
            Ok(text) => println!("{text}"),
            Err(e) => return super::usage_error(&format!("cannot render the report: {e}")),
        }
        return ExitCode::SUCCESS;
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => return super::io_error(&format!("cannot read {}: {e}", path.display())),
    };
    let mut contracts = Vec::new();
    for contract in &args.contract {
        match std::fs::read(contract) {
            Ok(bytes) => contracts.push((contract.display().to_string(), bytes)),
            Err(e) => return super::io_error(&format!("cannot read {}: {e}", contract.display())),
        }
    }
    if contracts.is_empty() {
        contracts.push(("the bundled coding-agent contract".to_string(), CODING_CONTRACT.as_bytes().to_vec()));
    }
    let problems = check(&path.display().to_string(), &text, &host, &contracts);
    if problems.is_empty() {
        println!("{}: the report matches the host's code and carries {} contract(s)", path.display(), contracts.len());
        ExitCode::SUCCESS
    } else {
        for p in &problems {
            println!("✗ {p}");
        }
        println!("{}: {} problem(s); the report is not trustworthy", path.display(), problems.len());
        ExitCode::from(1)
    }
}
