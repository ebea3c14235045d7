//! The server: reads frames, keeps the open documents, checks each one on every change and
//! publishes its diagnostics, and answers the requests.
//!
//! One thread does everything in order. A check of a whole contract takes well under a
//! millisecond, so there is nothing to gain from checking in the background, and answering
//! in order means a request always sees every change sent before it.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use decision::check::{self, CheckOptions};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    DiagnosticSeverity, DidChangeConfigurationParams, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, InitializeParams, LogMessageParams, MessageType, PublishDiagnosticsParams, Uri,
};
use serde_json::Value;

use crate::diagnostics;
use crate::features;
use crate::open::{Failure, Open};
use crate::settings::{CapabilitiesCache, Host, Settings};
use crate::text::Document;
use crate::transport::{self, Frame};

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `exit` after `shutdown`: the orderly end (exit status 0).
    Exit,
    /// `exit` without `shutdown` (exit status 1, as the protocol asks).
    ExitWithoutShutdown,
    /// The input ended without `exit`: the client has gone (exit status 1).
    EndOfInput,
}

/// The server's state between messages.
struct Server<W: Write> {
    output: W,
    settings: Settings,
    root: Option<PathBuf>,
    capabilities: CapabilitiesCache,
    /// The open documents by URI text (`Uri` itself caches state inside, so it is no key).
    open: HashMap<String, Open>,
    initialized: bool,
    shut_down: bool,
}

/// Serves one client over `input` and `output` until `exit` or the end of the input.
/// `settings` are the command line's; the client's settings are applied over them.
pub fn serve(input: impl BufRead, output: impl Write, settings: Settings) -> io::Result<Ending> {
    let mut input = input;
    let mut server = Server {
        output,
        settings,
        root: None,
        capabilities: CapabilitiesCache::default(),
        open: HashMap::new(),
        initialized: false,
        shut_down: false,
    };
    while let Some(frame) = transport::read_frame(&mut input)? {
        match frame {
            Frame::Malformed { id, code, message } => transport::write_error(&mut server.output, &id, code, &message)?,
            Frame::Message(Message::Request(request)) => server.request(request)?,
            Frame::Message(Message::Notification(n)) if n.method == "exit" => {
                return Ok(if server.shut_down { Ending::Exit } else { Ending::ExitWithoutShutdown });
            }
            Frame::Message(Message::Notification(n)) => server.notification(n)?,
            // The server sends no requests, so a response answers nothing.
            Frame::Message(Message::Response(_)) => {}
        }
    }
    Ok(Ending::EndOfInput)
}

impl<W: Write> Server<W> {
    fn send(&mut self, message: Message) -> io::Result<()> {
        transport::write_message(&mut self.output, &message)
    }

    fn respond(&mut self, id: RequestId, result: Result<Value, Failure>) -> io::Result<()> {
        let response = match result {
            Ok(value) => Response::new_ok(id, value),
            Err(f) => Response::new_err(id, f.code as i32, f.message),
        };
        self.send(Message::Response(response))
    }

    fn notify(&mut self, method: &str, params: impl serde::Serialize) -> io::Result<()> {
        self.send(Message::Notification(Notification::new(method.to_string(), params)))
    }

    /// A line in the client's output log (`window/logMessage`).
    fn log(&mut self, typ: MessageType, message: String) -> io::Result<()> {
        self.notify("window/logMessage", LogMessageParams { typ, message })
    }

    fn request(&mut self, request: Request) -> io::Result<()> {
        let Request { id, method, params } = request;
        let result = if method == "initialize" {
            self.initialize(params)
        } else if !self.initialized {
            Err(Failure { code: ErrorCode::ServerNotInitialized, message: "the server is not initialized".into() })
        } else if self.shut_down {
            Err(Failure { code: ErrorCode::InvalidRequest, message: "the server is shut down".into() })
        } else if method == "shutdown" {
            self.shut_down = true;
            Ok(Value::Null)
        } else {
            // A bug in a feature must cost one answer, never the session.
            let open = &self.open;
            match catch_unwind(AssertUnwindSafe(|| features::request(&method, params, open))) {
                Ok(result) => result,
                Err(_) => Err(Failure { code: ErrorCode::InternalError, message: format!("{method} failed") }),
            }
        };
        self.respond(id, result)
    }

    fn initialize(&mut self, params: Value) -> Result<Value, Failure> {
        if self.initialized {
            return Err(Failure { code: ErrorCode::InvalidRequest, message: "initialize was already sent".into() });
        }
        let params: InitializeParams =
            serde_json::from_value(params).map_err(|e| Failure::invalid_params("initialize", e))?;
        #[allow(deprecated)] // `root_uri` is what older clients send instead of workspace folders.
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first().map(|f| f.uri.clone()))
            .or(params.root_uri.clone());
        self.root = root.as_ref().and_then(file_path);
        let problems = match &params.initialization_options {
            Some(options) => self.settings.update(options, self.root.as_deref()),
            None => Vec::new(),
        };
        self.initialized = true;
        for problem in problems {
            // Written now, before the result: the client logs it either way.
            let _ = self.log(MessageType::WARNING, format!("decision: {problem}"));
        }
        Ok(features::initialize_result())
    }

    fn notification(&mut self, n: Notification) -> io::Result<()> {
        if !self.initialized {
            return Ok(());
        }
        let method = n.method.clone();
        match method.as_str() {
            "textDocument/didOpen" => match n.extract::<DidOpenTextDocumentParams>(&method) {
                Ok(p) => {
                    let doc = Document::new(p.text_document.text, p.text_document.version);
                    self.check_and_publish(p.text_document.uri, doc)
                }
                Err(e) => self.log(MessageType::ERROR, format!("decision: invalid {method}: {e}")),
            },
            "textDocument/didChange" => match n.extract::<DidChangeTextDocumentParams>(&method) {
                Ok(p) => self.change(p),
                Err(e) => self.log(MessageType::ERROR, format!("decision: invalid {method}: {e}")),
            },
            "textDocument/didClose" => match n.extract::<DidCloseTextDocumentParams>(&method) {
                Ok(p) => {
                    self.open.remove(p.text_document.uri.as_str());
                    let params =
                        PublishDiagnosticsParams { uri: p.text_document.uri, diagnostics: vec![], version: None };
                    self.notify("textDocument/publishDiagnostics", params)
                }
                Err(e) => self.log(MessageType::ERROR, format!("decision: invalid {method}: {e}")),
            },
            "workspace/didChangeConfiguration" => match n.extract::<DidChangeConfigurationParams>(&method) {
                Ok(p) => {
                    for problem in self.settings.update(&p.settings, self.root.as_deref()) {
                        self.log(MessageType::WARNING, format!("decision: {problem}"))?;
                    }
                    self.recheck_all()
                }
                Err(e) => self.log(MessageType::ERROR, format!("decision: invalid {method}: {e}")),
            },
            // A saved capabilities file is read again on the next check of each contract.
            "textDocument/didSave" | "workspace/didChangeWatchedFiles" => self.recheck_all(),
            // `initialized`, `$/cancelRequest` (every request is answered before the next is
            // read), `$/setTrace` and notifications the server does not know need nothing.
            _ => Ok(()),
        }
    }

    fn change(&mut self, params: DidChangeTextDocumentParams) -> io::Result<()> {
        let uri = params.text_document.uri;
        let Some(open) = self.open.remove(uri.as_str()) else {
            return self.log(MessageType::ERROR, format!("decision: a change to {} which is not open", uri.as_str()));
        };
        let mut doc = open.doc;
        let mut clamped = false;
        for change in params.content_changes {
            clamped |= doc.apply(change);
        }
        doc.version = params.text_document.version;
        if clamped {
            let message = format!(
                "decision: a change to {} (version {}) had a range outside the document; it was applied clamped to the text",
                uri.as_str(),
                doc.version
            );
            self.log(MessageType::WARNING, message)?;
        }
        self.check_and_publish(uri, doc)
    }

    fn recheck_all(&mut self) -> io::Result<()> {
        let open: Vec<(Uri, Document)> = self.open.drain().map(|(_, open)| (open.uri, open.doc)).collect();
        for (uri, doc) in open {
            self.check_and_publish(uri, doc)?;
        }
        Ok(())
    }

    /// Checks a document as `decision check` would, keeps it, and publishes its diagnostics.
    fn check_and_publish(&mut self, uri: Uri, doc: Document) -> io::Result<()> {
        let path = file_path(&uri);
        let host = self.capabilities.host(&self.settings, path.as_deref());
        let (capabilities, unusable) = match host {
            Host::None => (None, None),
            Host::Capabilities(c) => (Some(c), None),
            Host::Unusable(message) => (None, Some(message)),
        };
        let checked =
            catch_unwind(AssertUnwindSafe(|| check::check(doc.text.as_bytes(), CheckOptions { capabilities })));
        let Ok(report) = checked else {
            return self.log(MessageType::ERROR, format!("decision: checking {} failed", uri.as_str()));
        };
        let mut published = diagnostics::diagnostics(&doc.text, &doc.index, &report);
        if let Some(message) = unusable {
            let message = format!("cannot use the capabilities file: {message}; the adapter layer was not run");
            published.insert(0, diagnostics::at_top(DiagnosticSeverity::ERROR, message));
        }
        let params = PublishDiagnosticsParams { uri: uri.clone(), diagnostics: published, version: Some(doc.version) };
        self.open.insert(uri.as_str().to_string(), Open { uri, doc, report });
        self.notify("textDocument/publishDiagnostics", params)
    }
}

/// The local path of a `file:` URI.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}
