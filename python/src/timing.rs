//! The benchmark's baseline (`python/benchmarks/timing.py`): the Rust functions behind
//! `Contract.frame` and `Contract.evaluate`, timed in Rust on the inputs the benchmark times
//! from Python, and the two halves of what a call from Python adds to `frame`.

use std::hint::black_box;
use std::time::Instant;

use decision::api;
use decision::api::frame::PreparedFrame;
use decision::frame::Mode;
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::{Map, Value};

use crate::Contract;
use crate::convert::object_from_py;
use crate::errors::to_py_err;
use crate::errors::usage_error;

/// Nanoseconds per call, over `n` calls, of:
/// - `kind="frame"`: `PreparedFrame::document` (the reference profile, provenance marking);
/// - `kind="evaluate"`: `api::eval::evaluate` and its JSON;
/// - `kind="frame-in"`: reading the state from Python;
/// - `kind="frame-out"`: making the returned dicts from the parts of the frame document, as
///   `Contract.frame` makes them (after the contract's first frame of the block);
///
/// with nothing else converted. `input` is the state (or the answers); for the frame kinds
/// it may also be a list of states, taken in turn.
#[pyfunction]
pub fn _rust_timing(
    py: Python<'_>,
    contract: &Contract,
    kind: &str,
    block: &str,
    input: &Bound<'_, PyAny>,
    n: u32,
) -> PyResult<f64> {
    let runs = usize::try_from(n.max(1)).unwrap_or(1);
    let (index, found) = contract.frame_block(py, block)?;
    let given: Vec<Bound<'_, PyAny>> = match input.cast::<PyList>() {
        Ok(list) => list.iter().collect(),
        Err(_) => vec![input.clone()],
    };
    let states =
        given.iter().map(|state| object_from_py(state, "input")).collect::<PyResult<Vec<Map<String, Value>>>>()?;
    if states.is_empty() {
        return Err(usage_error(py, "no input", None));
    }
    let started;
    match kind {
        "frame" => {
            let prepared = PreparedFrame::reference(found, Mode::Provenance).map_err(to_py_err(py))?;
            started = Instant::now();
            for state in states.iter().cycle().take(runs) {
                black_box(prepared.document(state));
            }
        }
        "evaluate" => {
            let built = contract.policy_and_questions(py, found, &[], &api::eval::Candidates::new())?;
            let (policy, questions) = &*built;
            started = Instant::now();
            for answers in states.iter().cycle().take(runs) {
                black_box(api::eval::evaluate(found, policy, questions, answers).to_json());
            }
        }
        "frame-in" => {
            started = Instant::now();
            for state in given.iter().cycle().take(runs) {
                black_box(object_from_py(state, "input")?);
            }
        }
        "frame-out" => {
            let prepared = contract.prepared(py, (index, found), Mode::Provenance)?;
            let parts: Vec<(Value, String)> = states.iter().map(|state| prepared.frame().compile(state)).collect();
            started = Instant::now();
            for (artifact, request) in parts.iter().cycle().take(runs) {
                black_box(prepared.to_py(py, artifact, request)?);
            }
        }
        other => return Err(usage_error(py, &format!("unknown kind `{other}`"), None)),
    }
    Ok(started.elapsed().as_nanos() as f64 / runs as f64)
}
