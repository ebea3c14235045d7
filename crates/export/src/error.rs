//! Why an export stopped: one error type for every module of the crate.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

/// Why an export stopped.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A log could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The log (or directory).
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The output could not be written.
    #[error("cannot write the output: {0}")]
    Output(io::Error),
    /// The Parquet writer failed.
    #[error("cannot write the Parquet file: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// An Arrow batch could not be built.
    #[error("cannot build the Arrow batch: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The CSV writer failed.
    #[error("cannot write the CSV file: {0}")]
    Csv(#[from] csv::Error),
}
