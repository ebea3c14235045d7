//! `replay:LOG`: the answers a session log recorded, served again for the same requests, so
//! a run can be re-executed deterministically against a changed host or contract. A request
//! that was not recorded is a hard miss (an error naming the request); nothing ever falls back
//! to a live model.
//!
//! A request is recognised by its request digest. The digest covers the ids of the nodes
//! that shared the request, the state sent and the questions sent; a provider sees the state
//! and the questions (the host fixes which nodes ask together), so each recorded request is
//! indexed by the SHA-256 of the `JSON.stringify` text of its sent state and sent questions,
//! and serves the answers of every decision recorded under its `requestDigest`. The same
//! request recorded more than once (an identical state asked again) is served in recorded
//! order, each recording once.

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use decision_protocol::digest::{ObjectText, stringify};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::error::{ErrorCode, ProviderError};
use super::{DecisionProvider, Request, Response};
use crate::lines::{DEFAULT_MAX_LINE, Line, LineReader};
use decision_protocol::ask::normalize;

/// Why a session log cannot serve as a replay provider.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReplayLogError {
    /// The log could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The log, as shown.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A decision event lacks what a request is matched by.
    #[error("{path}:{line}: a decision event without `requestDigest`, `state` or `questions`")]
    Incomplete {
        /// The log, as shown.
        path: String,
        /// The event's 1-based line.
        line: u64,
    },
    /// The log records no decision that could be served again.
    #[error("{path}: no decision was recorded with a request digest")]
    Empty {
        /// The log, as shown.
        path: String,
    },
}

/// One recorded request: its digest and the answers every node of it received.
#[derive(Debug, Clone)]
struct Recorded {
    request_digest: String,
    answers: Map<String, Value>,
    model: Option<String>,
}

/// Serves recorded answers by request; a miss is an error.
#[derive(Debug)]
pub struct ReplayProvider {
    name: String,
    requests: Mutex<HashMap<[u8; 32], VecDeque<Recorded>>>,
    recorded: usize,
    /// The first miss, kept so a caller can report it after the run failed closed.
    first_miss: Mutex<Option<String>>,
}

/// The key of a request: SHA-256 over the sent state's and the sent questions' text.
fn request_key(state_text: &str, questions_text: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(state_text.as_bytes());
    hash.update(b"\n");
    hash.update(questions_text.as_bytes());
    hash.finalize().into()
}

impl ReplayProvider {
    /// Read every decision of a session log.
    pub fn from_file(path: &Path) -> Result<ReplayProvider, ReplayLogError> {
        let shown = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| ReplayLogError::Read { path: shown.clone(), source })?;
        ReplayProvider::from_reader(&format!("replay:{shown}"), &shown, file)
    }

    /// Read every decision of a session log from `reader`; `path` names it in errors.
    pub fn from_reader(name: &str, path: &str, reader: impl Read) -> Result<ReplayProvider, ReplayLogError> {
        let read_error = |source| ReplayLogError::Read { path: path.to_string(), source };
        let mut lines = LineReader::new(reader, DEFAULT_MAX_LINE);
        let mut requests: HashMap<[u8; 32], VecDeque<Recorded>> = HashMap::new();
        // The request being collected: its key and record (the nodes of a merged request are
        // recorded one after another under one digest).
        let mut open: Option<([u8; 32], Recorded)> = None;
        let mut recorded = 0;
        while let Some(line) = lines.next_line().map_err(read_error)? {
            let Line::Text { number, bytes, .. } = line else { continue };
            if memchr::memmem::find(bytes, b"\"type\":\"decision\"").is_none() {
                continue;
            }
            let Ok(line_value) = serde_json::from_slice::<Value>(bytes) else { continue };
            let Some(event) = line_value.get("e").filter(|e| e.get("type") == Some(&Value::from("decision"))) else {
                continue;
            };
            let incomplete = || ReplayLogError::Incomplete { path: path.to_string(), line: number };
            let digest = event.get("requestDigest").and_then(Value::as_str).ok_or_else(incomplete)?;
            let answers = event.get("answers").and_then(Value::as_object).cloned().unwrap_or_default();
            if let Some((_, current)) = open.as_mut().filter(|(_, r)| r.request_digest == digest) {
                current.answers.extend(answers);
                continue;
            }
            let state = event.get("state").and_then(Value::as_object).ok_or_else(incomplete)?;
            let questions = event.get("sentQuestions").or_else(|| event.get("questions")).ok_or_else(incomplete)?;
            let key = request_key(ObjectText::new(state).text(), &stringify(questions));
            let model = event.get("model").and_then(Value::as_str).map(str::to_owned);
            if let Some((key, done)) =
                open.replace((key, Recorded { request_digest: digest.to_string(), answers, model }))
            {
                requests.entry(key).or_default().push_back(done);
                recorded += 1;
            }
        }
        if let Some((key, done)) = open {
            requests.entry(key).or_default().push_back(done);
            recorded += 1;
        }
        if recorded == 0 {
            return Err(ReplayLogError::Empty { path: path.to_string() });
        }
        Ok(ReplayProvider {
            name: name.to_string(),
            requests: Mutex::new(requests),
            recorded,
            first_miss: Mutex::new(None),
        })
    }

    /// How many recorded requests the log held.
    pub fn recorded(&self) -> usize {
        self.recorded
    }

    /// The first request that was not recorded, if any (the run failed closed there).
    pub fn first_miss(&self) -> Option<String> {
        self.first_miss.lock().ok().and_then(|miss| miss.clone())
    }

    /// How many recorded requests have not been served yet.
    pub fn unserved(&self) -> usize {
        self.requests.lock().map(|r| r.values().map(VecDeque::len).sum()).unwrap_or(0)
    }
}

impl DecisionProvider for ReplayProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        let state_text = ObjectText::new(&request.state);
        let questions_text = stringify(&request.questions.to_json());
        let key = request_key(state_text.text(), &questions_text);
        let served = {
            let mut requests = self.requests.lock().map_err(|_| {
                ProviderError::new(&self.name, ErrorCode::Config, format!("{}: replay state poisoned", self.name))
            })?;
            requests.get_mut(&key).and_then(VecDeque::pop_front)
        };
        let Some(served) = served else {
            let ids: Vec<&str> = request.questions.ids().collect();
            let message = format!(
                "replay miss: no unserved recorded request has this state and these questions (questions {}; state digest {}); the contract, the host or the state changed since the log was recorded",
                ids.join(", "),
                decision_protocol::digest::digest_bytes(state_text.text().as_bytes()),
            );
            if let Ok(mut first) = self.first_miss.lock() {
                first.get_or_insert_with(|| format!("{}: {message}", self.name));
            }
            return Err(ProviderError::new(&self.name, ErrorCode::Config, message));
        };
        let normalized = normalize(&request.questions, Some(&Value::Object(served.answers)), Vec::new());
        Ok(Response {
            degraded: normalized.degraded(),
            answers: normalized.answers,
            provider: self.name.clone(),
            model: served.model,
            latency: started.elapsed(),
            usage: None,
            warnings: normalized.warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decision_protocol::ask::{Questions, WireQuestion};

    fn questions() -> Questions {
        let mut q = Questions::new();
        q.insert("ok", WireQuestion::Noul { instructions: "Ok?".into(), criteria: None });
        q
    }

    fn log(state: &Value, noul: f64) -> String {
        let event = serde_json::json!({"kind": "event", "run": 0, "e": {
            "type": "decision", "step": 1, "id": "ok", "state": state, "requestDigest": "r1",
            "questions": questions().to_json(), "answers": {"ok": {"noul": noul}}, "action": "continue"}});
        format!("{{\"kind\":\"header\",\"v\":2,\"id\":\"s\"}}\n{event}\n")
    }

    fn request(state: &Value) -> Request {
        Request::new(state.as_object().unwrap().clone(), questions())
    }

    #[test]
    fn serves_the_recorded_answers_once_and_misses_hard() {
        let state = serde_json::json!({"task": "t", "n": 1});
        let provider = ReplayProvider::from_reader("replay:s", "s", log(&state, 0.8).as_bytes()).unwrap();
        assert_eq!(provider.recorded(), 1);
        let response = provider.decide(&request(&state)).unwrap();
        assert_eq!(response.answers["ok"]["noul"], 0.8);
        // Served once: the same request again is a miss, never a guess.
        let again = provider.decide(&request(&state)).unwrap_err();
        assert!(again.message.contains("replay miss"), "{}", again.message);
        let changed = provider_for(&state).decide(&request(&serde_json::json!({"task": "t", "n": 2}))).unwrap_err();
        assert!(changed.message.contains("questions ok"), "{}", changed.message);
    }

    fn provider_for(state: &Value) -> ReplayProvider {
        ReplayProvider::from_reader("replay:s", "s", log(state, 0.8).as_bytes()).unwrap()
    }

    #[test]
    fn a_log_without_decisions_is_refused() {
        let error = ReplayProvider::from_reader("replay:s", "s", "{\"kind\":\"header\"}\n".as_bytes()).unwrap_err();
        assert!(matches!(error, ReplayLogError::Empty { .. }));
    }
}
