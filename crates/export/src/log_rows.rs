//! One log into rows. Each log is read twice and verified once more beside the second read:
//!
//! 1. replay reads the whole log for its verdict (chain, seal, counts): every row of the log
//!    carries it, and it is known only at the end;
//! 2. the log is read line by line into rows, while replay runs again on a second thread and
//!    hands over each record's verdict in file order, through a bounded channel. The two
//!    streams meet on the line number.
//!
//! Memory is bounded: one held row (waiting for the events that complete it), one line, and
//! the channel.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;
use std::sync::mpsc;

use decision::api::replay::{Requirements, log_problems};
use decision::log::{ChainStatus, LogReport, RecordResult, ReplayOptions, replay_file};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::ExportError;
use crate::lines::{LineRead, read_line};
use crate::row::Row;

/// Record verdicts waiting between the replay thread and the row reader.
const VERDICT_QUEUE: usize = 4096;

/// The verdict of a whole log, the same `decision replay` gives.
#[derive(Debug, Clone)]
pub struct LogVerdict {
    /// What replay found.
    pub report: LogReport,
    /// Why the log fails beyond its records (a stripped chain, a seal that does not hold).
    pub problems: Vec<String>,
}

impl LogVerdict {
    /// The log verifies: no record mismatches, the chain is not broken, and nothing else
    /// fails (what makes `decision replay` exit 0).
    pub fn ok(&self) -> bool {
        self.report.mismatch == 0 && self.report.chain_status() != ChainStatus::Broken && self.problems.is_empty()
    }
}

/// Reads the log at `path` into rows, calling `on_row` for each in file order; `display` is
/// what the `log` column says. Returns the log's verdict, which every row also carries.
pub fn read_log_rows(
    path: &Path,
    display: &str,
    options: &ReplayOptions,
    on_row: &mut dyn FnMut(Row) -> Result<(), ExportError>,
) -> Result<LogVerdict, ExportError> {
    let io_error = |source: io::Error| ExportError::Io { path: path.to_path_buf(), source };
    let single = ReplayOptions { threads: 1, ..options.clone() };
    let report = replay_file(path, &single, &mut |_| {}).map_err(io_error)?;
    let problems = log_problems(&report, &Requirements::default());
    let verdict = LogVerdict { report, problems };
    let file = File::open(path).map_err(io_error)?;
    let (tx, rx) = mpsc::sync_channel::<Vec<RecordResult>>(VERDICT_QUEUE / 64);
    std::thread::scope(|scope| {
        let replay = scope.spawn(move || {
            let mut batch = Vec::with_capacity(64);
            let outcome = replay_file(path, &single, &mut |result| {
                batch.push(result.clone());
                if batch.len() >= 64 {
                    // The reader stopped (an error): the rest is not needed.
                    let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(64)));
                }
            });
            let _ = tx.send(batch);
            outcome
        });
        let mut rows = LogRows::new(display, &verdict, rx.into_iter().flatten());
        let read = rows.read(BufReader::with_capacity(1 << 20, file), options.max_line, on_row);
        drop(rows);
        let replayed = replay.join().unwrap_or_else(|_| Err(io::Error::other("the replay thread stopped")));
        read.and(replayed.map(|_| ()).map_err(io_error))
    })?;
    Ok(verdict)
}

/// The row reader of one log.
struct LogRows<'v, I: Iterator<Item = RecordResult>> {
    template: Row,
    verdicts: std::iter::Peekable<I>,
    held: Option<Row>,
    _verdict: std::marker::PhantomData<&'v LogVerdict>,
}

impl<'v, I: Iterator<Item = RecordResult>> LogRows<'v, I> {
    fn new(display: &str, verdict: &'v LogVerdict, verdicts: I) -> Self {
        let template = Row {
            log: display.to_owned(),
            chain: verdict.report.chain_status().as_str().to_owned(),
            seal: verdict.report.seal.as_str().to_owned(),
            log_verdict: if verdict.ok() { "ok" } else { "failed" }.to_owned(),
            ..Row::default()
        };
        LogRows { template, verdicts: verdicts.peekable(), held: None, _verdict: std::marker::PhantomData }
    }

    fn read(
        &mut self,
        mut reader: impl io::BufRead,
        max_line: usize,
        on_row: &mut dyn FnMut(Row) -> Result<(), ExportError>,
    ) -> Result<(), ExportError> {
        let mut buf = Vec::new();
        let mut number = 0u64;
        loop {
            let line = read_line(&mut reader, &mut buf, max_line)
                .map_err(|source| ExportError::Io { path: self.template.log.clone().into(), source })?;
            let Some(line) = line else { break };
            number += 1;
            if let LineRead::Text = line
                && let Some(parsed) = parse(&buf)
            {
                self.line(number, parsed, on_row)?;
            }
        }
        self.flush(on_row)?;
        // Records replay read that no row was made from (text this reader could not use):
        // each still gets a row, with its verdict.
        while let Some(result) = self.verdicts.next() {
            on_row(self.orphan(&result))?;
        }
        Ok(())
    }

    fn line(
        &mut self,
        number: u64,
        parsed: Parsed,
        on_row: &mut dyn FnMut(Row) -> Result<(), ExportError>,
    ) -> Result<(), ExportError> {
        if parsed.kind.as_deref() == Some("header") {
            if self.template.run_id.is_none() {
                self.template.run_id = parsed.header_id;
            }
            return Ok(());
        }
        let Parsed { run, at, seq, event, .. } = parsed;
        let Some(event) = event else { return Ok(()) };
        let place = Place { number, run, at, seq };
        let same_step = |held: &Row| held.run == run && held.step == event.step && event.step.is_some();
        match event.kind.as_deref() {
            Some("run:start") => {
                self.template.host = Some(event.host.unwrap_or_else(|| "coding-host".to_owned()));
            }
            Some(kind @ ("decision" | "decision:code")) => {
                self.flush(on_row)?;
                let kind = kind.to_owned();
                let mut row = self.row(place, kind, event);
                if row.kind == "decision" {
                    while let Some(result) = self.verdicts.next_if(|r| r.line < number) {
                        on_row(self.orphan(&result))?;
                    }
                    if let Some(result) = self.verdicts.next_if(|r| r.line == number) {
                        row.verdict = Some(result.status.as_str().to_owned());
                    }
                }
                self.held = Some(row);
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
                self.flush(on_row)?;
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
                on_row(row)?;
            }
            _ => {}
        }
        Ok(())
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

    fn flush(&mut self, on_row: &mut dyn FnMut(Row) -> Result<(), ExportError>) -> Result<(), ExportError> {
        match self.held.take() {
            Some(row) => on_row(row),
            None => Ok(()),
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
        run: line.get("run").and_then(Value::as_u64),
        at: line.get("at").and_then(Value::as_i64),
        seq: line.get("seq").and_then(Value::as_u64),
        event,
    })
}
