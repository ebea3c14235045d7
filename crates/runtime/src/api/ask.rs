//! `decision ask`: one block's questions asked of a decision provider, the answers validated
//! and the policy evaluated — the one pipeline the CLI and Python both run ([`prepare`], then
//! [`Prepared::decide`] and [`Prepared::event`]) — and the decision as `--format json` prints
//! it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use decision_core::check::Capabilities;
use decision_core::contract::Block;
use decision_protocol::ask::Questions;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::eval::MarginDocument;
use decision_protocol::ask::QuestionProblem;

use super::error::{Code, Error};
use super::eval::Gated;
use super::frame::{CellSource, check_history};
use crate::decide::{Decider, NodeDecision, NodeSpec};
use crate::log::DecisionEvent;
use crate::provider::{DecisionProvider, WithDeadline};
use decision_protocol::frame::{
    FrameArtifact, FrameSpec, HostCells, Mode, Projections, compile_frame, reference_node_id,
};

/// The block's frame compiled from the host cells with the standard projections (provenance
/// mode), against the reference host's cells unless `host_cells` is given; `None` for a block
/// without `frame:`. A frame that reads what the host does not have is [`Code::Frame`].
pub fn compile(
    block: &Block,
    cells: &Map<String, Value>,
    host_cells: Option<HostCells>,
) -> Result<Option<FrameArtifact>, Error> {
    if block.frame.is_none() {
        return Ok(None);
    }
    let (node, host_cells) = match host_cells {
        Some(host_cells) => (block.id.as_str(), host_cells),
        None => (reference_node_id(&block.id).unwrap_or(&block.id), HostCells::reference()),
    };
    let projections = Projections::standard();
    let spec = FrameSpec::from_block(node, block, &host_cells, &projections)
        .map_err(|e| Error::new(Code::Frame, super::frame::in_block(&block.id, &e)))?;
    Ok(Some(compile_frame(&spec, cells, &host_cells, &projections, Mode::Provenance)))
}

/// What `ask` is asked, by the names every entrance takes (the command line's options,
/// Python's keywords). The inputs — the contract, the state, the candidates a `dynamic:`
/// block offers, a host capability report, the log — each entrance reads its own way.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct AskRequest {
    /// The block to ask.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID", required = true))]
    pub block: Option<String>,
    /// Whose state cells the frame reads: the reference host's 11 cells (with their trust),
    /// or the keys of the state (trusted unless named untrusted).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Cells::Reference))]
    pub cells: Cells,
    /// With cells `state` or a host capability report: a cell that carries untrusted bytes;
    /// may be given more than once.
    #[cfg_attr(feature = "cli", arg(long, value_name = "CELL"))]
    pub untrusted: Vec<String>,
    /// `mock`, `script:FILE`, `replay:LOG`, `systemone` (key in TYPESAFE_API_KEY) or `openai`
    /// (key, if any, in OPENAI_API_KEY).
    #[cfg_attr(feature = "cli", arg(long, value_name = "PROVIDER", required = true))]
    pub provider: Option<String>,
    /// The provider's base URL (System One: without `/v1/systemone`; OpenAI: the API root,
    /// e.g. `…/v1`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub url: Option<String>,
    /// The model to name in the request.
    #[cfg_attr(feature = "cli", arg(long))]
    pub model: Option<String>,
    /// Which OpenAI-compatible endpoint to use.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = OpenAiApi::Chat))]
    pub openai_api: OpenAiApi,
    /// The whole call's time limit in milliseconds, every attempt and retry included.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 30_000))]
    pub timeout_ms: u64,
    /// Threshold overrides, all or nothing: `block.question=value`, each given to `--gate` on
    /// the command line, or as a list of those or an object of `block.question` → value.
    #[cfg_attr(feature = "cli", arg(long = "gate", value_name = "block.question=value"))]
    #[serde(deserialize_with = "super::eval::gate_list")]
    pub gates: Vec<String>,
}

impl Default for AskRequest {
    fn default() -> AskRequest {
        AskRequest {
            block: None,
            cells: Cells::Reference,
            untrusted: Vec::new(),
            provider: None,
            url: None,
            model: None,
            openai_api: OpenAiApi::Chat,
            timeout_ms: 30_000,
            gates: Vec::new(),
        }
    }
}

impl AskRequest {
    /// The block asked for; without one, a usage error.
    pub fn block(&self) -> Result<&str, Error> {
        self.block.as_deref().ok_or_else(|| Error::usage("ask: `block` is required"))
    }

    /// Whose cells the frame reads: see [`cell_source`].
    pub fn cell_source(&self, capabilities: Option<Capabilities>) -> Result<CellSource, Error> {
        cell_source(self.cells, &self.untrusted, capabilities)
    }

    /// The whole call's time limit.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The provider asked for, built by the one provider switch (`ask` has no host, so the
    /// heuristic is not among them); without one, or a name it refuses, a usage error.
    #[cfg(feature = "http")]
    pub fn provider(&self) -> Result<Arc<dyn DecisionProvider>, Error> {
        let name = self.provider.as_deref().ok_or_else(|| Error::usage("ask: `provider` is required"))?;
        let spec = super::provider::parse_without_host(name).map_err(|e| e.at_path("provider"))?;
        let endpoint = super::provider::Endpoint {
            url: self.url.as_deref(),
            model: self.model.as_deref(),
            openai_mode: self.openai_api.mode(),
        };
        Ok(spec.build(&endpoint).map_err(|message| Error::usage(message).at_path("provider"))?.provider)
    }
}

/// Whose state cells a frame reads, as a request names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Cells {
    /// The reference coding host's cells; node ids are the reference's (`loop.isDone`, …).
    Reference,
    /// The keys of the state; the node id is the block id.
    State,
}

impl TryFrom<String> for Cells {
    type Error = String;

    fn try_from(name: String) -> Result<Cells, String> {
        super::named_value("cells", &name, &[("reference", Cells::Reference), ("state", Cells::State)])
    }
}

/// Which OpenAI-compatible endpoint a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OpenAiApi {
    /// `/chat/completions`.
    Chat,
    /// `/completions`.
    Completions,
}

impl OpenAiApi {
    /// The provider's mode.
    #[cfg(feature = "http")]
    pub fn mode(self) -> crate::provider::OpenAiMode {
        match self {
            OpenAiApi::Chat => crate::provider::OpenAiMode::Chat,
            OpenAiApi::Completions => crate::provider::OpenAiMode::Completions,
        }
    }
}

impl TryFrom<String> for OpenAiApi {
    type Error = String;

    fn try_from(name: String) -> Result<OpenAiApi, String> {
        super::named_value("openai_api", &name, &[("chat", OpenAiApi::Chat), ("completions", OpenAiApi::Completions)])
    }
}

/// Whose cells a frame reads: a host capability report's (with `untrusted`), or as `cells`
/// says; `untrusted` names cells of the state, so it needs cells `state` or a report, and a
/// report with cells `state` is a usage error (`ask` and `test` alike).
pub fn cell_source(
    cells: Cells,
    untrusted: &[String],
    capabilities: Option<Capabilities>,
) -> Result<CellSource, Error> {
    let untrusted = untrusted.to_vec();
    match (capabilities, cells) {
        (Some(_), Cells::State) => Err(Error::usage("give `cells` or `capabilities`, not both").at_path("cells")),
        (Some(capabilities), Cells::Reference) => {
            Ok(CellSource::Capabilities { capabilities: Box::new(capabilities), untrusted })
        }
        (None, Cells::Reference) if !untrusted.is_empty() => {
            let message = "`untrusted` names cells of the state: give it with cells `state` (`--cells state`, \
                           `cells=\"state\"`) or with a host capability report (`--capabilities`, `capabilities=`)";
            Err(Error::usage(message).at_path("untrusted"))
        }
        (None, Cells::Reference) => Ok(CellSource::Reference),
        (None, Cells::State) => Ok(CellSource::State { untrusted }),
    }
}

/// One ask, as a front end gathered it.
pub struct Ask<'a> {
    /// The block asked.
    pub block: &'a Block,
    /// Its policy with the request's gate overrides ([`super::eval::gated_policy`]).
    pub policy: &'a Gated,
    /// Its questions as offered ([`super::eval::block_questions`]).
    pub questions: Questions,
    /// The host's state cells.
    pub state: Map<String, Value>,
    /// Whose cells the frame reads.
    pub source: &'a CellSource,
    /// The model to name in the request.
    pub model: Option<String>,
}

/// An ask ready to be made: the node's request and the frame it was compiled with.
pub struct Prepared<'a> {
    spec: NodeSpec,
    artifact: Option<FrameArtifact>,
    policy: &'a Gated,
}

/// Checks the state's `history` and compiles the block's frame for the host the request
/// names. A frame that reads what that host does not have is [`Code::Frame`], its message
/// followed by `names_source`'s words for where the cells came from — each front end names
/// its own flag or argument (`--cells state`, `cells="state"`).
pub fn prepare<'a>(ask: Ask<'a>, names_source: impl Fn(&CellSource) -> String) -> Result<Prepared<'a>, Error> {
    let Ask { block, policy, questions, state, source, model } = ask;
    check_history(&state)?;
    let artifact = compile(block, &state, source.host_cells(&state)).map_err(|mut error| {
        error.message = format!("{} ({})", error.message, names_source(source));
        error
    })?;
    let spec = NodeSpec {
        id: artifact.as_ref().map_or_else(|| block.id.clone(), |a| a.node.clone()),
        state: artifact.as_ref().map_or(state, |a| Map::clone(&a.state)),
        questions,
        policy: policy.policy.clone(),
        frame_digest: artifact.as_ref().map(|a| a.digest.clone()),
        model,
    };
    Ok(Prepared { spec, artifact, policy })
}

impl Prepared<'_> {
    /// Asks `provider`, validates the answers and evaluates the policy. `timeout` bounds the
    /// whole call: every attempt and retry shares one deadline, so none starts (or runs) past
    /// it. A valid decision's reason says what the gate overrides changed. A provider that is
    /// down or answers nonsense is no error: the decision escalates, degraded.
    pub fn decide(&self, provider: Arc<dyn DecisionProvider>, timeout: Duration) -> Result<NodeDecision, Error> {
        let bounded: Arc<dyn DecisionProvider> = Arc::new(WithDeadline::new(provider, Instant::now() + timeout));
        let decider = Decider::new(bounded).with_timeout(timeout);
        let mut decision = decider.decide(&self.spec).map_err(|e| Error::new(Code::Provider, e.to_string()))?;
        if decision.valid {
            decision.reason = self.policy.reason(&decision.reason, decision.rule);
        }
        Ok(decision)
    }

    /// The decision as its session-log record: with the frame it was asked with, and the
    /// gate overrides, so that replay evaluates the policy it was made by.
    pub fn event(&self, decision: &NodeDecision) -> DecisionEvent {
        let mut event = decision.to_event(self.artifact.as_ref().map(FrameArtifact::to_value));
        event.gates.clone_from(&self.policy.overrides);
        event
    }
}

/// `block`, `node`, `provider`, `model`, `valid`, `problems`, `answers` (as received),
/// `action`, `reason`, `rule`, `margin`, `degraded`, `warnings`, `requestDigest`, `latencyMs`.
pub fn document(block: &str, d: &NodeDecision) -> Value {
    let document = AskDocument {
        block,
        node: &d.id,
        provider: &d.provider,
        model: d.model.as_deref(),
        valid: d.valid,
        problems: &d.problems,
        answers: &d.raw_answers,
        action: &d.action,
        reason: &d.reason,
        rule: d.rule,
        margin: d.margin.as_ref().map(MarginDocument::of),
        degraded: d.degraded,
        warnings: &d.warnings,
        request_digest: &d.request_digest,
        latency_ms: d.latency_ms,
    };
    // Strings, numbers and JSON values only: serialising cannot fail.
    serde_json::to_value(document).unwrap_or_default()
}

/// The document `decision ask --format json` prints, member by member in that order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskDocument<'a> {
    /// The block asked.
    pub block: &'a str,
    /// The node id the request was made for.
    pub node: &'a str,
    /// The provider that answered.
    pub provider: &'a str,
    /// The model named in the request, if any.
    pub model: Option<&'a str>,
    /// Whether every answer was valid.
    pub valid: bool,
    /// Each answer's problem (empty when valid).
    pub problems: &'a [QuestionProblem],
    /// The answers as the provider gave them.
    pub answers: &'a Map<String, Value>,
    /// The policy's action.
    pub action: &'a str,
    /// Why.
    pub reason: &'a str,
    /// The index of the rule that fired, if one did.
    pub rule: Option<usize>,
    /// How far the deciding value was from its threshold (`null` without a threshold).
    pub margin: Option<MarginDocument<'a>>,
    /// Whether the provider answered in a degraded way (a fallback, a retry that changed it).
    pub degraded: bool,
    /// What the provider warned of.
    pub warnings: &'a [String],
    /// The request digest.
    pub request_digest: &'a str,
    /// How long the provider took, in milliseconds.
    pub latency_ms: u64,
}

/// What `decision ask` prints without `--format json`.
pub fn text(d: &NodeDecision) -> String {
    let model = d.model.as_deref().unwrap_or("-");
    let mut out = format!("{}: {} (provider {}, model {model}, {} ms)\n", d.id, d.action, d.provider, d.latency_ms);
    out.push_str(&format!("  reason: {}\n", d.reason));
    if let Some(m) = &d.margin {
        out.push_str(&format!(
            "  margin: {:.4} ({} = {} against threshold {})\n",
            m.margin, m.question, m.value, m.threshold
        ));
    }
    for (id, answer) in &d.raw_answers {
        out.push_str(&format!("  answer {id}: {answer}\n"));
    }
    for problem in &d.problems {
        out.push_str(&format!("  invalid: {problem}\n"));
    }
    for warning in &d.warnings {
        out.push_str(&format!("  warning: {warning}\n"));
    }
    out
}

#[cfg(test)]
mod request_tests {
    use super::*;
    use serde_json::json;

    fn read(options: Value) -> Result<AskRequest, Error> {
        super::super::request("ask", options)
    }

    #[test]
    fn an_ask_request_reads_the_names_every_entrance_takes_with_the_command_s_defaults() {
        let none = read(Value::Null).unwrap();
        assert_eq!((none.cells, none.openai_api, none.timeout_ms), (Cells::Reference, OpenAiApi::Chat, 30_000));
        assert_eq!(none.block().unwrap_err().message, "ask: `block` is required");
        let given = read(json!({
            "block": "b", "cells": "state", "untrusted": ["body"], "provider": "mock", "model": "m",
            "openai_api": "completions", "timeout_ms": 500, "gates": {"b.q": 0.5},
        }))
        .unwrap();
        assert_eq!(
            (given.cells, given.openai_api, given.timeout()),
            (Cells::State, OpenAiApi::Completions, Duration::from_millis(500))
        );
        assert_eq!(
            (given.provider.as_deref(), given.model.as_deref(), given.gates.as_slice()),
            (Some("mock"), Some("m"), ["b.q=0.5".to_owned()].as_slice())
        );
        assert!(
            read(json!({"cells": "mine"}))
                .unwrap_err()
                .message
                .contains("unknown cells `mine` (known: reference, state)")
        );
        assert!(read(json!({"openai_api": "bogus"})).unwrap_err().message.contains("unknown openai_api `bogus`"));
    }

    #[test]
    fn untrusted_cells_need_state_cells_or_a_report_and_a_report_refuses_state_cells() {
        let untrusted = ["body".to_owned()];
        assert!(matches!(cell_source(Cells::Reference, &[], None), Ok(CellSource::Reference)));
        assert!(matches!(cell_source(Cells::State, &untrusted, None), Ok(CellSource::State { .. })));
        let refused = cell_source(Cells::Reference, &untrusted, None).unwrap_err();
        assert_eq!((refused.code, refused.path.as_deref()), (Code::Usage, Some("untrusted")));
        let report = Capabilities::reference();
        assert!(matches!(
            cell_source(Cells::Reference, &untrusted, Some(report.clone())),
            Ok(CellSource::Capabilities { .. })
        ));
        assert_eq!(cell_source(Cells::State, &[], Some(report)).unwrap_err().path.as_deref(), Some("cells"));
    }

    #[cfg(feature = "http")]
    #[test]
    fn the_provider_is_required_and_built_by_the_one_switch() {
        assert_eq!(
            read(Value::Null).unwrap().provider().err().map(|e| e.message),
            Some("ask: `provider` is required".to_owned())
        );
        assert!(read(json!({"provider": "mock"})).unwrap().provider().is_ok());
        let heuristic = read(json!({"provider": "heuristic"})).unwrap().provider().err().unwrap();
        assert_eq!((heuristic.code, heuristic.path.as_deref()), (Code::Usage, Some("provider")));
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_command_line_takes_the_same_request() {
        let parse = super::super::command_line::<AskRequest>;
        let parsed = parse(&["ask", "--block", "b", "--provider", "mock", "--cells", "state", "--gate", "b.q=0.5"]);
        let request = parsed.unwrap();
        assert_eq!((request.cells, request.gates.as_slice()), (Cells::State, ["b.q=0.5".to_owned()].as_slice()));
        assert_eq!((request.timeout_ms, request.openai_api), (30_000, OpenAiApi::Chat));
        assert!(parse(&["ask", "--block", "b"]).is_err(), "--provider is required");
    }
}
