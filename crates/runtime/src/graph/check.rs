//! The start check: the capabilities built from the registrations, run through the parse,
//! schema, policy and adapter layers, plus the graph's own rules. A host that fails it
//! refuses to start and lists every problem with its location; nothing is dispatched.

use std::collections::BTreeSet;
use std::fmt;

use decision_core::check::{CheckOptions, Report, check};
use decision_core::diag::{Diagnostic, Severity};
use decision_core::vocab::action_semantics;
use serde::Serialize;

use super::adapter::HostAdapter;
use super::model::{Graph, NodeKind};
use decision_protocol::frame::{FrameSpec, Mode, compile_frame, merge_conflicts};

/// Stable codes of the graph and registration rules (the contract's own layers keep theirs).
pub mod codes {
    /// The start node is not a node of the graph.
    pub const START: &str = "DC0801";
    /// An edge leads to something that is neither a node nor a terminal state.
    pub const NO_CONSUMER: &str = "DC0802";
    /// A terminal state is also a node.
    pub const TERMINAL_IS_NODE: &str = "DC0803";
    /// A contract block is decided by no node.
    pub const UNINVOKED_BLOCK: &str = "DC0804";
    /// A node cannot be reached from the start.
    pub const UNREACHABLE: &str = "DC0805";
    /// A node has no outgoing edge.
    pub const DEAD_END: &str = "DC0806";
    /// A host phase has no behaviour.
    pub const PHASE_BODY: &str = "DC0807";
    /// An action that needs evidence has no evidence provider at its node.
    pub const EVIDENCE: &str = "DC0808";
    /// No event sink is registered.
    pub const NO_SINK: &str = "DC0809";
    /// Blocks asked in one request cannot share it.
    pub const MERGE: &str = "DC0810";
    /// A block's frame cannot be built from the registered cells and projections.
    pub const FRAME: &str = "DC0811";
    /// A decision node names no block, or a node id is declared twice.
    pub const NODE: &str = "DC0812";
}

/// Where a problem is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "in", rename_all = "lowercase")]
pub enum Location {
    /// In the contract file.
    Contract {
        /// The 1-based line.
        line: u32,
        /// The 1-based column.
        column: u32,
        /// The block the problem is in, when it is in one.
        block: Option<String>,
    },
    /// In the host's graph.
    Graph {
        /// The node.
        node: String,
        /// The outcome label of the edge, when the problem is an edge's.
        edge: Option<String>,
    },
    /// In the host's registrations.
    Registration {
        /// The registration, described (`event sink`, `projection …`).
        what: String,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Contract { line, column, block: Some(block) } => write!(f, "{line}:{column} (block `{block}`)"),
            Location::Contract { line, column, block: None } => write!(f, "{line}:{column}"),
            Location::Graph { node, edge: Some(edge) } => write!(f, "graph node `{node}`, outcome `{edge}`"),
            Location::Graph { node, edge: None } => write!(f, "graph node `{node}`"),
            Location::Registration { what } => write!(f, "registration: {what}"),
        }
    }
}

/// One reason the host will not start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The stable code: the contract layers' `DC0…` codes, or the graph's ([`codes`]).
    pub code: &'static str,
    /// `parse`, `schema`, `policy`, `adapter` or `graph`.
    pub layer: &'static str,
    /// Where the problem is.
    pub location: Location,
    /// What is wrong, as a sentence.
    pub message: String,
    /// How to fix it, when there is advice.
    pub help: Option<String>,
}

impl Problem {
    fn graph(code: &'static str, node: &str, edge: Option<&str>, message: String) -> Problem {
        Problem {
            code,
            layer: "graph",
            location: Location::Graph { node: node.to_owned(), edge: edge.map(str::to_owned) },
            message,
            help: None,
        }
    }

    fn from_diagnostic(d: &Diagnostic) -> Problem {
        Problem {
            code: d.code,
            layer: d.layer.as_str(),
            location: Location::Contract { line: d.span.line, column: d.span.column, block: d.block.clone() },
            message: d.message.clone(),
            help: d.help.clone(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{} {}] {}", self.location, self.layer, self.code, self.message)?;
        if let Some(help) = &self.help {
            write!(f, " (help: {help})")?;
        }
        Ok(())
    }
}

/// The host refused to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StartRefusal {
    /// Every problem found, never empty.
    pub problems: Vec<Problem>,
}

impl fmt::Display for StartRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the host refuses to start: {} problem(s); nothing was dispatched", self.problems.len())?;
        for p in &self.problems {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StartRefusal {}

/// The blocks the graph decides, in first-use order.
pub(crate) fn decided_blocks<C>(graph: &Graph<C>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for node in &graph.shape.nodes {
        if let NodeKind::Decide { blocks } = &node.kind {
            for b in blocks {
                if !out.contains(b) {
                    out.push(b.clone());
                }
            }
        }
    }
    out
}

/// Run every check. Returns the contract report (for its warnings and compiled policies)
/// and every problem found; the host may start only when the problem list is empty.
pub(crate) fn start_check<C>(adapter: &HostAdapter<C>, graph: &Graph<C>, source: &[u8]) -> (Report, Vec<Problem>) {
    let required = decided_blocks(graph);
    let caps = adapter.capabilities(&required);
    let report = check(source, CheckOptions { capabilities: Some(&caps) });
    let mut problems: Vec<Problem> =
        report.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(Problem::from_diagnostic).collect();
    graph_problems(adapter, graph, &report, &mut problems);
    if adapter.sink.is_none() {
        problems.push(Problem {
            code: codes::NO_SINK,
            layer: "graph",
            location: Location::Registration { what: "event sink".into() },
            message: "no event sink is registered: decisions and transitions would go unrecorded".into(),
            help: Some("register one with `event_sink(…)`".into()),
        });
    }
    (report, problems)
}

fn graph_problems<C>(adapter: &HostAdapter<C>, graph: &Graph<C>, report: &Report, out: &mut Vec<Problem>) {
    let shape = &graph.shape;
    if shape.node(&shape.start).is_none() {
        out.push(Problem::graph(codes::START, &shape.start, None, "the start node is not a node of the graph".into()));
    }
    let mut seen = BTreeSet::new();
    for node in &shape.nodes {
        if !seen.insert(node.id.as_str()) {
            out.push(Problem::graph(codes::NODE, &node.id, None, "this node id is declared twice".into()));
        }
        if shape.terminals.contains(&node.id) {
            out.push(Problem::graph(
                codes::TERMINAL_IS_NODE,
                &node.id,
                None,
                "declared both as a node and as a terminal state".into(),
            ));
        }
        for (label, target) in &node.edges {
            if shape.node(target).is_none() && !shape.terminals.contains(target) {
                out.push(Problem::graph(
                    codes::NO_CONSUMER,
                    &node.id,
                    Some(label),
                    format!("leads to `{target}`, which is neither a node nor a terminal state: nothing consumes this transition"),
                ));
            }
        }
        if node.edges.is_empty() {
            out.push(Problem::graph(codes::DEAD_END, &node.id, None, "the node has no outgoing transition".into()));
        }
        match &node.kind {
            NodeKind::Host if graph.phase_body(&node.id).is_none() => out.push(Problem::graph(
                codes::PHASE_BODY,
                &node.id,
                None,
                "a host phase with no behaviour (edges were declared from an undeclared node)".into(),
            )),
            NodeKind::Host => {}
            NodeKind::Decide { blocks } => {
                decide_node_problems(adapter, report, &node.id, blocks, node.evidence.as_deref(), out)
            }
        }
    }
    let reachable = shape.reachable();
    for node in &shape.nodes {
        if !reachable.contains(&node.id) {
            out.push(Problem::graph(
                codes::UNREACHABLE,
                &node.id,
                None,
                format!("no path from the start node `{}` reaches this node: it would never be invoked", shape.start),
            ));
        }
    }
    let decided = decided_blocks(graph);
    for block in &report.contract.blocks {
        if !decided.contains(&block.id) {
            out.push(Problem {
                code: codes::UNINVOKED_BLOCK,
                layer: "graph",
                location: Location::Contract {
                    line: block.span.line,
                    column: block.span.column,
                    block: Some(block.id.clone()),
                },
                message: format!("no node of the host's graph decides block `{}`: it would never be invoked", block.id),
                help: Some("add a decision node for it, or remove the block".into()),
            });
        }
    }
}

fn decide_node_problems<C>(
    adapter: &HostAdapter<C>,
    report: &Report,
    node: &str,
    blocks: &[String],
    evidence: Option<&str>,
    out: &mut Vec<Problem>,
) {
    if blocks.is_empty() {
        out.push(Problem::graph(codes::NODE, node, None, "a decision node that names no block".into()));
        return;
    }
    let cells = adapter.host_cells();
    let mut artifacts = Vec::new();
    for id in blocks {
        let Some(block) = report.contract.blocks.iter().find(|b| &b.id == id) else { continue };
        if block.frame.is_some() {
            match FrameSpec::from_block(&adapter.node_id_of(id), block, &cells, &adapter.projections) {
                // Compiled from an empty state: only the fields and exclusions matter here.
                Ok(spec) => artifacts.push(compile_frame(
                    &spec,
                    &Default::default(),
                    &cells,
                    &adapter.projections,
                    Mode::Reference,
                )),
                Err(e) => out.push(Problem {
                    code: codes::FRAME,
                    layer: "graph",
                    location: Location::Contract {
                        line: block.span.line,
                        column: block.span.column,
                        block: Some(id.clone()),
                    },
                    message: format!("the frame cannot be built: {e}"),
                    help: None,
                }),
            }
        }
        for rule in &block.policy {
            let needs = action_semantics(&rule.action).is_some_and(|s| s.needs_evidence);
            let provided = evidence.is_some_and(|e| adapter.evidence_provider(e).is_some());
            if needs && !provided {
                out.push(Problem {
                    code: codes::EVIDENCE,
                    layer: "graph",
                    location: Location::Contract {
                        line: rule.span.line,
                        column: rule.span.column,
                        block: Some(id.clone()),
                    },
                    message: format!(
                        "action `{}` needs evidence, and node `{node}` has no registered evidence provider{}",
                        rule.action,
                        evidence.map(|e| format!(" (it names `{e}`)")).unwrap_or_default()
                    ),
                    help: Some("register one with `evidence(…)` and bind it with `Graph::evidence`".into()),
                });
            }
        }
    }
    let refs: Vec<_> = artifacts.iter().collect();
    for conflict in merge_conflicts(&refs) {
        out.push(Problem::graph(
            codes::MERGE,
            node,
            None,
            format!("these blocks cannot share one request: {conflict}"),
        ));
    }
}
