//! Replay: verifying every decision record of a session log, and its hash chain, in one
//! streaming pass. Lines are read in batches of about a megabyte; a batch is verified on
//! its own (sequentially, or by a pool of worker threads), and batches are merged in file
//! order, so memory stays bounded whatever the size of the log.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};

use decision_protocol::record::{
    Check, EventRead, EventView, MergedDigests, NotARecord, RecordView, Rules, VerifyOutcome, text_of, verify_view_with,
};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::envelope::{ChainFields, LineKind, LineParser, SealFields, parse_line};
use super::policy::PolicyBook;
use super::seal::{LogHead, SealKey};
use super::writer::CHAIN_CLAIM;
use crate::lines::{DEFAULT_MAX_LINE, Line, LineReader};

/// How many skipped lines and chain breaks a report lists (all are counted).
pub const MAX_LISTED: usize = 100;

const BATCH_BYTES: usize = 1 << 20;

/// On one thread, results are handed over every this many records.
const STREAM_RESULTS: usize = 1024;

/// How to replay a log. The default verifies with the project's rules on one thread, with the
/// [`DEFAULT_MAX_LINE`] cap, no seal key and no policy check.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Which verifier rules apply to each `decision-record/v1`: the project's (default) or
    /// the reference's, for interoperability tests.
    pub rules: Rules,
    /// Lines longer than this are skipped and reported, never held in memory.
    pub max_line: usize,
    /// Worker threads; 1 verifies on the calling thread. More than the machine's cores are
    /// not started (each would only wait, with its stack and its queue of batches).
    pub threads: usize,
    /// The key of the keyed seal: when given, every seal must carry a MAC made with it.
    pub seal_key: Option<SealKey>,
    /// The contract's policies: when given, each record's action is checked against them
    /// (the `policy` check, [`super::policy`]).
    pub policies: Option<Arc<PolicyBook>>,
    /// A head kept earlier (`SEQ:HASH`): the line whose `seq` it names is found and its hash
    /// compared ([`LogReport::head_found`]), so a head printed before the log was extended
    /// still verifies the extended log's prefix.
    pub head: Option<LogHead>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            rules: Rules::Project,
            max_line: DEFAULT_MAX_LINE,
            threads: 1,
            seal_key: None,
            policies: None,
            head: None,
        }
    }
}

/// One decision event's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordResult {
    /// 1-based line number in the log.
    pub line: u64,
    /// The run index of the event's envelope.
    pub run: u64,
    /// The event's `step`, as recorded (JSON numbers are read as `f64`); `None` when absent.
    pub step: Option<f64>,
    /// The event's `id` (the decision spec id); `None` when absent.
    pub node: Option<String>,
    /// The verdict over all checks: verified, partial, unverifiable or mismatch.
    pub status: VerifyOutcome,
    /// Each check that applied (`runtime.md` §4.2: state, sent frame, request, questions;
    /// and `policy` when a contract was given), with its status and detail.
    pub checks: Vec<Check>,
    /// Why a `decision` event could not be read as a record (then `status` is unverifiable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A line that was not used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedLine {
    /// The 1-based line number.
    pub line: u64,
    /// Why it was skipped (not JSON, unknown `kind`, too long, cut short, …).
    pub reason: String,
}

/// Whether the hash chain (`seq`, `prev`) of a log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChainStatus {
    /// Every line carries chain fields and every link holds.
    Intact,
    /// A link does not hold: a line was deleted, inserted, reordered or changed.
    Broken,
    /// No line carries chain fields (a log written by the reference).
    Absent,
    /// The header says the log was written chained, and no line carries chain fields: the
    /// chain was stripped.
    Missing,
}

impl ChainStatus {
    /// The status as reports write it: `intact`, `broken`, `absent` or `missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainStatus::Intact => "intact",
            ChainStatus::Broken => "broken",
            ChainStatus::Absent => "absent",
            ChainStatus::Missing => "missing",
        }
    }
}

/// Whether the log ends with its writer's seal ([`super::seal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SealStatus {
    /// The last line is a seal, and every seal holds.
    Sealed,
    /// A chained log whose last line is not a seal: the run did not finish (a crash), or
    /// lines were cut from the end.
    Unfinished,
    /// A seal does not hold: its line count, or its MAC under the given key.
    Invalid,
    /// No chain, so no seal is expected (a log written by the reference).
    #[default]
    Absent,
}

impl SealStatus {
    /// The status as reports write it: `sealed`, `unfinished`, `invalid` or `absent`.
    pub fn as_str(self) -> &'static str {
        match self {
            SealStatus::Sealed => "sealed",
            SealStatus::Unfinished => "unfinished",
            SealStatus::Invalid => "invalid",
            SealStatus::Absent => "absent",
        }
    }
}

/// What the keyed seal of the last seal line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MacCheck {
    /// The seal carries no MAC, and no key was given.
    Unkeyed,
    /// The seal carries a MAC, and no key was given to check it.
    Unchecked,
    /// The MAC verifies under the given key.
    Verified,
    /// A key was given and the MAC is missing or wrong (the seal is invalid).
    Failed,
}

/// The last seal line found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SealSeen {
    /// Its 1-based line number.
    pub line: u64,
    /// The run it ends.
    pub run: Option<u64>,
    /// How many lines it says precede it.
    pub lines: Option<u64>,
    /// What its keyed seal says.
    pub mac: MacCheck,
}

/// Where and why the chain does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChainBreak {
    /// The 1-based line where the link fails.
    pub line: u64,
    /// What does not hold (the `seq` or `prev` expected and found, or the seal's problem).
    pub reason: String,
}

/// What replay found in one log.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct LogReport {
    /// `decision` events read as records (each counted once in `verified`, `partial`,
    /// `unverifiable` or `mismatch`).
    pub records: u64,
    /// Events of any other type.
    pub other_events: u64,
    /// Distinct run indices seen.
    pub runs: u64,
    /// Lines not used: not JSON, not a known `kind`, too long or cut short.
    pub skipped_lines: u64,
    /// Records every applicable check passed.
    pub verified: u64,
    /// Records some checks could not run on (normal for merged decisions).
    pub partial: u64,
    /// Records no check could run on.
    pub unverifiable: u64,
    /// Records a check failed on: the log is inconsistent.
    pub mismatch: u64,
    /// The line number of a last line that was cut short (counted in `skipped_lines`).
    pub torn_tail: Option<u64>,
    /// Lines over the length cap (counted in `skipped_lines`).
    pub long_lines: u64,
    /// The first [`MAX_LISTED`] skipped lines.
    pub skipped: Vec<SkippedLine>,
    /// The chain's status; `None` until a line was read (see [`LogReport::chain_status`]).
    pub chain: Option<ChainStatus>,
    /// How many links do not hold (all counted, the first [`MAX_LISTED`] listed).
    pub chain_breaks: u64,
    /// The first [`MAX_LISTED`] chain breaks.
    pub breaks: Vec<ChainBreak>,
    /// The header's session id.
    pub session: Option<String>,
    /// Whether the header claims a chain (`"chain":"sha256"`).
    pub chain_claimed: bool,
    /// Whether the log ends with a seal that holds.
    pub seal: SealStatus,
    /// The last seal line, wherever it is.
    pub last_seal: Option<SealSeen>,
    /// Seals that do not hold (also counted in `seal_breaks`).
    pub seal_problems: Vec<ChainBreak>,
    /// The last chained line's `seq` and SHA-256.
    pub head: Option<LogHead>,
    /// The line a head given in [`ReplayOptions::head`] names, when a line carries its `seq`.
    pub head_found: Option<HeadFound>,
    /// Seal lines that carry a MAC (the log was written with a key).
    pub keyed_seals: u64,
}

/// The line a kept head names, as found in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HeadFound {
    /// Its 1-based line number.
    pub line: u64,
    /// Whether its SHA-256 is the head's.
    pub matches: bool,
}

impl LogReport {
    /// The chain's status, [`ChainStatus::Absent`] when nothing was read.
    pub fn chain_status(&self) -> ChainStatus {
        self.chain.unwrap_or(ChainStatus::Absent)
    }
}

/// Replays the log at `path`, calling `on_result` for each decision event in file order.
pub fn replay_file(
    path: &Path,
    options: &ReplayOptions,
    on_result: &mut dyn FnMut(&RecordResult),
) -> io::Result<LogReport> {
    let file = File::open(path)?;
    replay_reader(file, options, on_result)
}

/// Replays a log read from `reader`.
pub fn replay_reader<R: Read + Send>(
    reader: R,
    options: &ReplayOptions,
    on_result: &mut dyn FnMut(&RecordResult),
) -> io::Result<LogReport> {
    let mut lines = LineReader::new(reader, options.max_line);
    let mut merger = Merger::default();
    if options.threads <= 1 {
        replay_lines(&mut lines, options, &mut merger, None, Pace::Grouped, on_result)?;
    } else {
        replay_parallel(&mut lines, options, &mut merger, None, on_result)?;
    }
    Ok(merger.finish())
}

/// Replays a log read from `reader` as [`replay_reader`] does (on `options.threads`
/// threads), handing every line to `on_line` as it is read, in order: a check that needs the
/// lines too (the approvals) is made in the same read. Results reach `on_result` in file
/// order, but not in step with the lines.
pub fn replay_reader_with_lines<R: Read + Send>(
    reader: R,
    options: &ReplayOptions,
    on_line: &mut (dyn FnMut(ObservedLine<'_>) + Send),
    on_result: &mut dyn FnMut(&RecordResult),
) -> io::Result<LogReport> {
    let mut lines = LineReader::new(reader, options.max_line);
    let mut merger = Merger::default();
    if options.threads <= 1 {
        replay_lines(&mut lines, options, &mut merger, Some(on_line), Pace::Grouped, on_result)?;
    } else {
        replay_parallel(&mut lines, options, &mut merger, Some(on_line), on_result)?;
    }
    Ok(merger.finish())
}

/// When the one-thread replay hands results over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pace {
    /// Each line's result right after the line.
    PerLine,
    /// In groups (fewer calls).
    Grouped,
}

/// A line of the log as [`replay_reader_observed`] hands it over, before it is verified.
#[derive(Debug, Clone, Copy)]
pub struct ObservedLine<'a> {
    /// The 1-based line number.
    pub number: u64,
    /// The line's bytes without its `\n`; `None` for a line longer than the cap (skipped).
    pub bytes: Option<&'a [u8]>,
    /// `false` only for a last line that lacks its `\n` (a torn write).
    pub terminated: bool,
}

/// Replays a log read from `reader` on the calling thread (`options.threads` is not used),
/// handing every line to `on_line` just before it is verified: a caller that needs the lines
/// too (an export) reads the log once instead of twice. A line's result, if it holds a
/// decision event, reaches `on_result` right after the line (before the next line), so the
/// two streams meet on the line number.
pub fn replay_reader_observed<R: Read>(
    reader: R,
    options: &ReplayOptions,
    on_line: &mut dyn FnMut(ObservedLine<'_>),
    on_result: &mut dyn FnMut(&RecordResult),
) -> io::Result<LogReport> {
    let mut lines = LineReader::new(reader, options.max_line);
    let mut merger = Merger::default();
    replay_lines(&mut lines, options, &mut merger, Some(on_line), Pace::PerLine, on_result)?;
    Ok(merger.finish())
}

/// The one-thread replay: lines are verified where the reader holds them (nothing is copied).
/// With an observer, each line goes to it first; at `Pace::PerLine` its result follows at
/// once, otherwise results are handed over in groups.
fn replay_lines<R: Read>(
    lines: &mut LineReader<R>,
    options: &ReplayOptions,
    merger: &mut Merger,
    mut on_line: Option<&mut dyn FnMut(ObservedLine<'_>)>,
    pace: Pace,
    on_result: &mut dyn FnMut(&RecordResult),
) -> io::Result<()> {
    let mut verifier = Verifier::new(options.rules, options.seal_key.clone(), options.policies.clone(), options.head);
    while let Some(line) = lines.next_line()? {
        let (number, text, terminated) = match line {
            Line::Text { number, bytes, terminated } => (number, LineText::Bytes(bytes), terminated),
            Line::TooLong { number, length, sha256, terminated } => {
                (number, LineText::TooLong { length, sha256 }, terminated)
            }
        };
        if let Some(observe) = on_line.as_mut() {
            let bytes = match text {
                LineText::Bytes(bytes) => Some(bytes),
                LineText::TooLong { .. } => None,
            };
            observe(ObservedLine { number, bytes, terminated });
            if pace == Pace::PerLine {
                verifier.line(number, text, terminated);
                // A result is final once its line is verified (the policy check amends it there).
                for result in verifier.results.drain(..) {
                    on_result(&result);
                }
                continue;
            }
        }
        verifier.line(number, text, terminated);
        if verifier.results.len() >= STREAM_RESULTS {
            merger.merge(verifier.take(), on_result);
        }
    }
    merger.merge(verifier.take(), on_result);
    Ok(())
}

fn replay_parallel<R: Read + Send>(
    lines: &mut LineReader<R>,
    options: &ReplayOptions,
    merger: &mut Merger,
    mut on_line: Option<&mut (dyn FnMut(ObservedLine<'_>) + Send)>,
    on_result: &mut dyn FnMut(&RecordResult),
) -> io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = options.threads.min(cores).max(1);
    let rules = options.rules;
    let (job_tx, job_rx) = mpsc::sync_channel::<(u64, Batch)>(threads * 2);
    let (done_tx, done_rx) = mpsc::sync_channel::<(u64, BatchOutcome)>(threads * 2);
    let job_rx = Arc::new(Mutex::new(job_rx));
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> io::Result<()> {
            let mut index = 0;
            while let Some(batch) = read_batch(lines)? {
                if let Some(observe) = on_line.as_mut() {
                    batch.observe(&mut **observe);
                }
                if job_tx.send((index, batch)).is_err() {
                    break;
                }
                index += 1;
            }
            Ok(())
        });
        for _ in 0..threads {
            let job_rx = Arc::clone(&job_rx);
            let done_tx = done_tx.clone();
            let (seal_key, policies, head) = (&options.seal_key, &options.policies, options.head);
            scope.spawn(move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((index, batch)) = job else { return };
                    if done_tx
                        .send((index, verify_batch(&batch, rules, seal_key.clone(), policies.clone(), head)))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        // Batches finish out of order; merge them in file order.
        let mut waiting: BTreeMap<u64, BatchOutcome> = BTreeMap::new();
        let mut next = 0;
        for (index, outcome) in done_rx {
            waiting.insert(index, outcome);
            while let Some(outcome) = waiting.remove(&next) {
                merger.merge(outcome, on_result);
                next += 1;
            }
        }
        reader.join().unwrap_or_else(|_| Err(io::Error::other("the log reader thread stopped")))
    })
}

/// A batch of consecutive lines.
struct Batch {
    data: Vec<u8>,
    lines: Vec<BatchLine>,
}

struct BatchLine {
    number: u64,
    body: LineBody,
    terminated: bool,
}

enum LineBody {
    Bytes(Range<usize>),
    TooLong { length: u64, sha256: [u8; 32] },
}

impl Batch {
    /// Hands each line of the batch to `observe`, in order.
    fn observe(&self, observe: &mut dyn FnMut(ObservedLine<'_>)) {
        for line in &self.lines {
            let bytes = match &line.body {
                LineBody::Bytes(range) => self.data.get(range.clone()),
                LineBody::TooLong { .. } => None,
            };
            observe(ObservedLine { number: line.number, bytes, terminated: line.terminated });
        }
    }
}

fn read_batch<R: Read>(lines: &mut LineReader<R>) -> io::Result<Option<Batch>> {
    let mut batch = Batch { data: Vec::with_capacity(BATCH_BYTES + 8192), lines: Vec::with_capacity(512) };
    while batch.data.len() < BATCH_BYTES {
        let Some(line) = lines.next_line()? else { break };
        match line {
            Line::Text { number, bytes, terminated } => {
                let start = batch.data.len();
                batch.data.extend_from_slice(bytes);
                batch.lines.push(BatchLine { number, body: LineBody::Bytes(start..batch.data.len()), terminated });
            }
            Line::TooLong { number, length, sha256, terminated } => {
                batch.lines.push(BatchLine { number, body: LineBody::TooLong { length, sha256 }, terminated });
            }
        }
    }
    Ok(if batch.lines.is_empty() { None } else { Some(batch) })
}

/// A line's place in the chain.
#[derive(Debug, Clone, Copy)]
struct Link {
    number: u64,
    fields: ChainFields,
}

/// The chain end a batch hands to the next one.
#[derive(Debug, Clone, Copy)]
struct Tail {
    number: u64,
    seq: Option<u64>,
    sha256: [u8; 32],
}

#[derive(Default)]
struct Tally {
    records: u64,
    other_events: u64,
    skipped_lines: u64,
    verified: u64,
    partial: u64,
    unverifiable: u64,
    mismatch: u64,
    torn_tail: Option<u64>,
    long_lines: u64,
    skipped: Vec<SkippedLine>,
    chained: bool,
    chain_breaks: u64,
    breaks: Vec<ChainBreak>,
    runs: BTreeSet<u64>,
    last_run: Option<u64>,
    session: Option<String>,
    chain_claimed: bool,
    last_seal: Option<SealSeen>,
    seal_problems: Vec<ChainBreak>,
    head_found: Option<HeadFound>,
    keyed_seals: u64,
}

impl Tally {
    fn skip(&mut self, line: u64, reason: String) {
        self.skipped_lines += 1;
        if self.skipped.len() < MAX_LISTED {
            self.skipped.push(SkippedLine { line, reason });
        }
    }

    fn run(&mut self, run: u64) {
        // Consecutive lines nearly always share their run.
        if self.last_run != Some(run) {
            self.runs.insert(run);
            self.last_run = Some(run);
        }
    }

    fn broken(&mut self, line: u64, reason: String) {
        self.chain_breaks += 1;
        if self.breaks.len() < MAX_LISTED {
            self.breaks.push(ChainBreak { line, reason });
        }
    }

    fn bad_seal(&mut self, line: u64, reason: String) {
        if self.seal_problems.len() < MAX_LISTED {
            self.seal_problems.push(ChainBreak { line, reason });
        }
    }

    /// Checks a seal line: its count against its `seq` (which the chain checks), its MAC
    /// against the key when one is given.
    fn seal(&mut self, line: u64, seal: SealFields, chain: ChainFields, key: Option<&SealKey>) {
        match (seal.lines, chain.seq) {
            (Some(lines), Some(seq)) if lines == seq => {}
            (Some(lines), Some(seq)) => {
                self.bad_seal(line, format!("the seal counts {lines} lines before it, but it is line seq {seq}"))
            }
            (None, _) => self.bad_seal(line, "the seal carries no line count".to_owned()),
            (Some(_), None) => self.bad_seal(line, "the seal carries no chain fields".to_owned()),
        }
        self.keyed_seals += u64::from(seal.mac.is_some());
        let mac = match (key, seal.mac) {
            (None, None) => MacCheck::Unkeyed,
            (None, Some(_)) => MacCheck::Unchecked,
            (Some(key), Some(mac)) => match (seal.lines, chain.prev) {
                (Some(lines), Some(prev)) if key.verify(lines, &prev, &mac) => MacCheck::Verified,
                _ => {
                    self.bad_seal(line, "the seal's MAC does not verify under the given key".to_owned());
                    MacCheck::Failed
                }
            },
            (Some(_), None) => {
                self.bad_seal(line, "a key was given, and the seal carries no MAC (it is not keyed)".to_owned());
                MacCheck::Failed
            }
        };
        self.last_seal = Some(SealSeen { line, run: seal.run, lines: seal.lines, mac });
    }
}

struct BatchOutcome {
    tally: Tally,
    results: Vec<RecordResult>,
    first: Option<Link>,
    last: Option<Tail>,
}

/// Checks the link from line `a` to line `b`; `a_sha256` is only called when needed.
fn check_link(a: Link, a_sha256: impl FnOnce() -> [u8; 32], b: Link) -> Option<String> {
    match (a.fields.seq, b.fields.seq) {
        (Some(_), None) => Some(format!(
            "line {} carries no chain fields inside a chained log (a line was inserted or rewritten)",
            b.number
        )),
        (_, Some(seq_b)) => {
            if b.fields.prev != Some(a_sha256()) {
                Some(format!(
                    "line {}: `prev` is not the SHA-256 of line {} (a line was deleted, inserted, reordered or changed)",
                    b.number, a.number
                ))
            } else if let Some(seq_a) = a.fields.seq
                && seq_a.checked_add(1) != Some(seq_b)
            {
                Some(format!("line {}: `seq` {seq_b} does not follow {seq_a} on line {}", b.number, a.number))
            } else {
                None
            }
        }
        (None, None) => None,
    }
}

/// The rule for the first line of a log: a chain starts at `seq` 0 with no `prev`.
fn check_start(b: Link) -> Option<String> {
    match b.fields.seq {
        Some(seq) if seq != 0 || b.fields.prev.is_some() => Some(format!(
            "line {} is the first line but has `seq` {seq}: the chain does not start here (leading lines were deleted)",
            b.number
        )),
        _ => None,
    }
}

fn verify_batch(
    batch: &Batch,
    rules: Rules,
    seal_key: Option<SealKey>,
    policies: Option<Arc<PolicyBook>>,
    head: Option<LogHead>,
) -> BatchOutcome {
    let mut verifier = Verifier::new(rules, seal_key, policies, head);
    for line in &batch.lines {
        let text = match &line.body {
            LineBody::Bytes(range) => LineText::Bytes(batch.data.get(range.clone()).unwrap_or(&[])),
            LineBody::TooLong { length, sha256 } => LineText::TooLong { length: *length, sha256: *sha256 },
        };
        verifier.line(line.number, text, line.terminated);
    }
    verifier.take()
}

/// One line, as the verifier is given it.
enum LineText<'a> {
    Bytes(&'a [u8]),
    /// Longer than the cap: only its length and SHA-256 are known.
    TooLong {
        length: u64,
        sha256: [u8; 32],
    },
}

/// Verifies consecutive lines one at a time, and hands over what it found with
/// [`Verifier::take`]. The SHA-256 of a chained line is taken at once (the next line's
/// `prev` needs it); an unchained line (a log written by the reference) is only kept, and
/// hashed if a link ever needs it.
struct Verifier {
    rules: Rules,
    seal_key: Option<SealKey>,
    policies: Option<Arc<PolicyBook>>,
    tally: Tally,
    results: Vec<RecordResult>,
    first: Option<Link>,
    previous: Option<Link>,
    /// The previous line's SHA-256, or `None` when only its text was kept.
    previous_sha256: Option<[u8; 32]>,
    previous_text: Vec<u8>,
    parser: LineParser,
    memo: MergedDigests,
    head: Option<LogHead>,
}

impl Verifier {
    fn new(rules: Rules, seal_key: Option<SealKey>, policies: Option<Arc<PolicyBook>>, head: Option<LogHead>) -> Self {
        Verifier {
            head,
            rules,
            seal_key,
            policies,
            tally: Tally::default(),
            results: Vec::new(),
            first: None,
            previous: None,
            previous_sha256: None,
            previous_text: Vec::new(),
            parser: LineParser::new(),
            memo: MergedDigests::default(),
        }
    }

    fn line(&mut self, number: u64, text: LineText<'_>, terminated: bool) {
        let fields = self.read(number, &text, terminated);
        if let (Some(book), LineText::Bytes(bytes)) = (&self.policies, &text) {
            amend_with_policy(book, number, bytes, &mut self.tally, &mut self.results);
        }
        let Some(fields) = fields else { return };
        let link = Link { number, fields };
        self.tally.chained |= fields.is_chained();
        match self.previous {
            Some(a) => {
                let (sha256, kept) = (self.previous_sha256, &self.previous_text);
                if let Some(reason) = check_link(a, || sha256.unwrap_or_else(|| Sha256::digest(kept).into()), link) {
                    self.tally.broken(link.number, reason);
                }
            }
            None => self.first = Some(link),
        }
        self.previous = Some(link);
        self.previous_text.clear();
        self.previous_sha256 = match text {
            LineText::TooLong { sha256, .. } => Some(sha256),
            LineText::Bytes(bytes) if fields.is_chained() => Some(Sha256::digest(bytes).into()),
            LineText::Bytes(bytes) => {
                self.previous_text.extend_from_slice(bytes);
                None
            }
        };
        if let (Some(head), Some(seq), None) = (self.head, fields.seq, self.tally.head_found)
            && head.seq == seq
        {
            let sha256 = self.previous_sha256.unwrap_or_else(|| Sha256::digest(&self.previous_text).into());
            self.tally.head_found = Some(HeadFound { line: number, matches: sha256 == head.sha256 });
        }
    }

    /// Reads one line and counts what it holds; its chain fields, or `None` when the line
    /// takes no part in the chain (blank, or a torn last line).
    fn read(&mut self, number: u64, text: &LineText<'_>, terminated: bool) -> Option<ChainFields> {
        let (rules, tally, results, memo) = (self.rules, &mut self.tally, &mut self.results, &mut self.memo);
        let bytes = match text {
            LineText::TooLong { length, .. } => {
                tally.long_lines += 1;
                tally.skip(number, format!("line of {length} bytes is longer than the cap"));
                return Some(ChainFields::default());
            }
            LineText::Bytes(bytes) => *bytes,
        };
        if bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            // A blank line is not counted; it carries no chain fields, so inside a chained
            // log it is a break like any other inserted line (every byte counts).
            return Some(ChainFields::default());
        }
        // The common case, an event line in canonical form, is read in place.
        if let Some(event) = self.parser.event(bytes) {
            tally.run(event.run);
            match event.event {
                EventView::Decision(record) => tally_record(number, event.run, record, rules, tally, results, memo),
                EventView::Other | EventView::NotAnObject => tally.other_events += 1,
            }
            return Some(event.chain);
        }
        match parse_line(bytes) {
            Ok(parsed) => {
                match parsed.kind {
                    LineKind::Seal(seal) => tally.seal(number, seal, parsed.chain, self.seal_key.as_ref()),
                    kind => classify(number, kind, rules, tally, results, memo),
                }
                Some(parsed.chain)
            }
            Err(error) if !terminated => {
                // The last write was cut short: this line is lost, nothing else is.
                tally.torn_tail = Some(number);
                tally.skip(number, format!("torn last line (the write was cut short): {error}"));
                None
            }
            Err(error) => {
                tally.skip(number, format!("not JSON: {error}"));
                Some(ChainFields::default())
            }
        }
    }

    /// What was found since the last call; the next line starts a new stretch, whose first
    /// link [`Merger`] checks against this one's last.
    fn take(&mut self) -> BatchOutcome {
        let last = self.previous.take().map(|link| Tail {
            number: link.number,
            seq: link.fields.seq,
            sha256: self.previous_sha256.unwrap_or_else(|| Sha256::digest(&self.previous_text).into()),
        });
        BatchOutcome {
            tally: std::mem::take(&mut self.tally),
            // Handed over every STREAM_RESULTS records: keep the room for the next ones.
            results: std::mem::replace(&mut self.results, Vec::with_capacity(STREAM_RESULTS)),
            first: self.first.take(),
            last,
        }
    }
}

fn classify(
    number: u64,
    kind: LineKind,
    rules: Rules,
    tally: &mut Tally,
    results: &mut Vec<RecordResult>,
    memo: &mut MergedDigests,
) {
    match kind {
        LineKind::Header { id, chain } => {
            if tally.session.is_none() {
                tally.session = id;
            }
            tally.chain_claimed |= chain.as_deref() == Some(CHAIN_CLAIM);
        }
        // Seals are read where their chain fields are at hand (`Verifier::read`).
        LineKind::Seal(_) => {}
        LineKind::Turn => {}
        LineKind::Unknown(reason) => tally.skip(number, reason.to_owned()),
        LineKind::Event { run, event } => {
            tally.run(run);
            match event {
                EventRead::Decision(record) => {
                    let record = record.as_deref().map(|r| r.view()).map_err(|why| *why);
                    tally_record(number, run, record, rules, tally, results, memo);
                }
                EventRead::Other { .. } | EventRead::NotAnObject => tally.other_events += 1,
            }
        }
    }
}

/// Adds the policy check to the record just verified from line `number`, if it was one; a
/// failed check makes the record a mismatch.
fn amend_with_policy(book: &PolicyBook, number: u64, bytes: &[u8], tally: &mut Tally, results: &mut [RecordResult]) {
    let Some(result) = results.last_mut().filter(|r| r.line == number) else { return };
    let Some(check) = book.check_line(bytes) else { return };
    if check.status == decision_protocol::record::CheckStatus::Fail && result.status != VerifyOutcome::Mismatch {
        let count = match result.status {
            VerifyOutcome::Verified => &mut tally.verified,
            VerifyOutcome::Partial => &mut tally.partial,
            VerifyOutcome::Unverifiable => &mut tally.unverifiable,
            VerifyOutcome::Mismatch => &mut tally.mismatch,
        };
        *count = count.saturating_sub(1);
        tally.mismatch += 1;
        result.status = VerifyOutcome::Mismatch;
    }
    result.checks.push(check);
}

/// Verifies one decision event and counts its outcome.
fn tally_record(
    number: u64,
    run: u64,
    record: Result<RecordView<'_>, NotARecord>,
    rules: Rules,
    tally: &mut Tally,
    results: &mut Vec<RecordResult>,
    memo: &mut MergedDigests,
) {
    tally.records += 1;
    match record {
        Ok(record) => {
            let verdict = verify_view_with(&record, rules, memo);
            match verdict.outcome {
                VerifyOutcome::Verified => tally.verified += 1,
                VerifyOutcome::Partial => tally.partial += 1,
                VerifyOutcome::Unverifiable => tally.unverifiable += 1,
                VerifyOutcome::Mismatch => tally.mismatch += 1,
            }
            results.push(RecordResult {
                line: number,
                run,
                step: Some(record.step),
                node: Some(text_of(record.node)),
                status: verdict.outcome,
                checks: verdict.checks,
                problem: None,
            });
        }
        Err(why) => {
            tally.unverifiable += 1;
            results.push(RecordResult {
                line: number,
                run,
                step: None,
                node: None,
                status: VerifyOutcome::Unverifiable,
                checks: Vec::new(),
                problem: Some(format!("not a decision record: {why}")),
            });
        }
    }
}

/// Merges batch outcomes, in file order, into one report.
#[derive(Default)]
struct Merger {
    tally: Tally,
    last: Option<Tail>,
}

impl Merger {
    fn merge(&mut self, outcome: BatchOutcome, on_result: &mut dyn FnMut(&RecordResult)) {
        let BatchOutcome { tally, results, first, last } = outcome;
        for result in &results {
            on_result(result);
        }
        if let Some(first) = first {
            let reason = match self.last {
                Some(tail) => check_link(
                    Link { number: tail.number, fields: ChainFields { seq: tail.seq, prev: None } },
                    || tail.sha256,
                    first,
                ),
                None => check_start(first),
            };
            if let Some(reason) = reason {
                self.tally.broken(first.number, reason);
            }
        }
        if last.is_some() {
            self.last = last;
        }
        let t = &mut self.tally;
        t.records += tally.records;
        t.other_events += tally.other_events;
        t.skipped_lines += tally.skipped_lines;
        t.verified += tally.verified;
        t.partial += tally.partial;
        t.unverifiable += tally.unverifiable;
        t.mismatch += tally.mismatch;
        t.torn_tail = tally.torn_tail.or(t.torn_tail);
        t.long_lines += tally.long_lines;
        let room = MAX_LISTED.saturating_sub(t.skipped.len());
        t.skipped.extend(tally.skipped.into_iter().take(room));
        t.chained |= tally.chained;
        t.chain_breaks += tally.chain_breaks;
        let room = MAX_LISTED.saturating_sub(t.breaks.len());
        t.breaks.extend(tally.breaks.into_iter().take(room));
        t.runs.extend(tally.runs);
        if t.session.is_none() {
            t.session = tally.session;
        }
        t.chain_claimed |= tally.chain_claimed;
        if tally.last_seal.is_some() {
            t.last_seal = tally.last_seal;
        }
        let room = MAX_LISTED.saturating_sub(t.seal_problems.len());
        t.seal_problems.extend(tally.seal_problems.into_iter().take(room));
        t.head_found = t.head_found.or(tally.head_found);
        t.keyed_seals += tally.keyed_seals;
    }

    fn finish(self) -> LogReport {
        let t = self.tally;
        let chain = if t.chain_breaks > 0 {
            ChainStatus::Broken
        } else if t.chained {
            ChainStatus::Intact
        } else if t.chain_claimed {
            ChainStatus::Missing
        } else {
            ChainStatus::Absent
        };
        let head = self.last.and_then(|tail| tail.seq.map(|seq| LogHead { seq, sha256: tail.sha256 }));
        let ends_sealed = match (t.last_seal, self.last) {
            (Some(seal), Some(last)) => seal.line == last.number && t.torn_tail.is_none(),
            _ => false,
        };
        let seal = if !t.seal_problems.is_empty() {
            SealStatus::Invalid
        } else if ends_sealed && t.chained {
            SealStatus::Sealed
        } else if t.chained || t.chain_claimed {
            SealStatus::Unfinished
        } else {
            SealStatus::Absent
        };
        LogReport {
            records: t.records,
            other_events: t.other_events,
            runs: t.runs.len() as u64,
            skipped_lines: t.skipped_lines,
            verified: t.verified,
            partial: t.partial,
            unverifiable: t.unverifiable,
            mismatch: t.mismatch,
            torn_tail: t.torn_tail,
            long_lines: t.long_lines,
            skipped: t.skipped,
            chain: Some(chain),
            chain_breaks: t.chain_breaks,
            breaks: t.breaks,
            session: t.session,
            chain_claimed: t.chain_claimed,
            seal,
            last_seal: t.last_seal,
            seal_problems: t.seal_problems,
            head,
            head_found: t.head_found,
            keyed_seals: t.keyed_seals,
        }
    }
}

/// What is wrong with `report` against the head `expected`, if anything. A head is a prefix
/// check: the line carrying its `seq` has its hash, and every line after it chains to it (the
/// chain is intact), so a head printed at the end of any run keeps verifying the log once
/// later runs extended it.
pub fn head_problem(report: &LogReport, expected: LogHead) -> Option<String> {
    if report.head == Some(expected) && report.chain_status() == ChainStatus::Intact {
        return None;
    }
    match report.head_found {
        Some(found) if !found.matches => Some(format!(
            "--head {expected}: line {} carries seq {} and its SHA-256 is not the head's (the log was changed up to there)",
            found.line, expected.seq
        )),
        Some(_) if report.chain_status() != ChainStatus::Intact => Some(format!(
            "--head {expected}: the chain is {}, so the lines after the head do not follow from it",
            report.chain_status().as_str()
        )),
        Some(_) => None,
        None => Some(match report.head {
            Some(head) => format!("--head {expected}: no line carries seq {} (the log's head is {head})", expected.seq),
            None => format!("--head {expected}: the log has no chained line"),
        }),
    }
}
