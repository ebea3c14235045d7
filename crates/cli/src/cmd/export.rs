//! `decision export`: session logs as one Parquet, CSV or JSON Lines file, one row per
//! decision with its replay verdict (`docs/export.md`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use decision::log::{ReplayOptions, SealKey};
use decision::terminal;
use decision_export::otlp::span_of;
use decision_export::{ExportOptions, Format, Progress, Row, SCHEMA_VERSION, export_rows, export_to_path_tapped};
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
    #[arg(short = 'o', long = "output", value_name = "FILE", required_unless_present = "otlp")]
    output: Option<PathBuf>,
    /// Send each row as an OpenTelemetry span to this OTLP/HTTP collector (e.g.
    /// http://127.0.0.1:4318), with or without --output (docs/export.md).
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
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
    let otlp = match args.otlp.as_deref().map(super::otlp::endpoint).transpose() {
        Ok(endpoint) => endpoint,
        Err(message) => return super::usage_error(&message),
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
    let shown = otlp.as_ref().map(ToString::to_string);
    let exporter = otlp.map(super::otlp::exporter);
    let mut send = |row: &Row| {
        if let Some(exporter) = &exporter {
            // Exporting is this command's work: a collector slower than the reading is
            // waited for (a collector that is down is not).
            exporter.send_waiting(span_of(row), super::otlp::PATIENCE);
        }
    };
    let summary = match &args.output {
        Some(output) => export_to_path_tapped(&logs, format, output, &options, &mut on_progress, &mut send),
        None => export_rows(&logs, &options, &mut on_progress, &mut |row| {
            send(&row);
            Ok(())
        }),
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    // Spans already queued are sent even when the file could not be written.
    let sent = exporter.map(|exporter| exporter.finish(super::otlp::GRACE));
    let summary = match summary {
        Ok(summary) => summary,
        Err(e) => {
            // What became of the spans is said even so: some may have reached the collector.
            if let (Some(report), Some(shown)) = (&sent, &shown) {
                eprintln!("{}", super::otlp::summary(report, shown));
            }
            return super::usage_error(&terminal::one_line(&e.to_string()));
        }
    };
    let target = match (&args.output, &shown) {
        (Some(output), _) => terminal::one_line(&output.display().to_string()).into_owned(),
        (None, Some(shown)) => terminal::one_line(shown).into_owned(),
        (None, None) => String::new(),
    };
    println!("exported {} rows from {} logs to {target} ({SCHEMA_VERSION})", summary.rows, summary.logs);
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
    match (sent, shown) {
        (Some(report), Some(shown)) => {
            println!("{}", super::otlp::summary(&report, &shown));
            // Sending was asked for: spans that did not arrive are a result that fails.
            if report.complete() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        _ => ExitCode::SUCCESS,
    }
}
