//! Session logs as a data set: every decision of every log as one row, with the replay
//! verdict of its record and of its log, written as Parquet, CSV or JSON Lines.
//!
//! The schema is versioned ([`SCHEMA_VERSION`]) and documented column by column in
//! `docs/export.md` ([`COLUMNS`] holds the same list). Export streams: each log is read once,
//! line by line, by replay itself, which verifies each line as the row is made of it; rows
//! wait only for what completes them (the events of the same step, the log's verdict: a log
//! larger than [`ONE_PASS_BYTES`] is replayed once beforehand, so its rows never wait) and are
//! written in batches, so memory does not grow with the number or the size of the logs. A log that does not verify is exported with its verdict,
//! never left out.
//!
//! ```no_run
//! use decision_export::{ExportOptions, Format, export_to_path, expand_inputs};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let logs = expand_inputs(&["logs/".into()])?;
//! let summary = export_to_path(&logs, Format::Parquet, "decisions.parquet".as_ref(), &ExportOptions::default(), &mut |_| {})?;
//! println!("{} rows from {} logs", summary.rows, summary.logs);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod error;
mod export;
mod log_rows;
pub mod otlp;
mod row;
mod schema;
mod sink;
mod walk;

pub use export::{
    ExportError, ExportOptions, ExportSummary, Progress, export, export_rows, export_tapped, export_to_path,
    export_to_path_tapped,
};
pub use log_rows::{LogVerdict, ONE_PASS_BYTES, read_log_rows};
pub use row::Row;
pub use schema::{COLUMNS, Column, ColumnType, SCHEMA_VERSION, arrow_schema};
pub use sink::{Format, RowSink, open_sink};
pub use walk::{LOG_EXTENSION, expand_inputs};
