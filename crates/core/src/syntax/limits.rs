//! How much of a file is read into a [`crate::Contract`]. Each block and each item costs a few
//! hundred bytes of memory, more than the line it is read from; past these counts the parser
//! reports [`crate::diag::codes::TOO_LARGE`] once and reads no further, so that a hostile file cannot make
//! the checker's memory grow with it. Both are far above any real contract (the reference
//! host's has seven blocks and about a hundred items; the format sets no limit).

use super::Line;
use super::problem::ParseProblem;
use crate::diag::{Diagnostic, Problem};

/// At most this many decision blocks are read (generator sections do not count).
pub const MAX_BLOCKS: usize = 10_000;

/// At most this many items are read, in all blocks together: question headings (`### id`),
/// options, frame lines and policy rules.
pub const MAX_ITEMS: usize = 100_000;

/// The one error for block number [`MAX_BLOCKS`] + 1, at its heading.
pub(super) fn too_many_blocks(heading: &Line<'_>) -> Diagnostic {
    ParseProblem::TooManyBlocks { max: MAX_BLOCKS }.at(heading.span(), None)
}

/// The one error for item number [`MAX_ITEMS`] + 1, at its line.
pub(super) fn too_many_items(line: &Line<'_>) -> Diagnostic {
    ParseProblem::TooManyItems { max: MAX_ITEMS }.at(line.span(), None)
}
