//! Tool outcomes: `decision outcomes check|validate|report --format json`.

use std::path::PathBuf;

use decision_outcomes::{self as outcome, ContractSet};
use decision_runtime::api;
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::errors::{Details, log_error, raise, usage_error};

fn read(py: Python<'_>, path: &PathBuf) -> PyResult<String> {
    let shown = path.display().to_string();
    std::fs::read_to_string(path)
        .map_err(|e| log_error(py, &format!("cannot read {shown}: {e}"), "unreadable", &shown, None))
}

/// A loaded, lint-clean contracts file.
#[pyclass(module = "decision_contract.outcomes", frozen)]
struct Contracts {
    set: ContractSet,
    path: String,
}

#[pymethods]
impl Contracts {
    /// Loads a contracts file; lint errors raise `ContractError` with each in `diagnostics`
    /// (`line`, `column`, `pointer`, `message`) and the first one's location.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Contracts> {
        let text = read(py, &path)?;
        Contracts::from_text(py, &text, path.display().to_string())
    }

    /// Loads contracts from their text; `path` names them in messages.
    #[staticmethod]
    #[pyo3(signature = (text, *, path=None))]
    fn parse(py: Python<'_>, text: &str, path: Option<String>) -> PyResult<Contracts> {
        Contracts::from_text(py, text, path.unwrap_or_else(|| "contracts.json".to_owned()))
    }

    /// How many contracts the file holds.
    fn __len__(&self) -> usize {
        self.set.len()
    }

    /// `decision outcomes validate --format json`: the outcome unchanged when it holds (or
    /// is an error, or the contract declares no deliverable), else the typed
    /// `contract_violation` outcome.
    fn validate<'py>(
        &self,
        py: Python<'py>,
        tool: &str,
        method: &str,
        outcome: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let contract =
            api::outcomes::contract_for(&self.set, &self.path, tool, method).map_err(|m| usage_error(py, &m, None))?;
        let document = from_py(outcome)?;
        let validation = api::outcomes::validate(contract, tool, method, "outcome", &document)
            .map_err(|m| usage_error(py, &m, Some("outcome")))?;
        to_py(py, &validation.document)
    }
}

impl Contracts {
    fn from_text(py: Python<'_>, text: &str, path: String) -> PyResult<Contracts> {
        match outcome::load_contracts(text) {
            Ok(set) => Ok(Contracts { set, path }),
            Err(errors) => {
                let diagnostics: Vec<Value> = errors.0.iter().map(api::outcomes::lint_error_json).collect();
                let first = errors.0.first();
                let message = match first {
                    Some(e) => format!("{path}:{e}"),
                    None => format!("{path}: not a valid contracts file"),
                };
                Err(raise(
                    py,
                    "ContractError",
                    &message,
                    Details {
                        code: Some("outcome_contracts"),
                        path: Some(&path),
                        line: first.map(|e| e.line as u64),
                        column: first.map(|e| e.column as u64),
                        diagnostics: Some(&diagnostics),
                    },
                ))
            }
        }
    }
}

/// `decision outcomes check --format json PATH`.
#[pyfunction]
fn outcomes_check<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    let text = read(py, &path)?;
    to_py(py, &api::outcomes::check_document(&path.display().to_string(), &text))
}

/// `decision outcomes report --format json PATH`, read without holding the GIL.
#[pyfunction]
fn outcomes_report<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    let shown = path.display().to_string();
    let report = py.detach(|| {
        let file = std::fs::File::open(&path).map_err(|e| ("unreadable", format!("cannot read {shown}: {e}")))?;
        outcome::report(std::io::BufReader::new(file))
            .map(|report| api::outcomes::report_json(&report))
            .map_err(|e| ("report", format!("{shown}: {e}")))
    });
    match report {
        Ok(document) => to_py(py, &document),
        Err((code, message)) => Err(log_error(py, &message, code, &shown, None)),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Contracts>()?;
    m.add_function(wrap_pyfunction!(outcomes_check, m)?)?;
    m.add_function(wrap_pyfunction!(outcomes_report, m)?)?;
    Ok(())
}
