//! Raising the engine's one refusal, [`decision::api::Error`], as the exception of
//! `decision_contract._errors` for its kind (defined in Python, so that it carries its fields
//! as attributes under the stable ABI). The `code` is the same string the CLI prints and the
//! npm package throws.

use decision::api::{Code, Error, Kind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::convert::to_py;

/// The exception class of each kind of refusal.
fn class(kind: Kind) -> &'static str {
    match kind {
        Kind::Contract => "ContractError",
        Kind::Usage => "UsageError",
        Kind::Provider => "ProviderError",
        Kind::Log => "LogError",
        Kind::Record => "RecordError",
    }
}

/// `error` as the `PyErr` of its kind's exception class.
pub fn raise(py: Python<'_>, error: &Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let module = py.import("decision_contract._errors")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("code", error.code.as_str())?;
        kwargs.set_item("path", error.path.as_deref())?;
        kwargs.set_item("line", error.line)?;
        kwargs.set_item("column", error.column)?;
        if !error.diagnostics.is_empty() {
            kwargs.set_item("diagnostics", to_py(py, &Value::Array(error.diagnostics.clone()))?)?;
        }
        let exception = module.getattr(class(error.kind()))?.call((error.message.as_str(),), Some(&kwargs))?;
        Ok(PyErr::from_value(exception))
    };
    build().unwrap_or_else(|e| PyRuntimeError::new_err(format!("{} (and raising it failed: {e})", error.message)))
}

/// A map_err adapter: `result.map_err(to_py_err(py))`.
pub fn to_py_err(py: Python<'_>) -> impl Fn(Error) -> PyErr + '_ {
    move |error| raise(py, &error)
}

/// `error` naming the argument at fault when it is the request's fault (a usage error); a
/// refusal of the contract keeps naming the contract.
pub fn at_argument(error: Error, argument: &str) -> Error {
    if error.kind() == Kind::Usage { error.at_path(argument) } else { error }
}

/// A wrong request (`E_USAGE`): an unknown block, profile or marking, a malformed argument.
/// `argument` names the argument at fault, when one is.
pub fn usage_error(py: Python<'_>, message: &str, argument: Option<&str>) -> PyErr {
    let error = Error::usage(message);
    raise(
        py,
        &match argument {
            Some(argument) => error.at_path(argument),
            None => error,
        },
    )
}

/// A refusal of the given code naming the file at fault: `E_IO` for a file that cannot be
/// read or written, `E_LOG_CLOSED` for a closed log.
pub fn file_error(py: Python<'_>, code: Code, message: &str, path: &str) -> PyErr {
    raise(py, &Error::new(code, message).at_path(path))
}
