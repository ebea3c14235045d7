//! One log into rows, in one pass: replay reads the log and hands each line over before
//! verifying it ([`replay_reader_observed`]); the line becomes a row, and the record's verdict,
//! which follows its line at once, is set on it.
//!
//! Every row also carries the verdict of its whole log (chain, seal, problems), known only at
//! the end. A log of up to [`ONE_PASS_BYTES`] is read once and its rows held until then; a
//! larger one is replayed once first for that verdict (replay's own pass, without rows) and its
//! rows then stream out as they are read. Memory is bounded either way: the rows of at most
//! [`ONE_PASS_BYTES`] of log, or one held row (waiting for the events that complete it).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::Path;

use decision::api::replay::{Requirements, log_problems};
use decision::log::{
    ChainStatus, LogReport, ObservedLine, RecordResult, ReplayOptions, replay_file, replay_reader_observed,
};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::ExportError;
use crate::row::Row;

/// Logs up to this size are read once, their rows held until the log's verdict is known;
/// larger ones are read twice, so that their rows never wait in memory.
pub const ONE_PASS_BYTES: u64 = 8 << 20;

/// The `host` of a run the MCP gateway (`decision mcp`) wrote.
const MCP_GATEWAY: &str = "mcp-gateway";

/// The verdict of a whole log, the same `decision replay` gives.
#[derive(Debug, Clone)]
pub struct LogVerdict {
    /// What replay found.
    pub report: LogReport,
    /// Why the log fails beyond its records (a stripped chain, a seal that does not hold).
    pub problems: Vec<String>,
}

impl LogVerdict {
    fn of(report: LogReport) -> Self {
        let problems = log_problems(&report, &Requirements::default());
        LogVerdict { report, problems }
    }

    /// The log verifies: no record mismatches, the chain is not broken, and nothing else
    /// fails (what makes `decision replay` exit 0).
    pub fn ok(&self) -> bool {
        self.report.mismatch == 0 && self.report.chain_status() != ChainStatus::Broken && self.problems.is_empty()
    }

    /// Sets the log's columns of `row`.
    fn stamp(&self, row: &mut Row) {
        row.chain = self.report.chain_status().as_str().to_owned();
        row.seal = self.report.seal.as_str().to_owned();
        row.log_verdict = if self.ok() { "ok" } else { "failed" }.to_owned();
    }
}

/// Reads the log at `path` into rows, calling `on_row` for each in file order; `display` is
/// what the `log` column says. Returns the log's verdict, which every row also carries. A log
/// larger than `one_pass_bytes` is replayed once beforehand for that verdict, so that its rows
/// are not held ([`ONE_PASS_BYTES`] is the export's default).
pub fn read_log_rows(
    path: &Path,
    display: &str,
    options: &ReplayOptions,
    one_pass_bytes: u64,
    on_row: &mut dyn FnMut(Row) -> Result<(), ExportError>,
) -> Result<LogVerdict, ExportError> {
    let io_error = |source: io::Error| ExportError::Io { path: path.to_path_buf(), source };
    let single = ReplayOptions { threads: 1, ..options.clone() };
    let file = File::open(path).map_err(io_error)?;
    let size = file.metadata().map_err(io_error)?.len();
    let known = if size > one_pass_bytes {
        Some(LogVerdict::of(replay_file(path, &single, &mut |_| {}).map_err(io_error)?))
    } else {
        None
    };
    let rows = RefCell::new(LogRows::new(display, known.as_ref(), on_row));
    let report = replay_reader_observed(file, &single, &mut |line| rows.borrow_mut().observe(line), &mut |result| {
        rows.borrow_mut().verdict(result)
    })
    .map_err(io_error)?;
    let verdict = known.unwrap_or_else(|| LogVerdict::of(report));
    rows.into_inner().finish(&verdict)?;
    Ok(verdict)
}

/// Where the rows of a log go: straight out when the log's verdict is known, else held.
enum Out<'a> {
    Stream(&'a mut dyn FnMut(Row) -> Result<(), ExportError>),
    Hold(Vec<Row>, &'a mut dyn FnMut(Row) -> Result<(), ExportError>),
}

/// The row reader of one log.
pub(crate) struct LogRows<'a> {
    template: Row,
    held: Option<Row>,
    out: Out<'a>,
    /// The first error writing a row: later lines are only verified.
    error: Option<ExportError>,
}

impl<'a> LogRows<'a> {
    fn new(
        display: &str,
        known: Option<&LogVerdict>,
        on_row: &'a mut dyn FnMut(Row) -> Result<(), ExportError>,
    ) -> Self {
        let mut template = Row { log: display.to_owned(), ..Row::default() };
        let out = match known {
            Some(verdict) => {
                verdict.stamp(&mut template);
                Out::Stream(on_row)
            }
            None => Out::Hold(Vec::new(), on_row),
        };
        LogRows { template, held: None, out, error: None }
    }

    /// A reader of a log still being written ([`crate::otlp::LogFollower`]): rows go out as
    /// soon as they are complete, without verdicts (the log is not verified yet), and the
    /// log's columns stay empty.
    pub(crate) fn live(display: &str, on_row: &'a mut dyn FnMut(Row) -> Result<(), ExportError>) -> Self {
        let template = Row { log: display.to_owned(), ..Row::default() };
        LogRows { template, held: None, out: Out::Stream(on_row), error: None }
    }

    /// Reads one whole line of a followed log.
    pub(crate) fn read_line(&mut self, number: u64, bytes: &[u8]) {
        if let Some(parsed) = parse(bytes) {
            self.line(number, parsed);
        }
    }

    /// Sends the row waiting for the events that would complete it: a followed log has gone
    /// quiet, or ended.
    pub(crate) fn release(&mut self) {
        self.flush();
    }

    fn emit(&mut self, row: Row) {
        match &mut self.out {
            Out::Hold(rows, _) => rows.push(row),
            Out::Stream(on_row) => {
                if self.error.is_none()
                    && let Err(e) = on_row(row)
                {
                    self.error = Some(e);
                }
            }
        }
    }

    fn flush(&mut self) {
        if let Some(row) = self.held.take() {
            self.emit(row);
        }
    }

    fn observe(&mut self, line: ObservedLine<'_>) {
        if self.error.is_some() {
            return;
        }
        if let Some(parsed) = line.bytes.and_then(parse) {
            self.line(line.number, parsed);
        }
    }

    /// A record's verdict, right after its line: set on the row made from that line, or, for
    /// a record this reader could not make a row of, a row of its own.
    fn verdict(&mut self, result: &RecordResult) {
        match self.held.as_mut() {
            Some(held) if held.line == result.line && held.kind == "decision" => {
                held.verdict = Some(result.status.as_str().to_owned());
            }
            _ => {
                self.flush();
                let orphan = self.orphan(result);
                self.emit(orphan);
            }
        }
    }

    /// The end of the log: the last held row, then every held row with the log's verdict.
    fn finish(mut self, verdict: &LogVerdict) -> Result<(), ExportError> {
        self.flush();
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Out::Hold(rows, on_row) = self.out {
            for mut row in rows {
                verdict.stamp(&mut row);
                on_row(row)?;
            }
        }
        Ok(())
    }

    fn line(&mut self, number: u64, parsed: Parsed) {
        if parsed.kind.as_deref() == Some("header") {
            if self.template.run_id.is_none() {
                self.template.run_id = parsed.header_id;
                self.template.run_created_at = parsed.created_at;
            }
            return;
        }
        let Parsed { run, at, seq, event, .. } = parsed;
        let Some(event) = event else { return };
        let place = Place { number, run, at, seq };
        let same_step = |held: &Row| held.run == run && held.step == event.step && event.step.is_some();
        match event.kind.as_deref() {
            Some("run:start") => {
                self.template.host = Some(event.host.unwrap_or_else(|| "coding-host".to_owned()));
            }
            Some(kind @ ("decision" | "decision:code")) => {
                self.flush();
                let kind = kind.to_owned();
                self.held = Some(self.row(place, kind, event));
            }
            // The gateway writes no `run:start`: its own events name it.
            Some(kind) if kind.starts_with("mcp:") && self.template.host.is_none() => {
                self.template.host = Some(MCP_GATEWAY.to_owned());
            }
            Some("gate:floor") => {
                if let Some(held) = self.held.as_mut().filter(|h| same_step(h)) {
                    held.floor = event.action;
                }
            }
            Some("approval:pending") => {
                if let Some(held) = self.held.as_mut().filter(|h| same_step(h)) {
                    held.approval = Some("pending".to_owned());
                    held.approval_id = event.id;
                }
            }
            Some("approval:answer") => {
                self.flush();
                let approval = match event.approved {
                    Some(true) => "approved",
                    _ => "denied",
                };
                let (id, by) = (event.id.clone(), event.by.clone());
                let mut row = self.row(place, "approval:answer".to_owned(), event);
                row.block = None;
                row.approval = Some(approval.to_owned());
                row.approval_id = id;
                row.approval_by = by;
                self.emit(row);
            }
            _ => {}
        }
    }

    fn row(&self, place: Place, kind: String, event: EventFields) -> Row {
        Row {
            run: place.run,
            line: place.number,
            seq: place.seq,
            ts: place.at,
            kind,
            step: event.step,
            block: event.id,
            position: event.position,
            action: event.action,
            rule: event.reason,
            margin: event.margin,
            margin_question: event.margin_question,
            answers: event.answers,
            frame_digest: event.frame_digest,
            request_digest: event.request_digest,
            provider: event.provider,
            model: event.model,
            latency_ms: event.latency_ms,
            degraded: event.degraded,
            escalate: event.escalate,
            ..self.template.clone()
        }
    }

    /// A row for a record that replay read and this reader did not.
    fn orphan(&self, result: &RecordResult) -> Row {
        Row {
            run: Some(result.run),
            line: result.line,
            kind: "decision".to_owned(),
            step: result.step,
            block: result.node.clone(),
            verdict: Some(result.status.as_str().to_owned()),
            ..self.template.clone()
        }
    }
}

/// Where a row's line is.
#[derive(Clone, Copy)]
struct Place {
    number: u64,
    run: Option<u64>,
    at: Option<i64>,
    seq: Option<u64>,
}

/// What a line holds, as far as rows need it.
struct Parsed {
    kind: Option<String>,
    header_id: Option<String>,
    /// The header's `createdAt`.
    created_at: Option<u64>,
    run: Option<u64>,
    at: Option<i64>,
    seq: Option<u64>,
    event: Option<EventFields>,
}

#[derive(Default)]
struct EventFields {
    kind: Option<String>,
    step: Option<f64>,
    id: Option<String>,
    position: Option<String>,
    action: Option<String>,
    reason: Option<String>,
    margin: Option<f64>,
    margin_question: Option<String>,
    answers: Option<String>,
    frame_digest: Option<String>,
    request_digest: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    latency_ms: Option<f64>,
    degraded: Option<bool>,
    escalate: Option<bool>,
    approved: Option<bool>,
    by: Option<String>,
    host: Option<String>,
}

/// A line as its expected types read it; anything else goes to [`parse_loose`].
#[derive(Deserialize)]
struct LineIn<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "createdAt", default)]
    created_at: Option<u64>,
    #[serde(default)]
    run: Option<u64>,
    #[serde(default)]
    at: Option<i64>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(borrow, default)]
    e: Option<EventIn<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventIn<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    step: Option<f64>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    position: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    action: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    margin: Option<MarginIn<'a>>,
    #[serde(borrow, default)]
    answers: Option<&'a RawValue>,
    #[serde(borrow, default)]
    frame: Option<FrameIn<'a>>,
    #[serde(borrow, default)]
    frame_digest: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    request_digest: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    provider: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    latency_ms: Option<f64>,
    #[serde(default)]
    degraded: Option<bool>,
    #[serde(default)]
    escalate: Option<bool>,
    #[serde(default)]
    approved: Option<bool>,
    #[serde(borrow, default)]
    by: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    host: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct MarginIn<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    margin: Option<f64>,
}

#[derive(Deserialize)]
struct FrameIn<'a> {
    #[serde(borrow, default)]
    digest: Option<Cow<'a, str>>,
}

fn owned(text: Option<Cow<'_, str>>) -> Option<String> {
    text.map(Cow::into_owned)
}

/// Reads a line; `None` when it is not a JSON object (replay reports such lines).
fn parse(bytes: &[u8]) -> Option<Parsed> {
    match serde_json::from_slice::<LineIn<'_>>(bytes) {
        Ok(line) => Some(Parsed {
            kind: owned(line.kind),
            header_id: owned(line.id),
            created_at: line.created_at,
            run: line.run,
            at: line.at,
            seq: line.seq,
            event: line.e.map(|e| {
                let (margin, margin_question) =
                    e.margin.map_or((None, None), |m| (m.margin, m.id.map(Cow::into_owned)));
                EventFields {
                    kind: owned(e.kind),
                    step: e.step,
                    id: owned(e.id),
                    position: owned(e.position),
                    action: owned(e.action),
                    reason: owned(e.reason),
                    margin,
                    margin_question,
                    answers: e.answers.map(|raw| raw.get().to_owned()),
                    frame_digest: e.frame.and_then(|f| f.digest).or(e.frame_digest).map(Cow::into_owned),
                    request_digest: owned(e.request_digest),
                    provider: owned(e.provider),
                    model: owned(e.model),
                    latency_ms: e.latency_ms,
                    degraded: e.degraded,
                    escalate: e.escalate,
                    approved: e.approved,
                    by: owned(e.by),
                    host: owned(e.host),
                }
            }),
        }),
        Err(_) => parse_loose(bytes),
    }
}

/// The careful reader: a member of an unexpected type is left out (null), not the line.
fn parse_loose(bytes: &[u8]) -> Option<Parsed> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let line = value.as_object()?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let event = line.get("e").and_then(Value::as_object).map(|e| {
        let margin = e.get("margin").and_then(Value::as_object);
        let frame = e.get("frame").and_then(Value::as_object);
        EventFields {
            kind: text(e.get("type")),
            step: e.get("step").and_then(Value::as_f64),
            id: text(e.get("id")),
            position: text(e.get("position")),
            action: text(e.get("action")),
            reason: text(e.get("reason")),
            margin: margin.and_then(|m| m.get("margin")).and_then(Value::as_f64),
            margin_question: text(margin.and_then(|m| m.get("id"))),
            answers: e.get("answers").map(Value::to_string),
            frame_digest: text(frame.and_then(|f| f.get("digest"))).or_else(|| text(e.get("frameDigest"))),
            request_digest: text(e.get("requestDigest")),
            provider: text(e.get("provider")),
            model: text(e.get("model")),
            latency_ms: e.get("latencyMs").and_then(Value::as_f64),
            degraded: e.get("degraded").and_then(Value::as_bool),
            escalate: e.get("escalate").and_then(Value::as_bool),
            approved: e.get("approved").and_then(Value::as_bool),
            by: text(e.get("by")),
            host: text(e.get("host")),
        }
    });
    Some(Parsed {
        kind: text(line.get("kind")),
        header_id: text(line.get("id")),
        created_at: line.get("createdAt").and_then(Value::as_u64),
        run: line.get("run").and_then(Value::as_u64),
        at: line.get("at").and_then(Value::as_i64),
        seq: line.get("seq").and_then(Value::as_u64),
        event,
    })
}
