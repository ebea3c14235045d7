//! Shared helpers for the host tests: temporary workspaces, deterministic providers and a
//! one-call run of the coding host with its events kept in memory.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use decision_coding_host::generate::EvidenceReport;
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::{DenyAll, Human};
use decision_coding_host::{CODING_CONTRACT, Collaborators, HostError, RunConfig, RunSummary, run_task};
use decision_protocol::ask::WireQuestion;
use decision_runtime::graph::{EventSink, MemorySink, Tee};
use decision_runtime::log::{FsyncPolicy, LogHeader, SessionLog};
use decision_runtime::provider::{DecisionProvider, ErrorCode, ProviderError, Request, Response};
use serde_json::{Map, Value, json};

/// A directory under the system temp dir, removed when dropped (`tempfile`'s, named after the
/// test's tag so that a leftover one says whose it is).
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        TempDir(tempfile::Builder::new().prefix(&format!("decision-host-{tag}-")).tempdir().unwrap())
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// A work directory inside this one, holding `files`.
    pub fn workspace(&self, files: &[(&str, &str)]) -> PathBuf {
        let ws = self.0.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        for (name, body) in files {
            let path = ws.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            std::fs::write(path, body).unwrap();
        }
        ws
    }
}

pub fn noul(p: f64) -> Value {
    json!({"type": "noul", "noul": p})
}

/// A choice of `pick` among the question's offered options, with probability `p`.
pub fn choose(question: &WireQuestion, pick: &str, p: f64) -> Value {
    let offered = question.offered_ids();
    let rest = if offered.len() > 1 { (1.0 - p) / (offered.len() - 1) as f64 } else { 0.0 };
    let probs: Map<String, Value> =
        offered.iter().map(|o| (o.clone(), json!(if o == pick { p } else { rest }))).collect();
    json!({"type": "choice", "choice": pick, "probabilities": probs})
}

/// A score concentrated on `level`.
pub fn level(question: &WireQuestion, level: usize) -> Value {
    let n = question.arity();
    let probs: Map<String, Value> =
        (0..n).map(|k| (k.to_string(), json!(if k == level { 1.0 } else { 0.0 }))).collect();
    json!({"type": "score", "score": level as f64, "probabilities": probs})
}

type Rule = dyn Fn(&str, &WireQuestion, &Map<String, Value>, usize) -> Option<Value> + Send + Sync;

/// Answers from a function of (question id, question, state, how many times this id was asked
/// before); `None` falls back to the heuristic rules.
pub struct Rules {
    rule: Box<Rule>,
    asked: Mutex<Map<String, Value>>,
    fail_on: Option<String>,
}

impl Rules {
    pub fn new(
        rule: impl Fn(&str, &WireQuestion, &Map<String, Value>, usize) -> Option<Value> + Send + Sync + 'static,
    ) -> Self {
        Rules { rule: Box::new(rule), asked: Mutex::new(Map::new()), fail_on: None }
    }

    /// The heuristic, except that every request asking `question` fails (a backend outage).
    pub fn outage_at(question: &str) -> Self {
        Rules { fail_on: Some(question.to_owned()), ..Rules::new(|_, _, _, _| None) }
    }
}

impl DecisionProvider for Rules {
    fn name(&self) -> &str {
        "rules-under-test"
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        if let Some(q) = &self.fail_on
            && request.questions.get(q).is_some()
        {
            return Err(ProviderError::new(
                "rules-under-test",
                ErrorCode::Transport,
                "connection refused (test outage)",
            ));
        }
        let fallback = HeuristicProvider.decide(request)?;
        let state = Map::clone(&request.state);
        let mut answers = Map::new();
        let mut asked = self.asked.lock().unwrap();
        for (id, question) in request.questions.iter() {
            let n = asked.get(id).and_then(Value::as_u64).unwrap_or(0) as usize;
            asked.insert(id.to_owned(), json!(n + 1));
            let answer = (self.rule)(id, question, &state, n).or_else(|| fallback.answers.get(id).cloned());
            if let Some(a) = answer {
                answers.insert(id.to_owned(), a);
            }
        }
        Ok(Response { answers, provider: "rules-under-test".into(), model: Some("test".into()), ..Response::default() })
    }
}

/// A human that answers from a list and records what it was asked.
#[derive(Clone, Default)]
pub struct ScriptedHuman {
    pub approve: bool,
    pub asked: Arc<Mutex<Vec<String>>>,
}

impl Human for ScriptedHuman {
    fn authorize(&mut self, tool: &str, target: &str, _reason: &str) -> bool {
        self.asked.lock().unwrap().push(format!("{tool}({target})"));
        self.approve
    }
}

pub struct Options {
    /// The contract to run; `None` runs the bundled coding contract.
    pub contract: Option<String>,
    pub max_steps: u64,
    pub allow_write: bool,
    pub allow_delete: bool,
    pub human: Box<dyn Human>,
}

impl Default for Options {
    fn default() -> Self {
        Options { contract: None, max_steps: 12, allow_write: false, allow_delete: false, human: Box::new(DenyAll) }
    }
}

pub struct Outcome {
    pub result: Result<RunSummary, HostError>,
    pub events: Vec<Value>,
    pub log: PathBuf,
    pub audit: PathBuf,
}

impl Outcome {
    pub fn summary(&self) -> &RunSummary {
        self.result.as_ref().expect("the run completes")
    }

    pub fn of_type(&self, t: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == t).collect()
    }

    /// `block → action` for every decision, in order.
    pub fn decisions(&self) -> Vec<String> {
        self.of_type("decision")
            .iter()
            .map(|e| format!("{}→{}", e["block"].as_str().unwrap(), e["action"].as_str().unwrap()))
            .collect()
    }

    /// `node --outcome--> to` for every transition, in order.
    pub fn path(&self) -> Vec<String> {
        self.of_type("transition")
            .iter()
            .map(|e| format!("{}:{}", e["node"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
            .collect()
    }
}

/// Run the coding host on the bundled contract with the events kept in memory and written
/// to a session log under `dir`.
pub fn run(
    dir: &TempDir,
    task: &str,
    workdir: &Path,
    provider: Arc<dyn DecisionProvider>,
    options: Options,
) -> Outcome {
    let log_path = dir.path().join("session.jsonl");
    let audit = dir.path().join("audit.jsonl");
    let _ = std::fs::remove_file(&log_path);
    let log = SessionLog::create(
        &log_path,
        &LogHeader { id: "test".into(), created_at_ms: 0, cwd: None },
        FsyncPolicy::Never,
    )
    .unwrap();
    let memory = MemorySink::new();
    let sinks: Vec<Box<dyn EventSink>> = vec![Box::new(log), Box::new(memory.clone())];
    let config = RunConfig {
        max_steps: options.max_steps,
        allow_write: options.allow_write,
        allow_delete: options.allow_delete,
        contract_label: "test".into(),
        ..RunConfig::new(task, workdir, audit.clone())
    };
    let with = Collaborators {
        provider,
        generator: Box::new(EvidenceReport),
        human: options.human,
        sink: Box::new(Tee::new(sinks)),
    };
    let contract = options.contract.unwrap_or_else(|| CODING_CONTRACT.to_string());
    let result = run_task(contract.as_bytes(), &config, with, None);
    Outcome { result, events: memory.events(), log: log_path, audit }
}

/// Replay the log: (mismatches, verified + partial, chain intact).
pub fn replay(log: &Path) -> (u64, u64, bool) {
    let report =
        decision_runtime::log::replay_file(log, &decision_runtime::log::ReplayOptions::default(), &mut |_| {}).unwrap();
    let intact = matches!(report.chain_status(), decision_runtime::log::ChainStatus::Intact);
    (report.mismatch, report.verified + report.partial, intact)
}
