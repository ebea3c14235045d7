//! `decision-runtime`: the host side of `DECISION.md` with I/O — decision providers, the
//! decider, graph execution, the session log, and the JSON documents the `decision` command
//! prints.
//!
//! The pure layers live below it: `decision-core` turns contract text into a checked
//! contract and compiled policies, `decision-protocol` holds what two implementations must
//! agree on byte for byte (digests, frames, questions and answers, `decision-record/v1`),
//! and `decision-outcomes` checks tool outcomes. A host author usually needs:
//!
//! * [`provider`]: something that answers closed questions ([`provider::DecisionProvider`]),
//!   with retries, fallbacks, deadlines, and the HTTP providers behind the `http` feature;
//! * [`decide`]: the [`decide::Decider`], which sends one request per step, validates each
//!   node's answers and evaluates its policy, failing closed (`escalate`);
//! * [`graph`]: a host's registrations and graph, the start check and the Level-2 executor;
//! * [`log`]: the append-only, hash-chained session log, its replay and what-if;
//! * [`api`]: the CLI's JSON documents as functions, shared by every binding.
//!
//! [`contract_tests`] runs a contract's pinned cases without a model; [`lines`], [`clock`]
//! and [`terminal`] are the small utilities the rest shares with hosts.

#![deny(missing_docs)]

pub mod api;
pub mod clock;
pub mod contract_tests;
pub mod decide;
pub mod graph;
pub mod lines;
pub mod log;
mod names;
pub mod provider;
pub mod terminal;
