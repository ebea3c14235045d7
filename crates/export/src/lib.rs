//! Session logs as a data set: every decision of every log as one row, with the replay
//! verdict of its record and of its log, written as Parquet, CSV or JSON Lines.
//!
//! The schema is versioned ([`SCHEMA_VERSION`]) and documented column by column in
//! `docs/export.md` ([`COLUMNS`] holds the same list). Export streams: each log is read line by
//! line, a row is held only until the events that complete it (a gate's floor, a pending
//! approval) have been read, and rows are written in batches, so memory does not grow with the
//! number or the size of the logs. A log that does not verify is exported with its verdict,
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
mod lines;
mod log_rows;
mod row;
mod schema;
mod sink;
mod walk;

pub use export::{ExportError, ExportOptions, ExportSummary, Progress, export, export_to_path};
pub use log_rows::{LogVerdict, read_log_rows};
pub use row::Row;
pub use schema::{COLUMNS, Column, ColumnType, SCHEMA_VERSION, arrow_schema};
pub use sink::{Format, RowSink, open_sink};
pub use walk::{LOG_EXTENSION, expand_inputs};
