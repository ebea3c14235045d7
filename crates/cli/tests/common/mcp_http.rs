//! A loopback MCP server over Streamable HTTP for the gateway's `--upstream` tests, written to
//! exercise the transport's corners: a JSON answer with a session id to `initialize`, event
//! streams carrying notifications before a response (data split over lines), a GET stream, a
//! session the server forgot (404), a redirect, a stream that ends without its response, and
//! a call it never answers. It keeps what it saw of each request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// The session id the server gives.
pub const SESSION: &str = "session-1";

/// What the server saw of one request.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// The JSON-RPC method, for a POST.
    pub rpc: Option<String>,
    pub session: Option<String>,
    pub version: Option<String>,
    pub authorization: Option<String>,
}

pub struct McpHttpServer {
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    server: Arc<tiny_http::Server>,
}

fn header(request: &tiny_http::Request, name: &str) -> Option<String> {
    let name = name.to_ascii_lowercase();
    request
        .headers()
        .iter()
        .find(|h| h.field.as_str().as_str().to_ascii_lowercase() == name)
        .map(|h| h.value.as_str().to_owned())
}

fn respond(request: tiny_http::Request, status: u16, content_type: &str, body: String, session: bool) {
    let mut response = tiny_http::Response::from_string(body).with_status_code(status);
    response.add_header(tiny_http::Header::from_bytes("content-type", content_type).unwrap());
    if session {
        response.add_header(tiny_http::Header::from_bytes("mcp-session-id", SESSION).unwrap());
    }
    let _ = request.respond(response);
}

/// Server-sent events, one a message (each message's JSON pretty-printed over several
/// `data` lines, after a comment).
fn events(messages: &[Value]) -> String {
    let mut stream = String::from(": the stream starts\n\n");
    for message in messages {
        for line in serde_json::to_string_pretty(message).unwrap().lines() {
            stream.push_str(&format!("data: {line}\n"));
        }
        stream.push('\n');
    }
    stream
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn tools() -> Value {
    let tool = |name: &str| {
        json!({"name": name, "description": name, "inputSchema": {"type": "object"},
                                    "annotations": {"readOnlyHint": true, "openWorldHint": false}})
    };
    json!({"tools": [tool("read_note"), tool("hang"), tool("gone"), tool("moved"), tool("cut")]})
}

fn handle(mut request: tiny_http::Request, seen: &Mutex<Vec<Seen>>) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let message: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let rpc = message.get("method").and_then(Value::as_str).map(str::to_owned);
    let session = header(&request, "mcp-session-id");
    seen.lock().unwrap().push(Seen {
        method: request.method().to_string(),
        path: request.url().to_owned(),
        rpc: rpc.clone(),
        session: session.clone(),
        version: header(&request, "mcp-protocol-version"),
        authorization: header(&request, "authorization"),
    });
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if request.url() != "/mcp" {
        return respond(request, 500, "text/plain", "not here".into(), false);
    }
    match request.method() {
        tiny_http::Method::Get => {
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            return respond(request, 200, "text/event-stream", events(&[changed]), false);
        }
        tiny_http::Method::Delete => return respond(request, 200, "text/plain", String::new(), false),
        _ => {}
    }
    if rpc.as_deref() == Some("initialize") {
        // A server slow to begin a session: a client that sends on without waiting for the
        // answer shows whether the gateway lets anything overtake it.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let init = result(
            &id,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": true}},
                                      "serverInfo": {"name": "loopback", "version": "1"}}),
        );
        return respond(request, 200, "application/json", serde_json::to_string_pretty(&init).unwrap(), true);
    }
    if session.as_deref() != Some(SESSION) {
        return respond(request, 400, "text/plain", "no session".into(), false);
    }
    if message.get("id").is_none() {
        return respond(request, 202, "text/plain", String::new(), false);
    }
    let log =
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}});
    match (rpc.as_deref(), message.pointer("/params/name").and_then(Value::as_str)) {
        (Some("tools/list"), _) => {
            respond(request, 200, "text/event-stream", events(&[log, result(&id, tools())]), false)
        }
        (Some("tools/call"), Some("read_note")) => {
            let ran = result(&id, json!({"content": [{"type": "text", "text": "ran read_note"}]}));
            respond(request, 200, "text/event-stream", events(&[log, ran]), false)
        }
        (Some("tools/call"), Some("hang")) => std::thread::sleep(Duration::from_secs(20)),
        (Some("tools/call"), Some("gone")) => respond(request, 404, "text/plain", "session gone".into(), false),
        (Some("tools/call"), Some("moved")) => {
            let mut response = tiny_http::Response::from_string("").with_status_code(307);
            response.add_header(tiny_http::Header::from_bytes("location", "/elsewhere").unwrap());
            let _ = request.respond(response);
        }
        (Some("tools/call"), Some("cut")) => respond(request, 200, "text/event-stream", events(&[log]), false),
        _ => respond(
            request,
            200,
            "application/json",
            json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string(),
            false,
        ),
    }
}

impl McpHttpServer {
    pub fn start() -> McpHttpServer {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}/mcp", server.server_addr().to_ip().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (kept, incoming) = (seen.clone(), server.clone());
        std::thread::spawn(move || {
            for request in incoming.incoming_requests() {
                let kept = kept.clone();
                std::thread::spawn(move || handle(request, &kept));
            }
        });
        McpHttpServer { url, seen, server }
    }

    /// What the server saw, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        self.server.unblock();
    }
}
