//! One exported row.

use serde::Serialize;

/// One row of the export: a decision (`kind` = `decision`), a decision taken by code
/// (`decision:code`) or the answer to an approval (`approval:answer`). Field by field the
/// columns of [`crate::COLUMNS`], in the same order; `docs/export.md` says what each holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// The log file, as given or as found under a given directory.
    pub log: String,
    /// The session id of the log's header.
    pub run_id: Option<String>,
    /// The run index of the event's envelope.
    pub run: Option<u64>,
    /// The 1-based line number in the log.
    pub line: u64,
    /// The line's `seq` in the hash chain.
    pub seq: Option<u64>,
    /// The envelope's time, in milliseconds since the Unix epoch.
    pub ts: Option<i64>,
    /// The event type.
    pub kind: String,
    /// The host's step.
    pub step: Option<f64>,
    /// The node (block) id.
    pub block: Option<String>,
    /// The block's position, when the event records it.
    pub position: Option<String>,
    /// The action taken.
    pub action: Option<String>,
    /// The rule (or the invalid answer) that led to the action.
    pub rule: Option<String>,
    /// The distance to the closest threshold.
    pub margin: Option<f64>,
    /// The question of the closest threshold.
    pub margin_question: Option<String>,
    /// The answers as received, as JSON text.
    pub answers: Option<String>,
    /// The frame digest.
    pub frame_digest: Option<String>,
    /// The request digest.
    pub request_digest: Option<String>,
    /// Who answered.
    pub provider: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// How long the answer took, in milliseconds.
    pub latency_ms: Option<f64>,
    /// Whether the answer was degraded.
    pub degraded: Option<bool>,
    /// Whether the decision escalated.
    pub escalate: Option<bool>,
    /// The replay verdict of the record: verified, partial, unverifiable or mismatch.
    pub verdict: Option<String>,
    /// pending, approved or denied.
    pub approval: Option<String>,
    /// The approval's id.
    pub approval_id: Option<String>,
    /// Who answered the approval, when the log records it.
    pub approval_by: Option<String>,
    /// The action the code floor put in place of the gate's, where it acted.
    pub floor: Option<String>,
    /// The host that wrote the run.
    pub host: Option<String>,
    /// The log's hash chain: intact, broken, absent or missing.
    pub chain: String,
    /// The log's seal: sealed, unfinished, invalid or absent.
    pub seal: String,
    /// The log as a whole: `ok`, or `failed` (a record mismatches, or its chain or seal
    /// does not hold).
    pub log_verdict: String,
    /// When the log's header was written (its `createdAt`, ms). Not a column: with `run_id`
    /// it tells this run from another that reused the session id (a log named `run.jsonl`
    /// in two directories), so that their spans never share a trace.
    #[serde(skip)]
    pub run_created_at: Option<u64>,
}
