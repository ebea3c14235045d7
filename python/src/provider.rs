//! The providers `Contract.ask(provider=…)` names — those of `decision ask --provider`:
//! `mock`, `script:FILE`, `replay:LOG`, `systemone`, `openai` — parsed and built by the
//! runtime's one provider switch (`decision::api::provider`), as the CLI builds them (keys
//! from the environment, never from arguments).

use std::sync::Arc;

use decision::api::provider::{Endpoint, parse_without_host};
use decision::provider::{DecisionProvider, OpenAiMode};
use pyo3::prelude::*;

use crate::errors::{at_argument, raise, usage_error};

pub fn build(
    py: Python<'_>,
    name: &str,
    url: Option<&str>,
    model: Option<&str>,
    openai_api: &str,
) -> PyResult<Arc<dyn DecisionProvider>> {
    let spec = parse_without_host(name).map_err(|e| raise(py, &at_argument(e, "provider")))?;
    let openai_mode = match openai_api {
        "chat" => OpenAiMode::Chat,
        "completions" => OpenAiMode::Completions,
        other => {
            let message = format!("unknown openai_api `{other}`: expected chat or completions");
            return Err(usage_error(py, &message, Some("openai_api")));
        }
    };
    let built = spec.build(&Endpoint { url, model, openai_mode }).map_err(|m| usage_error(py, &m, Some("provider")))?;
    Ok(built.provider)
}

/// `check_provider(name)`: refuses (`UsageError`, `E_USAGE`) a provider name that
/// `Contract.ask` would refuse, before anything is asked of it.
#[pyfunction]
pub fn check_provider(py: Python<'_>, name: &str) -> PyResult<()> {
    parse_without_host(name).map(drop).map_err(|e| raise(py, &at_argument(e, "provider")))
}
