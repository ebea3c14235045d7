//! `decision check`: every problem of every file, in one pass.

use std::path::PathBuf;
use std::process::ExitCode;

use decision_runtime::api;

use super::contract_input::{Format, HostArgs, read_source};
use crate::render;

#[derive(clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    host: HostArgs,
    /// `--deny warnings` turns every warning into an error.
    #[arg(long, value_name = "warnings", value_parser = ["warnings"])]
    deny: Option<String>,
    /// DECISION.md files to check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let capabilities = match args.host.capabilities() {
        Ok(c) => c,
        Err(message) => return super::usage_error(&message),
    };
    let deny_warnings = args.deny.is_some();
    let mut any_error = false;
    let mut io_error = false;
    let mut files = Vec::new();
    for path in &args.files {
        let source = match read_source(path) {
            Ok(s) => s,
            Err(message) => {
                eprintln!("error: {message}");
                io_error = true;
                continue;
            }
        };
        let report = api::check::check_source(&source, capabilities.as_ref(), deny_warnings);
        let ok = !report.has_errors();
        any_error |= !ok;
        match args.format {
            Format::Human => {
                let text = String::from_utf8_lossy(&source);
                let display = path.display().to_string();
                for d in &report.diagnostics {
                    eprint!("{}", render::diagnostic(&display, &text, d));
                }
                let errors = report.diagnostics.iter().filter(|d| d.is_error()).count();
                let warnings = report.diagnostics.len() - errors;
                let verdict = if ok { "ok" } else { "FAILED" };
                println!(
                    "{display}: {verdict} — {errors} errors, {warnings} warnings; {}",
                    report.summary().headline()
                );
            }
            Format::Json => files.push(api::check::file_json(Some(&path.display().to_string()), &report)),
        }
    }
    if args.format == Format::Json {
        println!("{}", api::check::document(files));
    }
    if io_error {
        ExitCode::from(super::EXIT_USAGE)
    } else if any_error {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
