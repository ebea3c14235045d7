//! The requests the server answers besides `initialize` and `shutdown`, and the capabilities
//! it announces for them.

use std::collections::HashMap;

use lsp_types::{
    CodeActionParams, CodeActionProviderCapability, CompletionOptions, CompletionParams, CompletionResponse,
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, GotoDefinitionParams, HoverParams,
    HoverProviderCapability, InitializeResult, PositionEncodingKind, ReferenceParams, RenameParams, ServerCapabilities,
    ServerInfo, SymbolKind, TextDocumentSyncCapability, TextDocumentSyncKind,
};
use serde_json::Value;

use crate::open::{Failure, Open};

/// The `initialize` result: incremental sync, UTF-16 positions, and the requests below
/// (the outline, hovers, completion, definition, references, rename and quick fixes).
pub fn initialize_result() -> Value {
    let result = InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(PositionEncodingKind::UTF16),
            text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::INCREMENTAL)),
            document_symbol_provider: Some(lsp_types::OneOf::Left(true)),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
            definition_provider: Some(lsp_types::OneOf::Left(true)),
            references_provider: Some(lsp_types::OneOf::Left(true)),
            rename_provider: Some(lsp_types::OneOf::Left(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec![":".into(), " ".into()]),
                ..CompletionOptions::default()
            }),
            ..ServerCapabilities::default()
        },
        server_info: Some(ServerInfo { name: "decision".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
    };
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// Answers a request on the open documents.
pub fn request(method: &str, params: Value, open: &HashMap<String, Open>) -> Result<Value, Failure> {
    match method {
        "textDocument/documentSymbol" => {
            let p: DocumentSymbolParams = parse(method, params)?;
            let symbols = open.get(p.text_document.uri.as_str()).map(outline).unwrap_or_default();
            to_value(DocumentSymbolResponse::Nested(symbols))
        }
        "textDocument/completion" => {
            let p: CompletionParams = parse(method, params)?;
            let document = &p.text_document_position;
            let found = open.get(document.text_document.uri.as_str());
            let items = found.map(|open| crate::completion::complete(open, document.position)).unwrap_or_default();
            to_value(CompletionResponse::Array(items))
        }
        "textDocument/codeAction" => {
            let p: CodeActionParams = parse(method, params)?;
            let found = open.get(p.text_document.uri.as_str());
            to_value(found.map(|open| crate::actions::code_actions(open, p.range)).unwrap_or_default())
        }
        "textDocument/definition" => {
            let p: GotoDefinitionParams = parse(method, params)?;
            let document = &p.text_document_position_params;
            let found = open.get(document.text_document.uri.as_str());
            to_value(found.and_then(|open| crate::navigate::definition(open, document.position)))
        }
        "textDocument/references" => {
            let p: ReferenceParams = parse(method, params)?;
            let document = &p.text_document_position;
            let found = open.get(document.text_document.uri.as_str());
            let declaration = p.context.include_declaration;
            to_value(
                found.map(|open| crate::navigate::references(open, document.position, declaration)).unwrap_or_default(),
            )
        }
        "textDocument/rename" => {
            let p: RenameParams = parse(method, params)?;
            let document = &p.text_document_position;
            let uri = &document.text_document.uri;
            match open.get(uri.as_str()) {
                Some(open) => to_value(crate::navigate::rename(open, uri, document.position, &p.new_name)?),
                None => to_value(Value::Null),
            }
        }
        "textDocument/hover" => {
            let p: HoverParams = parse(method, params)?;
            let document = &p.text_document_position_params;
            let found = open.get(document.text_document.uri.as_str());
            to_value(found.and_then(|open| crate::hover::hover(open, document.position)))
        }
        _ => Err(Failure { code: lsp_server::ErrorCode::MethodNotFound, message: format!("unknown method {method}") }),
    }
}

fn parse<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T, Failure> {
    serde_json::from_value(params).map_err(|e| Failure::invalid_params(method, e))
}

fn to_value(value: impl serde::Serialize) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure {
        code: lsp_server::ErrorCode::InternalError,
        message: format!("cannot encode the answer: {e}"),
    })
}

/// The outline: each block with its questions, frame and policy.
fn outline(open: &Open) -> Vec<DocumentSymbol> {
    let doc = &open.doc;
    let blocks = &open.report.contract.blocks;
    let range = |start: usize, end: usize| doc.index.range(&doc.text, start, end);
    blocks
        .iter()
        .enumerate()
        .map(|(i, block)| {
            let end = blocks.get(i + 1).map_or(doc.text.len(), |next| next.span.start);
            let mut children = Vec::new();
            for q in &block.questions {
                let last = q.options.last().map_or(q.span.end, |o| o.span.end);
                children.push(symbol(
                    q.id.clone(),
                    Some(format!("{:?}", q.primitive).to_lowercase()),
                    SymbolKind::FIELD,
                    range(q.span.start, last),
                    range(q.span.start, q.span.end),
                    vec![],
                ));
            }
            if let Some(frame) = &block.frame {
                children.push(symbol(
                    "frame".into(),
                    None,
                    SymbolKind::STRUCT,
                    range(frame.span.start, frame.span.end),
                    range(frame.span.start, frame.span.end),
                    vec![],
                ));
            }
            if let (Some(first), Some(last)) = (block.policy.first(), block.policy.last()) {
                let detail = format!("{} rules", block.policy.len());
                children.push(symbol(
                    "policy".into(),
                    Some(detail),
                    SymbolKind::FUNCTION,
                    range(first.span.start, last.span.end),
                    range(first.span.start, first.span.end),
                    vec![],
                ));
            }
            let full = range(block.span.start, end.max(block.span.end));
            symbol(
                block.id.clone(),
                Some(block.kind.as_str().into()),
                SymbolKind::CLASS,
                full,
                range(block.span.start, block.span.end),
                children,
            )
        })
        .collect()
}

#[allow(deprecated)] // `deprecated` is a required field of the type, itself deprecated.
fn symbol(
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: lsp_types::Range,
    selection_range: lsp_types::Range,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children: if children.is_empty() { None } else { Some(children) },
    }
}
