//! How much of a file is read into a [`crate::Contract`]. Each block and each item costs a few
//! hundred bytes of memory, more than the line it is read from; past these counts the parser
//! reports [`codes::TOO_LARGE`] once and reads no further, so that a hostile file cannot make
//! the checker's memory grow with it. Both are far above any real contract (the reference
//! host's has seven blocks and about a hundred items; the format sets no limit).

use super::Line;
use crate::diag::{Diagnostic, Layer, Severity, codes};

/// At most this many decision blocks are read (generator sections do not count).
pub const MAX_BLOCKS: usize = 10_000;

/// At most this many items are read, in all blocks together: question headings (`### id`),
/// options, frame lines and policy rules.
pub const MAX_ITEMS: usize = 100_000;

/// The one error for block number [`MAX_BLOCKS`] + 1, at its heading.
pub(super) fn too_many_blocks(heading: &Line<'_>) -> Diagnostic {
    too_large(
        heading,
        format!("the file has more than {MAX_BLOCKS} blocks; this block and everything after it are not read"),
    )
}

/// The one error for item number [`MAX_ITEMS`] + 1, at its line.
pub(super) fn too_many_items(line: &Line<'_>) -> Diagnostic {
    too_large(
        line,
        format!(
            "the file has more than {MAX_ITEMS} items (questions, options, frame lines and policy rules); nothing after this line is read"
        ),
    )
}

fn too_large(line: &Line<'_>, message: String) -> Diagnostic {
    Diagnostic {
        code: codes::TOO_LARGE,
        severity: Severity::Error,
        layer: Layer::Parse,
        message,
        span: line.span(),
        block: None,
        help: Some("split the contract into several files; no real contract comes near this size".into()),
    }
}
