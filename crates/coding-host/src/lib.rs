//! The reference coding host: the seven-node loop of the bundled contract as a Level-2
//! graph, sandboxed file tools, the `heuristic` rule provider, generation (a chat endpoint
//! or a labelled deterministic evidence report), human authorisation, audit records, and
//! resuming an unfinished run from its session log.

pub mod approvals;
pub mod candidates;
pub mod explore;
pub mod floor;
pub mod focus;
pub mod generate;
pub mod heuristic;
pub mod human;
pub mod inputs;
pub mod outcomes;
pub mod rank;
pub mod resume;
mod run;
pub mod sandbox;
pub mod tools;

pub use run::{
    CODING_CONTRACT, CodingRun, Collaborators, DEFAULT_MAX_STEPS, HostError, MODEL_GRACE, ResumeState, RunConfig,
    RunSummary, coding_adapter, coding_description, coding_graph, run_task, run_task_approved, start_host,
};
