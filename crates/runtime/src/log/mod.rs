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

pub mod envelope;
mod event;
pub mod policy;
pub mod replay;
pub mod seal;
pub mod what_if;
mod writer;

use std::io;
use std::path::PathBuf;

use thiserror::Error;

pub use event::{DecisionEvent, DecisionRecord, GraphEvent, NO_CONSUMER};
pub use replay::{ChainStatus, LogReport, RecordResult, ReplayOptions, SealStatus, replay_file, replay_reader};
pub use seal::{LogHead, SEAL_KEY_VARIABLE, SealKey, read_head};
pub use writer::{CHAIN_CLAIM, FsyncPolicy, LOG_VERSION, LogHeader, Repair, SessionLog, is_valid_session_id, now_ms};

#[derive(Debug, Error)]
pub enum LogError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("invalid session id {0:?}: expected 1 to 64 of A-Z, a-z, 0-9, `_` and `-`")]
    InvalidSessionId(String),
    #[error("{path}: line {line} was cut short; appending after it would corrupt the next line")]
    TornTail { path: PathBuf, line: u64 },
    #[error("{0}: the log is empty (no header line)")]
    Empty(PathBuf),
}
