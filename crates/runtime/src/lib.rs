//! `decision-runtime`: the host side of `DECISION.md` — frames and projections, questions and
//! answers, decision providers, the indexed question space, graph execution, the session log
//! and contract-driven tool outcomes.

pub mod api;
pub mod clock;
pub mod contract_tests;
pub mod decide;
pub mod graph;
pub mod lines;
pub mod log;
pub mod provider;
pub mod terminal;
