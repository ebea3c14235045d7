//! The indexed decision state (the L08-01 contract; question-space.md Part 1).
//!
//! From one atomic host snapshot with a revision id, [`DecisionState::build`] makes a
//! candidate table — code-owned 1-based indices, one row per host object, kind, label and
//! current value — and the heads asked about it in one request: an operation head offering
//! only eligible operations plus `ABSTAIN` and `NO_ACTION`, and one `<operation>_target` head
//! per offered operation listing only compatible rows (`row:option` ids for enumerated
//! parameter values). Rows past the candidate cap are recorded as truncated and never
//! offered. [`DecisionState::interpret`] turns answers into at most one [`Observation`]; host
//! identities never reach the model.

mod interpret;
mod table;

pub use interpret::{Evidence, HEAD_ANSWER_KEYS, Observation, ObservedTarget, SpaceRejection};
pub use table::{
    ABSTAIN, Applicable, DEFAULT_CANDIDATE_CAP, DecisionState, HostObject, NO_ACTION, OPERATION_HEAD, Operation,
    ParamOption, Row, Snapshot, SpaceConfig, Truncated,
};
