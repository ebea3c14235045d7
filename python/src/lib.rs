//! `decision_contract._native`: the engine for Python hosts. Every function returns the
//! document the matching `decision … --format json` command prints (built by
//! [`decision::api`]), as Python dicts and lists with the same keys.
//!
//! Errors are the exceptions of `decision_contract._errors`, each with a `code` and, where
//! there is one, the `path`, `line` and `column` of the problem.

mod convert;
mod errors;
mod log;
mod outcomes;
mod prepared;
mod provider;
mod read;
mod template;
mod timing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use decision::api;
use decision::api::ask::AskRequest;
use decision::api::check::CheckRequest;
use decision::api::eval::{EvalRequest, Gated};
use decision::api::frame::{CellSource, FrameRequest, PreparedFrame};
use decision::api::host::Profile;
use decision::ask::Questions;
use decision::check::Capabilities;
use decision::contract::Contract as ParsedContract;
use decision::frame::Mode;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use serde_json::{Map, Value};

use convert::{from_py, object_from_py, request_from_py, to_py};
use errors::{at_argument, to_py_err, usage_error};
use prepared::Prepared;
use template::Template;

/// The engine's allocations go to mimalloc, as in the `decision` binary: a frame or a replay
/// allocates many small strings, which the system allocator makes markedly slower (Python's
/// own objects keep Python's allocator).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The name contracts are given in messages when they came from no file.
const UNNAMED: &str = "DECISION.md";

/// Text or bytes from Python, as bytes.
fn source_bytes(text: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = text.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(string) = text.cast::<PyString>() {
        return Ok(string.to_cow()?.into_owned().into_bytes());
    }
    Err(usage_error(text.py(), "expected the contract's text as str or bytes", None))
}

/// `profile` and `capabilities` as the CLI's `--profile reference | --capabilities FILE`.
fn capabilities_of(
    py: Python<'_>,
    profile: Option<&str>,
    capabilities: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Capabilities>> {
    let text = capabilities.map(report_text).transpose()?;
    api::host::named(profile, text.as_deref().map(|text| ("capabilities", text))).map_err(to_py_err(py))
}

/// A host capability report given as its JSON text or as a dict, as text.
fn report_text(given: &Bound<'_, PyAny>) -> PyResult<String> {
    match given.cast::<PyString>() {
        Ok(text) => Ok(text.to_cow()?.into_owned()),
        Err(_) => Ok(from_py(given)?.to_string()),
    }
}

/// `check(text, *, path=None, capabilities=None, **options)`: one file's object of `decision
/// check --format json`. The keywords are the options every entrance takes (`profile`,
/// `deny_warnings`: `api::check::CheckRequest`), and `capabilities`, a host report.
#[pyfunction]
#[pyo3(signature = (text, *, path=None, capabilities=None, **options))]
fn check<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    path: Option<&str>,
    capabilities: Option<&Bound<'py, PyAny>>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let request: CheckRequest = request_from_py(py, "check", options)?;
    let source = source_bytes(text)?;
    let report = capabilities.map(report_text).transpose()?;
    let host = request.host(report.as_deref().map(|text| ("capabilities", text))).map_err(to_py_err(py))?;
    to_py(py, &api::check::file_json(path, &request.check(&source, host.as_ref())))
}

/// A parsed contract: its blocks, and everything a host does with one.
#[pyclass(module = "decision_contract", frozen)]
struct Contract {
    source: Vec<u8>,
    path: String,
    contract: ParsedContract,
    /// Compiled policies and offered questions per block, without gates or candidates.
    plain: Mutex<HashMap<String, Arc<(Gated, Questions)>>>,
    /// Frames prepared for the reference profile, per block (its index) and marking.
    prepared: Mutex<HashMap<FrameKind, Arc<Prepared>>>,
    /// The first frame document made for each block and marking for a host whose cells are
    /// the state's keys, with its Python objects: the later ones copy the parts they share
    /// with it.
    templates: Mutex<HashMap<FrameKind, Arc<Template>>>,
    /// Frames prepared for hosts whose cells are the state's keys, per block, marking and
    /// cells (see [`StateCells`]): a host framing step after step prepares each once.
    state_frames: Mutex<HashMap<(FrameKind, StateCells), Arc<PreparedFrame>>>,
}

/// The cells a state gives a host without a profile: each key, the kind of its value (what
/// decides the cell's type) and whether it is untrusted.
type StateCells = Vec<(String, u8, bool)>;

/// At most this many prepared state frames are kept: a host whose keys change every call
/// does not grow the cache without bound.
const STATE_FRAMES_KEPT: usize = 64;

/// A block (its index), and whether it is framed with the reference marking.
type FrameKind = (usize, bool);

impl Contract {
    /// The block's frame for the reference profile, prepared once per marking.
    fn prepared(
        &self,
        py: Python<'_>,
        (index, block): (usize, &decision::contract::Block),
        mode: Mode,
    ) -> PyResult<Arc<Prepared>> {
        let key = (index, mode == Mode::Reference);
        if let Some(found) = self.prepared.lock().ok().and_then(|cache| cache.get(&key).cloned()) {
            return Ok(found);
        }
        let frame = PreparedFrame::reference(block, mode).map_err(to_py_err(py))?;
        let prepared = Arc::new(Prepared::new(py, frame)?);
        if let Ok(mut cache) = self.prepared.lock() {
            cache.insert(key, Arc::clone(&prepared));
        }
        Ok(prepared)
    }

    /// The block to frame and its index, or the usage error `decision frame` gives.
    fn frame_block(&self, py: Python<'_>, id: &str) -> PyResult<(usize, &decision::contract::Block)> {
        let found = self.contract.blocks.iter().enumerate().find(|(_, b)| b.id == id);
        found.ok_or_else(|| match api::find_block(&self.path, &self.contract, id) {
            Err(e) => errors::raise(py, &e),
            // Not reached: both look for the same id.
            Ok(_) => usage_error(py, &format!("no block `{id}`"), None),
        })
    }

    /// The template for frame documents of `kind`: the first one made, or `document`.
    fn template(&self, py: Python<'_>, kind: FrameKind, document: &Value) -> PyResult<Arc<Template>> {
        if let Some(found) = self.templates.lock().ok().and_then(|cache| cache.get(&kind).cloned()) {
            return Ok(found);
        }
        let made = Arc::new(Template::new(py, document.clone())?);
        if let Ok(mut cache) = self.templates.lock() {
            return Ok(Arc::clone(cache.entry(kind).or_insert(made)));
        }
        Ok(made)
    }

    /// The block's frame for a host whose cells are the keys of `state`, prepared once per
    /// block, marking and cells.
    fn state_frame(
        &self,
        py: Python<'_>,
        (index, block): (usize, &decision::contract::Block),
        state: &Map<String, Value>,
        untrusted: &[String],
        mode: Mode,
    ) -> PyResult<Arc<PreparedFrame>> {
        let cells: StateCells = state
            .iter()
            .map(|(name, value)| {
                let kind = match value {
                    Value::Bool(_) => 0,
                    Value::Array(_) => 1,
                    _ => 2,
                };
                (name.clone(), kind, untrusted.iter().any(|u| u == name))
            })
            .collect();
        let key = ((index, mode == Mode::Reference), cells);
        if let Some(found) = self.state_frames.lock().ok().and_then(|cache| cache.get(&key).cloned()) {
            return Ok(found);
        }
        let frame = Arc::new(PreparedFrame::of_state(block, state, untrusted, mode).map_err(to_py_err(py))?);
        if let Ok(mut cache) = self.state_frames.lock() {
            if cache.len() >= STATE_FRAMES_KEPT {
                cache.clear();
            }
            cache.insert(key, Arc::clone(&frame));
        }
        Ok(frame)
    }

    fn block(&self, py: Python<'_>, id: &str) -> PyResult<&decision::contract::Block> {
        api::find_block(&self.path, &self.contract, id).map_err(to_py_err(py))
    }

    /// The block's policy and questions; cached when there are no gates or candidates.
    fn policy_and_questions(
        &self,
        py: Python<'_>,
        block: &decision::contract::Block,
        gates: &[String],
        candidates: &api::eval::Candidates,
    ) -> PyResult<Arc<(Gated, Questions)>> {
        let plain = gates.is_empty() && candidates.is_empty();
        if plain && let Some(found) = self.plain.lock().ok().and_then(|cache| cache.get(&block.id).cloned()) {
            return Ok(found);
        }
        let policy = api::eval::gated_policy(&self.contract, block, gates)
            .map_err(|e| errors::raise(py, &at_argument(e, "gates")))?;
        let questions = api::eval::block_questions(block, candidates)
            .map_err(|e| errors::raise(py, &at_argument(e, "candidates")))?;
        let built = Arc::new((policy, questions));
        if plain && let Ok(mut cache) = self.plain.lock() {
            cache.insert(block.id.clone(), Arc::clone(&built));
        }
        Ok(built)
    }
}

fn candidates_of(py: Python<'_>, candidates: Option<&Bound<'_, PyAny>>) -> PyResult<api::eval::Candidates> {
    match candidates {
        None => Ok(api::eval::Candidates::new()),
        Some(given) => api::eval::candidates_from_value("candidates", from_py(given)?)
            .map_err(|e| errors::raise(py, &at_argument(e, "candidates"))),
    }
}

#[pymethods]
impl Contract {
    /// Parses a contract; a contract with parse errors raises `ContractError` with every
    /// error in `diagnostics` and the first one's code and location.
    #[staticmethod]
    #[pyo3(signature = (text, *, path=None))]
    fn parse(py: Python<'_>, text: &Bound<'_, PyAny>, path: Option<String>) -> PyResult<Contract> {
        let source = source_bytes(text)?;
        let path = path.unwrap_or_else(|| UNNAMED.to_owned());
        let contract = api::parse_contract(&path, &source).map_err(to_py_err(py))?;
        Ok(Contract {
            source,
            path,
            contract,
            plain: Mutex::new(HashMap::new()),
            prepared: Mutex::new(HashMap::new()),
            templates: Mutex::new(HashMap::new()),
            state_frames: Mutex::new(HashMap::new()),
        })
    }

    /// The block ids, in file order.
    #[getter]
    fn blocks(&self) -> Vec<String> {
        self.contract.blocks.iter().map(|b| b.id.clone()).collect()
    }

    /// The `schema:` the file declares.
    #[getter]
    fn schema(&self) -> Option<String> {
        self.contract.schema.as_ref().map(|s| s.value.clone())
    }

    /// The name the contract was given (`DECISION.md` when none).
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// `decision explain` as data (its text under `text`).
    fn explain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &api::explain::document(&self.path, &self.source))
    }

    /// `decision frame --format json` for one block. The keywords are the options every
    /// entrance takes (`profile`, `untrusted`, `marking`: `api::frame::FrameRequest`), and
    /// `capabilities`, a host report to check the block against.
    #[pyo3(signature = (block, state, *, capabilities=None, **options))]
    fn frame<'py>(
        &self,
        py: Python<'py>,
        block: &str,
        state: &Bound<'py, PyAny>,
        capabilities: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request: FrameRequest = request_from_py(py, "frame", options)?;
        let (index, found) = self.frame_block(py, block)?;
        let mode = request.marking.mode();
        // The reference profile's own capabilities are not needed to frame for it.
        if capabilities.is_some()
            && let Some(capabilities) = capabilities_of(py, request.profile.map(Profile::name), capabilities)?
        {
            self.refuse_adapter_errors(py, found, &capabilities)?;
        }
        let state = object_from_py(state, "state")?;
        // What `api::frame::document` does, with the frame prepared once for these cells.
        api::frame::check_history(&state).map_err(to_py_err(py))?;
        if request.profile.is_some() {
            return self.prepared(py, (index, found), mode)?.document(py, &state);
        }
        let document = self.state_frame(py, (index, found), &state, &request.untrusted, mode)?.document(&state);
        self.template(py, (index, mode == Mode::Reference), &document)?.to_py(py, &document)
    }

    /// `decision eval --format json`: validate `answers` and evaluate the block's policy.
    /// The keywords are the options every entrance takes (`gates`: `api::eval::EvalRequest`),
    /// and `candidates`, what a `dynamic:` block offered.
    #[pyo3(signature = (block, answers, *, candidates=None, **options))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        block: &str,
        answers: &Bound<'py, PyAny>,
        candidates: Option<&Bound<'py, PyAny>>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request: EvalRequest = request_from_py(py, "evaluate", options)?;
        let found = self.block(py, block)?;
        let built = self.policy_and_questions(py, found, &request.gates, &candidates_of(py, candidates)?)?;
        let answers = object_from_py(answers, "answers")?;
        let (policy, questions) = &*built;
        to_py(py, &api::eval::evaluate(found, policy, questions, &answers).to_json())
    }

    /// The whole of one decision whose answers the host already has, in one call: the block
    /// framed from the keys of `state` (`untrusted` naming the cells that carry untrusted
    /// bytes), `answers` validated and the policy evaluated, and the decision recorded in
    /// `log` (a `SessionLog` or a path) at `step`, served by `provider` — the frame never
    /// crossing into Python. Returns `{"action", "reason", "valid", "problems",
    /// "requestDigest"}`. The record is the one `frame` and `evaluate` would make.
    #[pyo3(signature = (block, state, answers, *, log, provider, step=0, untrusted=None))]
    #[allow(clippy::too_many_arguments)]
    fn decide_and_record<'py>(
        &self,
        py: Python<'py>,
        block: &str,
        state: &Bound<'py, PyAny>,
        answers: &Bound<'py, PyAny>,
        log: &Bound<'py, PyAny>,
        provider: &str,
        step: u64,
        untrusted: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (index, found) = self.frame_block(py, block)?;
        let state = object_from_py(state, "state")?;
        api::frame::check_history(&state).map_err(to_py_err(py))?;
        let untrusted = untrusted.unwrap_or_default();
        let frame = self.state_frame(py, (index, found), &state, &untrusted, Mode::Provenance)?;
        let built = self.policy_and_questions(py, found, &[], &api::eval::Candidates::new())?;
        let answers = object_from_py(answers, "answers")?;
        let (policy, questions) = &*built;
        let evaluated = api::eval::evaluate(found, policy, questions, &answers);
        let (artifact, request_digest) = frame.compile_artifact(&state);
        let decision = &evaluated.decision;
        // Written from the frame and the block's questions text as they are: the record is
        // the `DecisionEvent` `frame` and `evaluate` would make, with nothing copied into it.
        let event = decision::log::FramedDecisionEvent {
            step,
            frame: &artifact,
            request_digest: &request_digest,
            questions_text: frame.questions_text(),
            answers: &answers,
            action: &decision.action,
            reason: &decision.reason,
            provider,
        };
        log::record_with(py, log, |w| w.append_framed_decision(&event))?;
        let out = PyDict::new(py);
        out.set_item("action", &decision.action)?;
        out.set_item("reason", &decision.reason)?;
        out.set_item("valid", evaluated.problems.is_empty())?;
        out.set_item("problems", to_py(py, &Value::Array(evaluated.problems.clone()))?)?;
        out.set_item("requestDigest", request_digest)?;
        Ok(out.into_any())
    }

    /// `decision ask --format json`: ask a provider the block's questions, validate and
    /// evaluate; with `log`, the decision is appended to that session log (a path, created
    /// when missing, or a `SessionLog`).
    ///
    /// The frame reads the reference coding host's cells unless `cells="state"` (the keys of
    /// `state`) or `capabilities` (a host capability report, JSON text or a mapping: its
    /// `stateCells`, and a block that does not fit the host is refused) names another host;
    /// `untrusted` lists that host's cells that carry untrusted bytes. `step` is the step of
    /// the host's loop the decision belongs to, as the record keeps it.
    #[pyo3(signature = (block, state, *, log=None, candidates=None, capabilities=None, step=0, **options))]
    #[allow(clippy::too_many_arguments)]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        block: &str,
        state: &Bound<'py, PyAny>,
        log: Option<&Bound<'py, PyAny>>,
        candidates: Option<&Bound<'py, PyAny>>,
        capabilities: Option<&Bound<'py, PyAny>>,
        step: u64,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request: AskRequest = request_from_py(py, "ask", options)?;
        let found = self.block(py, block)?;
        let capabilities = capabilities_of(py, None, capabilities)?;
        let source = request.cell_source(capabilities).map_err(to_py_err(py))?;
        if let CellSource::Capabilities { capabilities, .. } = &source {
            self.refuse_adapter_errors(py, found, capabilities)?;
        }
        let built = self.policy_and_questions(py, found, &request.gates, &candidates_of(py, candidates)?)?;
        let state = object_from_py(state, "state")?;
        let provider = request.provider().map_err(to_py_err(py))?;
        let (policy, questions) = &*built;
        let model = request.model.clone();
        let ask = api::ask::Ask { block: found, policy, questions: questions.clone(), state, source: &source, model };
        // A frame that reads a cell the host does not have names the host and the argument
        // that chooses another one.
        let prepared = api::ask::prepare(ask, |source| {
            match source {
                CellSource::Reference => {
                    "the cells asked against are the reference coding host's, the default; a host with its own \
                     cells gives `cells=\"state\"` (the keys of `state`) or `capabilities=`"
                }
                CellSource::State { .. } => "the cells asked against are the keys of `state`, from `cells=\"state\"`",
                CellSource::Capabilities { .. } => {
                    "the cells asked against are the host's `stateCells`, from `capabilities=`"
                }
            }
            .to_owned()
        })
        .map_err(to_py_err(py))?;
        // The provider may wait on the network: other Python threads run meanwhile.
        let timeout = request.timeout();
        let decision = py.detach(|| prepared.decide(provider, timeout)).map_err(to_py_err(py))?;
        if let Some(log) = log {
            let mut event = prepared.event(&decision);
            event.step = step;
            log::record(py, log, &event)?;
        }
        to_py(py, &api::ask::document(block, &decision))
    }

    fn __repr__(&self) -> String {
        format!("<Contract {} · {} blocks>", self.path, self.contract.blocks.len())
    }
}

impl Contract {
    /// With a host's capabilities, a block that does not fit the host is refused before it
    /// is framed, with the code and location of its first adapter error.
    fn refuse_adapter_errors(
        &self,
        py: Python<'_>,
        block: &decision::contract::Block,
        capabilities: &Capabilities,
    ) -> PyResult<()> {
        api::frame::refuse_misfit(&self.path, &self.contract, block, capabilities, "the host of `capabilities`")
            .map_err(to_py_err(py))
    }
}

/// The engine's version and the schema versions it reads and writes.
#[pyfunction]
fn engine<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &api::engine_info())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", api::ENGINE_VERSION)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(engine, m)?)?;
    m.add_function(wrap_pyfunction!(provider::check_provider, m)?)?;
    m.add_function(wrap_pyfunction!(timing::_rust_timing, m)?)?;
    m.add_class::<Contract>()?;
    log::register(m)?;
    outcomes::register(m)?;
    Ok(())
}
