//! The parse layer as a whole: the scanner ([`crate::syntax`]) reads the lines, and the block
//! rules (`check::blocks`) judge each block as the scanner finishes it and build it. Their
//! diagnostics come in the reference's order: each block's lines', then what only the whole
//! block shows, block after block, then the duplicate block ids.

use super::blocks;
use crate::contract::Contract;
use crate::diag::{Diagnostic, Diagnostics, Omitted};
use crate::syntax;

/// The result of parsing: the contract and the parse-layer diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The contract as far as it could be read; always present, even for an empty or
    /// malformed input.
    pub contract: Contract,
    /// The first [`crate::diag::MAX_DIAGNOSTICS`], in the order found; when there are more
    /// and one is an error, at least one of these is an error.
    pub diagnostics: Vec<Diagnostic>,
    /// The count of those left out of `diagnostics`.
    pub omitted: Omitted,
}

/// Parses a `DECISION.md` from bytes. Invalid UTF-8 is reported at its location; each
/// invalid byte is then read as U+001A (SUBSTITUTE), one byte for one byte, so that every
/// span still points at the right bytes of the original input.
pub fn parse(source: &[u8]) -> Parsed {
    parsed(collecting(source))
}

/// Parses a `DECISION.md` from text.
pub fn parse_str(source: &str) -> Parsed {
    parsed(syntax::scan(source, Diagnostics::new(), blocks::build))
}

/// [`parse`], with the diagnostics still collecting: the checker adds the other layers'.
pub(crate) fn collecting(source: &[u8]) -> (Contract, Diagnostics) {
    syntax::scan_bytes(source, blocks::build)
}

fn parsed((contract, diagnostics): (Contract, Diagnostics)) -> Parsed {
    let (diagnostics, omitted) = diagnostics.finish();
    Parsed { contract, diagnostics, omitted }
}
