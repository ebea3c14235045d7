//! `decision check`: every problem of every file, in one pass.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api;
use decision::api::Error;
use decision::api::check::CheckRequest;
use decision::check::Capabilities;

use super::contract_input::{Format, read_source, read_text};
use crate::render;

#[derive(clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// A host capability report (JSON) to run the adapter layer against.
    #[arg(long, value_name = "FILE.json")]
    capabilities: Option<PathBuf>,
    /// The host and the strictness: the options every entrance takes.
    #[command(flatten)]
    request: CheckRequest,
    /// DECISION.md files to check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// The host to check against: the profile or the report the arguments name.
fn host(args: &Args) -> Result<Option<Capabilities>, Error> {
    let Some(path) = &args.capabilities else { return args.request.host(None) };
    let shown = path.display().to_string();
    args.request.host(Some((&shown, &read_text(path)?)))
}

pub fn run(args: Args) -> ExitCode {
    let capabilities = match host(&args) {
        Ok(c) => c,
        Err(error) => return super::fail(&error),
    };
    let mut any_error = false;
    let mut io_error = false;
    let mut files = Vec::new();
    // Diagnostics and the summary both go to stdout, in order, so that a redirect keeps both.
    let renderer = render::Renderer::for_stdout();
    for path in &args.files {
        let source = match read_source(path) {
            Ok(s) => s,
            Err(message) => {
                eprintln!("error[E_IO]: {}", decision::terminal::lines(&message));
                // The document says so too: a reader of the JSON alone sees every file given.
                if args.format == Format::Json {
                    files.push(api::check::unreadable_file_json(&path.display().to_string(), &message));
                }
                io_error = true;
                continue;
            }
        };
        // Past the cap the report keeps only the count of the rest: memory and output stay
        // bounded whatever the input.
        let report = args.request.check(&source, capabilities.as_ref());
        let ok = !report.has_errors();
        any_error |= !ok;
        match args.format {
            Format::Human => {
                let display = path.display().to_string();
                for d in &report.diagnostics {
                    print!("{}", renderer.diagnostic(&display, &source, d));
                }
                if let Some(line) = render::omitted_line(&display, &report.omitted) {
                    println!("{line}");
                }
                let verdict = if ok { "ok" } else { "FAILED" };
                println!(
                    "{display}: {verdict} — {}, {}; {}",
                    render::count(report.errors(), "error"),
                    render::count(report.warnings(), "warning"),
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
