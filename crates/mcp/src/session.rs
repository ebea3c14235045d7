//! The gateway's session log: the runtime's [`SessionLog`] (header, hash chain, seal), held
//! — and locked — by the gateway for the whole session. The gateway is the log's one writer:
//! answers from `decision approve` reach it through the inbox ([`crate::inbox`]) and are
//! appended here, after their binding is checked, never by another process.

use std::path::Path;

use decision::log::approval::{self, ApprovalError, Pending, PendingCall, Verdict};
use decision::log::{FsyncPolicy, LogError, LogHead, LogHeader, SealKey, SessionLog, now_ms};
use serde_json::{Map, Value};

use crate::gate::Verdict as Decided;

/// Lines reach the file as they are appended (a `write` each, so a crash of the gateway loses
/// nothing it acted on, and `decision approvals` sees a held call at once) and are not forced
/// to disk one by one: the seal syncs.
const POLICY: FsyncPolicy = FsyncPolicy::Never;

/// How many sessions this process has begun.
static SESSIONS_BEGUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// An open gateway session log.
pub struct Session {
    log: SessionLog,
}

impl Session {
    /// Creates the log at `path` (never over an existing file) with a new session id, keyed
    /// seals and approval bindings when `seal_key` is given.
    pub fn create(path: &Path, seal_key: Option<SealKey>) -> Result<Session, LogError> {
        let created = now_ms();
        // Sessions a listening gateway begins in the same millisecond differ by their number.
        let number = SESSIONS_BEGUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("mcp-{created}-{}-{number}", std::process::id());
        let header = LogHeader { id, created_at_ms: created, cwd: None };
        let mut log = SessionLog::create(path, &header, POLICY)?;
        log.set_seal_key(seal_key);
        Ok(Session { log })
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Whether seals and answers are keyed.
    pub fn keyed(&self) -> bool {
        self.log.seal_key().is_some()
    }

    /// Appends an event `{"type": event_type, …payload}`.
    pub fn event(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), LogError> {
        self.log.append_owned(event_type, payload)
    }

    /// Appends the `decision` event of a verdict, with its frame.
    pub fn decision(&mut self, verdict: &Decided) -> Result<(), LogError> {
        self.log.append_decision(&verdict.decision.to_event(Some(verdict.frame.to_value())))
    }

    /// Records a held call (`approval:pending`), in the file when this returns.
    pub fn pending(&mut self, call: PendingCall) -> Result<Pending, LogError> {
        approval::append_pending(&mut self.log, call)
    }

    /// Records the gateway's own answer to a held call, bound to it.
    pub fn bound_answer(&mut self, pending: &mut Pending, verdict: &Verdict) -> Result<(), ApprovalError> {
        approval::append_bound_answer(&mut self.log, pending, verdict).map(|_| ())
    }

    /// Records an answer built by another process, after checking that it is bound to this
    /// held call in this session under this log's key; an answer that does not hold is
    /// refused and nothing is written.
    pub fn checked_answer(&mut self, pending: &mut Pending, event: Map<String, Value>) -> Result<(), ApprovalError> {
        approval::append_checked_answer(&mut self.log, pending, event)
    }

    /// Records that the approved call of step `step` runs now (`approval:used`).
    pub fn used(&mut self, pending: &mut Pending, step: u64) -> Result<(), ApprovalError> {
        approval::append_used(&mut self.log, pending, Some(step))
    }

    /// Ends the session with the seal line and syncs the file.
    pub fn seal(mut self) -> Result<LogHead, LogError> {
        let head = self.log.seal()?;
        self.log.sync()?;
        Ok(head)
    }
}
