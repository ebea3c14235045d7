//! Level-2 execution: walk the host's graph from a node, decide each decision node from the
//! current state (frames, dynamic candidates, one request per node), dispatch the action to
//! its handler, follow the outcome's edge, and record every decision and transition with the
//! invocation's identity (node, step, state version, visit). An outcome with no edge is
//! refused; so is an action the node's position does not handle.

use std::collections::BTreeMap;
use std::sync::Arc;

use decision_core::check::Capabilities;
use decision_core::contract::Contract;
use decision_core::diag::Diagnostic;
use decision_core::policy::CompiledPolicy;
use decision_core::vocab::{ANY_POSITION_ACTION, action_semantics};
use serde_json::{Map, Value, json};
use thiserror::Error;

use super::HandlerError;
use super::adapter::{CodeDecision, GraphContext, HostAdapter};
use super::check::{StartRefusal, decided_blocks, start_check};
use super::model::{Dispatch, Graph, GraphShape, Invocation, NodeKind, Step};
use super::sink::SinkError;
use crate::decide::{CODE_PROVIDER, DecideError, Decider, NodeDecision, NodeSpecRef, WireJson};
use crate::log::{GraphEvent, NodeDecisionEvent};
use crate::provider::DecisionProvider;
use decision_protocol::ask::{QuestionError, Questions, compile_questions};
use decision_protocol::frame::{FrameArtifact, FrameSpec, HostCells, Mode, compile_frame};

/// One recorded transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The node the transition leaves.
    pub node: String,
    /// The step the node ran in.
    pub step: u64,
    /// The state version the node saw (hosts bump it when their state changes).
    pub state_version: u64,
    /// How many times this node had been entered in the run, this visit included (1-based).
    pub visit: u64,
    /// The dispatched action (decision nodes only; `None` for host phases).
    pub action: Option<String>,
    /// The outcome label the handler produced, which picked the edge.
    pub label: String,
    /// The node or terminal state the edge leads to.
    pub to: String,
}

/// Where a run is, or where to continue one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The node to run next (or the one the run stopped at).
    pub node: String,
    /// The last step number used (entering a step-starting node adds one).
    pub step: u64,
    /// The host's state version at this point.
    pub state_version: u64,
}

/// The event type of a decision host code made (see [`super::CodeDecision`]); it is not a
/// `decision` record, since no request was sent.
pub const CODE_DECISION_EVENT: &str = "decision:code";

/// Decision accounting: latency is counted per request, not per decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecisionStats {
    /// Decisions the model's answers were asked for.
    pub decisions: u64,
    /// Decisions host code made instead (no request).
    pub code_decisions: u64,
    /// Requests sent to the provider (several blocks of one node share one request).
    pub requests: u64,
    /// Milliseconds spent waiting on the provider, summed per request.
    pub decision_ms: u64,
    /// Transitions followed.
    pub transitions: u64,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// The terminal state the run reached.
    pub terminal: String,
    /// The last step number used.
    pub step: u64,
    /// The host's state version at the end.
    pub state_version: u64,
    /// Every transition followed, in order.
    pub transitions: Vec<Transition>,
    /// What the run's decisions cost.
    pub stats: DecisionStats,
}

/// Why a run stopped before a terminal state. Each names the node it stopped at; every
/// event up to it has been recorded.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RunError {
    /// The node's handler produced an outcome no edge of the graph consumes: the run refuses
    /// it rather than guess (a `transition` event with `refused` was recorded).
    #[error("node `{node}` (step {step}) produced outcome `{label}`, and no transition consumes it")]
    NoConsumer {
        /// The node that produced the outcome.
        node: String,
        /// The step it ran in.
        step: u64,
        /// The outcome label nothing consumes.
        label: String,
    },
    /// The policy chose an action this host registered no handler for.
    #[error("node `{node}`: action `{action}` has no handler in this host")]
    Unhandled {
        /// The decision node.
        node: String,
        /// The action without a handler.
        action: String,
    },
    /// The action is not one the node's position (its `when:`) can take (`vocab`'s action
    /// semantics).
    #[error("node `{node}`: position `{position}` does not handle action `{action}`")]
    NotAtPosition {
        /// The decision node.
        node: String,
        /// The block's position.
        position: String,
        /// The action the position does not take.
        action: String,
    },
    /// The action needs evidence and the node's evidence provider gave none.
    #[error("node `{node}`: action `{action}` needs evidence and none is available")]
    NoEvidence {
        /// The decision node.
        node: String,
        /// The action that needs evidence.
        action: String,
    },
    /// A `dynamic:` block's choice questions got no candidates from the host, so they cannot
    /// be asked.
    #[error("node `{node}`: no candidates for question(s) {questions:?}; the node cannot be asked")]
    NoCandidates {
        /// The decision node.
        node: String,
        /// The question ids left without options.
        questions: Vec<String>,
    },
    /// The node's questions could not be compiled from the block and the host's candidates.
    #[error("node `{node}`: {source}")]
    Questions {
        /// The decision node.
        node: String,
        /// What was wrong with the questions.
        source: QuestionError,
    },
    /// The node's blocks cannot share one request (see [`DecideError`]).
    #[error("node `{node}`: {source}")]
    Wiring {
        /// The decision node.
        node: String,
        /// Why the blocks cannot share a request.
        source: DecideError,
    },
    /// A handler or host phase failed.
    #[error("node `{node}`: {source}")]
    Handler {
        /// The node whose handler failed.
        node: String,
        /// The handler's own error.
        source: HandlerError,
    },
    /// Host code decided an action ([`super::CodeDecision`]) that the block's policy can
    /// never take.
    #[error("node `{node}`: code decided `{action}`, which the policy of block `{block}` cannot take")]
    CodeDecision {
        /// The decision node.
        node: String,
        /// The block code decided for.
        block: String,
        /// The action the policy cannot take.
        action: String,
    },
    /// The node to run is not in the graph.
    #[error("`{0}` is not a node of the graph")]
    UnknownNode(String),
    /// The run followed more transitions than its ceiling
    /// ([`GraphHost::with_max_transitions`]).
    #[error("more than {0} transitions: the run was stopped")]
    TooManyTransitions(u64),
    /// The event sink could not record an event: a host that cannot record must stop.
    #[error(transparent)]
    Sink(#[from] SinkError),
}

/// What a contract block needs at every step, made once at start: its node id, position,
/// frame spec, compiled policy and (when static) its questions.
struct Prepared {
    node_id: String,
    position: String,
    spec: Option<FrameSpec>,
    policy: CompiledPolicy,
    /// The questions of a block without `dynamic:`, compiled once: they depend on nothing
    /// that changes from step to step.
    questions: Option<(Arc<Questions>, WireJson)>,
}

/// A host that passed its start check and may dispatch.
pub struct GraphHost<C> {
    adapter: HostAdapter<C>,
    graph: Arc<Graph<C>>,
    contract: Contract,
    warnings: Vec<Diagnostic>,
    prepared: BTreeMap<String, Prepared>,
    cells: HostCells,
    decider: Decider,
    mode: Mode,
    max_transitions: u64,
}

/// The default ceiling on transitions in one run (a guard against a graph that never ends).
pub const DEFAULT_MAX_TRANSITIONS: u64 = 10_000;

impl<C: GraphContext> GraphHost<C> {
    /// Check the contract against the registrations and the graph; refuse to start on any
    /// problem, listing them all.
    pub fn start(
        adapter: HostAdapter<C>,
        graph: Graph<C>,
        source: &[u8],
        provider: Arc<dyn DecisionProvider>,
    ) -> Result<Self, StartRefusal> {
        let (report, problems) = start_check(&adapter, &graph, source);
        if !problems.is_empty() {
            return Err(StartRefusal { problems });
        }
        let cells = adapter.host_cells();
        let mut prepared = BTreeMap::new();
        for id in decided_blocks(&graph) {
            let Some((index, block)) = report.contract.blocks.iter().enumerate().find(|(_, b)| b.id == id) else {
                continue;
            };
            let node_id = adapter.node_id_of(&id);
            let spec = match block.frame {
                Some(_) => FrameSpec::from_block(&node_id, block, &cells, &adapter.projections).ok(),
                None => None,
            };
            let policy = report.policies.get(index).cloned().unwrap_or_default();
            let questions = match block.dynamic {
                Some(_) => None,
                None => compile_questions(block, &Map::new(), &adapter.candidates)
                    .ok()
                    .filter(|q| q.not_asked.is_empty())
                    .map(|q| {
                        let json = WireJson::new(q.questions.to_json());
                        (Arc::new(q.questions), json)
                    }),
            };
            prepared
                .insert(id.clone(), Prepared { node_id, position: block.position.clone(), spec, policy, questions });
        }
        let warnings = report.diagnostics.iter().filter(|d| !d.is_error()).cloned().collect();
        Ok(GraphHost {
            adapter,
            graph: Arc::new(graph),
            contract: report.contract,
            warnings,
            prepared,
            cells,
            decider: Decider::new(provider),
            mode: Mode::default(),
            max_transitions: DEFAULT_MAX_TRANSITIONS,
        })
    }

    /// Frames in reference mode (byte-identical to the reference) instead of provenance mode.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The ceiling on transitions in one run (default [`DEFAULT_MAX_TRANSITIONS`]); a run that
    /// passes it stops with [`RunError::TooManyTransitions`].
    pub fn with_max_transitions(mut self, max: u64) -> Self {
        self.max_transitions = max;
        self
    }

    /// Replace the decider (e.g. to set a timeout or a model).
    pub fn with_decider(mut self, decider: Decider) -> Self {
        self.decider = decider;
        self
    }

    /// The checked contract the host runs.
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The compiled policy the host decides `block` with, when the graph decides it.
    pub fn policy(&self, block: &str) -> Option<&CompiledPolicy> {
        self.prepared.get(block).map(|p| &p.policy)
    }

    /// The contract's warnings (errors would have refused the start).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The graph's nodes and edges, without their behaviour.
    pub fn shape(&self) -> &GraphShape {
        &self.graph.shape
    }

    /// The registrations the host started with.
    pub fn adapter(&self) -> &HostAdapter<C> {
        &self.adapter
    }

    /// What this host supports (cells, projections, actions, evidence) for the blocks its
    /// graph decides, as the contract checker takes it.
    pub fn capabilities(&self) -> Capabilities {
        self.adapter.capabilities(&decided_blocks(&self.graph))
    }

    /// The decision provider's name.
    pub fn provider_name(&self) -> &str {
        self.decider.provider_name()
    }

    /// Record a host event through the registered sink.
    pub fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), SinkError> {
        match self.adapter.sink.as_mut() {
            Some(sink) => sink.emit(event_type, payload),
            None => Ok(()),
        }
    }

    /// Record one of the executor's own events through the registered sink.
    fn emit_graph(&mut self, event: GraphEvent<'_>) -> Result<(), SinkError> {
        match self.adapter.sink.as_mut() {
            Some(sink) => sink.emit_graph(event),
            None => Ok(()),
        }
    }

    /// Make the events recorded so far durable through the registered sink
    /// ([`super::EventSink::commit`]).
    pub fn commit(&mut self) -> Result<(), SinkError> {
        match self.adapter.sink.as_mut() {
            Some(sink) => sink.commit(),
            None => Ok(()),
        }
    }

    /// End the run through the registered sink ([`super::EventSink::seal`]): a session log writes
    /// its seal and returns its head.
    pub fn seal(&mut self) -> Result<Option<crate::log::LogHead>, SinkError> {
        match self.adapter.sink.as_mut() {
            Some(sink) => sink.seal(),
            None => Ok(None),
        }
    }

    /// Run from the start node.
    pub fn run(&mut self, ctx: &mut C) -> Result<RunOutcome, RunError> {
        let start = Cursor { node: self.graph.shape.start.clone(), step: 0, state_version: 0 };
        self.run_from(ctx, start)
    }

    /// Run from `cursor` until a terminal state.
    pub fn run_from(&mut self, ctx: &mut C, cursor: Cursor) -> Result<RunOutcome, RunError> {
        // The graph is shared, so its nodes are read in place while the host runs them.
        let graph = Arc::clone(&self.graph);
        let mut current = cursor.node;
        let mut step = cursor.step;
        let mut version = cursor.state_version;
        let mut visits: BTreeMap<String, u64> = BTreeMap::new();
        let mut transitions = Vec::new();
        let mut stats = DecisionStats::default();
        loop {
            if graph.shape.terminals.contains(&current) && graph.shape.node(&current).is_none() {
                stats.transitions = transitions.len() as u64;
                self.commit()?;
                return Ok(RunOutcome { terminal: current, step, state_version: version, transitions, stats });
            }
            if transitions.len() as u64 >= self.max_transitions {
                return Err(RunError::TooManyTransitions(self.max_transitions));
            }
            let node = graph.shape.node(&current).ok_or_else(|| RunError::UnknownNode(current.clone()))?;
            if node.starts_step {
                // The step boundary: the finished step's events are committed together.
                self.commit()?;
                step += 1;
            }
            let visit = match visits.get_mut(node.id.as_str()) {
                Some(visit) => {
                    *visit += 1;
                    *visit
                }
                None => {
                    visits.insert(node.id.clone(), 1);
                    1
                }
            };
            let invocation = Invocation { node: node.id.clone(), step, state_version: version, visit };
            let (action, label) = match &node.kind {
                NodeKind::Decide { blocks } => {
                    let (action, label) =
                        self.decide_node(ctx, &invocation, blocks, node.evidence.as_deref(), &mut stats)?;
                    (Some(action), label)
                }
                NodeKind::Host => {
                    let body = graph.phase_body(&node.id).ok_or_else(|| RunError::UnknownNode(node.id.clone()))?;
                    let sink = self.adapter.sink.as_deref_mut().ok_or_else(|| no_sink(&node.id))?;
                    let label = body(ctx, &mut Step { invocation: &invocation, sink })
                        .map_err(|source| RunError::Handler { node: node.id.clone(), source })?;
                    (None, label)
                }
            };
            version += 1;
            let to = node.edges.iter().find(|(l, _)| *l == label).map(|(_, t)| t.as_str());
            self.emit_graph(GraphEvent::Transition {
                node: &invocation.node,
                step: invocation.step,
                state_version: invocation.state_version,
                visit: invocation.visit,
                action: action.as_deref(),
                outcome: &label,
                to,
            })?;
            let Some(to) = to else {
                return Err(RunError::NoConsumer { node: invocation.node, step, label });
            };
            transitions.push(Transition {
                node: invocation.node,
                step,
                state_version: invocation.state_version,
                visit: invocation.visit,
                action,
                label,
                to: to.to_owned(),
            });
            current = to.to_owned();
        }
    }

    fn decide_node(
        &mut self,
        ctx: &mut C,
        invocation: &Invocation,
        blocks: &[String],
        evidence_name: Option<&str>,
        stats: &mut DecisionStats,
    ) -> Result<(String, String), RunError> {
        let node = invocation.node.as_str();
        if let Some(code) = ctx.code_decision(invocation) {
            return self.decide_by_code(ctx, invocation, blocks, evidence_name, code, stats);
        }
        let mut artifacts: Vec<Option<FrameArtifact>> = Vec::with_capacity(blocks.len());
        let mut compiled = Vec::with_capacity(blocks.len());
        for id in blocks {
            let prepared = self.prepared.get(id).ok_or_else(|| RunError::UnknownNode(id.clone()))?;
            let artifact = prepared
                .spec
                .as_ref()
                .map(|spec| compile_frame(spec, ctx.cells(), &self.cells, &self.adapter.projections, self.mode));
            let (questions, questions_json) = match &prepared.questions {
                Some((questions, json)) => (Arc::clone(questions), Some(json.clone())),
                None => {
                    let block = self
                        .contract
                        .blocks
                        .iter()
                        .find(|b| &b.id == id)
                        .ok_or_else(|| RunError::UnknownNode(id.clone()))?;
                    let questions = compile_questions(block, ctx.cells(), &self.adapter.candidates)
                        .map_err(|source| RunError::Questions { node: node.to_owned(), source })?;
                    if !questions.not_asked.is_empty() {
                        return Err(RunError::NoCandidates { node: node.to_owned(), questions: questions.not_asked });
                    }
                    (Arc::new(questions.questions), None)
                }
            };
            artifacts.push(artifact);
            compiled.push((prepared, questions, questions_json));
        }
        // The specs borrow the artifacts' states, so the frames are never copied on their way
        // to the provider.
        let empty = Map::new();
        let specs: Vec<NodeSpecRef<'_>> = compiled
            .into_iter()
            .zip(&artifacts)
            .map(|((prepared, questions, questions_json), artifact)| NodeSpecRef {
                id: &prepared.node_id,
                state: artifact.as_ref().map_or(&empty, |a| &a.state),
                shared_state: artifact.as_ref().map(|a| Arc::clone(&a.state)),
                questions,
                policy: &prepared.policy,
                frame_digest: artifact.as_ref().map(|a| a.digest.as_str()),
                model: None,
                questions_json,
            })
            .collect();
        let phase_id = specs.iter().map(|s| s.id).collect::<Vec<_>>().join(" + ");
        // The sink is reached through its field: the specs borrow the prepared blocks.
        if let Some(sink) = self.adapter.sink.as_mut() {
            sink.emit_graph(GraphEvent::Decide { step: invocation.step, id: &phase_id })?;
        }
        self.decider.set_step(invocation.step);
        let decisions = match self.decider.decide_refs(&specs) {
            Ok(decisions) => {
                stats.requests += 1;
                stats.decision_ms += decisions.first().map_or(0, |d| d.latency_ms);
                decisions
            }
            // Frames that share a key but bound it differently (e.g. a list cut at 15 in one
            // block and at 20 in the other) cannot share one state once the list is longer
            // than the smaller bound. The reference throws here; this runtime asks each block
            // in its own request instead, and records that it did.
            Err(DecideError::StateConflict { key, first, second }) => {
                if let Some(sink) = self.adapter.sink.as_mut() {
                    sink.emit(
                        "request:split",
                        obj(json!({"step": invocation.step, "node": node, "key": key, "first": first, "second": second,
                            "reason": "the blocks' frames disagree on a shared key, so each is asked in its own request"})),
                    )?;
                }
                let mut out = Vec::with_capacity(specs.len());
                for spec in &specs {
                    let decision = self
                        .decider
                        .decide_refs(std::slice::from_ref(spec))
                        .map_err(|source| RunError::Wiring { node: node.to_owned(), source })?
                        .pop()
                        .ok_or_else(|| RunError::Wiring { node: node.to_owned(), source: DecideError::NoNodes })?;
                    stats.requests += 1;
                    stats.decision_ms += decision.latency_ms;
                    out.push(decision);
                }
                out
            }
            Err(source) => return Err(RunError::Wiring { node: node.to_owned(), source }),
        };
        drop(specs);
        stats.decisions += decisions.len() as u64;
        let first = decisions.first().ok_or_else(|| RunError::UnknownNode(node.to_owned()))?;
        let action = first.action.clone();
        let evidence = self.evidence_for(ctx, node, &action, evidence_name)?;
        // The artifacts end here: their frames move into the records.
        if let Some(sink) = self.adapter.sink.as_deref_mut() {
            for (i, (decision, frame)) in decisions.iter().zip(artifacts).enumerate() {
                let block = blocks.get(i).map_or("", String::as_str);
                sink.emit_decision(NodeDecisionEvent {
                    decision,
                    frame,
                    node: &invocation.node,
                    block,
                    position: self.prepared.get(block).map_or("", |p| p.position.as_str()),
                    state_version: invocation.state_version,
                    evidence: evidence.as_ref().filter(|_| i == 0),
                })?;
            }
        }
        self.dispatch(ctx, invocation, blocks, action, &decisions, evidence.as_ref())
    }

    /// A node host code has decided: nothing is sent, the decision is recorded as
    /// [`CODE_DECISION_EVENT`] with what code decided from, and its action is dispatched.
    fn decide_by_code(
        &mut self,
        ctx: &mut C,
        invocation: &Invocation,
        blocks: &[String],
        evidence_name: Option<&str>,
        code: CodeDecision,
        stats: &mut DecisionStats,
    ) -> Result<(String, String), RunError> {
        let node = invocation.node.as_str();
        let block = blocks.first().map_or("", String::as_str);
        let prepared = self.prepared.get(block).ok_or_else(|| RunError::UnknownNode(block.to_owned()))?;
        let allowed =
            code.action == ANY_POSITION_ACTION || prepared.policy.rules.iter().any(|r| r.action == code.action);
        if !allowed {
            return Err(RunError::CodeDecision { node: node.to_owned(), block: block.to_owned(), action: code.action });
        }
        let decision = NodeDecision::by_code(&prepared.node_id, invocation.step, &code.action, &code.reason);
        stats.code_decisions += 1;
        let evidence = self.evidence_for(ctx, node, &code.action, evidence_name)?;
        let mut event = Map::new();
        event.insert("step".into(), json!(invocation.step));
        event.insert("id".into(), json!(decision.id));
        event.insert("action".into(), json!(code.action));
        event.insert("reason".into(), json!(code.reason));
        event.insert("decidedBy".into(), json!(CODE_PROVIDER));
        event.insert("basis".into(), code.evidence);
        self.locate(&mut event, invocation, block);
        if let Some(evidence) = &evidence {
            event.insert("evidence".into(), evidence.clone());
        }
        self.emit(CODE_DECISION_EVENT, event)?;
        self.dispatch(ctx, invocation, blocks, code.action, std::slice::from_ref(&decision), evidence.as_ref())
    }

    /// Evidence is gathered before the decision is recorded, so the record carries it.
    fn evidence_for(
        &self,
        ctx: &C,
        node: &str,
        action: &str,
        evidence_name: Option<&str>,
    ) -> Result<Option<Value>, RunError> {
        let needs_evidence = action_semantics(action).is_some_and(|s| s.needs_evidence);
        match (needs_evidence, evidence_name.and_then(|n| self.adapter.evidence_provider(n))) {
            (true, Some(provider)) => Ok(Some(provider(ctx))),
            (true, None) => Err(RunError::NoEvidence { node: node.to_owned(), action: action.to_owned() }),
            (false, _) => Ok(None),
        }
    }

    /// The invocation's identity on a decision record.
    fn locate(&self, event: &mut Map<String, Value>, invocation: &Invocation, block: &str) {
        let position = self.prepared.get(block).map_or("", |p| p.position.as_str());
        event.insert("node".into(), json!(invocation.node));
        event.insert("block".into(), json!(block));
        event.insert("position".into(), json!(position));
        event.insert("stateVersion".into(), json!(invocation.state_version));
    }

    /// Hand the first block's action to its handler, if the node's position handles it.
    fn dispatch(
        &mut self,
        ctx: &mut C,
        invocation: &Invocation,
        blocks: &[String],
        action: String,
        decisions: &[NodeDecision],
        evidence: Option<&Value>,
    ) -> Result<(String, String), RunError> {
        let node = invocation.node.as_str();
        let position =
            blocks.first().and_then(|b| self.prepared.get(b)).map(|p| p.position.clone()).unwrap_or_default();
        let handled = self.adapter.positions.get(&position).is_some_and(|a| a.contains(&action));
        if !handled && action != ANY_POSITION_ACTION {
            return Err(RunError::NotAtPosition { node: node.to_owned(), position, action });
        }
        let HostAdapter { actions, sink, .. } = &mut self.adapter;
        let handler = actions
            .iter()
            .find(|(a, _)| *a == action)
            .map(|(_, h)| h)
            .ok_or_else(|| RunError::Unhandled { node: node.to_owned(), action: action.clone() })?;
        let sink = sink.as_deref_mut().ok_or_else(|| no_sink(node))?;
        let mut dispatch = Dispatch { invocation, position: &position, action: &action, decisions, evidence, sink };
        let label =
            handler(ctx, &mut dispatch).map_err(|source| RunError::Handler { node: node.to_owned(), source })?;
        Ok((action, label))
    }
}

fn no_sink(node: &str) -> RunError {
    RunError::Handler { node: node.to_owned(), source: HandlerError("no event sink".into()) }
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The `decision` event of one node (runtime.md §4.1), without its `type`.
pub fn decision_event(d: &NodeDecision, frame: Option<&FrameArtifact>) -> Map<String, Value> {
    let mut map = obj(d.to_event(frame.map(FrameArtifact::to_value)).to_value());
    map.shift_remove("type");
    map
}
