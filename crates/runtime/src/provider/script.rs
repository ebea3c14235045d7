//! `script:FILE`: answers per question id from a JSON file `{"<question id>": [answer, …]}`,
//! consumed in order. A question whose list is used up gets no answer (and so fails
//! validation): a script never invents one.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Map, Value};
use thiserror::Error;

use super::error::{ErrorCode, ProviderError};
use super::{DecisionProvider, Request, Response};
use crate::clock::Instant;
use decision_protocol::ask::normalize;

/// Why a script file cannot serve as a provider.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The script, as shown.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("script {path} is not JSON: {source}")]
    Json {
        /// The script, as shown.
        path: String,
        /// Where and why it does not parse.
        source: serde_json::Error,
    },
    /// The JSON is not an object mapping question ids to arrays of answers.
    #[error("script {path}: expected an object mapping question ids to arrays of answers{detail}")]
    Shape {
        /// The script, as shown.
        path: String,
        /// A suffix naming what is wrong (`` (`x` is not an array)``), or empty.
        detail: String,
    },
}

/// Scripted answers, consumed in order per question id.
#[derive(Debug)]
pub struct ScriptProvider {
    name: String,
    queues: Mutex<HashMap<String, VecDeque<Value>>>,
}

impl ScriptProvider {
    /// The script at `path` (`{"question id": [answer, …]}`), named `script:PATH`.
    pub fn from_file(path: &Path) -> Result<ScriptProvider, ScriptError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read { path: shown.clone(), source })?;
        let value: Value =
            serde_json::from_str(&text).map_err(|source| ScriptError::Json { path: shown.clone(), source })?;
        ScriptProvider::from_json(&format!("script:{shown}"), &value)
            .map_err(|detail| ScriptError::Shape { path: shown, detail })
    }

    /// From an already parsed script; the error is a detail suffix for [`ScriptError::Shape`].
    pub fn from_json(name: &str, script: &Value) -> Result<ScriptProvider, String> {
        let map = script.as_object().ok_or_else(String::new)?;
        let mut queues = HashMap::new();
        for (id, answers) in map {
            let list = answers.as_array().ok_or_else(|| format!(" (`{id}` is not an array)"))?;
            queues.insert(id.clone(), list.iter().cloned().collect());
        }
        Ok(ScriptProvider { name: name.to_string(), queues: Mutex::new(queues) })
    }
}

impl DecisionProvider for ScriptProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        let mut queues = self.queues.lock().map_err(|_| {
            ProviderError::new(&self.name, ErrorCode::Config, format!("{}: script state poisoned", self.name))
        })?;
        let mut answers = Map::new();
        for id in request.questions.ids() {
            if let Some(answer) = queues.get_mut(id).and_then(VecDeque::pop_front) {
                answers.insert(id.to_string(), answer);
            }
        }
        let normalized = normalize(&request.questions, Some(&Value::Object(answers)), Vec::new());
        Ok(Response {
            degraded: normalized.degraded(),
            answers: normalized.answers,
            provider: self.name.clone(),
            model: Some("script".into()),
            latency: started.elapsed(),
            usage: None,
            warnings: normalized.warnings,
        })
    }
}
