//! The session-log writer: append-only JSON Lines in the reference's layout, each envelope
//! chained to the previous line by `seq` and `prev`, whole lines per write (see
//! [`SessionLog`] for when lines reach the file).

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use decision_protocol::digest::{integer_key, write_string, write_value};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::LogError;
use super::envelope::{parse_line, push_hex32};
use super::event::{DecisionEvent, FramedDecisionEvent, GraphEvent, NodeDecisionEvent};
use super::seal::{LogHead, SealKey};
use crate::lines::{DEFAULT_MAX_LINE, Line, LineReader};

/// The session-log format version written in the header.
pub const LOG_VERSION: u64 = 2;

/// The header's `chain` claim: every line after it carries `seq` and `prev` (SHA-256). Replay
/// refuses a log that makes this claim and carries no chain, so stripping the chain fields
/// does not turn a log into a "reference-written" one.
pub const CHAIN_CLAIM: &str = "sha256";

/// Held lines beyond this many bytes are written at the next append even without a commit, so
/// a caller that never commits does not hold the whole log in memory. Writing early is always
/// safe: only writing late could let an action precede its decision.
const MAX_HELD_BYTES: usize = 1 << 20;

/// The held-line buffer keeps at most this much capacity between commits.
const KEPT_CAPACITY: usize = 256 << 10;

/// When written lines are forced to stable storage. Syncs are counted in appended lines; a
/// due sync writes any lines held by group commit first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// Leave it to the operating system (fastest; a crash of the machine may lose the last
    /// written lines).
    #[default]
    Never,
    /// Write and `fsync` every line as it is appended (each decision is durable before the
    /// loop acts on it; lines are never held, even with group commit).
    EveryLine,
    /// Write and `fsync` after every `n` appended lines, and when the log is dropped.
    Every(u32),
}

/// The header line's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHeader {
    /// The session id: `^[A-Za-z0-9_-]{1,64}$`.
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// The working directory the session ran in, when the host records it (`cwd`).
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

/// Takes the advisory exclusive lock on the log file: one writer at a time. The lock is held
/// as long as the file stays open (the [`SessionLog`] lives) and released by the system when
/// the process ends, however it ends.
fn lock(file: &File, path: &Path) -> Result<(), LogError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(LogError::Locked(path.to_path_buf())),
        Err(std::fs::TryLockError::Error(source)) => Err(LogError::Io { path: path.to_path_buf(), source }),
    }
}

/// A torn last line that [`SessionLog::open_repairing`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repair {
    /// Its 1-based line number.
    pub line: u64,
    /// How many bytes of it were in the file.
    pub bytes: u64,
}

/// An open session log.
///
/// # When lines reach the file
///
/// Every line is complete and chained (`seq`, `prev`) when it is appended, and lines reach the
/// file only whole: each `write` carries one or more complete lines. By default each line is
/// written as it is appended. With group commit ([`SessionLog::set_group_commit`]) appended
/// lines are held in memory and [`SessionLog::commit`] writes all of them with one `write`;
/// dropping the log commits too, and held lines past 1 MiB are written at once. The coding
/// host commits before every side effect (a tool call, an audit record, a question to a
/// person, generation), at every step boundary and at the end of the run, so a decision is in
/// the file before the action it led to takes effect.
///
/// A crash of the process loses at most the lines appended since the last commit, and the
/// rest still verifies and can be reopened and appended to. A process killed *during* a
/// `write` — or the machine failing — can leave the last line torn (the kernel may stop a
/// write of several pages at a page boundary): [`SessionLog::open`] refuses to append after
/// it, [`SessionLog::open_repairing`] removes it (it belongs to the group whose `write` never
/// returned), and replay reports it. After a failed `write` nothing more is appended: how much
/// of it reached the file is unknown.
///
/// The [`FsyncPolicy`] counts appended lines; a sync that falls due first writes the held
/// lines, so a synced line is always a written one.
pub struct SessionLog {
    file: File,
    path: PathBuf,
    /// The `seq` of the next line.
    seq: u64,
    /// SHA-256 of the last line appended (or found).
    prev: [u8; 32],
    run: u64,
    policy: FsyncPolicy,
    /// Lines appended since the last sync.
    unsynced: u32,
    clock: Box<dyn Fn() -> u64 + Send>,
    /// Complete, chained lines (each ending in `\n`) not yet written. Each line is built in
    /// place at its end, so no line is copied on its way to the file.
    held: String,
    /// Whether appended lines wait for [`SessionLog::commit`].
    group_commit: bool,
    /// A write failed: how much of it reached the file is unknown, so nothing more may be
    /// appended (the next line could be glued onto a torn one).
    failed: bool,
    /// The key of the keyed seal, if any.
    seal_key: Option<SealKey>,
    /// The header's session id, when the header was written or read here.
    session: Option<String>,
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
        lock(&file, &path)?;
        let mut log = SessionLog::with_file(file, path, 0, [0; 32], 0, policy);
        log.session = Some(header.id.clone());
        let start = log.begin_line()?;
        let line = &mut log.held;
        let _ = write!(line, "{{\"kind\":\"header\",\"v\":{LOG_VERSION},\"id\":");
        write_string(&header.id, line);
        let _ = write!(line, ",\"createdAt\":{}", header.created_at_ms);
        if let Some(cwd) = &header.cwd {
            line.push_str(",\"cwd\":");
            write_string(cwd, line);
        }
        line.push_str(",\"chain\":");
        write_string(CHAIN_CLAIM, line);
        line.push_str(",\"seq\":0}");
        log.end_line(start)?;
        Ok(log)
    }

    /// Reopens an existing log for appending, continuing its chain. A log whose last line
    /// was cut short is refused: appending would glue the new line onto the torn one (see
    /// [`SessionLog::open_repairing`]).
    pub fn open(path: impl AsRef<Path>, policy: FsyncPolicy) -> Result<Self, LogError> {
        Self::open_with(path.as_ref(), policy, false).map(|(log, _)| log)
    }

    /// Reopens an existing log for appending, as [`SessionLog::open`] does, first removing a
    /// torn last line, and says what was removed.
    ///
    /// A torn last line is what a process killed during a `write` leaves: the kernel can stop
    /// a write of several pages at a page boundary. Lines reach the file only whole and in
    /// order, one group per `write`, and the host acts only after its `write` returned, so the
    /// torn line belongs to the last group, whose `write` never returned: nothing that line
    /// recorded took effect. Removing it (truncating the file to the end of the last whole
    /// line) loses nothing that happened, and the chain continues from the last whole line.
    pub fn open_repairing(path: impl AsRef<Path>, policy: FsyncPolicy) -> Result<(Self, Option<Repair>), LogError> {
        Self::open_with(path.as_ref(), policy, true)
    }

    fn open_with(path: &Path, policy: FsyncPolicy, repair: bool) -> Result<(Self, Option<Repair>), LogError> {
        let path = path.to_path_buf();
        let io_error = |source| LogError::Io { path: path.clone(), source };
        // The lock is taken before the log is read: what is read is what is appended to.
        let file = OpenOptions::new().append(true).open(&path).map_err(io_error)?;
        lock(&file, &path)?;
        let reader = File::open(&path).map_err(io_error)?;
        let mut lines = LineReader::new(io::BufReader::new(reader), DEFAULT_MAX_LINE);
        let mut last: Option<([u8; 32], Option<u64>)> = None;
        let mut count = 0u64;
        let mut run = 0u64;
        let mut torn: Option<(u64, u64)> = None;
        let mut session = None;
        while let Some(line) = lines.next_line().map_err(io_error)? {
            match line {
                Line::Text { terminated: false, number, bytes } if repair => torn = Some((number, bytes.len() as u64)),
                Line::TooLong { terminated: false, number, length, .. } if repair => torn = Some((number, length)),
                Line::Text { terminated: false, number, .. } | Line::TooLong { terminated: false, number, .. } => {
                    return Err(LogError::TornTail { path, line: number });
                }
                Line::Text { bytes: [], .. } => {}
                Line::Text { bytes, .. } => {
                    count += 1;
                    let parsed = parse_line(bytes).ok();
                    match parsed.as_ref().map(|p| &p.kind) {
                        Some(super::envelope::LineKind::Event { run: r, .. }) => run = *r,
                        Some(super::envelope::LineKind::Header { id, .. }) if count == 1 => session.clone_from(id),
                        _ => {}
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
        let repaired = match torn {
            Some((line, bytes)) => {
                let length = file.metadata().map_err(io_error)?.len();
                file.set_len(length.saturating_sub(bytes)).map_err(io_error)?;
                file.sync_data().map_err(io_error)?;
                Some(Repair { line, bytes })
            }
            None => None,
        };
        let seq = last_seq.map_or(count, |s| s + 1);
        let mut log = SessionLog::with_file(file, path, seq, prev, run, policy);
        log.session = session;
        Ok((log, repaired))
    }

    fn with_file(file: File, path: PathBuf, seq: u64, prev: [u8; 32], run: u64, policy: FsyncPolicy) -> Self {
        SessionLog {
            file,
            path,
            seq,
            prev,
            run,
            policy,
            unsynced: 0,
            clock: Box::new(now_ms),
            held: String::with_capacity(16 << 10),
            group_commit: false,
            failed: false,
            seal_key: None,
            session: None,
        }
    }

    /// Keys the seals this log writes ([`super::seal`]): only a holder of the key can then
    /// produce a seal that verifies.
    pub fn set_seal_key(&mut self, key: Option<SealKey>) {
        self.seal_key = key;
    }

    /// The key the seals are keyed with, if any (approval answers are bound under it too).
    pub fn seal_key(&self) -> Option<&SealKey> {
        self.seal_key.as_ref()
    }

    /// The session id of the log's header: written by [`SessionLog::create`], read by
    /// [`SessionLog::open`] (`None` when the first line is not a header with an id).
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The last line appended: its `seq` and SHA-256 (`None` before any line was appended,
    /// which a log never is: its header is its first line).
    pub fn head(&self) -> Option<LogHead> {
        self.seq.checked_sub(1).map(|seq| LogHead { seq, sha256: self.prev })
    }

    /// Ends the run with a seal line — the count of the lines before it, chained to the last
    /// of them, keyed when a key is set — writes every held line, syncs unless the policy
    /// is [`FsyncPolicy::Never`], and returns the log's new head.
    pub fn seal(&mut self) -> Result<LogHead, LogError> {
        let start = self.begin_line()?;
        let mut number = itoa::Buffer::new();
        self.held.push_str("{\"kind\":\"seal\",\"run\":");
        self.held.push_str(number.format(self.run));
        self.held.push_str(",\"lines\":");
        self.held.push_str(number.format(self.seq));
        if let Some(key) = &self.seal_key {
            self.held.push_str(",\"mac\":\"");
            push_hex32(&key.mac(self.seq, &self.prev), &mut self.held);
            self.held.push('"');
        }
        self.end_event(start)?;
        match self.policy {
            FsyncPolicy::Never => self.commit()?,
            FsyncPolicy::EveryLine | FsyncPolicy::Every(_) => self.sync()?,
        }
        self.head().ok_or_else(|| LogError::Empty(self.path.clone()))
    }

    /// Replaces the clock that stamps `at` (milliseconds since the epoch).
    pub fn set_clock(&mut self, clock: impl Fn() -> u64 + Send + 'static) {
        self.clock = Box::new(clock);
    }

    /// Sets the 0-based run index stamped on the following events.
    pub fn set_run(&mut self, run: u64) {
        self.run = run;
    }

    /// The 0-based run index stamped on appended events.
    pub fn run(&self) -> u64 {
        self.run
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Turns group commit on or off (see the module documentation). Turning it off commits
    /// the lines held so far.
    pub fn set_group_commit(&mut self, enabled: bool) -> Result<(), LogError> {
        if !enabled {
            self.commit()?;
        }
        self.group_commit = enabled;
        Ok(())
    }

    /// [`SessionLog::set_group_commit`] turned on, for building.
    pub fn with_group_commit(mut self) -> Self {
        self.group_commit = true;
        self
    }

    /// Whether appended lines wait for [`SessionLog::commit`].
    pub fn group_commit(&self) -> bool {
        self.group_commit
    }

    /// How many bytes of complete lines are held, not yet written.
    pub fn held_bytes(&self) -> usize {
        self.held.len()
    }

    /// Appends an event `{"type": event_type, …payload}` (a `type` key in the payload is
    /// ignored).
    pub fn append_event(&mut self, event_type: &str, payload: &Map<String, Value>) -> Result<(), LogError> {
        let start = self.begin_event()?;
        write_typed_event(event_type, payload, &mut self.held);
        self.end_event(start)
    }

    /// [`SessionLog::append_event`] for a payload the caller gives up. A payload that already
    /// starts with this `type` (a decision record) is written as it is.
    pub fn append_owned(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), LogError> {
        self.append_event(event_type, &payload)
    }

    /// Appends a `decision` event (`runtime.md` §4.1).
    pub fn append_decision(&mut self, decision: &DecisionEvent) -> Result<(), LogError> {
        let start = self.begin_event()?;
        decision.write_to(&mut self.held);
        self.end_event(start)
    }

    /// Appends the `decision` event of a graph node's decision, written from where it was
    /// decided (nothing is copied into an intermediate value).
    pub fn append_node_decision(&mut self, record: &NodeDecisionEvent<'_>) -> Result<(), LogError> {
        let start = self.begin_event()?;
        record.write_to(&mut self.held);
        self.end_event(start)
    }

    /// Appends the `decision` event of one block asked alone, written from its frame and
    /// its questions' text ([`FramedDecisionEvent`]).
    pub fn append_framed_decision(&mut self, record: &FramedDecisionEvent<'_>) -> Result<(), LogError> {
        let start = self.begin_event()?;
        record.write_to(&mut self.held);
        self.end_event(start)
    }

    /// Appends one of the executor's own events ([`GraphEvent`]), written as it is.
    pub fn append_graph_event(&mut self, event: &GraphEvent<'_>) -> Result<(), LogError> {
        let start = self.begin_event()?;
        event.write_to(&mut self.held);
        self.end_event(start)
    }

    /// Writes every held line with one `write`. After it returns `Ok`, the file ends with
    /// exactly the lines appended so far, each whole.
    pub fn commit(&mut self) -> Result<(), LogError> {
        self.refuse_after_failure()?;
        if self.held.is_empty() {
            return Ok(());
        }
        let result = self.file.write_all(self.held.as_bytes());
        self.held.clear();
        if self.held.capacity() > KEPT_CAPACITY {
            self.held.shrink_to(KEPT_CAPACITY);
        }
        result.map_err(|source| {
            self.failed = true;
            LogError::Io { path: self.path.clone(), source }
        })
    }

    /// Writes the held lines, then forces every written line to stable storage.
    pub fn sync(&mut self) -> Result<(), LogError> {
        self.commit()?;
        self.unsynced = 0;
        self.file.sync_data().map_err(|source| LogError::Io { path: self.path.clone(), source })
    }

    fn refuse_after_failure(&self) -> Result<(), LogError> {
        match self.failed {
            false => Ok(()),
            true => Err(LogError::Io {
                path: self.path.clone(),
                source: io::Error::other(
                    "an earlier write failed and may have left a torn line; nothing more is appended",
                ),
            }),
        }
    }

    /// Starts an event line at the end of the held lines; returns where it starts.
    fn begin_event(&mut self) -> Result<usize, LogError> {
        let start = self.begin_line()?;
        // Written in place: no intermediate strings (writing to a String cannot fail).
        let mut number = itoa::Buffer::new();
        self.held.push_str("{\"kind\":\"event\",\"run\":");
        self.held.push_str(number.format(self.run));
        self.held.push_str(",\"at\":");
        self.held.push_str(number.format((self.clock)()));
        self.held.push_str(",\"e\":");
        Ok(start)
    }

    fn end_event(&mut self, start: usize) -> Result<(), LogError> {
        self.held.push_str(",\"seq\":");
        self.held.push_str(itoa::Buffer::new().format(self.seq));
        self.held.push_str(",\"prev\":\"");
        push_hex32(&self.prev, &mut self.held);
        self.held.push_str("\"}");
        self.end_line(start)
    }

    fn begin_line(&mut self) -> Result<usize, LogError> {
        self.refuse_after_failure()?;
        Ok(self.held.len())
    }

    /// Chains the line that starts at `start`, ends it with `\n`, and writes (and syncs) what
    /// is due.
    fn end_line(&mut self, start: usize) -> Result<(), LogError> {
        let line = self.held.get(start..).unwrap_or_default();
        self.prev = Sha256::digest(line.as_bytes()).into();
        self.held.push('\n');
        self.seq += 1;
        self.unsynced = self.unsynced.saturating_add(1);
        let sync_due = match self.policy {
            FsyncPolicy::Never => false,
            FsyncPolicy::EveryLine => true,
            FsyncPolicy::Every(n) => self.unsynced >= n.max(1),
        };
        if sync_due {
            self.sync()
        } else if !self.group_commit || self.held.len() > MAX_HELD_BYTES {
            self.commit()
        } else {
            Ok(())
        }
    }
}

/// Writes `{"type": event_type, …payload}` (a `type` member of the payload left out) as
/// `JSON.stringify` writes that object.
fn write_typed_event(event_type: &str, payload: &Map<String, Value>, out: &mut String) {
    // `JSON.stringify` writes integer-like keys before `type`; such payloads take the slow road.
    if payload.keys().any(|k| integer_key(k).is_some()) {
        let mut event = Map::with_capacity(payload.len() + 1);
        event.insert("type".to_owned(), Value::String(event_type.to_owned()));
        event.extend(payload.iter().filter(|(k, _)| *k != "type").map(|(k, v)| (k.clone(), v.clone())));
        write_value(&Value::Object(event), out);
        return;
    }
    out.push_str("{\"type\":");
    write_string(event_type, out);
    for (key, value) in payload {
        if key != "type" {
            out.push(',');
            write_string(key, out);
            out.push(':');
            write_value(value, out);
        }
    }
    out.push('}');
}

impl Drop for SessionLog {
    fn drop(&mut self) {
        // Nothing useful can be done with an error while dropping.
        if self.failed {
            return;
        }
        let _ = self.commit();
        if matches!(self.policy, FsyncPolicy::Every(_)) && self.unsynced > 0 {
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
