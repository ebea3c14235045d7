//! The host adapter registrations, Level-2 graph execution and the capability report.
//!
//! A host registers exactly seven things ([`HostAdapter`]), declares its own graph
//! ([`Graph`]: node + outcome → next node, with terminal states), and starts a
//! [`GraphHost`]: the contract is checked against capabilities built from the registrations
//! (parse, schema, policy and adapter layers) and against the graph; any problem refuses the
//! start with every location listed, so nothing is dispatched before the check has passed.

mod adapter;
mod check;
mod exec;
mod model;
pub mod report;
mod sink;

pub use adapter::{ActionHandler, CodeDecision, EvidenceProvider, GraphContext, HostAdapter};
pub use check::{Location, Problem, StartRefusal, codes};
pub use exec::{
    CODE_DECISION_EVENT, Cursor, DEFAULT_MAX_TRANSITIONS, DecisionStats, GraphHost, RunError, RunOutcome, Transition,
    decision_event,
};
pub use model::{Dispatch, FEATURES, Graph, GraphShape, HostPhase, Invocation, NodeKind, NodeShape, Step};
pub use sink::{EventSink, FnSink, MemorySink, SinkError, Tee};

/// A handler could not carry out its action (the run stops; the error is reported).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HandlerError(pub String);
