//! `decision-core`: the portable core of `DECISION.md` decision contracts.
//!
//! Text flows one way: [`syntax::parse`] turns source text into a typed [`Contract`] together with
//! every [`Diagnostic`] found; [`check`] runs the schema, policy and adapter layers and the
//! lints; [`policy`] compiles and evaluates rules; [`digest`] reproduces the reference's
//! `JSON.stringify`-based digests; [`record`] verifies `decision-record/v1` records.
//!
//! The crate is pure: it never touches the filesystem, the network, a clock or threads
//! (enforced by `clippy.toml`), so a host may depend on it alone and it builds for
//! `wasm32-unknown-unknown`.

pub mod check;
pub mod contract;
pub mod diag;
pub mod digest;
mod names;
pub mod policy;
pub mod record;
pub mod suggest;
pub mod syntax;
pub mod vocab;

pub use contract::{
    Block, Contract, Dynamic, Exclusion, Frame, FrameField, Kind, Located, Primitive, Question, QuestionOption, Rule,
};
pub use diag::{Diagnostic, Layer, Severity, Span};
