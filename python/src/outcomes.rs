//! Tool outcomes: `decision outcomes check|validate|report --format json`.

use std::path::PathBuf;

use decision::api;
use decision::outcomes::{self as outcome, ContractSet};
use pyo3::prelude::*;

use crate::convert::{from_py, to_py};
use crate::errors::{at_argument, file_error, raise, to_py_err};
use decision::api::Code;

fn read(py: Python<'_>, path: &PathBuf) -> PyResult<String> {
    let shown = path.display().to_string();
    std::fs::read_to_string(path).map_err(|e| file_error(py, Code::Io, &format!("cannot read {shown}: {e}"), &shown))
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
        let contract = api::outcomes::contract_for(&self.set, &self.path, tool, method).map_err(to_py_err(py))?;
        let document = from_py(outcome)?;
        let validation = api::outcomes::validate(contract, tool, method, "outcome", &document)
            .map_err(|e| raise(py, &at_argument(e, "outcome")))?;
        to_py(py, &validation.document)
    }
}

impl Contracts {
    fn from_text(py: Python<'_>, text: &str, path: String) -> PyResult<Contracts> {
        let set = api::outcomes::load_contracts(&path, text).map_err(to_py_err(py))?;
        Ok(Contracts { set, path })
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
        let file = std::fs::File::open(&path)
            .map_err(|e| decision::api::Error::io(&shown, format!("cannot read {shown}: {e}")))?;
        outcome::report(std::io::BufReader::new(file))
            .map(|report| api::outcomes::report_json(&report))
            .map_err(|e| api::outcomes::report_error(&shown, &e))
    });
    report.map_err(to_py_err(py)).and_then(|document| to_py(py, &document))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Contracts>()?;
    m.add_function(wrap_pyfunction!(outcomes_check, m)?)?;
    m.add_function(wrap_pyfunction!(outcomes_report, m)?)?;
    Ok(())
}
