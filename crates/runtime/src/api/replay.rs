//! `decision replay --format json`: per-record verdicts and the summary of one or more logs.
//!
//! The CLI streams the listed results between the head and the tail of the document so that
//! memory does not grow with the log; [`LogSummary::document`] assembles the same bytes in
//! memory, and [`verify_text`] does all of it for one log given as text.

use decision_protocol::digest::ScanError;
use decision_protocol::record::{EventRead, REPLAY_NOTES, Rules, VerifyOutcome, read_event, verify_record_with};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::log::SEAL_KEY_VARIABLE;
use crate::log::approval::{ApprovalAudit, replay_with_ledger};
use crate::log::replay::{ChainBreak, MacCheck, head_problem};
use crate::log::{ChainStatus, LogHead, LogReport, RecordResult, ReplayOptions, SealStatus};

/// A step as JavaScript would print it: integral values without a fraction.
pub fn js_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// Whether a result is listed in the document: every one with `verbose`, else only
/// mismatched and unverifiable records.
pub fn is_listed(result: &RecordResult, verbose: bool) -> bool {
    verbose || matches!(result.status, VerifyOutcome::Mismatch | VerifyOutcome::Unverifiable)
}

/// One record's verdict: `run`, `step`, `node`, `status`, `checks`, `file`, `line`, and
/// `problem` when the event could not be read as a record.
pub fn result_json(path: &str, result: &RecordResult) -> Value {
    let document = ResultDocument {
        run: result.run,
        step: result.step.map(js_number),
        node: result.node.as_deref(),
        status: result.status.as_str(),
        checks: result
            .checks
            .iter()
            .map(|c| CheckDocument { name: c.name.as_str(), status: c.status.as_str(), detail: &c.detail })
            .collect(),
        file: path,
        line: result.line,
        problem: result.problem.as_deref(),
    };
    // Strings, numbers and lists of them only: serialising cannot fail.
    serde_json::to_value(document).unwrap_or_default()
}

/// One record's verdict as the replay document lists it, member by member in that order.
#[derive(Debug, Clone, Serialize)]
pub struct ResultDocument<'a> {
    /// The run the record is in.
    pub run: u64,
    /// Its step, as JavaScript writes the number.
    pub step: Option<Value>,
    /// Its node id, if it could be read.
    pub node: Option<&'a str>,
    /// `verified`, `partial`, `unverifiable` or `mismatch`.
    pub status: &'static str,
    /// Each check's verdict.
    pub checks: Vec<CheckDocument<'a>>,
    /// The log's name.
    pub file: &'a str,
    /// The record's line.
    pub line: u64,
    /// Why the event could not be read as a record, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<&'a str>,
}

/// One check of a record's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CheckDocument<'a> {
    /// The check.
    pub name: &'static str,
    /// Its verdict.
    pub status: &'static str,
    /// What it found.
    pub detail: &'a str,
}

/// What an auditor requires of a log beyond its records (`--head`, `--require-seal`,
/// `--require-chain`, `--allow-empty`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Requirements {
    /// A log without any decision record passes (by default it fails: nothing in it was
    /// verified, and an empty file or a file that is not a log looks exactly like that).
    pub allow_empty: bool,
    /// A head the log must extend: line `seq` has that hash and every line after it chains to it.
    pub head: Option<LogHead>,
    /// The log must end with its writer's seal.
    pub seal: bool,
    /// The log must carry a hash chain.
    pub chain: bool,
    /// The log must be keyed and its seals verified under the key given (a log verified
    /// without the key fails instead of reading "keyed, not checked").
    pub key: bool,
}

/// Why a log fails beyond its records: a stripped chain, a seal that does not hold, a
/// requirement it does not meet, a head that is not its own.
pub fn log_problems(report: &LogReport, required: &Requirements) -> Vec<String> {
    let mut problems: Vec<String> = unverified(report, required.allow_empty).into_iter().collect();
    if report.chain_status() == ChainStatus::Missing {
        problems.push(
            "the header says the log was written with a hash chain, and no line carries one: the chain was stripped"
                .to_owned(),
        );
    }
    for ChainBreak { line, reason } in &report.seal_problems {
        problems.push(format!("line {line}: {reason}"));
    }
    if required.chain && !matches!(report.chain_status(), ChainStatus::Intact | ChainStatus::Missing) {
        problems.push(format!("--require-chain: the chain is {}", report.chain_status().as_str()));
    }
    if required.seal && !matches!(report.seal, SealStatus::Sealed | SealStatus::Invalid) {
        problems.push(format!(
            "--require-seal: the log is {} (it does not end with its writer's seal: the run did not finish, or lines were cut from its end)",
            report.seal.as_str()
        ));
    }
    if required.key {
        match report.last_seal.map(|seal| seal.mac) {
            Some(MacCheck::Verified) => {}
            Some(MacCheck::Unchecked) => {
                problems.push(format!("--require-key: the log is keyed and no key was given in ${SEAL_KEY_VARIABLE}"))
            }
            Some(MacCheck::Failed) => {}
            Some(MacCheck::Unkeyed) | None => problems.push("--require-key: the log carries no keyed seal".to_owned()),
        }
    }
    if let Some(expected) = required.head {
        problems.extend(head_problem(report, expected));
    }
    problems
}

/// Why a log's verdict would say nothing about it: it holds no decision record (unless
/// `allow_empty`), or some of its lines could not be read at all (a torn last line is not
/// counted: the append-only format allows it). `None` when every line was read.
pub fn unverified(report: &LogReport, allow_empty: bool) -> Option<String> {
    let unreadable = report.skipped_lines.saturating_sub(u64::from(report.torn_tail.is_some()));
    if report.records == 0 && !allow_empty {
        let lines = if unreadable > 0 { format!(" and {unreadable} unreadable lines") } else { String::new() };
        return Some(format!(
            "nothing was verified: the file holds no decision record{lines} (it is empty or not a session log; --allow-empty accepts a log without records)"
        ));
    }
    (unreadable > 0).then(|| {
        format!(
            "{unreadable} unreadable lines were not verified (not a session log's lines, or changed; listed as skipped)"
        )
    })
}

/// The counts and the chain status of every log replayed so far, and one entry per log.
#[derive(Debug, Default)]
pub struct LogSummary {
    total: LogReport,
    chains: Vec<ChainStatus>,
    files: Vec<FileEntry>,
    failed: bool,
    unreadable: bool,
}

impl LogSummary {
    /// Adds one log's report, checked against `required`; returns the log's problems beyond
    /// its records (see [`log_problems`]).
    pub fn add(&mut self, path: &str, report: &LogReport, required: &Requirements) -> Vec<String> {
        for (sum, part) in [
            (&mut self.total.records, report.records),
            (&mut self.total.other_events, report.other_events),
            (&mut self.total.runs, report.runs),
            (&mut self.total.skipped_lines, report.skipped_lines),
            (&mut self.total.verified, report.verified),
            (&mut self.total.partial, report.partial),
            (&mut self.total.unverifiable, report.unverifiable),
            (&mut self.total.mismatch, report.mismatch),
        ] {
            *sum += part;
        }
        self.chains.push(report.chain_status());
        let problems = log_problems(report, required);
        self.failed |= report.mismatch > 0 || report.chain_status() == ChainStatus::Broken || !problems.is_empty();
        // A reference-written log's entry is left as it always was: it has no seal or head.
        let seal = (report.seal != SealStatus::Absent).then(|| SealEntry {
            seal: report.seal.as_str(),
            last_seal: report.last_seal,
            head: report.head,
        });
        let file = FileEntry::Log(Box::new(LogEntry {
            path: path.to_owned(),
            session: report.session.clone(),
            chain: report.chain_status().as_str(),
            chain_breaks: report.breaks.clone(),
            torn_tail: report.torn_tail,
            long_lines: report.long_lines,
            skipped: report.skipped.clone(),
            seal,
            problems: problems.clone(),
            annotations: Map::new(),
        }));
        self.files.push(file);
        problems
    }

    /// Adds `key` to the entry of the log added last (a check made beside replay, such as a
    /// host's approvals); `failed` marks the whole document failed.
    pub fn annotate_last(&mut self, key: &str, value: Value, failed: bool) {
        if let Some(FileEntry::Log(entry)) = self.files.last_mut() {
            entry.annotations.insert(key.to_owned(), value);
        }
        self.failed |= failed;
    }

    /// Adds the approvals of the log added last, when it has any (a log without approvals
    /// keeps the entry it always had): `approvals` with `requested`, `answered`, `used` and
    /// `problems`; a problem fails the document.
    pub fn add_approvals(&mut self, audit: &ApprovalAudit) {
        if audit.approvals > 0 {
            let approvals = json!({
                "requested": audit.approvals, "answered": audit.answered, "used": audit.used,
                "problems": audit.problems,
            });
            self.annotate_last("approvals", approvals, !audit.problems.is_empty());
        }
    }

    /// Adds a log that could not be read.
    pub fn add_unreadable(&mut self, path: &str, error: &str) {
        self.unreadable = true;
        self.files.push(FileEntry::Unreadable { path: path.to_owned(), error: error.to_owned() });
    }

    /// Adds a log that a check made beside replay expected and that is not there (`decision
    /// replay --heads`: a log the manifest names was deleted); the document fails.
    pub fn add_missing(&mut self, path: &str, problem: &str) {
        self.failed = true;
        self.files.push(FileEntry::Missing {
            path: path.to_owned(),
            missing: true,
            problems: vec![problem.to_owned()],
        });
    }

    /// A record mismatched, a chain is broken, or a log has a problem beyond its records.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// A log could not be read.
    pub fn unreadable(&self) -> bool {
        self.unreadable
    }

    /// Any broken chain is broken; "intact" only when every log carries an intact chain.
    pub fn chain(&self) -> ChainStatus {
        if self.chains.contains(&ChainStatus::Broken) {
            ChainStatus::Broken
        } else if self.chains.contains(&ChainStatus::Missing) {
            ChainStatus::Missing
        } else if !self.chains.is_empty() && self.chains.iter().all(|c| *c == ChainStatus::Intact) {
            ChainStatus::Intact
        } else {
            ChainStatus::Absent
        }
    }

    /// The document's head: the counts and the chain (the document's first members).
    pub fn head(&self) -> Value {
        let head = HeadDocument {
            records: self.total.records,
            other_events: self.total.other_events,
            runs: self.total.runs,
            skipped_lines: self.total.skipped_lines,
            verified: self.total.verified,
            partial: self.total.partial,
            unverifiable: self.total.unverifiable,
            mismatch: self.total.mismatch,
            chain: self.chain().as_str(),
        };
        // Numbers and a string: serialising cannot fail.
        serde_json::to_value(head).unwrap_or_default()
    }

    /// The document's tail: `notes` (what replay does not verify) and `files`.
    pub fn tail(&self) -> Value {
        // Strings, numbers and JSON values only: serialising cannot fail.
        serde_json::to_value(TailDocument { notes: &REPLAY_NOTES, files: &self.files }).unwrap_or_default()
    }

    /// The whole document: the head, `results` (the listed results), then the tail.
    pub fn document(&self, results: Vec<Value>) -> Value {
        let mut map = Map::new();
        for part in [self.head(), json!({"results": results}), self.tail()] {
            if let Value::Object(members) = part {
                map.extend(members);
            }
        }
        Value::Object(map)
    }
}

/// The replay document's first members: the counts over every log, and the chain.
#[derive(Debug, Clone, Serialize)]
pub struct HeadDocument {
    /// Decision records read.
    pub records: u64,
    /// Other events read.
    pub other_events: u64,
    /// Runs seen.
    pub runs: u64,
    /// Lines skipped (unreadable, too long).
    pub skipped_lines: u64,
    /// Records verified.
    pub verified: u64,
    /// Records partly verified.
    pub partial: u64,
    /// Records that could not be verified.
    pub unverifiable: u64,
    /// Records that mismatch.
    pub mismatch: u64,
    /// `intact`, `missing`, `broken` or `absent` over every log.
    pub chain: &'static str,
}

/// The replay document's last members: what replay does not verify, and one entry per log.
#[derive(Debug, Clone, Serialize)]
pub struct TailDocument<'a> {
    /// What replay does not verify.
    pub notes: &'a [&'a str],
    /// One entry per log, in order.
    pub files: &'a [FileEntry],
}

/// One log's entry in the replay document's `files`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FileEntry {
    /// A log that was read.
    Log(Box<LogEntry>),
    /// A log that could not be read: `{path, error}`.
    Unreadable {
        /// The log's name.
        path: String,
        /// Why it could not be read.
        error: String,
    },
    /// A log a check made beside replay expected and that is not there: `{path, missing, problems}`.
    Missing {
        /// The log's name.
        path: String,
        /// Always `true`.
        missing: bool,
        /// Why it was expected.
        problems: Vec<String>,
    },
}

/// A log that was read, member by member in the order the document prints them.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    /// The log's name.
    pub path: String,
    /// The session id its header gives, if any.
    pub session: Option<String>,
    /// `intact`, `missing`, `broken` or `absent`.
    pub chain: &'static str,
    /// Where the hash chain breaks.
    pub chain_breaks: Vec<ChainBreak>,
    /// The torn last line's number, if the log ends in one.
    pub torn_tail: Option<u64>,
    /// Lines too long to read.
    pub long_lines: u64,
    /// The lines skipped, with why.
    pub skipped: Vec<crate::log::replay::SkippedLine>,
    /// The seal, the last seal seen and the head: only for a log written with seals (a
    /// reference-written log's entry is left as it always was).
    #[serde(flatten)]
    pub seal: Option<SealEntry>,
    /// The log's problems beyond its records, when it has any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// What checks made beside replay add (a host's `approvals`, …), in the order added.
    #[serde(flatten)]
    pub annotations: Map<String, Value>,
}

/// A sealed log's seal members.
#[derive(Debug, Clone, Serialize)]
pub struct SealEntry {
    /// The seal's verdict.
    pub seal: &'static str,
    /// The last seal seen.
    pub last_seal: Option<crate::log::replay::SealSeen>,
    /// The log's head (`SEQ:HASH`).
    pub head: Option<LogHead>,
}

/// What `replay` is asked, by the names every entrance takes (the command line's
/// `--verbose`, `--jobs` and `--max-line`, Python's keywords, the JavaScript options). The
/// logs each entrance reads its own way; what only the command line checks (heads, the seal,
/// the chain, a key, a contract) it asks beside these.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ReplayRequest {
    /// List every record with its checks (otherwise only those that did not verify).
    #[cfg_attr(feature = "cli", arg(long))]
    pub verbose: bool,
    /// Worker threads (0: one per core; never more than the cores). The npm package verifies
    /// on one thread whatever this asks.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub jobs: usize,
    /// Lines longer than this many bytes are skipped and reported.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES", default_value_t = crate::lines::DEFAULT_MAX_LINE))]
    pub max_line: usize,
}

impl Default for ReplayRequest {
    fn default() -> ReplayRequest {
        ReplayRequest { verbose: false, jobs: 0, max_line: crate::lines::DEFAULT_MAX_LINE }
    }
}

impl ReplayRequest {
    /// The worker threads asked for: `jobs`, or one per core for 0.
    pub fn threads(&self) -> usize {
        if self.jobs == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { self.jobs }
    }

    /// The replay's options: the line limit and the threads; nothing else checked.
    pub fn options(&self) -> ReplayOptions {
        ReplayOptions { max_line: self.max_line, threads: self.threads(), ..ReplayOptions::default() }
    }
}

/// Replays one log given as text on the calling thread, as `request` asks (its `jobs` aside):
/// the document `decision replay --format json` prints for it, and the summary (for the exit
/// status). `path` names the log in the document. Reading bytes from memory cannot fail, so
/// a log is never unreadable.
pub fn verify_text(path: &str, text: &[u8], request: &ReplayRequest) -> (Value, LogSummary) {
    let options = ReplayOptions { max_line: request.max_line, threads: 1, ..ReplayOptions::default() };
    verify_reader(path, text, &options, request.verbose).unwrap_or_else(|e| {
        let mut summary = LogSummary::default();
        summary.add_unreadable(path, &e.to_string());
        (summary.document(Vec::new()), summary)
    })
}

/// Replays one log read from `reader` under `options`, its records and its approvals in one
/// read: the document `decision replay --format json` prints for it (listed results kept in
/// memory), and the summary; or why the log could not be read. `path` names the log in the
/// document.
pub fn verify_reader<R: std::io::Read + Send>(
    path: &str,
    reader: R,
    options: &ReplayOptions,
    verbose: bool,
) -> std::io::Result<(Value, LogSummary)> {
    let mut results = Vec::new();
    let mut summary = LogSummary::default();
    let (report, ledger) = replay_with_ledger(reader, options, &mut |result| {
        if is_listed(result, verbose) {
            results.push(result_json(path, result));
        }
    })?;
    summary.add(path, &report, &Requirements::default());
    summary.add_approvals(&ledger.audit());
    Ok((summary.document(results), summary))
}

/// Why a single record could not be verified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The text is not JSON (the scanner's error, located by byte offset).
    #[error("not JSON: {0}")]
    Json(#[from] ScanError),
    /// The event's `type` is not `decision` (the type found, as JSON).
    #[error("not a decision event (its `type` is {0})")]
    NotADecision(String),
    /// A `decision` event that lacks what a `decision-record/v1` needs.
    #[error("the decision event is not a record: {0}")]
    NotARecord(#[from] decision_protocol::record::NotARecord),
}

/// Verifies one `decision` event (the `e` of a session-log line, or the whole line): the
/// verdict as replay lists it, without the log's `file`, `line` and `run`:
/// `{"schema", "node", "step", "status", "checks"}`.
pub fn verify_record(event: &[u8]) -> Result<Value, RecordError> {
    let read = read_event(event)?;
    let read = match read {
        EventRead::Other { .. } | EventRead::NotAnObject => {
            // A whole line: the event is its `e` member.
            match serde_json::from_slice::<Value>(event).ok().and_then(|v| v.get("e").map(Value::to_string)) {
                Some(inner) => read_event(inner.as_bytes())?,
                None => read,
            }
        }
        decision => decision,
    };
    let record = match read {
        EventRead::Decision(record) => record?,
        EventRead::Other { event_type } => {
            return Err(RecordError::NotADecision(
                event_type.map_or_else(|| "missing".to_owned(), |t| format!("`{t}`")),
            ));
        }
        EventRead::NotAnObject => return Err(RecordError::NotADecision("missing: not an object".to_owned())),
    };
    let verdict = verify_record_with(&record, Rules::Project);
    Ok(json!({
        "schema": decision_protocol::record::RECORD_SCHEMA,
        "node": record.node.text(),
        "step": js_number(record.step),
        "status": verdict.outcome.as_str(),
        "checks": verdict.checks.iter().map(|c| json!({
            "name": c.name.as_str(), "status": c.status.as_str(), "detail": c.detail,
        })).collect::<Vec<_>>(),
    }))
}
