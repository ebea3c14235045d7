//! The session-log writer: append-only JSON Lines in the reference's layout, one whole line
//! per write, each envelope chained to the previous line by `seq` and `prev`.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use decision_core::digest::write_value;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::LogError;
use super::envelope::{parse_line, push_hex32};
use super::event::DecisionEvent;
use super::lines::{DEFAULT_MAX_LINE, Line, LineReader};

/// The session-log format version written in the header.
pub const LOG_VERSION: u64 = 2;

/// When written lines are forced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Leave it to the operating system (fastest; a crash may lose the last lines).
    #[default]
    Never,
    /// `fsync` after every line (each decision is durable before the loop acts on it).
    EveryLine,
    /// `fsync` after every `n` lines, and when the log is dropped.
    Every(u32),
}

/// The header line's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHeader {
    /// The session id: `^[A-Za-z0-9_-]{1,64}$`.
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    pub cwd: Option<String>,
}

/// Whether `id` is a valid session id.
pub fn is_valid_session_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)).unwrap_or(0)
}

/// An open session log.
pub struct SessionLog {
    file: File,
    path: PathBuf,
    /// The `seq` of the next line.
    seq: u64,
    /// SHA-256 of the last line written (or found).
    prev: [u8; 32],
    run: u64,
    policy: FsyncPolicy,
    unsynced: u32,
    clock: Box<dyn Fn() -> u64 + Send>,
    line: String,
}

impl SessionLog {
    /// Creates a new log (refusing to overwrite an existing file) and writes its header.
    pub fn create(path: impl AsRef<Path>, header: &LogHeader, policy: FsyncPolicy) -> Result<Self, LogError> {
        let path = path.as_ref().to_path_buf();
        if !is_valid_session_id(&header.id) {
            return Err(LogError::InvalidSessionId(header.id.clone()));
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|source| LogError::Io { path: path.clone(), source })?;
        let mut log = SessionLog {
            file,
            path,
            seq: 0,
            prev: [0; 32],
            run: 0,
            policy,
            unsynced: 0,
            clock: Box::new(now_ms),
            line: String::with_capacity(4096),
        };
        let mut line = String::with_capacity(128);
        line.push_str("{\"kind\":\"header\",\"v\":");
        line.push_str(&LOG_VERSION.to_string());
        line.push_str(",\"id\":");
        write_value(&Value::String(header.id.clone()), &mut line);
        line.push_str(",\"createdAt\":");
        line.push_str(&header.created_at_ms.to_string());
        if let Some(cwd) = &header.cwd {
            line.push_str(",\"cwd\":");
            write_value(&Value::String(cwd.clone()), &mut line);
        }
        line.push_str(",\"seq\":0}");
        log.line = line;
        log.write_line()?;
        Ok(log)
    }

    /// Reopens an existing log for appending, continuing its chain. A log whose last line
    /// was cut short is refused: appending would glue the new line onto the torn one.
    pub fn open(path: impl AsRef<Path>, policy: FsyncPolicy) -> Result<Self, LogError> {
        let path = path.as_ref().to_path_buf();
        let io_error = |source| LogError::Io { path: path.clone(), source };
        let reader = File::open(&path).map_err(io_error)?;
        let mut lines = LineReader::new(io::BufReader::new(reader), DEFAULT_MAX_LINE);
        let mut last: Option<([u8; 32], Option<u64>)> = None;
        let mut count = 0u64;
        let mut run = 0u64;
        while let Some(line) = lines.next_line().map_err(io_error)? {
            match line {
                Line::Text { terminated: false, number, .. } | Line::TooLong { terminated: false, number, .. } => {
                    return Err(LogError::TornTail { path, line: number });
                }
                Line::Text { bytes: [], .. } => {}
                Line::Text { bytes, .. } => {
                    count += 1;
                    let parsed = parse_line(bytes).ok();
                    if let Some(super::envelope::LineKind::Event { run: r, .. }) = parsed.as_ref().map(|p| &p.kind) {
                        run = *r;
                    }
                    last = Some((Sha256::digest(bytes).into(), parsed.and_then(|p| p.chain.seq)));
                }
                Line::TooLong { sha256, .. } => {
                    count += 1;
                    last = Some((sha256, None));
                }
            }
        }
        let (prev, last_seq) = last.ok_or_else(|| LogError::Empty(path.clone()))?;
        let file = OpenOptions::new().append(true).open(&path).map_err(io_error)?;
        Ok(SessionLog {
            file,
            path,
            seq: last_seq.map_or(count, |s| s + 1),
            prev,
            run,
            policy,
            unsynced: 0,
            clock: Box::new(now_ms),
            line: String::with_capacity(4096),
        })
    }

    /// Replaces the clock that stamps `at` (milliseconds since the epoch).
    pub fn set_clock(&mut self, clock: impl Fn() -> u64 + Send + 'static) {
        self.clock = Box::new(clock);
    }

    /// Sets the 0-based run index stamped on the following events.
    pub fn set_run(&mut self, run: u64) {
        self.run = run;
    }

    pub fn run(&self) -> u64 {
        self.run
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends an event `{"type": event_type, …payload}` (a `type` key in the payload is
    /// ignored).
    pub fn append_event(&mut self, event_type: &str, payload: &Map<String, Value>) -> Result<(), LogError> {
        let mut event = Map::with_capacity(payload.len() + 1);
        event.insert("type".to_owned(), Value::String(event_type.to_owned()));
        for (key, value) in payload {
            if key != "type" {
                event.insert(key.clone(), value.clone());
            }
        }
        self.append_value(&Value::Object(event))
    }

    /// [`SessionLog::append_event`] for a payload the caller gives up, so nothing is copied. A
    /// payload that already starts with this `type` (a decision record) is written as it is.
    pub fn append_owned(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), LogError> {
        let typed = payload.iter().next().is_some_and(|(k, v)| k == "type" && v.as_str() == Some(event_type));
        let event = match typed {
            true => payload,
            false => {
                let mut event = Map::with_capacity(payload.len() + 1);
                event.insert("type".to_owned(), Value::String(event_type.to_owned()));
                event.extend(payload.into_iter().filter(|(k, _)| k != "type"));
                event
            }
        };
        self.append_value(&Value::Object(event))
    }

    /// Appends a `decision` event (`runtime.md` §4.1).
    pub fn append_decision(&mut self, decision: &DecisionEvent) -> Result<(), LogError> {
        self.append_value(&decision.to_value())
    }

    fn append_value(&mut self, event: &Value) -> Result<(), LogError> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        // Written in place: no intermediate strings (writing to a String cannot fail).
        let _ = write!(line, "{{\"kind\":\"event\",\"run\":{},\"at\":{},\"e\":", self.run, (self.clock)());
        write_value(event, &mut line);
        let _ = write!(line, ",\"seq\":{},\"prev\":\"", self.seq);
        push_hex32(&self.prev, &mut line);
        line.push_str("\"}");
        self.line = line;
        self.write_line()
    }

    /// Writes `self.line` plus `\n` with a single `write_all`, then advances the chain.
    fn write_line(&mut self) -> Result<(), LogError> {
        let hash: [u8; 32] = Sha256::digest(self.line.as_bytes()).into();
        self.line.push('\n');
        let result = self.file.write_all(self.line.as_bytes());
        self.line.pop();
        result.map_err(|source| LogError::Io { path: self.path.clone(), source })?;
        self.prev = hash;
        self.seq += 1;
        self.unsynced += 1;
        let due = match self.policy {
            FsyncPolicy::Never => false,
            FsyncPolicy::EveryLine => true,
            FsyncPolicy::Every(n) => self.unsynced >= n.max(1),
        };
        if due {
            self.sync()?;
        }
        Ok(())
    }

    /// Forces written lines to stable storage.
    pub fn sync(&mut self) -> Result<(), LogError> {
        self.unsynced = 0;
        self.file.sync_data().map_err(|source| LogError::Io { path: self.path.clone(), source })
    }
}

impl Drop for SessionLog {
    fn drop(&mut self) {
        if matches!(self.policy, FsyncPolicy::Every(_)) && self.unsynced > 0 {
            // Nothing useful can be done with an error while dropping.
            let _ = self.file.sync_data();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_reference_pattern() {
        assert!(is_valid_session_id("abc_DEF-123"));
        assert!(is_valid_session_id(&"a".repeat(64)));
        assert!(!is_valid_session_id(&"a".repeat(65)));
        assert!(!is_valid_session_id(""));
        assert!(!is_valid_session_id("a/b"));
        assert!(!is_valid_session_id("ü"));
    }
}
