//! The gateway's session log: the runtime's [`SessionLog`] (header, hash chain, seal), and
//! the one thing a gateway adds: another process may append to the same file while the
//! gateway runs (`decision approve LOG ID` records its answer there), so before each of its own
//! lines the gateway checks whether the file grew behind it and, if so, reopens the log to
//! continue the chain from the file's last line.
//!
//! The check and the write are not one atomic step: an answer written in the instant between
//! them would break the chain (replay then reports it; nothing runs on a broken answer, since
//! answers are read from the file). A lock per writer removes that window; until the log has
//! one, approvals are written rarely and by a person, which keeps the window theoretical.

use std::path::{Path, PathBuf};

use decision::log::{FsyncPolicy, LogError, LogHead, LogHeader, SealKey, SessionLog, now_ms};
use serde_json::{Map, Value};

use crate::gate::Verdict;

/// Lines reach the file as they are appended (a `write` each, so a crash of the gateway loses
/// nothing it acted on) and are not forced to disk one by one: the seal syncs.
const POLICY: FsyncPolicy = FsyncPolicy::Never;

/// An open gateway session log.
pub struct Session {
    log: SessionLog,
    path: PathBuf,
    /// The file's length after the gateway's own last write.
    written: u64,
    seal_key: Option<SealKey>,
}

fn length(path: &Path) -> Result<u64, LogError> {
    std::fs::metadata(path).map(|m| m.len()).map_err(|source| LogError::Io { path: path.to_path_buf(), source })
}

impl Session {
    /// Creates the log at `path` (never over an existing file) with a new session id, keyed
    /// seals when `seal_key` is given.
    pub fn create(path: &Path, seal_key: Option<SealKey>) -> Result<Session, LogError> {
        let created = now_ms();
        let header =
            LogHeader { id: format!("mcp-{created}-{}", std::process::id()), created_at_ms: created, cwd: None };
        let mut log = SessionLog::create(path, &header, POLICY)?;
        log.set_seal_key(seal_key.clone());
        Ok(Session { log, path: path.to_path_buf(), written: length(path)?, seal_key })
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Continues the chain from the file when another process appended to it.
    fn catch_up(&mut self) -> Result<(), LogError> {
        if length(&self.path)? != self.written {
            let mut log = SessionLog::open(&self.path, POLICY)?;
            log.set_seal_key(self.seal_key.clone());
            log.set_run(self.log.run());
            self.log = log;
        }
        Ok(())
    }

    fn wrote(&mut self) -> Result<(), LogError> {
        self.written = length(&self.path)?;
        Ok(())
    }

    /// Appends an event `{"type": event_type, …payload}`.
    pub fn event(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), LogError> {
        self.catch_up()?;
        self.log.append_owned(event_type, payload)?;
        self.wrote()
    }

    /// Appends the `decision` event of a verdict, with its frame.
    pub fn decision(&mut self, verdict: &Verdict) -> Result<(), LogError> {
        self.catch_up()?;
        self.log.append_decision(&verdict.decision.to_event(Some(verdict.frame.to_value())))?;
        self.wrote()
    }

    /// Ends the session with the seal line and syncs the file.
    pub fn seal(mut self) -> Result<LogHead, LogError> {
        self.catch_up()?;
        self.log.seal()
    }
}
