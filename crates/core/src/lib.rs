//! `decision-core`: the portable core of `DECISION.md` decision contracts.
//!
//! Text flows one way: [`parse`] turns source text into a typed [`Contract`] together with
//! every parse-layer [`Diagnostic`] found (the [`syntax`] scanner reads the lines; the block
//! rules judge each whole block and build it); [`check`] runs the schema, policy and adapter layers and the
//! lints; [`policy`] compiles and evaluates rules. What a host sends and records — digests,
//! frames, questions, answers, records — is the `decision-protocol` crate, built on this one.
//!
//! The crate is pure: it never touches the filesystem, the network, a clock or threads
//! (enforced by `clippy.toml`), so a host may depend on it alone and it builds for
//! `wasm32-unknown-unknown`.

#![deny(missing_docs)]

pub mod check;
pub mod contract;
pub mod diag;
mod names;
pub mod policy;
pub mod suggest;
pub mod syntax;
pub mod vocab;

pub use check::{Parsed, parse, parse_str};
pub use contract::{
    Block, Contract, Dynamic, Exclusion, Frame, FrameField, Kind, Located, Primitive, Question, QuestionOption, Rule,
};
pub use diag::{Diagnostic, Layer, Severity, Span};
