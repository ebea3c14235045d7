//! `decision ask`: one block's questions asked of a decision provider, the answers validated
//! and the policy evaluated — the one pipeline the CLI and Python both run ([`prepare`], then
//! [`Prepared::decide`] and [`Prepared::event`]) — and the decision as `--format json` prints
//! it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use decision_core::contract::Block;
use decision_protocol::ask::Questions;
use serde_json::{Map, Value, json};

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

/// One ask, as a front end gathered it.
pub struct Request<'a> {
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
pub fn prepare<'a>(request: Request<'a>, names_source: impl Fn(&CellSource) -> String) -> Result<Prepared<'a>, Error> {
    let Request { block, policy, questions, state, source, model } = request;
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
    json!({
        "block": block,
        "node": d.id,
        "provider": d.provider,
        "model": d.model,
        "valid": d.valid,
        "problems": d.problems,
        "answers": d.raw_answers,
        "action": d.action,
        "reason": d.reason,
        "rule": d.rule,
        "margin": super::eval::margin_json(d.margin.as_ref()),
        "degraded": d.degraded,
        "warnings": d.warnings,
        "requestDigest": d.request_digest,
        "latencyMs": d.latency_ms,
    })
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
