//! The providers `decision ask --provider` names: `mock`, `script:FILE`, `systemone`,
//! `openai`, built as the CLI builds them (keys from the environment, never from arguments).

use std::sync::Arc;

use decision::provider::{
    ApiKey, DecisionProvider, MockProvider, OpenAiMode, OpenAiProvider, RetryPolicy, Retrying, ScriptProvider,
    SystemOneProvider,
};
use pyo3::prelude::*;

use crate::errors::usage_error;

/// Where `openai` looks when no `url` is given (llama.cpp's server default).
const OPENAI_DEFAULT_URL: &str = "http://127.0.0.1:8080/v1";

pub fn build(
    py: Python<'_>,
    name: &str,
    url: Option<&str>,
    model: Option<&str>,
    openai_api: &str,
) -> PyResult<Arc<dyn DecisionProvider>> {
    let retry = RetryPolicy::default();
    match name {
        "mock" => Ok(Arc::new(MockProvider::default())),
        "systemone" => {
            let url = url.unwrap_or(SystemOneProvider::OFFICIAL_URL);
            let key = ApiKey::from_env(SystemOneProvider::KEY_VARIABLE);
            if key.is_none() && url.trim_end_matches('/') == SystemOneProvider::OFFICIAL_URL {
                return Err(usage_error(
                    py,
                    &format!("the official System One endpoint needs {}", SystemOneProvider::KEY_VARIABLE),
                    Some("provider"),
                ));
            }
            let model = model.unwrap_or(SystemOneProvider::PINNED_MODEL).to_owned();
            let provider = SystemOneProvider::new(url).with_key(key).with_default_model(Some(model));
            Ok(Arc::new(Retrying::new(provider, retry)))
        }
        "openai" => {
            let mode = match openai_api {
                "chat" => OpenAiMode::Chat,
                "completions" => OpenAiMode::Completions,
                other => {
                    return Err(usage_error(
                        py,
                        &format!("unknown openai_api `{other}`: expected chat or completions"),
                        Some("openai_api"),
                    ));
                }
            };
            let provider = OpenAiProvider::new(url.unwrap_or(OPENAI_DEFAULT_URL), model.unwrap_or("default"), mode)
                .with_key(ApiKey::from_env(OpenAiProvider::KEY_VARIABLE));
            Ok(Arc::new(Retrying::new(provider, retry)))
        }
        other => match other.strip_prefix("script:") {
            Some(file) if !file.is_empty() => ScriptProvider::from_file(std::path::Path::new(file))
                .map(|p| Arc::new(p) as Arc<dyn DecisionProvider>)
                .map_err(|e| usage_error(py, &e.to_string(), Some("provider"))),
            _ => Err(usage_error(
                py,
                &format!("unknown provider `{other}`: expected mock, script:FILE, systemone or openai"),
                Some("provider"),
            )),
        },
    }
}
