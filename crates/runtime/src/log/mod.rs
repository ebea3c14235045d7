//! The session log: the reference's JSON Lines layout (`runtime.md` §4.3) — a header line,
//! then one event envelope per line — written append-only with a hash chain, read back in a
//! streaming pass, and replayed: every `decision-record/v1` record re-verified.
//!
//! Each line this crate writes also carries `seq` (0 on the header, then one more per line)
//! and `prev` (the SHA-256 of the previous line's bytes). The reference ignores both; replay
//! uses them to detect a deleted, inserted, reordered or changed line. The header claims the
//! chain (`"chain":"sha256"`), so a log stripped of it does not pass for a reference-written
//! one. A finished run ends with a seal line ([`seal`]), so a log cut short is told apart
//! from a finished one, and the log's head (its last line's `seq` and hash) names the whole
//! log, its last byte included.

pub mod approval;
pub mod envelope;
mod event;
pub mod heads;
pub mod policy;
pub mod replay;
pub mod seal;
pub mod what_if;
mod writer;

use std::io;
use std::path::PathBuf;

use thiserror::Error;

pub use event::{DecisionEvent, FramedDecisionEvent, GraphEvent, NO_CONSUMER, NodeDecisionEvent};
pub use replay::{
    ChainStatus, LogReport, ObservedLine, RecordResult, ReplayOptions, SealStatus, replay_file, replay_reader,
    replay_reader_observed, replay_reader_with_lines,
};
pub use seal::{KeyError, LogHead, SEAL_KEY_VARIABLE, SealKey, next_run, read_head};
pub use writer::{CHAIN_CLAIM, FsyncPolicy, LOG_VERSION, LogHeader, Repair, SessionLog, is_valid_session_id, now_ms};

/// Why the session log could not be opened, written or continued. After a write error the
/// log refuses further appends, so no line is ever half written between two whole ones.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LogError {
    /// Reading, writing or syncing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The log file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The session id is not `^[A-Za-z0-9_-]{1,64}$` (it names the file, so it is checked).
    #[error("invalid session id {0:?}: expected 1 to 64 of A-Z, a-z, 0-9, `_` and `-`")]
    InvalidSessionId(String),
    /// The log to continue ends in a line without its `\n` (a crash mid-write); see
    /// [`Repair`] for how to continue anyway.
    #[error("{path}: line {line} was cut short; appending after it would corrupt the next line")]
    TornTail {
        /// The log file.
        path: PathBuf,
        /// The 1-based number of the cut line.
        line: u64,
    },
    /// Another process (or another open log in this one) is writing the log: a log has one
    /// writer at a time (an advisory lock on the file).
    #[error(
        "{0}: another process is writing this log (it is locked); wait for it to finish — a log has one writer at a time"
    )]
    Locked(PathBuf),
    /// The log to continue has no header line.
    #[error("{0}: the log is empty (no header line)")]
    Empty(PathBuf),
}
