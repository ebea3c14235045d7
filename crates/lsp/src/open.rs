//! What every request works on: the open documents with their last check, where a block
//! is, and a request's failure.

use decision::check::Report;
use lsp_server::ErrorCode;
use lsp_types::Uri;

use crate::text::Document;

/// A checked open document.
pub struct Open {
    /// The document's URI.
    pub uri: Uri,
    /// The text and its index.
    pub doc: Document,
    /// The last check of the text.
    pub report: Report,
}

/// A request's failure: a JSON-RPC error code and message.
#[derive(Debug)]
pub struct Failure {
    /// The JSON-RPC error code.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

impl Failure {
    /// Params that do not have the method's shape.
    pub fn invalid_params(method: &str, error: impl std::fmt::Display) -> Failure {
        Failure { code: ErrorCode::InvalidParams, message: format!("invalid params for {method}: {error}") }
    }
}

/// The block whose text holds `offset` (from its heading to the next heading).
pub fn block_at(blocks: &[decision::contract::Block], offset: usize) -> Option<&decision::contract::Block> {
    blocks.iter().rev().find(|b| b.span.start <= offset)
}
