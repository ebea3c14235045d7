//! The inbox beside a running gateway's log: how `decision approve LOG ID` answers a held call
//! while the gateway holds the log.
//!
//! A session log has one writer at a time (an advisory lock), and a running gateway is that
//! writer, so another process cannot append an answer. Instead `decision approve` reads the
//! log without the lock, verifies what is there ([`verify_live`]), builds the answer bound to
//! the held call ([`decision::log::approval::answer_event`], under the log key on a keyed log),
//! and drops it as a file in the directory `LOG.answers/` ([`deliver`]). The gateway creates
//! that directory when it starts (mode 0700 on Unix), looks for `ID.json` there for each held
//! call ([`Inbox::take`]), checks the answer against the call it holds
//! ([`decision::log::approval::append_checked_answer`]) and only then records it and runs or
//! refuses the call. A forged, changed or misplaced answer is refused and reported; the call
//! stays held.
//!
//! Files are never followed through symbolic links: an answer is written to a new file
//! (created exclusively) and linked to its name (which fails if the name exists), and the
//! gateway opens it with `O_NOFOLLOW`, reading at most [`MAX_ANSWER`] bytes.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use decision::log::approval::{self, Ledger, Pending, Verdict};
use decision::log::{ChainStatus, ReplayOptions, SEAL_KEY_VARIABLE, SealKey, now_ms};
use serde_json::{Map, Value};
use thiserror::Error;

/// The largest answer file the gateway reads.
pub const MAX_ANSWER: u64 = 64 << 10;

/// The event the gateway records first in every session (its `keyed` member says whether the
/// log is keyed, which a live log's seals cannot say yet).
pub const START_EVENT: &str = "mcp:start";

/// Lines of the log longer than this are not held while it is verified.
const MAX_LINE: usize = 16 << 20;

/// The inbox directory of the log at `log`: `LOG.answers` beside it.
pub fn inbox_dir(log: &Path) -> PathBuf {
    let mut name = log.file_name().map(OsString::from).unwrap_or_default();
    name.push(".answers");
    log.with_file_name(name)
}

/// Whether `id` can name a file in the inbox: 1 to 128 of `A-Z a-z 0-9 _ -` (an approval id
/// the gateway makes always can).
pub fn valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A running gateway's inbox.
#[derive(Debug)]
pub struct Inbox {
    dir: PathBuf,
}

impl Inbox {
    /// Creates the inbox beside `log` (mode 0700 on Unix). An existing directory is used
    /// (answers left in it from another session do not bind to this one and are refused); a
    /// symbolic link or a file in its place is refused.
    pub fn create(log: &Path) -> io::Result<Inbox> {
        let dir = inbox_dir(log);
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if !fs::symlink_metadata(&dir)?.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!("{} exists and is not a directory", dir.display()),
                    ));
                }
            }
            Err(e) => return Err(e),
        }
        Ok(Inbox { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes the answer waiting for approval `id`, if one is there: the file is read (never
    /// through a symbolic link, at most [`MAX_ANSWER`] bytes) and removed. `Err` says why what
    /// was there is not an answer event.
    pub fn take(&self, id: &str) -> Option<Result<Map<String, Value>, String>> {
        if !valid_id(id) {
            return None;
        }
        let path = self.dir.join(format!("{id}.json"));
        let read = read_answer(&path);
        match read {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            other => {
                // Whatever was there is used once: a refused answer is not read again.
                let _ = fs::remove_file(&path);
                Some(match other {
                    Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                        Ok(Value::Object(event)) => Ok(event),
                        Ok(_) => Err("it is not a JSON object".into()),
                        Err(e) => Err(format!("it is not JSON: {e}")),
                    },
                    Err(e) => Err(e.to_string()),
                })
            }
        }
    }

    /// Removes the inbox and the files left in it (answers that came too late or were refused).
    pub fn remove(self) {
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        let _ = fs::remove_dir(&self.dir);
    }
}

fn read_answer(path: &Path) -> io::Result<Vec<u8>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "it is not a regular file"));
    }
    if metadata.len() > MAX_ANSWER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it has {} bytes, more than an answer has ({MAX_ANSWER})", metadata.len()),
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_ANSWER + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why an answer could not be handed to a running gateway.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HandOffError {
    /// The log does not verify as far as it is written.
    #[error("{path}: {}{reason}", line.map(|l| format!("line {l}: ")).unwrap_or_default(), path = path.display())]
    Refused {
        /// The log.
        path: PathBuf,
        /// The first line that fails, when one does.
        line: Option<u64>,
        /// What does not hold.
        reason: String,
    },
    /// The log is not a gateway's: its writer takes no answers from outside.
    #[error(
        "{0}: another process is writing this log and it is not a decision gateway, which alone takes answers while it runs; answer after it finishes"
    )]
    NotAGateway(PathBuf),
    /// The key in the environment does not fit the log.
    #[error("{0}")]
    Key(String),
    /// No held call has this id.
    #[error("no approval `{0}` in the log")]
    Unknown(String),
    /// The call has an answer already.
    #[error("approval `{0}` was already answered; an approval is answered once")]
    AlreadyAnswered(String),
    /// The recorded call does not match its fingerprint.
    #[error("approval `{0}`: the recorded call does not match its fingerprint (the log was changed)")]
    Tampered(String),
    /// A modified input was approved: the gateway runs calls as the agent made them.
    #[error(
        "the decision gateway runs a held call exactly as the agent made it, never a modified input: approve it as it is, or deny it"
    )]
    Modified,
    /// An answer to this call is already waiting in the inbox.
    #[error("an answer to approval `{0}` is already waiting for the gateway; an approval is answered once")]
    AlreadyWaiting(String),
    /// The inbox is missing or cannot be written.
    #[error("the gateway's inbox {path}: {why}")]
    Inbox {
        /// The inbox directory.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
}

/// A live gateway log, verified as far as it is written, and its approvals.
#[derive(Debug, Clone)]
pub struct LiveLog {
    /// The approvals, every recorded answer's binding checked.
    pub ledger: Ledger,
    /// Whether the gateway writes it keyed (its start event says so).
    pub keyed: bool,
}

/// Verifies a log a gateway is still writing, without its lock, as far as it is written: the
/// header, every link of the chain, every record, every seal so far, every recorded answer's
/// binding and single use (under `key`); a last line still being written is allowed. Lines
/// after the last keyed seal are not authenticated — a running log has none yet — which is
/// why the gateway checks the answer handed to it against the call it holds before it
/// records it. Refuses a log that is not a gateway's.
pub fn verify_live(path: &Path, key: Option<&SealKey>) -> Result<LiveLog, HandOffError> {
    let refuse = |line: Option<u64>, reason: String| HandOffError::Refused { path: path.to_path_buf(), line, reason };
    let options = ReplayOptions { max_line: MAX_LINE, seal_key: key.cloned(), ..ReplayOptions::default() };
    let report = approval::verify_lines(path, &options).map_err(|r| HandOffError::Refused {
        path: r.path,
        line: r.line,
        reason: r.reason,
    })?;
    if report.chain_status() != ChainStatus::Intact {
        return Err(refuse(None, format!("the chain is {}", report.chain_status().as_str())));
    }
    let mut keyed = None;
    let ledger = approval::read_ledger(path, key, MAX_LINE, &[START_EVENT], &mut |line| {
        if keyed.is_none() {
            keyed = Some(line.event.get("keyed").and_then(Value::as_bool) == Some(true));
        }
    })
    .map_err(|e| refuse(None, e.to_string()))?;
    let Some(keyed) = keyed else { return Err(HandOffError::NotAGateway(path.to_path_buf())) };
    if let Some((line, problem)) = ledger.problems().into_iter().next() {
        return Err(refuse(Some(line), problem));
    }
    Ok(LiveLog { ledger, keyed })
}

/// What [`hand_off`] did.
#[derive(Debug, Clone)]
pub struct HandedOff {
    /// The answer file written.
    pub file: PathBuf,
    /// The answer event in it.
    pub event: Map<String, Value>,
}

/// Answers held call `id` of the gateway running on the log at `path`: verifies the log as
/// far as it is written ([`verify_live`]), builds the answer bound to the call (keyed under
/// `key`, which a keyed log requires and an unkeyed one refuses) and [`deliver`]s it. The
/// gateway records it, or refuses it, on its next look (a tenth of a second).
pub fn hand_off(path: &Path, id: &str, verdict: &Verdict, key: Option<&SealKey>) -> Result<HandedOff, HandOffError> {
    if matches!(verdict, Verdict::ApproveModified(_)) {
        return Err(HandOffError::Modified);
    }
    let live = verify_live(path, key)?;
    match (live.keyed, key) {
        (true, None) => {
            return Err(HandOffError::Key(format!(
                "the gateway writes this log keyed and ${SEAL_KEY_VARIABLE} is not set: only a holder of the log key can answer"
            )));
        }
        (false, Some(_)) => {
            return Err(HandOffError::Key(format!(
                "the gateway writes this log without a key, and ${SEAL_KEY_VARIABLE} is set: unset it to answer an unkeyed log"
            )));
        }
        _ => {}
    }
    let pending = live.ledger.get(id).ok_or_else(|| HandOffError::Unknown(id.to_string()))?;
    if pending.answer.is_some() || pending.used {
        return Err(HandOffError::AlreadyAnswered(id.to_string()));
    }
    if !pending.call_matches() {
        return Err(HandOffError::Tampered(id.to_string()));
    }
    let session = live.ledger.session.clone().unwrap_or_default();
    let event = approval::answer_event(&session, pending, verdict, key, now_ms());
    let file = deliver(path, pending, &event)?;
    Ok(HandedOff { file, event })
}

/// Drops `event`, an answer to `pending`, into the inbox beside the log at `log`: written to
/// a new file, synced, then linked to `ID.json`, so the gateway never reads half an answer
/// and a second answer to the same call cannot replace the first.
pub fn deliver(log: &Path, pending: &Pending, event: &Map<String, Value>) -> Result<PathBuf, HandOffError> {
    let dir = inbox_dir(log);
    let fail = |why: String| HandOffError::Inbox { path: dir.clone(), why };
    if !valid_id(&pending.id) {
        return Err(fail(format!("`{}` cannot name an answer file", decision::terminal::one_line(&pending.id))));
    }
    match fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(fail("it is not a directory".into())),
        Err(e) => return Err(fail(format!("{e} (is the gateway running with --approvals queue or elicit?)"))),
    }
    let target = dir.join(format!("{}.json", pending.id));
    let temporary = dir.join(format!(".{}.{}.tmp", pending.id, std::process::id()));
    let write = || -> io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file: File = options.open(&temporary)?;
        file.write_all(&serde_json::to_vec(event).map_err(io::Error::other)?)?;
        file.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&temporary);
        return Err(fail(e.to_string()));
    }
    let linked = fs::hard_link(&temporary, &target);
    let _ = fs::remove_file(&temporary);
    match linked {
        Ok(()) => Ok(target),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(HandOffError::AlreadyWaiting(pending.id.clone())),
        Err(e) => Err(fail(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn pending(id: &str) -> Pending {
        Pending {
            id: id.into(),
            run: 0,
            line: 2,
            line_sha256: [0; 32],
            tool: "t".into(),
            input: json!("{}"),
            fingerprint: String::new(),
            request_digest: String::new(),
            event: Map::new(),
            answer: None,
            used: false,
        }
    }

    #[test]
    fn the_inbox_sits_beside_the_log_and_takes_each_answer_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.jsonl");
        assert_eq!(inbox_dir(&log), dir.path().join("s.jsonl.answers"));
        assert!(deliver(&log, &pending("ap-0-1-x"), &Map::new()).is_err(), "no inbox: no gateway to hand it to");
        let inbox = Inbox::create(&log).unwrap();
        assert!(inbox.take("ap-0-1-x").is_none());
        let event = json!({"id": "ap-0-1-x", "approved": true}).as_object().cloned().unwrap();
        deliver(&log, &pending("ap-0-1-x"), &event).unwrap();
        assert!(matches!(deliver(&log, &pending("ap-0-1-x"), &event), Err(HandOffError::AlreadyWaiting(_))));
        assert_eq!(inbox.take("ap-0-1-x").unwrap().unwrap(), event);
        assert!(inbox.take("ap-0-1-x").is_none(), "taken once");
        std::fs::write(inbox.dir().join("ap-0-2-x.json"), b"[1]").unwrap();
        assert!(inbox.take("ap-0-2-x").unwrap().is_err());
        std::fs::write(inbox.dir().join("ap-0-3-x.json"), vec![b' '; MAX_ANSWER as usize + 1]).unwrap();
        assert!(inbox.take("ap-0-3-x").unwrap().unwrap_err().contains("more than an answer has"));
        assert!(inbox.take("../s").is_none(), "ids that are not file names are never looked up");
        let path = inbox.dir().to_path_buf();
        inbox.remove();
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.jsonl");
        let secret = dir.path().join("secret.json");
        std::fs::write(&secret, b"{\"id\":\"ap-0-1-x\"}").unwrap();
        let inbox = Inbox::create(&log).unwrap();
        std::os::unix::fs::symlink(&secret, inbox.dir().join("ap-0-1-x.json")).unwrap();
        assert!(inbox.take("ap-0-1-x").unwrap().is_err(), "a link in the inbox is not read");
        assert!(secret.exists(), "and its target is left alone");
        // A link where the inbox should be is refused on both sides.
        let other = dir.path().join("t.jsonl");
        std::os::unix::fs::symlink(dir.path(), inbox_dir(&other)).unwrap();
        assert!(Inbox::create(&other).is_err());
        assert!(deliver(&other, &pending("ap-0-1-x"), &Map::new()).is_err());
    }
}
