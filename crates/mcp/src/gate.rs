//! The contract and the decision: a `tools/call` → its frame → the provider's answers → the
//! policy's action.
//!
//! The gate decides with the contract's block at the core position `before-call` (the
//! position whose actions are `auto`, `auto_audit` and `ask_human`, besides `escalate`). The
//! contract is checked against the gateway's capabilities ([`CAPABILITIES`]) before the
//! gateway starts: a contract that names a cell, position or action the gateway does not have
//! is refused, never half honoured.

use std::sync::Arc;
use std::time::Duration;

use decision::ask::{CandidateRegistry, Questions, compile_questions};
use decision::check::{Capabilities, CheckOptions, check};
use decision::decide::{Decider, NodeDecision, NodeSpec};
use decision::digest::stringify;
use decision::frame::{Cell, FrameArtifact, FrameSpec, HostCells, Mode, Projections, compile_frame};
use decision::policy::CompiledPolicy;
use decision::provider::DecisionProvider;
use decision::vocab::CellType;
use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::tools::{Annotations, KnownTool};

/// The gateway's capabilities file (`examples/mcp-gateway/capabilities.json`): its one
/// position, its actions and its state cells.
pub const CAPABILITIES: &str = include_str!("../../../examples/mcp-gateway/capabilities.json");

/// The core position the gate decides at.
pub const POSITION: &str = "before-call";

/// The most calls the `calls_so_far` cell lists (the latest ones).
const CALLS_KEPT: usize = 100;

/// Why a contract cannot gate calls.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GateError {
    /// The capabilities file bundled with the gateway does not parse (a build defect).
    #[error("the gateway's capabilities do not parse: {0}")]
    Capabilities(String),
    /// The contract has errors (each with its code and line).
    #[error("{name}: the contract has errors:\n{errors}")]
    Contract {
        /// The contract as it was named.
        name: String,
        /// One line per error: code, line, message.
        errors: String,
    },
    /// No block of the contract decides at `before-call`.
    #[error("{0}: no block decides at `when: before-call`; the gateway has nothing to decide tools/call with")]
    NoGateBlock(String),
    /// The block's frame or questions cannot be compiled for the gateway's cells.
    #[error("{name}: block `{block}`: {why}")]
    Block {
        /// The contract as it was named.
        name: String,
        /// The block.
        block: String,
        /// What is wrong.
        why: String,
    },
}

/// What the gateway knows about one `tools/call` when it decides it.
#[derive(Debug, Clone)]
pub struct CallFacts<'a> {
    /// The tool the agent named.
    pub tool: &'a str,
    /// The call's `arguments` (`Value::Null` when it sent none).
    pub arguments: &'a Value,
    /// The tool as the server listed it; `None` for a tool no listing named.
    pub known: Option<&'a KnownTool>,
    /// The tools called before, oldest first.
    pub calls_so_far: &'a [String],
}

/// A decision on one call.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The decision, as the decider returned it (action, reason, digests, answers).
    pub decision: NodeDecision,
    /// The frame the decision was asked of.
    pub frame: FrameArtifact,
}

/// The contract, compiled once for the gateway's cells, and the decider that answers it.
pub struct Gate {
    block_id: String,
    spec: FrameSpec,
    cells: HostCells,
    projections: Projections,
    questions: Questions,
    policy: CompiledPolicy,
    decider: Decider,
    /// The provider answers from a tool's definition alone (the annotation heuristic: code
    /// rules over the annotations and the pinned definition, never over the arguments), so a
    /// tool the contract refuses on its definition is refused on every call.
    decides_on_definition: bool,
}

/// Why a listed tool is hidden: the rule that refuses every call to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    /// The tool.
    pub tool: String,
    /// The rule the policy reached for its definition.
    pub rule: String,
}

/// The gateway's state cells: what the agent and the server wrote is untrusted; what the
/// gateway itself knows (a changed definition, the calls it relayed) is not.
pub fn host_cells() -> HostCells {
    let cell = |name: &str, ty: CellType, untrusted: bool| Cell { name: name.into(), ty, untrusted };
    HostCells::new(vec![
        cell("tool", CellType::String, true),
        cell("arguments", CellType::String, true),
        cell("description", CellType::String, true),
        cell("read_only", CellType::Bool, true),
        cell("destructive", CellType::Bool, true),
        cell("idempotent", CellType::Bool, true),
        cell("open_world", CellType::Bool, true),
        cell("definition_changed", CellType::Bool, false),
        cell("calls_so_far", CellType::StringList, false),
    ])
}

impl Gate {
    /// Checks `source` (named `name` in messages) against the gateway's capabilities and
    /// compiles its `before-call` block; `provider` answers its questions, each exchange
    /// bounded by `timeout`.
    pub fn new(
        name: &str,
        source: &str,
        provider: Arc<dyn DecisionProvider>,
        timeout: Duration,
    ) -> Result<Gate, GateError> {
        let capabilities = Capabilities::from_json(CAPABILITIES).map_err(|e| GateError::Capabilities(e.to_string()))?;
        let report = check(source.as_bytes(), CheckOptions { capabilities: Some(&capabilities) });
        if report.has_errors() {
            let errors = report
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| format!("  {} line {}: {}", d.code, d.span.line, d.message))
                .collect::<Vec<_>>()
                .join("\n");
            return Err(GateError::Contract { name: name.to_string(), errors });
        }
        let index = report
            .contract
            .blocks
            .iter()
            .position(|b| b.position == POSITION)
            .ok_or_else(|| GateError::NoGateBlock(name.to_string()))?;
        let (Some(block), Some(policy)) = (report.contract.blocks.get(index), report.policies.get(index)) else {
            return Err(GateError::NoGateBlock(name.to_string()));
        };
        let fail = |why: String| GateError::Block { name: name.to_string(), block: block.id.clone(), why };
        let cells = host_cells();
        let projections = Projections::standard();
        let spec = FrameSpec::from_block(&block.id, block, &cells, &projections).map_err(|e| fail(e.to_string()))?;
        let questions = compile_questions(block, &Map::new(), &CandidateRegistry::new())
            .map_err(|e| fail(e.to_string()))?
            .questions;
        Ok(Gate {
            block_id: block.id.clone(),
            spec,
            cells,
            projections,
            questions,
            policy: policy.clone(),
            decider: Decider::new(provider).with_timeout(timeout),
            decides_on_definition: false,
        })
    }

    /// Says that the provider answers from a tool's definition alone, never from a call's
    /// arguments or the calls before it (true of the annotation heuristic, not of a model):
    /// the gateway then hides from `tools/list` every tool the contract refuses on its
    /// definition ([`Gate::forbids`]).
    pub fn deciding_on_definition(mut self) -> Gate {
        self.decides_on_definition = true;
        self
    }

    /// Whether the contract forbids `tool` outright: the provider decides on the definition
    /// alone ([`Gate::deciding_on_definition`]) and the policy refuses it (`escalate`) with no
    /// arguments and no calls before — so it would refuse every call. `None` otherwise,
    /// including for every tool when the provider may weigh a call's arguments.
    pub fn forbids(&self, tool: &str, known: &KnownTool) -> Option<Hidden> {
        if !self.decides_on_definition {
            return None;
        }
        let facts = CallFacts { tool, arguments: &Value::Null, known: Some(known), calls_so_far: &[] };
        let verdict = self.decide(&facts, 0).ok()?;
        (verdict.decision.action == "escalate").then(|| Hidden { tool: tool.to_owned(), rule: verdict.decision.reason })
    }

    /// The id of the block that decides.
    pub fn block_id(&self) -> &str {
        &self.block_id
    }

    /// The name of the provider that answers.
    pub fn provider_name(&self) -> &str {
        self.decider.provider_name()
    }

    /// The host state of a call: every cell the gateway holds.
    pub fn state(facts: &CallFacts<'_>) -> Map<String, Value> {
        let annotations = facts.known.map(|k| k.annotations).unwrap_or_default();
        let Annotations { read_only, destructive, idempotent, open_world } = annotations;
        let arguments = match facts.arguments {
            Value::Null => String::new(),
            other => stringify(other),
        };
        let recent = facts.calls_so_far.len().saturating_sub(CALLS_KEPT);
        let calls: Vec<Value> = facts.calls_so_far.iter().skip(recent).map(|c| json!(c)).collect();
        let mut state = Map::new();
        state.insert("tool".into(), json!(facts.tool));
        state.insert("arguments".into(), json!(arguments));
        state.insert("description".into(), json!(facts.known.map(|k| k.description.as_str()).unwrap_or_default()));
        state.insert("read_only".into(), json!(read_only));
        state.insert("destructive".into(), json!(destructive));
        state.insert("idempotent".into(), json!(idempotent));
        state.insert("open_world".into(), json!(open_world));
        state.insert("definition_changed".into(), json!(facts.known.is_some_and(|k| k.changed)));
        state.insert("calls_so_far".into(), Value::Array(calls));
        state
    }

    /// Decides one call as step `step` of the session. Never fails: a provider failure or an
    /// invalid answer is an `escalate` decision with its reason.
    pub fn decide(&self, facts: &CallFacts<'_>, step: u64) -> Result<Verdict, GateError> {
        let state = Gate::state(facts);
        let frame = compile_frame(&self.spec, &state, &self.cells, &self.projections, Mode::Provenance);
        let node = NodeSpec {
            id: self.block_id.clone(),
            state: frame.state.as_ref().clone(),
            questions: self.questions.clone(),
            policy: self.policy.clone(),
            frame_digest: Some(frame.digest.clone()),
            model: None,
        };
        self.decider.set_step(step);
        let decision = self.decider.decide(&node).map_err(|e| GateError::Block {
            name: String::new(),
            block: self.block_id.clone(),
            why: e.to_string(),
        })?;
        Ok(Verdict { decision, frame })
    }
}
