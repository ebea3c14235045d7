//! Tool outcomes: deliverable contracts, typed violations, weak-success telemetry, reports.
//! `decision outcomes check|validate|report`.
//!
//! Exit codes: 0 ok (the contracts lint clean, the outcome holds, the report was written);
//! 1 the checked thing fails (lint errors, a contract violation); 2 usage or input problems.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use decision::api::{self, Code, Error};
use decision::outcomes::{self as outcome, ContractSet, LintError, ValidationVerdict};
use decision::terminal::{lines, one_line};

use super::contract_input::read_text;
use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Readable text (for `validate`: the outcome pretty-printed, a summary on stderr).
    Human,
    /// One JSON document on stdout.
    Json,
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Lint a contracts file: unknown or misplaced keywords are located errors.
    Check {
        /// The contracts file (JSON).
        contracts: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Validate one outcome against the contract of a tool and method.
    Validate {
        /// The contracts file (JSON).
        contracts: PathBuf,
        /// The tool that produced the outcome.
        #[arg(long)]
        tool: String,
        /// The method that produced the outcome.
        #[arg(long)]
        method: String,
        /// The outcome document: {"status":"ok","value":…} or {"status":"error",…}.
        #[arg(long)]
        outcome: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Score a log of outcome events per tool and method, with advisory recommendations.
    Report {
        /// A session log or a JSONL file of outcome events.
        log: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
}

pub fn run(command: Command) -> ExitCode {
    match command {
        Command::Check { contracts, format } => check(&contracts, format),
        Command::Validate { contracts, tool, method, outcome, format } => {
            validate(&contracts, &tool, &method, &outcome, format)
        }
        Command::Report { log, format } => report(&log, format),
    }
}

fn print_lint_errors(path: &Path, errors: &[LintError]) {
    for error in errors {
        eprintln!("{}", lines(&format!("{}:{error}", path.display())));
    }
}

fn check(path: &Path, format: Format) -> ExitCode {
    let text = match read_text(path) {
        Ok(text) => text,
        Err(error) => return super::fail(&error),
    };
    let display = path.display().to_string();
    match (outcome::load_contracts(&text), format) {
        (Ok(set), Format::Human) => {
            println!("{display}: ok — {} contract(s)", set.len());
            ExitCode::SUCCESS
        }
        (Ok(_), Format::Json) => {
            println!("{}", api::outcomes::check_document(&display, &text));
            ExitCode::SUCCESS
        }
        (Err(errors), Format::Human) => {
            print_lint_errors(path, &errors.0);
            println!("{display}: FAILED — {} error(s)", errors.0.len());
            ExitCode::FAILURE
        }
        (Err(_), Format::Json) => {
            println!("{}", api::outcomes::check_document(&display, &text));
            ExitCode::FAILURE
        }
    }
}

/// A lint-clean contracts file; one with lint errors prints them as `outcomes check` does
/// and is refused (`E_CONTRACTS`).
fn load_set(path: &Path) -> Result<ContractSet, Error> {
    let text = read_text(path)?;
    outcome::load_contracts(&text).map_err(|errors| {
        print_lint_errors(path, &errors.0);
        let mut error = api::outcomes::contracts_error(&path.display().to_string(), &errors);
        error.message = format!("{} is not a valid contracts file (see `decision outcomes check`)", path.display());
        error
    })
}

fn print_document(document: &Value, format: Format) {
    let text = match format {
        Format::Human => serde_json::to_string_pretty(document),
        Format::Json => serde_json::to_string(document),
    };
    println!("{}", text.unwrap_or_else(|_| document.to_string()));
}

fn validate(contracts: &Path, tool: &str, method: &str, outcome_path: &Path, format: Format) -> ExitCode {
    let validated = match validated(contracts, tool, method, outcome_path) {
        Ok(validated) => validated,
        Err(error) => return super::fail(&error),
    };
    let human = format == Format::Human;
    match &validated.verdict {
        ValidationVerdict::Violated(violation) => {
            print_document(&validated.document, format);
            if human {
                eprintln!(
                    "{}",
                    lines(&format!(
                        "{tool}.{method}: contract_violation ({}): {}",
                        violation.mismatch.as_str(),
                        violation.describe()
                    ))
                );
            }
            ExitCode::FAILURE
        }
        verdict => {
            // The outcome is printed exactly as given: validation never rewrites it.
            print_document(&validated.document, format);
            if human {
                match verdict {
                    ValidationVerdict::Held { aliases_used } => {
                        eprintln!("{}: holds its deliverable contract", one_line(&format!("{tool}.{method}")));
                        for used in aliases_used {
                            let place = if used.object_path.is_empty() { "the value" } else { &used.object_path };
                            let line = format!("  declared alias used: `{}` for `{}` in {place}", used.alias, used.key);
                            eprintln!("{}", one_line(&line));
                        }
                    }
                    ValidationVerdict::NoDeliverable => {
                        eprintln!("{}: the contract declares no deliverable", one_line(&format!("{tool}.{method}")))
                    }
                    _ => eprintln!("{}: error outcomes are not validated", one_line(&format!("{tool}.{method}"))),
                }
            }
            ExitCode::SUCCESS
        }
    }
}

/// The outcome at `outcome_path` validated against its contract in `contracts`.
fn validated(
    contracts: &Path,
    tool: &str,
    method: &str,
    outcome_path: &Path,
) -> Result<api::outcomes::Validation, Error> {
    let set = load_set(contracts)?;
    let contract = api::outcomes::contract_for(&set, &contracts.display().to_string(), tool, method)?;
    let shown = outcome_path.display().to_string();
    let text = read_text(outcome_path)?;
    let document: Value = serde_json::from_str(&text)
        .map_err(|error| Error::new(Code::Outcome, format!("{shown}: invalid JSON: {error}")))?;
    api::outcomes::validate(contract, tool, method, &shown, &document)
}

fn report(path: &Path, format: Format) -> ExitCode {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) => return super::io_error(&format!("cannot read {}: {error}", path.display())),
    };
    match outcome::report(BufReader::new(file)) {
        Ok(report) => {
            match format {
                Format::Human => print!("{}", report.to_text()),
                Format::Json => println!("{}", api::outcomes::report_json(&report)),
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::fail(&api::outcomes::report_error(&path.display().to_string(), &error)),
    }
}
