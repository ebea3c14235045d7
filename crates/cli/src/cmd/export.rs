//! `decision export`: session logs as one Parquet, CSV or JSON Lines file, one row per
//! decision with its replay verdict (`docs/export.md`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use decision::log::{ReplayOptions, SealKey};
use decision::terminal;
use decision_export::{ExportOptions, Format, Progress, SCHEMA_VERSION, export_to_path};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Apache Parquet (Snappy).
    Parquet,
    /// CSV with a header line.
    Csv,
    /// JSON Lines, one object per row.
    Jsonl,
}

#[derive(clap::Args)]
pub struct Args {
    /// The output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Parquet)]
    format: ExportFormat,
    /// The file to write (replaced only once the export is complete).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Lines longer than this many bytes are skipped (as replay skips them).
    #[arg(long, value_name = "BYTES", default_value_t = decision::lines::DEFAULT_MAX_LINE)]
    max_line: usize,
    /// Session logs, or directories walked for `*.jsonl` files.
    #[arg(required = true, value_name = "LOG_OR_DIR")]
    inputs: Vec<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let logs = match super::log_inputs::expand(&args.inputs) {
        Ok(logs) => logs,
        Err(message) => return super::usage_error(&message),
    };
    let seal_key = match SealKey::from_env() {
        Ok(key) => key,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let format = match args.format {
        ExportFormat::Parquet => Format::Parquet,
        ExportFormat::Csv => Format::Csv,
        ExportFormat::Jsonl => Format::Jsonl,
    };
    let replay = ReplayOptions { max_line: args.max_line, seal_key, ..ReplayOptions::default() };
    let options = ExportOptions { replay, ..ExportOptions::default() };
    // The progress display is for a person watching: only on a terminal.
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(logs.len() as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} logs · {msg} · {elapsed}") {
            bar.set_style(style);
        }
        bar
    });
    let mut on_progress = |progress: Progress| {
        if let Some(bar) = &bar {
            bar.set_position(progress.logs_done);
            bar.set_message(format!("{} rows", progress.rows));
        }
    };
    let summary = export_to_path(&logs, format, &args.output, &options, &mut on_progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let summary = match summary {
        Ok(summary) => summary,
        Err(e) => return super::usage_error(&terminal::one_line(&e.to_string())),
    };
    println!(
        "exported {} rows from {} logs to {} ({SCHEMA_VERSION})",
        summary.rows,
        summary.logs,
        terminal::one_line(&args.output.display().to_string())
    );
    println!(
        "records: {} verified · {} partial · {} unverifiable · {} mismatch",
        summary.verified, summary.partial, summary.unverifiable, summary.mismatch
    );
    if summary.failed_logs == 0 {
        println!("logs: every log verifies");
    } else {
        println!("logs: {} do not verify (exported with log_verdict = failed)", summary.failed_logs);
        for path in &summary.failed {
            println!("  ✗ {}", terminal::one_line(&path.display().to_string()));
        }
        if summary.failed_logs > summary.failed.len() as u64 {
            println!("  … and {} more", summary.failed_logs - summary.failed.len() as u64);
        }
    }
    ExitCode::SUCCESS
}
