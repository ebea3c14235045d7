//! The host adapter: exactly the seven registrations of the contract (seed §2) — state
//! cells, projections, dynamic candidate providers with their reads, position handlers,
//! action handlers, evidence providers and the event sink. The registrations are the only
//! place names acquire behaviour, and the capabilities the checker uses are built from them,
//! so what is checked is what will run.

use std::collections::BTreeMap;

use decision_core::check::Capabilities;
use decision_core::vocab::CellType;
use serde_json::Value;

use super::HandlerError;
use super::model::{Dispatch, Invocation};
use super::sink::EventSink;
use decision_protocol::ask::{CandidateProvider, CandidateRegistry};
use decision_protocol::frame::projections::HostState;
use decision_protocol::frame::{Cell, HostCells, ProjectionError, Projections};

/// What an action does at the node that decided it; returns the outcome label to follow.
pub type ActionHandler<C> = Box<dyn Fn(&mut C, &mut Dispatch<'_>) -> Result<String, HandlerError> + Send + Sync>;
/// The facts an action that needs evidence is checked against.
pub type EvidenceProvider<C> = Box<dyn Fn(&C) -> Value + Send + Sync>;

/// The host's run-time state, as frames and candidate providers read it.
pub trait GraphContext {
    /// The state cells by name; a missing key is an unset cell.
    fn cells(&self) -> &HostState;

    /// A decision host code has already made for this invocation of a decision node (e.g. a
    /// tool result that broke its deliverable contract has decided that the step failed). The
    /// model is then not asked: the decision is recorded as made by code and its action is
    /// dispatched like any other. It applies to the node's first block. Default: none.
    fn code_decision(&mut self, _invocation: &Invocation) -> Option<CodeDecision> {
        None
    }
}

/// A decision made by host code instead of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeDecision {
    /// The action to dispatch: one the block's policy can take (or `escalate`).
    pub action: String,
    /// Why, in words: recorded, and the handler's decision carries it as its reason.
    pub reason: String,
    /// What code decided from (e.g. the tool outcome), recorded with the decision.
    pub evidence: Value,
}

/// The seven registrations.
pub struct HostAdapter<C> {
    pub(crate) name: String,
    pub(crate) cells: Vec<Cell>,
    pub(crate) projections: Projections,
    pub(crate) candidates: CandidateRegistry,
    pub(crate) positions: BTreeMap<String, Vec<String>>,
    pub(crate) actions: Vec<(String, ActionHandler<C>)>,
    pub(crate) evidence: Vec<(String, EvidenceProvider<C>)>,
    pub(crate) sink: Option<Box<dyn EventSink>>,
    /// The question ids the host reads from a block's answers.
    pub(crate) reads_questions: BTreeMap<String, Vec<String>>,
    /// Every frame must account for every cell (read or excluded with a reason).
    pub(crate) require_coverage: bool,
    /// The node id a block's frames and records carry (defaults to the block id).
    pub(crate) node_ids: BTreeMap<String, String>,
}

impl<C> HostAdapter<C> {
    /// An adapter with nothing registered; `name` goes into the capability report.
    pub fn new(name: &str) -> Self {
        HostAdapter {
            name: name.to_owned(),
            cells: Vec::new(),
            projections: Projections::default(),
            candidates: CandidateRegistry::new(),
            positions: BTreeMap::new(),
            actions: Vec::new(),
            evidence: Vec::new(),
            sink: None,
            reads_questions: BTreeMap::new(),
            require_coverage: false,
            node_ids: BTreeMap::new(),
        }
    }

    /// Registration 1: A state cell: its name, type, and whether it carries bytes a tool returned.
    pub fn state_cell(mut self, name: &str, ty: CellType, untrusted: bool) -> Self {
        self.cells.retain(|c| c.name != name);
        self.cells.push(Cell { name: name.to_owned(), ty, untrusted });
        self
    }

    /// Registration 2: Projections: a set (usually [`Projections::standard`]) …
    pub fn projections(mut self, projections: Projections) -> Self {
        self.projections = projections;
        self
    }

    /// … or one `host:` projection.
    pub fn projection(
        mut self,
        name: &str,
        reads: &str,
        body: impl Fn(&HostState) -> Option<Value> + Send + Sync + 'static,
    ) -> Result<Self, ProjectionError> {
        self.projections.register(name, reads, body)?;
        Ok(self)
    }

    /// Registration 3: A dynamic candidate provider, with the cells it reads.
    pub fn candidates(mut self, provider: Box<dyn CandidateProvider>) -> Self {
        self.candidates.register(provider);
        self
    }

    /// Registration 4: A position handler: the actions this host executes at `position` (besides
    /// `escalate`, which is legal everywhere and must still have an action handler).
    pub fn position(mut self, position: &str, actions: &[&str]) -> Self {
        self.positions.insert(position.to_owned(), actions.iter().map(|a| (*a).to_owned()).collect());
        self
    }

    /// Registration 5: An action handler.
    pub fn action(
        mut self,
        action: &str,
        handler: impl Fn(&mut C, &mut Dispatch<'_>) -> Result<String, HandlerError> + Send + Sync + 'static,
    ) -> Self {
        self.actions.retain(|(a, _)| a != action);
        self.actions.push((action.to_owned(), Box::new(handler)));
        self
    }

    /// Registration 6: An evidence provider.
    pub fn evidence(mut self, name: &str, provider: impl Fn(&C) -> Value + Send + Sync + 'static) -> Self {
        self.evidence.retain(|(n, _)| n != name);
        self.evidence.push((name.to_owned(), Box::new(provider)));
        self
    }

    /// Registration 7: The event sink.
    pub fn event_sink(mut self, sink: Box<dyn EventSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The question ids the host reads from `block` (checked against the file).
    pub fn reads_questions(mut self, block: &str, ids: &[&str]) -> Self {
        self.reads_questions.insert(block.to_owned(), ids.iter().map(|q| (*q).to_owned()).collect());
        self
    }

    /// Require every frame to read or exclude every state cell.
    pub fn require_coverage(mut self) -> Self {
        self.require_coverage = true;
        self
    }

    /// The node id `block`'s frames and records carry.
    pub fn node_id(mut self, block: &str, node: &str) -> Self {
        self.node_ids.insert(block.to_owned(), node.to_owned());
        self
    }

    /// The adapter's name, as the capability report's `adapter` gives it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn host_cells(&self) -> HostCells {
        HostCells::new(self.cells.clone())
    }

    pub(crate) fn node_id_of(&self, block: &str) -> String {
        self.node_ids.get(block).cloned().unwrap_or_else(|| block.to_owned())
    }

    pub(crate) fn evidence_provider(&self, name: &str) -> Option<&EvidenceProvider<C>> {
        self.evidence.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    /// The registered action names, in registration order.
    pub fn action_names(&self) -> Vec<String> {
        self.actions.iter().map(|(a, _)| a.clone()).collect()
    }

    /// The capabilities these registrations give, with `required_blocks` the blocks the
    /// graph decides (a host cannot run a node whose block is missing).
    pub fn capabilities(&self, required_blocks: &[String]) -> Capabilities {
        let projections: Vec<String> = self.projections.names().map(str::to_owned).collect();
        let projection_reads = projections
            .iter()
            .filter_map(|p| self.projections.get(p).map(|decl| (p.clone(), decl.reads.clone())))
            .collect();
        let dynamic_providers: Vec<String> = self.candidates.names().into_iter().map(str::to_owned).collect();
        let dynamic_provider_reads = dynamic_providers
            .iter()
            .filter_map(|p| self.candidates.get(p).map(|provider| (p.clone(), provider.reads())))
            .collect();
        Capabilities {
            positions: self.positions.clone(),
            actions: self.action_names(),
            state_cells: Some(self.cells.iter().map(|c| c.name.clone()).collect()),
            projections,
            projection_reads,
            dynamic_providers,
            dynamic_provider_reads,
            required_blocks: required_blocks.to_vec(),
            required_questions: self.reads_questions.clone(),
            require_coverage: self.require_coverage,
        }
    }
}
