//! Raising the exceptions of `decision_contract._errors` (defined in Python, so that they
//! carry their fields as attributes under the stable ABI).

use decision_core::Diagnostic;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::convert::to_py;

/// The fields an error carries besides its message.
#[derive(Default)]
pub struct Details<'a> {
    pub code: Option<&'a str>,
    pub path: Option<&'a str>,
    pub line: Option<u64>,
    pub column: Option<u64>,
    pub diagnostics: Option<&'a [Value]>,
}

/// An instance of `decision_contract._errors.<class>` as a `PyErr`.
pub fn raise(py: Python<'_>, class: &str, message: &str, details: Details<'_>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let module = py.import("decision_contract._errors")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("code", details.code)?;
        kwargs.set_item("path", details.path)?;
        kwargs.set_item("line", details.line)?;
        kwargs.set_item("column", details.column)?;
        if let Some(diagnostics) = details.diagnostics {
            kwargs.set_item("diagnostics", to_py(py, &Value::Array(diagnostics.to_vec()))?)?;
        }
        let error = module.getattr(class)?.call((message,), Some(&kwargs))?;
        Ok(PyErr::from_value(error))
    };
    build().unwrap_or_else(|e| PyRuntimeError::new_err(format!("{message} (and raising it failed: {e})")))
}

/// A contract that cannot do what was asked (does not parse, a policy that does not compile,
/// a frame the host cannot fill). `what` names the argument at fault, when one is.
pub fn contract_error(py: Python<'_>, message: &str, code: Option<&str>) -> PyErr {
    raise(py, "ContractError", message, Details { code: Some(code.unwrap_or("contract")), ..Details::default() })
}

/// A located diagnostic (the first of `diagnostics`) as a `ContractError`.
pub fn diagnostic_error(py: Python<'_>, path: &str, first: &Diagnostic, diagnostics: &[Value]) -> PyErr {
    let message = format!(
        "{path}:{}:{}: {} {}{}",
        first.span.line,
        first.span.column,
        first.code,
        first.message,
        if diagnostics.len() > 1 { format!(" (and {} more)", diagnostics.len() - 1) } else { String::new() }
    );
    raise(
        py,
        "ContractError",
        &message,
        Details {
            code: Some(first.code),
            path: Some(path),
            line: Some(u64::from(first.span.line)),
            column: Some(u64::from(first.span.column)),
            diagnostics: Some(diagnostics),
        },
    )
}

/// A wrong request: an unknown block, profile or marking, a malformed argument.
/// `argument` names the argument at fault, when one is.
pub fn usage_error(py: Python<'_>, message: &str, argument: Option<&str>) -> PyErr {
    raise(py, "UsageError", message, Details { code: Some("usage"), path: argument, ..Details::default() })
}

/// A request the decider cannot make at all (an outage is a degraded, escalating decision).
pub fn provider_error(py: Python<'_>, message: &str) -> PyErr {
    raise(py, "ProviderError", message, Details { code: Some("provider"), ..Details::default() })
}

/// A session log or another input file could not be read or written.
pub fn log_error(py: Python<'_>, message: &str, code: &str, path: &str, line: Option<u64>) -> PyErr {
    raise(py, "LogError", message, Details { code: Some(code), path: Some(path), line, ..Details::default() })
}

/// A decision record that cannot be verified (not JSON, not a decision, missing fields).
pub fn record_error(py: Python<'_>, message: &str) -> PyErr {
    raise(py, "RecordError", message, Details { code: Some("record"), ..Details::default() })
}
