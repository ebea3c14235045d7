//! The reference coding host: the seven-node loop of the bundled contract as a Level-2
//! graph, sandboxed file tools, the `heuristic` rule provider, generation (a chat endpoint
//! or a labelled deterministic evidence report), human authorisation, audit records, and
//! resuming an unfinished run from its session log.

#![deny(missing_docs)]

pub mod approvals;
pub mod candidates;
mod codeindex;
mod events;
mod explore;
mod floor;
mod focus;
mod gate;
pub mod generate;
pub mod heuristic;
pub mod human;
mod inputs;
mod outcomes;
mod rank;
pub mod resume;
mod run;
mod sandbox;
mod tools;
mod unread;

pub use codeindex::{TreeIndex, index_tree};
pub use run::{
    CODING_CONTRACT, CodingRun, Collaborators, DEFAULT_MAX_STEPS, HostError, MODEL_GRACE, ResumeState, RunConfig,
    RunSummary, coding_description, run_task, run_task_approved, start_host,
};
