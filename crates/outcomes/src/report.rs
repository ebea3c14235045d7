//! The out-of-band report: deterministic scoring per tool and method over a log of outcome
//! events, with advisory recommendations and the evidence behind each. It reads; it changes
//! nothing.
//!
//! # The outcome event
//!
//! ```json
//! {"type":"tool:outcome","tool":"catalog","method":"find_movies","trace_id":"t1","call_id":"c1",
//!  "at":1767225600000,"depth":0,"contract":"held","weak_success":["empty_array_success"],
//!  "outcome":{"status":"ok","value":{"status":"success","movies":[]}}}
//! ```
//!
//! * `outcome` (required): the outcome document ([`crate::Outcome::from_json`]).
//! * `tool`, `method`: required, here or inside `outcome`.
//! * `trace_id`, `call_id` (strings), `at` (milliseconds since the epoch), `depth` (0 = top
//!   level): optional; correction linking needs `trace_id` and `at`.
//! * `contract`: `held`, `violated` or `not_applied`, as validation decided. An error outcome of
//!   type `contract_violation` counts as violated without it.
//! * `weak_success`: the flags recorded at call time; when absent they are computed from the
//!   outcome with [`telemetry::observe`].
//!
//! A log line may hold the event in three ways:
//! * a runtime session-log envelope `{"kind":"event","run":0,"at":…,"e":{"type":"tool:outcome",…}}`
//!   (the envelope's `at` is used when the event has none);
//! * a flat event marked `"kind":"tool:outcome"` or `"type":"tool:outcome"`;
//! * a plain outcome event with no `kind`/`type`, recognised by its `outcome` member.
//!
//! Extra members anywhere are ignored. Other lines (headers, other event types) are counted
//! and skipped; blank lines are ignored; an unreadable final line without a newline (a torn
//! write) is tolerated; any other unreadable line, or an outcome event that is malformed, is an
//! error naming its line.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead};

use foldhash::fast::RandomState;
use serde_json::{Map, Value, json};

use super::events::{self, Event, EventResult, Line};
use super::telemetry::{self, CallRef, CallSighting, CorrectionLinker, Observed, WeakSuccessFlag};
use super::types::error_type;
use super::validate::Validated;

pub use super::events::OUTCOME_EVENT_TYPE;

/// How many evidence references (log lines) are kept per category.
pub const EVIDENCE_LIMIT: usize = 5;
/// How many distinct values (paths, statuses, axes) are counted per category.
const DISTINCT_LIMIT: usize = 32;

/// When a recommendation is made. All counts are per tool and method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// `strengthen_constraints`: at least this many weak successes …
    pub weak_success_min: u64,
    /// … making up at least this share of ok outcomes.
    pub weak_success_rate_min: f64,
    /// `reforge_implementation`: at least this many validated outcomes …
    pub validations_min: u64,
    /// … with a contract pass rate below this;
    pub contract_pass_rate_below: f64,
    /// or at least this many weak successes that the user corrected by asking again.
    pub correction_linked_min: u64,
    /// `split_boundary`: at least this many `wrong_tool_boundary` referrals.
    pub boundary_referrals_min: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            weak_success_min: 2,
            weak_success_rate_min: 0.2,
            validations_min: 3,
            contract_pass_rate_below: 0.8,
            correction_linked_min: 2,
            boundary_referrals_min: 2,
        }
    }
}

/// A log line (1-based) and the call recorded there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The 1-based line of the log where the event stands.
    pub line: usize,
    /// The event's `call_id`; `None` when it has none (or, for the earlier call of a
    /// correction, when its evidence was not going to be shown).
    pub call_id: Option<String>,
}

/// Counters for one tool and method.
///
/// The string-keyed maps count at most 32 distinct keys each (a new key after that is not
/// counted); the evidence lists keep the first [`EVIDENCE_LIMIT`] entries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Outcome events of this tool and method.
    pub calls: u64,
    /// Of those, ok outcomes.
    pub ok: u64,
    /// Of those, error outcomes (of any `error_type`, contract violations included).
    pub errors: u64,
    /// Ok outcomes with at least one weak-success flag (recorded, or observed when none was
    /// recorded).
    pub weak_success: u64,
    /// Each flag's name (e.g. `empty_array_success`) and how often it was raised.
    pub weak_flags: BTreeMap<&'static str, u64>,
    /// JSON pointers of the empty arrays behind weak successes, and how often each was empty.
    pub empty_arrays: BTreeMap<String, u64>,
    /// The weak `status` strings behind `weak_status`, and how often each was seen.
    pub weak_statuses: BTreeMap<String, u64>,
    /// Calls that asked the same tool and method again within the window.
    pub corrections: u64,
    /// Weak successes followed by such a correction.
    pub correction_linked_weak_success: u64,
    /// Error outcomes of type `wrong_tool_boundary` (boundary referrals).
    pub wrong_tool_boundary: u64,
    /// Error outcomes of type `low_utility`.
    pub low_utility: u64,
    /// The `boundary_axes` named in boundary referrals' metadata, and how often each was named.
    pub boundary_axes: BTreeMap<String, u64>,
    /// The `suggested_split`s named in boundary referrals' metadata, and how often.
    pub suggested_splits: BTreeMap<String, u64>,
    /// Outcomes whose contract held (`"contract":"held"`).
    pub contract_held: u64,
    /// Outcomes whose contract was violated (recorded as such, or a `contract_violation`
    /// error).
    pub contract_violated: u64,
    /// Violations by mismatch kind (e.g. `missing_required_key`).
    pub mismatches: BTreeMap<String, u64>,
    /// Violations by failing path (a JSON pointer into the ok value).
    pub violation_paths: BTreeMap<String, u64>,
    /// Where weak successes stand.
    pub weak_evidence: Vec<Evidence>,
    /// (the weak success, the call that corrected it)
    pub correction_evidence: Vec<(Evidence, Evidence)>,
    /// Where boundary referrals stand.
    pub boundary_evidence: Vec<Evidence>,
    /// Where contract violations stand.
    pub violation_evidence: Vec<Evidence>,
}

impl Stats {
    /// Weak successes per ok outcome; `None` when there is no ok outcome.
    pub fn weak_success_rate(&self) -> Option<f64> {
        (self.ok > 0).then(|| self.weak_success as f64 / self.ok as f64)
    }

    /// Held per validated outcome; `None` when no outcome was validated.
    pub fn contract_pass_rate(&self) -> Option<f64> {
        let validated = self.contract_held + self.contract_violated;
        (validated > 0).then(|| self.contract_held as f64 / validated as f64)
    }
}

/// The advisory recommendations (outcomes.md, decision 6). Advisory only: nothing acts on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecommendationKind {
    /// Weak successes are frequent: the deliverable contract should demand more (the evidence
    /// suggests which constraints).
    StrengthenConstraints,
    /// The contract fails often, or the user keeps correcting weak successes: the
    /// implementation should be rewritten.
    ReforgeImplementation,
    /// The tool keeps referring requests as crossing its boundary: it should be split.
    SplitBoundary,
}

impl RecommendationKind {
    /// The snake-case name used in the report (e.g. `split_boundary`).
    pub fn as_str(self) -> &'static str {
        match self {
            RecommendationKind::StrengthenConstraints => "strengthen_constraints",
            RecommendationKind::ReforgeImplementation => "reforge_implementation",
            RecommendationKind::SplitBoundary => "split_boundary",
        }
    }
}

/// One advisory recommendation with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// What is recommended.
    pub kind: RecommendationKind,
    /// Why, in one sentence naming the counts behind it.
    pub reason: String,
    /// The counts and log lines behind it, as a JSON object (its members depend on `kind`).
    pub evidence: Map<String, Value>,
}

/// The scores and recommendations of one tool and method.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReport {
    /// The tool's name.
    pub tool: String,
    /// The method's name.
    pub method: String,
    /// Its counters.
    pub stats: Stats,
    /// The recommendations its counters cross thresholds for, in kind order; often empty.
    pub recommendations: Vec<Recommendation>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
pub struct OutcomesReport {
    /// Lines read, blank ones included.
    pub lines: usize,
    /// Lines that held an outcome event.
    pub outcome_events: u64,
    /// Non-blank lines that held something else (headers, other events), skipped.
    pub other_lines: u64,
    /// Whether the log ended in an unreadable line without a newline (a torn write), ignored.
    pub torn_tail: bool,
    /// The correction window used, in milliseconds.
    pub window_ms: u64,
    /// The thresholds the recommendations were made with.
    pub thresholds: Thresholds,
    /// Sorted by tool, then method.
    pub tools: Vec<ToolReport>,
}

/// A log that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutcomesReportError {
    /// A line is not JSON (and is not a torn final line), or holds a malformed outcome event.
    #[error("line {line}: {message}")]
    Line {
        /// The 1-based line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Reading failed, or a line is not UTF-8.
    #[error("cannot read the log: {0}")]
    Io(#[from] std::io::Error),
}

fn bump(counts: &mut BTreeMap<String, u64>, key: &str) {
    if let Some(count) = counts.get_mut(key) {
        *count += 1;
    } else if counts.len() < DISTINCT_LIMIT {
        counts.insert(key.to_owned(), 1);
    }
}

fn keep<T>(list: &mut Vec<T>, item: impl FnOnce() -> T) {
    if list.len() < EVIDENCE_LIMIT {
        list.push(item());
    }
}

/// Accumulates events into a report.
pub struct OutcomesReportBuilder {
    thresholds: Thresholds,
    linker: CorrectionLinker,
    /// tool → method → counters (two levels so that a lookup needs no allocation; a fast
    /// hash, seeded per process, since every event is looked up).
    stats: HashMap<String, HashMap<String, Stats, RandomState>, RandomState>,
    /// Reused to write JSON pointers for lookups.
    scratch: String,
    lines: usize,
    outcome_events: u64,
    other_lines: u64,
    torn_tail: bool,
}

impl Default for OutcomesReportBuilder {
    fn default() -> Self {
        OutcomesReportBuilder::new(Thresholds::default(), telemetry::DEFAULT_CORRECTION_WINDOW_MS)
    }
}

impl OutcomesReportBuilder {
    /// An empty builder; `window_ms` is the correction window in milliseconds (the default
    /// builder uses the reference's 180 s).
    pub fn new(thresholds: Thresholds, window_ms: u64) -> OutcomesReportBuilder {
        OutcomesReportBuilder {
            thresholds,
            linker: CorrectionLinker::new(window_ms),
            stats: HashMap::default(),
            scratch: String::new(),
            lines: 0,
            outcome_events: 0,
            other_lines: 0,
            torn_tail: false,
        }
    }

    /// Read a whole log, line by line (memory stays bounded whatever the log's size).
    ///
    /// Lines are read where they lie in the reader's buffer; only a line split across two
    /// fills of the buffer is copied. A line that is not UTF-8 is an I/O error, as with
    /// [`BufRead::read_line`].
    pub fn read(&mut self, mut reader: impl BufRead) -> Result<(), OutcomesReportError> {
        let mut split = Vec::new();
        loop {
            let buffer = match reader.fill_buf() {
                Ok(buffer) => buffer,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error.into()),
            };
            if buffer.is_empty() {
                if !split.is_empty() {
                    self.line(utf8(&split)?, true)?;
                }
                return Ok(());
            }
            let mut used = 0;
            let mut rest = buffer;
            while let Some(end) = memchr::memchr(b'\n', rest) {
                let (line, after) = rest.split_at(end + 1);
                if split.is_empty() {
                    self.line(utf8(line)?, false)?;
                } else {
                    split.extend_from_slice(line);
                    self.line(utf8(&split)?, false)?;
                    split.clear();
                }
                used += line.len();
                rest = after;
            }
            split.extend_from_slice(rest);
            used += rest.len();
            reader.consume(used);
        }
    }

    /// Add one log line; `last_unterminated` marks a final line with no newline.
    pub fn line(&mut self, text: &str, last_unterminated: bool) -> Result<(), OutcomesReportError> {
        self.lines += 1;
        self.fold(events::read_line(text, last_unterminated), text)
    }

    fn fold(&mut self, read: Result<Line<'_>, String>, text: &str) -> Result<(), OutcomesReportError> {
        let number = self.lines;
        match read {
            Ok(Line::Event(event)) => self.event(&event, number),
            Ok(Line::Other) if !text.trim().is_empty() => self.other_lines += 1,
            Ok(Line::Other) => {}
            Ok(Line::Torn) => self.torn_tail = true,
            Err(message) => return Err(OutcomesReportError::Line { line: number, message }),
        }
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, line: usize) {
        self.outcome_events += 1;
        let observed = match &event.result {
            EventResult::Ok(summary) => Some(Observed::of(summary)),
            EventResult::Error { .. } => None,
        };
        // Recorded flags are authoritative (each mention counts); the observation still
        // supplies the evidence (which arrays were empty, which status was weak).
        let mut flag_counts = [0u64; WeakSuccessFlag::ALL.len()];
        if let Some(observed) = &observed {
            match &event.weak_success {
                Some(recorded) => {
                    for (flag, count) in recorded.counts() {
                        if let Some(slot) = flag_counts.get_mut(flag as usize) {
                            *slot = count;
                        }
                    }
                }
                None => {
                    for flag in observed.flags() {
                        if let Some(slot) = flag_counts.get_mut(flag as usize) {
                            *slot = 1;
                        }
                    }
                }
            }
        }
        let weak_success = flag_counts.iter().any(|count| *count > 0);
        let evidence = || Evidence { line, call_id: event.call_id.as_deref().map(str::to_owned) };
        let methods = match self.stats.get_mut(event.tool.as_ref()) {
            Some(methods) => methods,
            None => self.stats.entry(event.tool.to_string()).or_default(),
        };
        let stats = match methods.get_mut(event.method.as_ref()) {
            Some(stats) => stats,
            None => methods.entry(event.method.to_string()).or_default(),
        };
        // The call id of an earlier call is only ever shown as evidence of a weak success
        // corrected by a later call of the same tool and method, and only while that
        // evidence has room.
        let shown_later = weak_success && stats.correction_evidence.len() < EVIDENCE_LIMIT;
        let this = CallRef {
            call_id: if shown_later { event.call_id.as_deref().map(str::to_owned) } else { None },
            sequence: line,
            weak_success,
        };
        let sighting = CallSighting {
            trace_id: event.trace_id.as_deref(),
            tool: &event.tool,
            method: &event.method,
            at_ms: event.at_ms,
            depth: event.depth,
        };
        let corrected = self.linker.sight(sighting, this);
        stats.calls += 1;
        if let Some(earlier) = corrected {
            stats.corrections += 1;
            if earlier.weak_success {
                stats.correction_linked_weak_success += 1;
                keep(&mut stats.correction_evidence, || {
                    (Evidence { line: earlier.sequence, call_id: earlier.call_id.clone() }, evidence())
                });
            }
        }
        match &event.result {
            EventResult::Ok(_) => {
                stats.ok += 1;
                if weak_success && let Some(observed) = &observed {
                    stats.weak_success += 1;
                    for (flag, count) in WeakSuccessFlag::ALL.into_iter().zip(flag_counts) {
                        if count > 0 {
                            *stats.weak_flags.entry(flag.as_str()).or_default() += count;
                        }
                    }
                    observed.for_each_empty_array(&mut self.scratch, |path| bump(&mut stats.empty_arrays, path));
                    if flag_counts.get(WeakSuccessFlag::WeakStatus as usize).is_some_and(|count| *count > 0)
                        && let Some(status) = observed.weak_status
                    {
                        bump(&mut stats.weak_statuses, status);
                    }
                    keep(&mut stats.weak_evidence, evidence);
                }
            }
            EventResult::Error { error_type, metadata } => {
                stats.errors += 1;
                match error_type.as_ref() {
                    error_type::WRONG_TOOL_BOUNDARY => {
                        stats.wrong_tool_boundary += 1;
                        for axis in &metadata.boundary_axes {
                            bump(&mut stats.boundary_axes, axis);
                        }
                        for split in &metadata.suggested_splits {
                            bump(&mut stats.suggested_splits, split);
                        }
                        keep(&mut stats.boundary_evidence, evidence);
                    }
                    error_type::LOW_UTILITY => stats.low_utility += 1,
                    _ => {}
                }
            }
        }
        let violation = match &event.result {
            EventResult::Error { error_type, metadata } if error_type.as_ref() == error_type::CONTRACT_VIOLATION => {
                Some(metadata)
            }
            _ => None,
        };
        match event.contract {
            _ if violation.is_some() => {
                stats.contract_violated += 1;
                if let Some(metadata) = violation {
                    if let Some(mismatch) = &metadata.mismatch {
                        bump(&mut stats.mismatches, mismatch);
                    }
                    if let Some(path) = &metadata.path {
                        bump(&mut stats.violation_paths, path);
                    }
                }
                keep(&mut stats.violation_evidence, evidence);
            }
            Some("held") => stats.contract_held += 1,
            Some("violated") => {
                stats.contract_violated += 1;
                keep(&mut stats.violation_evidence, evidence);
            }
            _ => {}
        }
    }

    /// Score and recommend.
    pub fn finish(self) -> OutcomesReport {
        let thresholds = self.thresholds;
        let mut tools: Vec<ToolReport> = self
            .stats
            .into_iter()
            .flat_map(|(tool, methods)| {
                methods.into_iter().map(move |(method, stats)| {
                    let recommendations = recommend(&stats, &thresholds);
                    ToolReport { tool: tool.clone(), method, stats, recommendations }
                })
            })
            .collect();
        tools.sort_by(|a, b| (&a.tool, &a.method).cmp(&(&b.tool, &b.method)));
        OutcomesReport {
            lines: self.lines,
            outcome_events: self.outcome_events,
            other_lines: self.other_lines,
            torn_tail: self.torn_tail,
            window_ms: self.linker.window_ms(),
            thresholds,
            tools,
        }
    }
}

fn utf8(line: &[u8]) -> Result<&str, OutcomesReportError> {
    std::str::from_utf8(line)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8").into())
}

/// Build a report from a whole log with the default thresholds and window.
pub fn report(reader: impl BufRead) -> Result<OutcomesReport, OutcomesReportError> {
    let mut builder = OutcomesReportBuilder::default();
    builder.read(reader)?;
    Ok(builder.finish())
}

fn rounded(rate: f64) -> Value {
    Value::from((rate * 10_000.0).round() / 10_000.0)
}

fn optional_rate(rate: Option<f64>) -> Value {
    rate.map_or(Value::Null, rounded)
}

fn lines_json(evidence: &[Evidence]) -> Value {
    Value::Array(evidence.iter().map(evidence_json).collect())
}

fn evidence_json(evidence: &Evidence) -> Value {
    let mut reference = Map::new();
    reference.insert("line".into(), Value::from(evidence.line));
    if let Some(call_id) = &evidence.call_id {
        reference.insert("call_id".into(), Value::from(call_id.clone()));
    }
    Value::Object(reference)
}

fn counts_json<K: AsRef<str>>(counts: &BTreeMap<K, u64>) -> Value {
    Value::Object(counts.iter().map(|(key, count)| (key.as_ref().to_owned(), Value::from(*count))).collect())
}

fn corrections_json(stats: &Stats) -> Value {
    Value::Array(
        stats
            .correction_evidence
            .iter()
            .map(|(weak, correction)| json!({"weak_success": evidence_json(weak), "corrected_by": evidence_json(correction)}))
            .collect(),
    )
}

/// The constraints that would turn the observed weak successes into inline failures.
fn suggested_constraints(stats: &Stats) -> Vec<String> {
    let mut suggestions = Vec::new();
    for path in stats.empty_arrays.keys() {
        if path.is_empty() {
            suggestions.push("declare `min_items: 1` on the array deliverable".to_owned());
        } else {
            let key = path.trim_start_matches('/').replace("~1", "/").replace("~0", "~");
            suggestions.push(format!(
                "declare `{key}` in `required` and `properties.{key}` as `{{\"type\": \"array\", \"min_items\": 1}}`"
            ));
        }
    }
    if !stats.weak_statuses.is_empty() {
        suggestions.push(
            "require the delivered items (`required` + `min_items`) so results with a weak status fail inline; \
             declare `enum` on `status` if it must be one of the sound statuses"
                .to_owned(),
        );
    }
    if stats.weak_flags.contains_key(WeakSuccessFlag::SuccessNothingParsed.as_str()) {
        suggestions
            .push("declare `required` for the keys that carry the delivered data, with `non_empty` strings".into());
    }
    suggestions
}

fn recommend(stats: &Stats, thresholds: &Thresholds) -> Vec<Recommendation> {
    let mut recommendations = Vec::new();
    let weak_rate = stats.weak_success_rate().unwrap_or(0.0);
    if stats.weak_success >= thresholds.weak_success_min && weak_rate >= thresholds.weak_success_rate_min {
        let mut evidence = Map::new();
        evidence.insert("weak_success".into(), Value::from(stats.weak_success));
        evidence.insert("ok".into(), Value::from(stats.ok));
        evidence.insert("weak_success_rate".into(), rounded(weak_rate));
        evidence.insert("flags".into(), counts_json(&stats.weak_flags));
        evidence.insert("empty_arrays".into(), counts_json(&stats.empty_arrays));
        evidence.insert("weak_statuses".into(), counts_json(&stats.weak_statuses));
        evidence.insert("correction_linked_weak_success".into(), Value::from(stats.correction_linked_weak_success));
        evidence.insert("suggested_constraints".into(), Value::from(suggested_constraints(stats)));
        evidence.insert("lines".into(), lines_json(&stats.weak_evidence));
        recommendations.push(Recommendation {
            kind: RecommendationKind::StrengthenConstraints,
            reason: format!(
                "{} of {} ok outcomes were weak successes ({:.1}%) that the deliverable contract let through",
                stats.weak_success,
                stats.ok,
                weak_rate * 100.0
            ),
            evidence,
        });
    }
    let validated = stats.contract_held + stats.contract_violated;
    let pass_rate = stats.contract_pass_rate();
    let failing_contract = validated >= thresholds.validations_min
        && pass_rate.is_some_and(|rate| rate < thresholds.contract_pass_rate_below);
    let corrected = stats.correction_linked_weak_success >= thresholds.correction_linked_min;
    if failing_contract || corrected {
        let mut reasons = Vec::new();
        if failing_contract {
            reasons.push(format!(
                "the implementation met its contract in {} of {} validated calls ({:.1}%)",
                stats.contract_held,
                validated,
                pass_rate.unwrap_or(0.0) * 100.0
            ));
        }
        if corrected {
            reasons.push(format!(
                "{} weak successes were followed by the same request again within the window",
                stats.correction_linked_weak_success
            ));
        }
        let mut evidence = Map::new();
        evidence.insert("validated".into(), Value::from(validated));
        evidence.insert("contract_held".into(), Value::from(stats.contract_held));
        evidence.insert("contract_violated".into(), Value::from(stats.contract_violated));
        evidence.insert("contract_pass_rate".into(), optional_rate(pass_rate));
        evidence.insert("mismatches".into(), counts_json(&stats.mismatches));
        evidence.insert("violation_paths".into(), counts_json(&stats.violation_paths));
        evidence.insert("correction_linked_weak_success".into(), Value::from(stats.correction_linked_weak_success));
        evidence.insert("violations".into(), lines_json(&stats.violation_evidence));
        evidence.insert("corrections".into(), corrections_json(stats));
        recommendations.push(Recommendation {
            kind: RecommendationKind::ReforgeImplementation,
            reason: reasons.join("; "),
            evidence,
        });
    }
    if stats.wrong_tool_boundary >= thresholds.boundary_referrals_min {
        let mut evidence = Map::new();
        evidence.insert("wrong_tool_boundary".into(), Value::from(stats.wrong_tool_boundary));
        evidence.insert("calls".into(), Value::from(stats.calls));
        evidence.insert("boundary_axes".into(), counts_json(&stats.boundary_axes));
        evidence.insert("suggested_splits".into(), counts_json(&stats.suggested_splits));
        evidence.insert("lines".into(), lines_json(&stats.boundary_evidence));
        recommendations.push(Recommendation {
            kind: RecommendationKind::SplitBoundary,
            reason: format!(
                "the tool referred {} of {} calls as crossing its boundary (wrong_tool_boundary)",
                stats.wrong_tool_boundary, stats.calls
            ),
            evidence,
        });
    }
    recommendations
}

impl OutcomesReport {
    /// The report as one JSON document.
    pub fn to_json(&self) -> Value {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|entry| {
                let stats = &entry.stats;
                json!({
                    "tool": entry.tool,
                    "method": entry.method,
                    "calls": stats.calls,
                    "ok": stats.ok,
                    "errors": stats.errors,
                    "weak_success": stats.weak_success,
                    "weak_success_rate": optional_rate(stats.weak_success_rate()),
                    "weak_success_flags": counts_json(&stats.weak_flags),
                    "corrections": stats.corrections,
                    "correction_linked_weak_success": stats.correction_linked_weak_success,
                    "wrong_tool_boundary": stats.wrong_tool_boundary,
                    "low_utility": stats.low_utility,
                    "contract": {
                        "held": stats.contract_held,
                        "violated": stats.contract_violated,
                        "pass_rate": optional_rate(stats.contract_pass_rate()),
                    },
                    "recommendations": entry.recommendations.iter().map(|recommendation| json!({
                        "kind": recommendation.kind.as_str(),
                        "advisory": true,
                        "reason": recommendation.reason,
                        "evidence": recommendation.evidence,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "lines": self.lines,
            "outcome_events": self.outcome_events,
            "other_lines": self.other_lines,
            "torn_tail": self.torn_tail,
            "correction_window_ms": self.window_ms,
            "tools": tools,
        })
    }

    /// The report as readable text.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} outcome event(s) from {} line(s) ({} other line(s) skipped{})\n",
            self.outcome_events,
            self.lines,
            self.other_lines,
            if self.torn_tail { ", torn final line ignored" } else { "" }
        );
        let percent = |rate: Option<f64>| rate.map_or("-".to_owned(), |rate| format!("{:.1}%", rate * 100.0));
        for entry in &self.tools {
            let stats = &entry.stats;
            out.push_str(&format!(
                "\n{}.{}: {} call(s), {} ok, {} error(s)\n  weak success {} ({} of ok); corrected after weak success {}\n  \
                 wrong_tool_boundary {}; low_utility {}; contract held {} violated {} (pass rate {})\n",
                entry.tool,
                entry.method,
                stats.calls,
                stats.ok,
                stats.errors,
                stats.weak_success,
                percent(stats.weak_success_rate()),
                stats.correction_linked_weak_success,
                stats.wrong_tool_boundary,
                stats.low_utility,
                stats.contract_held,
                stats.contract_violated,
                percent(stats.contract_pass_rate()),
            ));
            for recommendation in &entry.recommendations {
                out.push_str(&format!("  advisory: {} — {}\n", recommendation.kind.as_str(), recommendation.reason));
                out.push_str(&format!("    evidence: {}\n", Value::Object(recommendation.evidence.clone())));
            }
        }
        out
    }
}

/// Optional fields of an outcome event.
#[derive(Debug, Clone, Default)]
pub struct EventContext<'a> {
    /// The trace the call belongs to; correction linking needs it. `None` omits `trace_id`.
    pub trace_id: Option<&'a str>,
    /// The call's id, shown as evidence. `None` omits `call_id`.
    pub call_id: Option<&'a str>,
    /// When the call happened, in milliseconds since the epoch (the event's `at`); correction
    /// linking needs it. `None` omits `at`.
    pub at_ms: Option<u64>,
    /// Nesting depth, 0 for a top-level call (only top-level calls are linked). `None` omits
    /// `depth`, which counts as top level.
    pub depth: Option<u64>,
}

/// The `tool:outcome` event a host records after validating a call: the validated outcome (a
/// violation is a deterministic step result, recorded as evidence), the verdict, and the
/// weak-success flags observed beside it. This is the shape [`report`] reads.
pub fn outcome_event(tool: &str, method: &str, validated: &Validated, context: &EventContext<'_>) -> Value {
    let observed = telemetry::observe(&validated.outcome);
    let mut event = Map::new();
    event.insert("type".into(), Value::from(OUTCOME_EVENT_TYPE));
    event.insert("tool".into(), Value::from(tool));
    event.insert("method".into(), Value::from(method));
    if let Some(trace_id) = context.trace_id {
        event.insert("trace_id".into(), Value::from(trace_id));
    }
    if let Some(call_id) = context.call_id {
        event.insert("call_id".into(), Value::from(call_id));
    }
    if let Some(at_ms) = context.at_ms {
        event.insert("at".into(), Value::from(at_ms));
    }
    if let Some(depth) = context.depth {
        event.insert("depth".into(), Value::from(depth));
    }
    event.insert("contract".into(), Value::from(validated.verdict.as_str()));
    event.insert(
        "weak_success".into(),
        Value::Array(observed.flags.iter().map(|flag| Value::from(flag.as_str())).collect()),
    );
    event.insert("outcome".into(), validated.outcome.to_json());
    Value::Object(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    const FIXTURE: &str = include_str!("../../../examples/outcomes/outcome-log.jsonl");

    fn read_through(log: &[u8], capacity: usize) -> Result<OutcomesReport, OutcomesReportError> {
        report(BufReader::with_capacity(capacity, log))
    }

    #[test]
    fn lines_split_across_reader_buffers_read_the_same() {
        let whole = report(FIXTURE.as_bytes()).unwrap().to_json();
        assert_eq!(whole["outcome_events"], 14, "the fixture is read");
        let torn = format!("{FIXTURE}{{\"tool\":\"t\",\"meth");
        let torn_whole = report(torn.as_bytes()).unwrap().to_json();
        assert_eq!(torn_whole["torn_tail"], true);
        for capacity in [1, 2, 3, 7, 64, 100, 333, 4096] {
            assert_eq!(read_through(FIXTURE.as_bytes(), capacity).unwrap().to_json(), whole, "{capacity}");
            assert_eq!(read_through(torn.as_bytes(), capacity).unwrap().to_json(), torn_whole, "{capacity}");
        }
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_io_error_wherever_the_buffer_splits_it() {
        let mut log = FIXTURE.as_bytes().to_vec();
        log.extend_from_slice(b"{\"tool\":\"t\xff\"}\n");
        for capacity in [1, 5, 64, 8192] {
            match read_through(&log, capacity) {
                Err(OutcomesReportError::Io(error)) => assert_eq!(error.kind(), io::ErrorKind::InvalidData),
                other => panic!("{capacity}: expected an I/O error, got {other:?}"),
            }
        }
        // The final line without a newline too.
        let unterminated = b"{\"tool\":\"t\xff\"}";
        assert!(matches!(read_through(unterminated, 4), Err(OutcomesReportError::Io(_))));
    }

    #[test]
    fn line_numbers_count_every_line_whatever_the_buffer() {
        let log = format!("{FIXTURE}not json\n");
        for capacity in [3, 8192] {
            match read_through(log.as_bytes(), capacity) {
                Err(OutcomesReportError::Line { line, .. }) => assert_eq!(line, 20),
                other => panic!("{capacity}: expected a line error, got {other:?}"),
            }
        }
    }
}
