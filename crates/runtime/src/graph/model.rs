//! The host-owned control-flow graph: `phase + outcome → next phase`. A node either decides
//! (one or more contract blocks in one request, then the action's handler names the outcome)
//! or is a host phase (host code names the outcome). Targets that are not nodes are terminal
//! states; a target that is neither is a transition with no consumer.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::HandlerError;
use super::sink::EventSink;
use crate::decide::NodeDecision;

/// A host phase's behaviour: do the work, name the outcome (the edge label to follow).
pub type HostPhase<C> = Box<dyn Fn(&mut C, &mut Step<'_>) -> Result<String, HandlerError> + Send + Sync>;

/// What a node does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum NodeKind {
    /// Ask these blocks in one request; dispatch the first block's action.
    Decide {
        /// The contract block ids, in request order; the first block's action is dispatched.
        blocks: Vec<String>,
    },
    /// Run host code.
    Host,
}

/// A node's structure, without behaviour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeShape {
    /// The node id, unique in the graph.
    pub id: String,
    /// Whether it decides blocks or runs host code.
    pub kind: NodeKind,
    /// `(outcome label, target)` in declaration order.
    pub edges: Vec<(String, String)>,
    /// Entering this node starts a new step (the step number in every invocation identity).
    pub starts_step: bool,
    /// The evidence provider consulted when this node's action needs evidence.
    pub evidence: Option<String>,
}

/// The graph's structure: what the capability report describes and checks.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct GraphShape {
    /// The node a run starts at.
    pub start: String,
    /// The nodes, in declaration order.
    pub nodes: Vec<NodeShape>,
    /// Declared terminal states.
    pub terminals: Vec<String>,
}

/// A graph feature, proved from the structure (format.md §6.3).
pub const FEATURES: [&str; 4] = ["branch", "retry", "escalation", "terminal-state"];

impl GraphShape {
    /// The node with this id; `None` when the graph has none.
    pub fn node(&self, id: &str) -> Option<&NodeShape> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// Node ids in declaration order (the sources of edges).
    pub fn node_ids(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.id.clone()).collect()
    }

    /// Every edge target that is not a node, in first-seen order.
    pub fn sinks(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for node in &self.nodes {
            for (_, target) in &node.edges {
                if self.node(target).is_none() && !out.contains(target) {
                    out.push(target.clone());
                }
            }
        }
        out
    }

    /// Whether the structure demonstrates `feature`; `None` for an unknown feature.
    pub fn demonstrates(&self, feature: &str) -> Option<bool> {
        let edges = || self.nodes.iter().flat_map(|n| n.edges.iter().map(move |e| (n, e)));
        Some(match feature {
            "branch" => self.nodes.iter().any(|n| n.edges.len() >= 2),
            "retry" => edges().any(|(n, (_, target))| *target == n.id),
            "escalation" => edges().any(|(_, (label, _))| label == "escalate"),
            "terminal-state" => !self.sinks().is_empty(),
            _ => return None,
        })
    }

    /// The features the structure demonstrates, in [`FEATURES`] order.
    pub fn features(&self) -> Vec<&'static str> {
        FEATURES.into_iter().filter(|f| self.demonstrates(f) == Some(true)).collect()
    }

    /// Nodes reachable from the start.
    pub fn reachable(&self) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![self.start.clone()];
        while let Some(id) = todo.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if let Some(node) = self.node(&id) {
                todo.extend(node.edges.iter().map(|(_, t)| t.clone()));
            }
        }
        seen
    }
}

/// A graph with its host phases' behaviour.
pub struct Graph<C> {
    pub(crate) shape: GraphShape,
    pub(crate) phases: Vec<(String, HostPhase<C>)>,
}

impl<C> Graph<C> {
    /// An empty graph that starts at `start`.
    pub fn new(start: &str) -> Self {
        Graph { shape: GraphShape { start: start.to_owned(), ..GraphShape::default() }, phases: Vec::new() }
    }

    /// A decision node asking `blocks` in one request.
    pub fn decide(mut self, id: &str, blocks: &[&str]) -> Self {
        self.shape.nodes.push(NodeShape {
            id: id.to_owned(),
            kind: NodeKind::Decide { blocks: blocks.iter().map(|b| (*b).to_owned()).collect() },
            edges: Vec::new(),
            starts_step: false,
            evidence: None,
        });
        self
    }

    /// A host phase.
    pub fn phase(
        mut self,
        id: &str,
        body: impl Fn(&mut C, &mut Step<'_>) -> Result<String, HandlerError> + Send + Sync + 'static,
    ) -> Self {
        self.shape.nodes.push(NodeShape {
            id: id.to_owned(),
            kind: NodeKind::Host,
            edges: Vec::new(),
            starts_step: false,
            evidence: None,
        });
        self.phases.push((id.to_owned(), Box::new(body)));
        self
    }

    /// `from --label--> to`. An edge from an undeclared node is reported when the host starts.
    pub fn edge(mut self, from: &str, label: &str, to: &str) -> Self {
        match self.shape.nodes.iter_mut().find(|n| n.id == from) {
            Some(node) => node.edges.push((label.to_owned(), to.to_owned())),
            None => self.shape.nodes.push(NodeShape {
                id: from.to_owned(),
                kind: NodeKind::Host,
                edges: vec![(label.to_owned(), to.to_owned())],
                starts_step: false,
                evidence: None,
            }),
        }
        self
    }

    /// Declare a terminal state.
    pub fn terminal(mut self, id: &str) -> Self {
        self.shape.terminals.push(id.to_owned());
        self
    }

    /// Entering `id` starts a new step.
    pub fn starts_step(mut self, id: &str) -> Self {
        if let Some(node) = self.shape.nodes.iter_mut().find(|n| n.id == id) {
            node.starts_step = true;
        }
        self
    }

    /// When `id`'s action needs evidence, ask the evidence provider `provider`.
    pub fn evidence(mut self, id: &str, provider: &str) -> Self {
        if let Some(node) = self.shape.nodes.iter_mut().find(|n| n.id == id) {
            node.evidence = Some(provider.to_owned());
        }
        self
    }

    /// The graph's structure, without behaviour.
    pub fn shape(&self) -> &GraphShape {
        &self.shape
    }

    pub(crate) fn phase_body(&self, id: &str) -> Option<&HostPhase<C>> {
        self.phases.iter().find(|(n, _)| n == id).map(|(_, b)| b)
    }
}

/// Which invocation this is: the same node runs many times, each with a new state version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The node being run.
    pub node: String,
    /// The step number (entering a step-starting node adds one).
    pub step: u64,
    /// How many handler calls changed the state before this invocation.
    pub state_version: u64,
    /// 1 for the node's first invocation in this run, 2 for the second, …
    pub visit: u64,
}

/// What an action handler sees.
pub struct Dispatch<'a> {
    /// Which invocation of the node this is.
    pub invocation: &'a Invocation,
    /// The position of the node's first block.
    pub position: &'a str,
    /// The action being dispatched (the first block's).
    pub action: &'a str,
    /// Every block's decision from the node's one request, in block order.
    pub decisions: &'a [NodeDecision],
    /// The evidence, when the action needs it.
    pub evidence: Option<&'a Value>,
    /// Where the handler's own events go (the host's registered sink); prefer
    /// [`Dispatch::emit`].
    pub sink: &'a mut dyn EventSink,
}

impl Dispatch<'_> {
    /// Record a host event.
    pub fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), HandlerError> {
        self.sink.emit(event_type, payload).map_err(|e| HandlerError(e.to_string()))
    }

    /// Make the events recorded so far durable ([`EventSink::commit`]): call it before any
    /// side effect, so the decision is recorded before its action takes effect.
    pub fn commit(&mut self) -> Result<(), HandlerError> {
        self.sink.commit().map_err(|e| HandlerError(e.to_string()))
    }

    /// The decision of `block_node` (its node id) in this request.
    pub fn decision(&self, node_id: &str) -> Option<&NodeDecision> {
        self.decisions.iter().find(|d| d.id == node_id)
    }
}

/// What a host phase sees.
pub struct Step<'a> {
    /// Which invocation of the node this is.
    pub invocation: &'a Invocation,
    /// Where the phase's own events go; prefer [`Step::emit`].
    pub sink: &'a mut dyn EventSink,
}

impl Step<'_> {
    /// Record a host event.
    pub fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), HandlerError> {
        self.sink.emit(event_type, payload).map_err(|e| HandlerError(e.to_string()))
    }

    /// As [`Dispatch::commit`].
    pub fn commit(&mut self) -> Result<(), HandlerError> {
        self.sink.commit().map_err(|e| HandlerError(e.to_string()))
    }
}
