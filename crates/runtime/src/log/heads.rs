//! The heads manifest: an append-only file of the heads that finished runs left, one JSON line
//! a run, so a fleet of logs can be checked later against what their writers wrote.
//!
//! `decision run --heads FILE` (and `decision mcp --heads FILE`) append, once the log is sealed,
//! `{"schema":"decision-heads/v1","log":PATH,"session":ID,"head":"SEQ:HASH","records":N,"at":MS}`
//! where `log` is the log's absolute path, `head` its last line (the seal) and `records` the
//! decision records it holds. A team ships this file to storage it trusts (write-once, or
//! another machine): it is small and only ever appended to.
//!
//! `decision replay DIR... --heads FILE` then checks every log under the given paths:
//!
//! - a log the manifest names and that is not there was **deleted**;
//! - a log whose head line is gone was **cut** (lines removed from its end);
//! - a log whose head line has another hash, or whose chain breaks after it, was **rewritten**;
//! - a log the manifest does not name was added afterwards (or its run never finished).
//!
//! A head is a prefix check ([`super::replay::head_problem`]): a log a later run extended still
//! verifies against the heads its earlier runs left. Every head recorded for a log is checked.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::replay::{LogReport, ReplayOptions, replay_file};
use super::seal::LogHead;
use super::writer::now_ms;

/// The `schema` member of every manifest line.
pub const HEADS_SCHEMA: &str = "decision-heads/v1";

/// The longest manifest line read, in bytes (an entry is a few hundred bytes).
const MAX_ENTRY_BYTES: usize = 64 * 1024;

/// One finished run's expected head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadEntry {
    /// The log's absolute path when the run ended.
    pub log: PathBuf,
    /// The session id in the log's header.
    pub session: Option<String>,
    /// The log's last line when the run ended (its seal).
    pub head: LogHead,
    /// Decision records in the log at that head.
    pub records: u64,
    /// When the entry was written, in milliseconds since the Unix epoch.
    pub at_ms: u64,
}

/// A manifest line as written and read.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryLine {
    schema: String,
    log: PathBuf,
    #[serde(default)]
    session: Option<String>,
    head: String,
    records: u64,
    at: u64,
}

/// Why a manifest could not be written or read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HeadsError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A manifest line is not an entry.
    #[error("{path}:{line}: not a {HEADS_SCHEMA} entry: {reason}")]
    BadEntry {
        /// The manifest.
        path: PathBuf,
        /// The 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The log has no chained line, so there is no head to record.
    #[error("{0}: the log has no head (no chained line): nothing to record")]
    NoHead(PathBuf),
}

/// Appends the head of the finished log at `log` to the manifest at `manifest` (created if
/// absent), and returns the entry. The log is read once (as `decision replay` reads it) for
/// its head, session and record count; the entry is one `write` on a file opened for
/// appending, then synced, so concurrent runs never interleave their lines.
pub fn record_head(manifest: &Path, log: &Path) -> Result<HeadEntry, HeadsError> {
    fn io_error(path: &Path) -> impl FnOnce(io::Error) -> HeadsError + '_ {
        move |source| HeadsError::Io { path: path.to_path_buf(), source }
    }
    let absolute = std::fs::canonicalize(log).map_err(io_error(log))?;
    let report = replay_file(&absolute, &ReplayOptions::default(), &mut |_| {}).map_err(io_error(log))?;
    let head = report.head.ok_or_else(|| HeadsError::NoHead(log.to_path_buf()))?;
    let entry = HeadEntry { log: absolute, session: report.session, head, records: report.records, at_ms: now_ms() };
    let line = EntryLine {
        schema: HEADS_SCHEMA.to_owned(),
        log: entry.log.clone(),
        session: entry.session.clone(),
        head: entry.head.to_string(),
        records: entry.records,
        at: entry.at_ms,
    };
    let mut bytes = serde_json::to_vec(&line).map_err(|e| io_error(manifest)(io::Error::other(e)))?;
    bytes.push(b'\n');
    let mut file = OpenOptions::new().append(true).create(true).open(manifest).map_err(io_error(manifest))?;
    file.write_all(&bytes).map_err(io_error(manifest))?;
    file.sync_data().map_err(io_error(manifest))?;
    Ok(entry)
}

/// A manifest read back: the expected heads of every log it names.
#[derive(Debug, Default)]
pub struct HeadsManifest {
    by_log: BTreeMap<PathBuf, Vec<HeadEntry>>,
}

impl HeadsManifest {
    /// Reads the manifest at `path`. A line that is not an entry is an error located by its
    /// line number (a manifest is trusted input: nothing in it is skipped); blank lines are
    /// allowed.
    pub fn read(path: &Path) -> Result<Self, HeadsError> {
        let io_error = |source| HeadsError::Io { path: path.to_path_buf(), source };
        let bad = |line: u64, reason: String| HeadsError::BadEntry { path: path.to_path_buf(), line, reason };
        let mut reader = BufReader::new(File::open(path).map_err(io_error)?);
        let mut manifest = HeadsManifest::default();
        let mut buf = Vec::new();
        let mut number = 0u64;
        loop {
            buf.clear();
            let read = (&mut reader).take(MAX_ENTRY_BYTES as u64 + 1).read_until(b'\n', &mut buf).map_err(io_error)?;
            if read == 0 {
                break;
            }
            number += 1;
            if buf.len() > MAX_ENTRY_BYTES {
                return Err(bad(number, format!("longer than {MAX_ENTRY_BYTES} bytes")));
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line: EntryLine = serde_json::from_slice(&buf).map_err(|e| bad(number, e.to_string()))?;
            if line.schema != HEADS_SCHEMA {
                return Err(bad(number, format!("schema {:?}", line.schema)));
            }
            let head = line.head.parse::<LogHead>().map_err(|e| bad(number, e.to_string()))?;
            if !line.log.is_absolute() {
                return Err(bad(number, "`log` is not an absolute path".to_owned()));
            }
            let entry = HeadEntry { log: line.log, session: line.session, head, records: line.records, at_ms: line.at };
            let heads = manifest.by_log.entry(entry.log.clone()).or_default();
            if !heads.iter().any(|known| known.head == entry.head) {
                heads.push(entry);
            }
        }
        Ok(manifest)
    }

    /// The heads recorded for the log at `log` (matched by its absolute, resolved path), the
    /// latest (highest `seq`) first; empty when the manifest does not name it.
    pub fn heads_of(&self, log: &Path) -> Vec<&HeadEntry> {
        let key = std::fs::canonicalize(log).unwrap_or_else(|_| log.to_path_buf());
        let mut heads: Vec<&HeadEntry> = self.by_log.get(&key).map(|v| v.iter().collect()).unwrap_or_default();
        heads.sort_by_key(|entry| std::cmp::Reverse(entry.head.seq));
        heads
    }

    /// The logs the manifest names inside `inputs` (a directory covers every path under it, a
    /// file itself) that are not among `found`: deleted, or moved away. Each with its latest
    /// head, in path order.
    pub fn missing(&self, inputs: &[PathBuf], found: &[PathBuf]) -> Vec<&HeadEntry> {
        let resolve = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let scopes: Vec<PathBuf> = inputs.iter().map(resolve).collect();
        let found: std::collections::BTreeSet<PathBuf> = found.iter().map(resolve).collect();
        self.by_log
            .iter()
            .filter(|(log, _)| scopes.iter().any(|scope| log.starts_with(scope)) && !found.contains(*log))
            .filter_map(|(_, heads)| heads.iter().max_by_key(|entry| entry.head.seq))
            .collect()
    }

    /// How many logs the manifest names.
    pub fn logs(&self) -> usize {
        self.by_log.len()
    }
}

/// What is wrong with a log against one head the manifest recorded for it: `report` is the
/// log replayed with `ReplayOptions::head` set to `entry.head`. `None` when the log extends
/// that head unchanged.
pub fn entry_problem(report: &LogReport, entry: &HeadEntry) -> Option<String> {
    if let Some(problem) = super::replay::head_problem(report, entry.head) {
        let what = match report.head_found {
            None => "cut or replaced",
            Some(_) => "rewritten",
        };
        // The runtime's message names the flag of a single head; here the head is the manifest's.
        let problem = problem.strip_prefix(&format!("--head {}: ", entry.head)).unwrap_or(&problem).to_owned();
        return Some(format!("{what}: the manifest's head {} does not hold: {problem}", entry.head));
    }
    if entry.session.is_some() && report.session != entry.session {
        return Some(format!(
            "replaced: the manifest recorded session {:?} and the log's header says {:?}",
            entry.session.as_deref().unwrap_or_default(),
            report.session.as_deref().unwrap_or_default()
        ));
    }
    if report.records < entry.records {
        return Some(format!(
            "cut: the manifest recorded {} decision records at head {} and the log holds {}",
            entry.records, entry.head, report.records
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

    use super::*;

    #[test]
    fn a_bad_manifest_line_is_an_error_with_its_line_number() {
        let dir = std::env::temp_dir().join(format!("decision-heads-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("heads.jsonl");
        let good = format!(
            r#"{{"schema":"{HEADS_SCHEMA}","log":"/logs/a.jsonl","session":"s","head":"3:{}","records":1,"at":1}}"#,
            "ab".repeat(32)
        );
        std::fs::write(&path, format!("{good}\n\n{good}\n")).unwrap();
        let manifest = HeadsManifest::read(&path).unwrap();
        assert_eq!(manifest.logs(), 1);
        assert_eq!(manifest.heads_of(Path::new("/logs/a.jsonl")).len(), 1, "a repeated head is one head");
        for (bad, reason) in [
            (good.replace("3:", "x:"), "not a head"),
            (good.replace("/logs/a.jsonl", "a.jsonl"), "absolute"),
            (good.replace(HEADS_SCHEMA, "other/v1"), "schema"),
            ("not json".to_owned(), "expected"),
        ] {
            std::fs::write(&path, format!("{good}\n{bad}\n")).unwrap();
            let error = HeadsManifest::read(&path).unwrap_err().to_string();
            assert!(error.contains("heads.jsonl:2: not a decision-heads/v1 entry"), "{error}");
            assert!(error.contains(reason), "{error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_logs_are_those_named_inside_the_inputs_and_not_found() {
        let head = LogHead { seq: 1, sha256: [0; 32] };
        let entry = |log: &str| HeadEntry { log: log.into(), session: None, head, records: 0, at_ms: 0 };
        let mut manifest = HeadsManifest::default();
        for log in ["/fleet/a.jsonl", "/fleet/b.jsonl", "/other/c.jsonl"] {
            manifest.by_log.insert(log.into(), vec![entry(log)]);
        }
        let missing = manifest.missing(&["/fleet".into()], &["/fleet/a.jsonl".into()]);
        let names: Vec<&Path> = missing.iter().map(|e| e.log.as_path()).collect();
        assert_eq!(names, [Path::new("/fleet/b.jsonl")]);
        assert!(manifest.missing(&["/fleet".into()], &["/fleet/a.jsonl".into(), "/fleet/b.jsonl".into()]).is_empty());
    }
}
