//! The System One protocol (runtime.md §1.4): `POST {base}/v1/systemone` with
//! `{model, state, questions}`, a bearer key, answers normalised per §1.3.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::{ErrorCode, ProviderError};
use super::http::{JsonClient, Reply};
use super::secret::ApiKey;
use super::{DecisionProvider, Request, Response, Usage};
use decision_protocol::ask::{malformed_answer, normalize};

/// Replies larger than this are refused (a decision reply is a few kilobytes).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// A System One decision model over HTTP.
#[derive(Debug, Clone)]
pub struct SystemOneProvider {
    name: String,
    endpoint: String,
    key: Option<ApiKey>,
    default_model: Option<String>,
    client: JsonClient,
}

impl SystemOneProvider {
    /// The official endpoint.
    pub const OFFICIAL_URL: &'static str = "https://api.typesafe.ai";
    /// The environment variable holding the bearer key.
    pub const KEY_VARIABLE: &'static str = "TYPESAFE_API_KEY";
    /// The model the reference thresholds were tuned against.
    pub const PINNED_MODEL: &'static str = "jev-1.13.0";

    /// A provider for `base_url` (trailing slashes stripped), no key, no default model.
    pub fn new(base_url: &str) -> SystemOneProvider {
        let base = base_url.trim_end_matches('/');
        let host = base.split("://").nth(1).unwrap_or(base).split('/').next().unwrap_or(base);
        let name = if base == Self::OFFICIAL_URL { "systemone".to_string() } else { format!("systemone@{host}") };
        SystemOneProvider {
            name,
            endpoint: format!("{base}/v1/systemone"),
            key: None,
            default_model: None,
            client: JsonClient::new(DEFAULT_MAX_RESPONSE_BYTES, true),
        }
    }

    /// The bearer key sent with every request; `None` sends none.
    pub fn with_key(mut self, key: Option<ApiKey>) -> Self {
        self.key = key;
        self
    }

    /// The model named in requests that name none; `None` lets the server choose.
    pub fn with_default_model(mut self, model: Option<String>) -> Self {
        self.default_model = model;
        self
    }

    /// The name used in logs and records, in place of `systemone` or `systemone@HOST`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Refuse replies larger than `bytes`; `reuse_connections = false` opens a new
    /// connection per request (for measurement; reuse is the default).
    pub fn with_transport(mut self, max_response_bytes: u64, reuse_connections: bool) -> Self {
        self.client = JsonClient::new(max_response_bytes, reuse_connections);
        self
    }

    /// The URL requests are posted to (`{base}/v1/systemone`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

impl DecisionProvider for SystemOneProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        let body = request.wire_body(self.default_model.as_deref());
        let timeout = request.time_left_for(&self.name)?;
        let reply = self.client.post(&self.name, &self.endpoint, self.key.as_ref(), &body, timeout)?;
        parse_reply(&self.name, request, &reply, started.elapsed())
    }
}

/// Read `{answers, model?, usage?, warnings?, degraded?}`. A duplicate key inside an answer
/// (or two answers to one question) makes that answer malformed; a duplicate key anywhere
/// else makes the whole reply unusable.
fn parse_reply(who: &str, request: &Request, reply: &Reply, latency: Duration) -> Result<Response, ProviderError> {
    let Reply { value: reply, duplicates } = reply;
    let mut malformed: Vec<(&str, String)> = Vec::new();
    for duplicate in duplicates {
        let question = match duplicate.at.as_slice() {
            [answers] if answers == "answers" => Some(duplicate.key.as_str()),
            [answers, question, ..] if answers == "answers" => Some(question.as_str()),
            _ => None,
        };
        match question {
            Some(question) => malformed.push((question, format!("duplicate key `{}` in the answer", duplicate.key))),
            None => {
                return Err(ProviderError::new(
                    who,
                    ErrorCode::EmptyResponse,
                    format!("{who} replied with the key `{}` twice in one object", duplicate.key),
                ));
            }
        }
    }
    let answers = reply.get("answers").filter(|a| a.is_object()).ok_or_else(|| {
        ProviderError::new(who, ErrorCode::EmptyResponse, format!("{who} replied without an `answers` object"))
    })?;
    let server_warnings = reply
        .get("warnings")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let mut normalized = normalize(&request.questions, Some(answers), server_warnings);
    for (question, problem) in malformed {
        normalized.answers.insert(question.to_owned(), malformed_answer(problem));
    }
    Ok(Response {
        degraded: normalized.degraded() || reply.get("degraded") == Some(&Value::Bool(true)),
        answers: normalized.answers,
        provider: who.to_string(),
        model: reply.get("model").and_then(Value::as_str).map(str::to_string),
        latency,
        usage: Usage::from_json(reply.get("usage")),
        warnings: normalized.warnings,
    })
}
