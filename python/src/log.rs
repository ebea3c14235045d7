//! Session logs: verifying them (`decision replay --format json`), verifying one record,
//! and writing them with the runtime's chained writer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use decision::api;
use decision::log::approval::{
    ApprovalError, Pending, PendingCall, Verdict, append_bound_answer, append_pending, append_used, pending_document,
    read_approvals, read_ledger, record_answer,
};
use decision::log::{DecisionEvent, FsyncPolicy, LogError, LogHeader, SealKey, SessionLog as Writer, next_run, now_ms};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Map;

use crate::convert::{from_py, object_from_py, request_from_py, to_py};
use crate::errors::{file_error, raise, usage_error};
use decision::api::approve::ApproveRequest;
use decision::api::replay::ReplayRequest;
use decision::api::what_if::WhatIfRequest;
use decision::api::{Code, Error};

/// `approvals(path)`: the calls a run halted for (`awaiting_approval`) that still wait for an
/// answer, as `decision approvals --format json LOG` lists them.
#[pyfunction]
fn approvals<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    let all = read_approvals(&path).map_err(|e| approval_error(py, &e))?;
    to_py(py, &pending_document(&all))
}

/// `approve(path, id, **options)`: records a person's answer to approval `id` in the log, as
/// `decision approve` does (approve; deny with a reason; approve with a modified input,
/// validated again); returns what was recorded. The keywords are the options every entrance
/// takes (`deny`, `reason`, `input`: `api::approve::ApproveRequest`). `decision resume LOG`
/// then continues the run.
#[pyfunction]
#[pyo3(signature = (path, id, **options))]
fn approve(py: Python<'_>, path: PathBuf, id: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<&'static str> {
    let request: ApproveRequest = request_from_py(py, "approve", options)?;
    let answer = request.answer().map_err(|e| raise(py, &e))?;
    record_answer(&path, id, answer.denial.as_deref(), answer.input.as_deref()).map_err(|e| approval_error(py, &e))
}

/// `verify_log(path, **options)`: the document `decision replay --format json PATH` prints.
/// The keywords are the options every entrance takes (`jobs`, `verbose`, `max_line`:
/// `api::replay::ReplayRequest`). The log is read and verified without holding the GIL.
#[pyfunction]
#[pyo3(signature = (path, **options))]
fn verify_log<'py>(
    py: Python<'py>,
    path: PathBuf,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let request: ReplayRequest = request_from_py(py, "verify_log", options)?;
    let (options, verbose) = (request.options(), request.verbose);
    let display = path.display().to_string();
    let outcome = py.detach(|| {
        std::fs::File::open(&path).and_then(|file| api::replay::verify_reader(&display, file, &options, verbose))
    });
    match outcome {
        Ok((document, _)) => to_py(py, &document),
        Err(e) => Err(file_error(py, Code::Io, &format!("cannot read {display}: {e}"), &display)),
    }
}

/// `what_if(logs, contract, *, label="DECISION.md", **options)`: the document `decision
/// what-if --format json LOG... --contract NEW.md [--gate …]` prints, with `contract` the
/// contract's text (named `label` in messages). The keywords are the options every entrance
/// takes (`gates`: `api::what_if::WhatIfRequest`). The logs are read without holding the GIL.
#[pyfunction]
#[pyo3(signature = (logs, contract, *, label="DECISION.md".to_owned(), **options))]
fn what_if<'py>(
    py: Python<'py>,
    logs: Vec<PathBuf>,
    contract: &str,
    label: String,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let request: WhatIfRequest = request_from_py(py, "what_if", options)?;
    let contract = api::parse_contract(&label, contract.as_bytes()).map_err(|e| raise(py, &e))?;
    let what_if = request.prepare(&contract, &label).map_err(|e| raise(py, &e))?;
    let report = py.detach(|| {
        let mut report = decision::log::what_if::WhatIfReport::default();
        for path in &logs {
            let shown = path.display().to_string();
            let file = std::fs::File::open(path).map_err(|e| Error::io(&shown, format!("cannot read {shown}: {e}")))?;
            api::what_if::read_log(&what_if, &shown, std::io::BufReader::new(file), &mut report)?;
        }
        Ok::<_, Error>(report)
    });
    let report = report.map_err(|e| raise(py, &e))?;
    // A report of counts, strings and maps: serialising it cannot fail.
    to_py(py, &serde_json::to_value(&report).unwrap_or_default())
}

/// `verify_record(record)`: one `decision` event (or a whole log line) verified alone.
#[pyfunction]
fn verify_record<'py>(py: Python<'py>, record: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let text = from_py(record)?.to_string();
    let verdict = api::replay::verify_record(text.as_bytes()).map_err(|e| raise(py, &Error::from(e)))?;
    to_py(py, &verdict)
}

fn writer_error(py: Python<'_>, error: &LogError) -> PyErr {
    raise(py, &Error::from(error))
}

/// An approval error as the exception a Python caller gets: a log that cannot be read or
/// written is a `LogError` (`E_LOG_HELD` while another writer holds it); an unknown,
/// answered, used or changed approval a `UsageError` naming the argument `id`, a modified
/// input the tool could never take one naming `input`.
fn approval_error(py: Python<'_>, error: &ApprovalError) -> PyErr {
    raise(py, &Error::from(error))
}

/// What an open log holds: its writer and, once an approval method asked for them, the
/// approvals of the log (read from the file once, then kept up to date by this writer).
struct Held {
    writer: Writer,
    /// `None` until first needed: a log used only for decisions never reads its file back.
    approvals: Option<HashMap<String, Pending>>,
}

/// A chained session log, opened for appending as its next run (created with its header when
/// missing); `close()` and the context manager's exit end the run with its seal.
#[pyclass(module = "decision_contract")]
pub struct SessionLog {
    held: Mutex<Option<Held>>,
    path: PathBuf,
}

impl SessionLog {
    fn lock<'a>(&'a self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'a, Option<Held>>> {
        self.held.lock().map_err(|_| {
            file_error(py, Code::LogClosed, "the log is unusable after a failure", &self.path.display().to_string())
        })
    }

    fn closed_error(&self, py: Python<'_>) -> PyErr {
        file_error(py, Code::LogClosed, "the log is closed", &self.path.display().to_string())
    }

    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&mut Writer) -> Result<T, LogError>) -> PyResult<T> {
        let mut guard = self.lock(py)?;
        let held = guard.as_mut().ok_or_else(|| self.closed_error(py))?;
        f(&mut held.writer).map_err(|e| writer_error(py, &e))
    }

    /// Runs `f` on the writer and the log's approvals, read from the file the first time
    /// (after a restart, a reopened log knows the approvals an earlier run left pending).
    fn with_approvals<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Writer, &mut HashMap<String, Pending>) -> Result<T, ApprovalError>,
    ) -> PyResult<T> {
        let mut guard = self.lock(py)?;
        let held = guard.as_mut().ok_or_else(|| self.closed_error(py))?;
        let approvals = match &mut held.approvals {
            Some(approvals) => approvals,
            slot @ None => {
                // Lines held for a group commit are not in the file yet: written first, so
                // that what is read is the whole log.
                held.writer.commit().map_err(|e| writer_error(py, &e))?;
                let key = held.writer.seal_key();
                let ledger = read_ledger(&self.path, key, decision::lines::DEFAULT_MAX_LINE, &[], &mut |_| {})
                    .map_err(|e| approval_error(py, &e))?;
                let mut approvals = HashMap::with_capacity(ledger.approvals.len());
                for pending in ledger.approvals {
                    // An id pending twice: its first line is the one answers are bound to.
                    approvals.entry(pending.id.clone()).or_insert(pending);
                }
                slot.insert(approvals)
            }
        };
        f(&mut held.writer, approvals).map_err(|e| approval_error(py, &e))
    }
}

/// The fields of an `approval:pending` event that every host records; the others are the
/// host's own (`extra`).
const COMMON_PENDING_FIELDS: [&str; 6] = ["type", "id", "tool", "input", "fingerprint", "requestDigest"];

/// An approval as Python sees it: `id`, `run`, `line`, `tool`, `input`, `fingerprint`,
/// `requestDigest`, `extra` (the host's fields of the pending line), `answer` (`None`, or
/// `approved`, `reason`, `input`, `allowsFingerprint`, `keyed`, `binding`) and `used`.
fn approval_json(pending: &Pending) -> serde_json::Value {
    let mut value = serde_json::to_value(pending).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        if let Some(digest) = map.remove("request_digest") {
            map.insert("requestDigest".into(), digest);
        }
        let extra: Map<String, serde_json::Value> = pending
            .event
            .iter()
            .filter(|(name, _)| !COMMON_PENDING_FIELDS.contains(&name.as_str()))
            .map(|(name, field)| (name.clone(), field.clone()))
            .collect();
        map.insert("extra".into(), serde_json::Value::Object(extra));
    }
    if let Some(answer) = value.get_mut("answer").and_then(serde_json::Value::as_object_mut)
        && let Some(allows) = answer.remove("allows_fingerprint")
    {
        answer.insert("allowsFingerprint".into(), allows);
    }
    value
}

#[pymethods]
impl SessionLog {
    /// Opens `path` for appending, as the run after its last line's, or creates it with a
    /// header (`session_id`, default `py-<ms>`); the seal is keyed by `DECISION_LOG_KEY` when
    /// that is set. `group_commit`: lines wait for `commit()`; `fsync`: `"never"`, `"every_line"`.
    #[new]
    #[pyo3(signature = (path, *, session_id=None, group_commit=false, fsync="never"))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        session_id: Option<String>,
        group_commit: bool,
        fsync: &str,
    ) -> PyResult<Self> {
        let policy = match fsync {
            "never" => FsyncPolicy::Never,
            "every_line" => FsyncPolicy::EveryLine,
            other => {
                return Err(usage_error(
                    py,
                    &format!("unknown fsync policy `{other}`: expected never or every_line"),
                    None,
                ));
            }
        };
        let header = LogHeader {
            id: session_id.unwrap_or_else(|| format!("py-{}", now_ms())),
            created_at_ms: now_ms(),
            cwd: std::env::current_dir().ok().map(|p| p.display().to_string()),
        };
        let mut writer = open_run(py, &path, &header, policy)?;
        if group_commit {
            writer.set_group_commit(true).map_err(|e| writer_error(py, &e))?;
        }
        Ok(SessionLog { held: Mutex::new(Some(Held { writer, approvals: None })), path })
    }

    /// Appends a `decision` event (a dict with `step`, `id`, `state`, `questions`, …; its
    /// `type` is always `decision`).
    fn append_decision(&self, py: Python<'_>, record: &Bound<'_, PyDict>) -> PyResult<()> {
        let payload = object_from_py(record, "record")?;
        self.with(py, |w| w.append_owned("decision", payload))
    }

    /// Appends an event `{"type": event_type, …payload}`.
    #[pyo3(signature = (event_type, payload=None))]
    fn append_event(&self, py: Python<'_>, event_type: &str, payload: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let payload = match payload {
            Some(payload) => object_from_py(payload, "payload")?,
            None => Map::new(),
        };
        self.with(py, |w| w.append_owned(event_type, payload))
    }

    /// Sets the 0-based run index stamped on the following events.
    fn set_run(&self, py: Python<'_>, run: u64) -> PyResult<()> {
        self.with(py, |w| {
            w.set_run(run);
            Ok(())
        })
    }

    /// Writes every held line (with group commit); a no-op otherwise.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, Writer::commit)
    }

    /// Records that call `id` (tool `tool`, its `input`, decided by the request whose digest
    /// is `request_digest`) waits for a person: an `approval:pending` line with the call's
    /// fingerprint, then the host's fields in `extra` (`step`, `rule`, `reason`, …). Returns
    /// the approval (see `approval()`). An id already in the log is refused.
    #[pyo3(signature = (id, tool, input, request_digest, extra=None))]
    fn append_pending<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        tool: &str,
        input: &Bound<'py, PyAny>,
        request_digest: &str,
        extra: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if id.is_empty() {
            return Err(usage_error(py, "an approval id is not empty", Some("id")));
        }
        let call = PendingCall {
            id: id.to_owned(),
            tool: tool.to_owned(),
            input: from_py(input)?,
            request_digest: request_digest.to_owned(),
            extra: match extra {
                Some(extra) => object_from_py(extra, "extra")?,
                None => Map::new(),
            },
        };
        let mut known = false;
        let approval = self.with_approvals(py, |writer, approvals| {
            if let Some(existing) = approvals.get(id) {
                known = true;
                return Ok(approval_json(existing));
            }
            let pending = append_pending(writer, call)?;
            let json = approval_json(&pending);
            approvals.insert(id.to_owned(), pending);
            Ok(json)
        })?;
        if known {
            return Err(usage_error(py, &format!("approval `{id}` is already in the log"), Some("id")));
        }
        to_py(py, &approval)
    }

    /// The approval `id` of this log (an earlier run's too), or `None`: `id`, `run`, `line`,
    /// `tool`, `input`, `fingerprint`, `requestDigest`, `answer` (`None` until answered:
    /// `approved`, `reason`, `input`, `allowsFingerprint`, `keyed`, `binding`), `used`.
    fn approval<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let found = self.with_approvals(py, |_, approvals| Ok(approvals.get(id).map(approval_json)))?;
        found.map(|value| to_py(py, &value)).transpose()
    }

    /// Records a person's answer to approval `id`, bound to its call, its pending line and
    /// this session (keyed under `DECISION_LOG_KEY` when that is set), as `decision approve`
    /// binds it: approved, or denied with `reason` (default "denied by a person"). An unknown
    /// or already answered approval is refused and nothing is written. Returns the event.
    #[pyo3(signature = (id, approved, reason=None))]
    fn answer_pending<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        approved: bool,
        reason: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if approved && reason.is_some() {
            return Err(usage_error(
                py,
                "`reason` is the reason of a denial: give it with approved=False",
                Some("reason"),
            ));
        }
        let verdict = match approved {
            true => Verdict::Approve,
            false => Verdict::Deny(reason.unwrap_or_else(|| "denied by a person".into())),
        };
        let event = self.with_approvals(py, |writer, approvals| {
            let pending = approvals.get_mut(id).ok_or_else(|| ApprovalError::Unknown(id.to_owned()))?;
            if !pending.call_matches() {
                return Err(ApprovalError::Tampered { id: id.to_owned() });
            }
            append_bound_answer(writer, pending, &verdict)
        })?;
        to_py(py, &serde_json::Value::Object(event))
    }

    /// Records that the run acts on approval `id`'s answer now (`approval:used`, with `step`
    /// when given). Refuses an unknown, unanswered, denied or already used approval.
    #[pyo3(signature = (id, step=None))]
    fn use_pending(&self, py: Python<'_>, id: &str, step: Option<u64>) -> PyResult<()> {
        let refusal = self.with_approvals(py, |writer, approvals| {
            let pending = approvals.get_mut(id).ok_or_else(|| ApprovalError::Unknown(id.to_owned()))?;
            match &pending.answer {
                None => return Ok(Some(format!("approval `{id}` has no answer yet: nothing may run on it"))),
                Some(answer) if !answer.approved => {
                    return Ok(Some(format!("approval `{id}` was denied: nothing may run on it")));
                }
                Some(_) => {}
            }
            append_used(writer, pending, step).map(|()| None)
        })?;
        match refusal {
            Some(message) => Err(usage_error(py, &message, Some("id"))),
            None => Ok(()),
        }
    }

    /// Ends the run: appends the seal line (keyed when `DECISION_LOG_KEY` is set), writes
    /// every held line, closes the log and returns its head `"SEQ:HASH"`. Closing a closed
    /// log does nothing and returns `None`. A log that is never closed stays unfinished, as
    /// `decision replay` reports it.
    fn close(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let mut guard = self.lock(py)?;
        let Some(Held { mut writer, .. }) = guard.take() else { return Ok(None) };
        writer.seal().map(|head| Some(head.to_string())).map_err(|e| writer_error(py, &e))
    }

    /// Whether the log is closed (sealed, or left after a failed seal).
    #[getter]
    fn closed(&self) -> bool {
        self.held.lock().map_or(true, |guard| guard.is_none())
    }

    /// The chain's head: `{"seq": …, "sha256": …}` of the last line appended.
    #[getter]
    fn head<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let head = self.with(py, |w| Ok(w.head()))?;
        let (seq, sha256) = match head {
            Some(head) => {
                let text = head.to_string();
                let hash = text.split_once(':').map(|(_, hash)| hash.to_owned()).unwrap_or_default();
                (head.seq, hash)
            }
            None => (0, String::new()),
        };
        to_py(py, &serde_json::json!({"seq": seq, "sha256": sha256}))
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

/// Appends `decision` to the log `target`: a `SessionLog`, or a path (opened, or created as
/// `decision ask --log` creates it, and written through with every line synced).
pub fn record(py: Python<'_>, target: &Bound<'_, PyAny>, decision: &DecisionEvent) -> PyResult<()> {
    record_with(py, target, |w| w.append_decision(decision))
}

/// [`record`], the decision appended by `append` (which writes one `decision` event).
pub fn record_with(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    append: impl FnOnce(&mut Writer) -> Result<(), LogError>,
) -> PyResult<()> {
    if let Ok(log) = target.cast::<SessionLog>() {
        return log.borrow().with(py, append);
    }
    // A path: the decision is a run of one, sealed, as `decision ask --log` records it.
    let path: PathBuf = target.extract()?;
    let cwd = std::env::current_dir().ok().map(|p| p.display().to_string());
    let header = LogHeader { id: format!("ask-{}", now_ms()), created_at_ms: now_ms(), cwd };
    let mut writer = open_run(py, &path, &header, FsyncPolicy::EveryLine)?;
    append(&mut writer).map_err(|e| writer_error(py, &e))?;
    writer.seal().map(drop).map_err(|e| writer_error(py, &e))
}

/// Opens the log at `path` for a new run — continuing its chain as the run after its last
/// line's (after a seal, the next run), or creating it with `header` — keyed for its seal
/// by `DECISION_LOG_KEY` when that is set.
fn open_run(py: Python<'_>, path: &std::path::Path, header: &LogHeader, policy: FsyncPolicy) -> PyResult<Writer> {
    let display = path.display().to_string();
    let key = SealKey::from_env().map_err(|e| usage_error(py, &e.to_string(), None))?;
    let mut writer = if path.exists() {
        let run =
            next_run(path).map_err(|e| file_error(py, Code::Io, &format!("cannot read {display}: {e}"), &display))?;
        let mut writer = Writer::open(path, policy).map_err(|e| writer_error(py, &e))?;
        writer.set_run(run);
        writer
    } else {
        Writer::create(path, header, policy).map_err(|e| writer_error(py, &e))?
    };
    writer.set_seal_key(key);
    Ok(writer)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(verify_log, m)?)?;
    m.add_function(wrap_pyfunction!(what_if, m)?)?;
    m.add_function(wrap_pyfunction!(approvals, m)?)?;
    m.add_function(wrap_pyfunction!(approve, m)?)?;
    m.add_function(wrap_pyfunction!(verify_record, m)?)?;
    m.add_class::<SessionLog>()?;
    Ok(())
}
