//! The providers `Contract.ask(provider=…)` names — those of `decision ask --provider`:
//! `mock`, `script:FILE`, `replay:LOG`, `systemone`, `openai` — are parsed and built by the
//! runtime's one provider switch (`decision::api::provider`, through
//! `api::ask::AskRequest::provider`), as the CLI builds them (keys from the environment, never
//! from arguments). This module only lets a host check a name before it asks.

use decision::api::provider::parse_without_host;
use pyo3::prelude::*;

use crate::errors::{at_argument, raise};

/// `check_provider(name)`: refuses (`UsageError`, `E_USAGE`) a provider name that
/// `Contract.ask` would refuse, before anything is asked of it.
#[pyfunction]
pub fn check_provider(py: Python<'_>, name: &str) -> PyResult<()> {
    parse_without_host(name).map(drop).map_err(|e| raise(py, &at_argument(e, "provider")))
}
