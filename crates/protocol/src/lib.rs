//! `decision-protocol`: everything two implementations of `DECISION.md` must agree on byte for
//! byte, so that a frame, a request, a digest or a record made here is the one the reference
//! makes.
//!
//! * [`digest`]: `JSON.stringify`-exact output, the canonicaliser that keeps lone surrogates,
//!   and the frame, request and record digests.
//! * [`frame`]: host state cells, trust, the standard projections and frame compilation.
//! * [`ask`]: the questions a block asks on the wire, and the validation of their answers.
//! * [`space`]: the indexed decision space — the candidate table and its heads.
//! * [`record`]: reading and verifying `decision-record/v1` records.
//!
//! The crate is pure like the core: no filesystem, network, clock or threads (enforced by
//! `clippy.toml` and by the workspace's architecture test), so it builds for
//! `wasm32-unknown-unknown` and sits under the Python and WebAssembly bindings.

#![deny(missing_docs)]

pub mod ask;
pub mod digest;
pub mod frame;
pub mod record;
pub mod space;
