//! Export of many logs into one file.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use decision::log::ReplayOptions;

pub use crate::error::ExportError;
use crate::log_rows::{ONE_PASS_BYTES, read_log_rows};
use crate::row::Row;
use crate::sink::{Format, open_sink};

/// How many failing logs a summary names (all are counted).
const FAILED_LISTED: usize = 100;

/// How to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// How replay reads each log (the line cap, a seal key); its `threads` is not used: each
    /// log is read and replayed in one pass on the calling thread.
    pub replay: ReplayOptions,
    /// A log larger than this is replayed once more, beforehand, so its rows need not be held
    /// until its verdict is known ([`ONE_PASS_BYTES`] by default).
    pub one_pass_bytes: u64,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions { replay: ReplayOptions::default(), one_pass_bytes: ONE_PASS_BYTES }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Logs read.
    pub logs: u64,
    /// Rows written.
    pub rows: u64,
    /// Decision records, by replay verdict (as `decision replay` counts them).
    pub verified: u64,
    /// Records some checks could not run on.
    pub partial: u64,
    /// Records no check could run on.
    pub unverifiable: u64,
    /// Records a check failed on.
    pub mismatch: u64,
    /// Logs that do not verify (their rows say `log_verdict` = `failed`).
    pub failed_logs: u64,
    /// The first 100 of them.
    pub failed: Vec<PathBuf>,
}

/// Where an export is, after each log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Logs done.
    pub logs_done: u64,
    /// Logs in all.
    pub logs_total: u64,
    /// Rows written so far.
    pub rows: u64,
}

/// Exports `logs` as `format` into `out`, calling `progress` after each log.
pub fn export<W: Write + Send>(
    logs: &[PathBuf],
    format: Format,
    out: W,
    options: &ExportOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<ExportSummary, ExportError> {
    export_tapped(logs, format, out, options, progress, &mut |_| {})
}

/// [`export`], also showing each row to `tap` before it is written (to send it elsewhere as
/// well, e.g. as a span).
pub fn export_tapped<W: Write + Send>(
    logs: &[PathBuf],
    format: Format,
    out: W,
    options: &ExportOptions,
    progress: &mut dyn FnMut(Progress),
    tap: &mut dyn FnMut(&Row),
) -> Result<ExportSummary, ExportError> {
    let mut sink = open_sink(format, out)?;
    let summary = export_rows(logs, options, progress, &mut |row| {
        tap(&row);
        sink.write(row)
    })?;
    sink.finish()?;
    Ok(summary)
}

/// Reads `logs` into rows, handing each to `on_row` in file order, and counts them as an
/// export does; `progress` is called after each log.
pub fn export_rows(
    logs: &[PathBuf],
    options: &ExportOptions,
    progress: &mut dyn FnMut(Progress),
    on_row: &mut dyn FnMut(Row) -> Result<(), ExportError>,
) -> Result<ExportSummary, ExportError> {
    let mut summary = ExportSummary::default();
    for path in logs {
        let display = path.display().to_string();
        let mut rows = 0u64;
        let verdict = read_log_rows(path, &display, &options.replay, options.one_pass_bytes, &mut |row| {
            rows += 1;
            on_row(row)
        })?;
        summary.logs += 1;
        summary.rows += rows;
        let report = &verdict.report;
        summary.verified += report.verified;
        summary.partial += report.partial;
        summary.unverifiable += report.unverifiable;
        summary.mismatch += report.mismatch;
        if !verdict.ok() {
            summary.failed_logs += 1;
            if summary.failed.len() < FAILED_LISTED {
                summary.failed.push(path.clone());
            }
        }
        progress(Progress { logs_done: summary.logs, logs_total: logs.len() as u64, rows: summary.rows });
    }
    Ok(summary)
}

/// Exports into the file at `path`: written beside it under a temporary name and renamed
/// when complete, so a failed export leaves no partial file (and an existing file as it was).
pub fn export_to_path(
    logs: &[PathBuf],
    format: Format,
    path: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<ExportSummary, ExportError> {
    export_to_path_tapped(logs, format, path, options, progress, &mut |_| {})
}

/// [`export_to_path`], also showing each row to `tap` (see [`export_tapped`]).
pub fn export_to_path_tapped(
    logs: &[PathBuf],
    format: Format,
    path: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(Progress),
    tap: &mut dyn FnMut(&Row),
) -> Result<ExportSummary, ExportError> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let temporary = tempfile::NamedTempFile::new_in(dir).map_err(ExportError::Output)?;
    let summary = {
        let out = BufWriter::with_capacity(1 << 20, temporary.as_file());
        export_tapped(logs, format, out, options, progress, tap)?
    };
    temporary.persist(path).map_err(|e| ExportError::Output(e.error))?;
    Ok(summary)
}
