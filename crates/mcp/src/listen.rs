//! The gateway serving MCP clients over Streamable HTTP (`decision mcp --listen ADDRESS`).
//!
//! Each client session — begun by an `initialize` POSTed without a session id — is a gateway
//! session of its own: its own upstream server (a child spawned from the command, or its own
//! Streamable HTTP session with the upstream URL), its own relay loop on its own thread, and its
//! own sealed log in the log directory. The session id the gateway gives (`Mcp-Session-Id`, 128
//! random bits) routes every later request to it; `DELETE` ends it, and so does SIGINT or
//! SIGTERM, which ends them all, each with a seal.
//!
//! A POSTed request is answered on an event stream that carries, besides its response, what
//! the session sends while it is open; notifications and responses from the client get
//! `202 Accepted`. Messages for the client that answer no open request (a server's
//! notification, the gateway's own elicitation) go on the client's GET stream when it has one
//! open, else on the oldest open request stream, else wait (at most [`BACKLOG`] of them) for
//! one to open.
//!
//! Only loopback addresses are served: the gateway authenticates no client, so it listens
//! where only this machine reaches it, and it refuses a request whose `Origin` is not a
//! loopback page (a web page's script reaching the gateway through the browser).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::framing::{self, INVALID_REQUEST, Kind, Line, PARSE_ERROR};
use crate::gate::Gate;
use crate::gateway::{Event, Gateway, GatewayConfig, Summary};
use crate::http::HttpUpstream;
use crate::stdio::{ServeError, UpstreamServer, end_child, open_session, spawn_child};

/// The most messages for the client kept while no stream is open to carry them.
pub const BACKLOG: usize = 1024;

/// The most client sessions at once; an `initialize` past it gets `503`.
pub const MAX_SESSIONS: usize = 64;

/// The path the gateway serves MCP at.
pub const MCP_PATH: &str = "/mcp";

/// Where the gateway serves, and where its sessions' logs go.
pub struct Listen {
    /// A loopback address and port.
    pub address: SocketAddr,
    /// The directory each session's log is created in (created when missing).
    pub log_dir: PathBuf,
}

/// Where the messages for one client go: the open streams of its requests and its GET stream.
#[derive(Default)]
struct Router {
    /// Each open request stream, by the request's id, oldest first.
    requests: VecDeque<(String, Sender<Vec<u8>>)>,
    get: Option<Sender<Vec<u8>>>,
    backlog: VecDeque<Vec<u8>>,
}

impl Router {
    /// Routes one message for the client (one JSON line).
    fn route(&mut self, line: Vec<u8>) {
        let message: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        if framing::kind(&message) == Kind::Response {
            let key = message.get("id").map(Value::to_string).unwrap_or_default();
            if let Some(at) = self.requests.iter().position(|(id, _)| *id == key)
                && let Some((_, stream)) = self.requests.remove(at)
            {
                // The stream ends after its response: its sender is dropped here.
                let _ = stream.send(line);
                return;
            }
        }
        self.send_other(line);
    }

    fn send_other(&mut self, line: Vec<u8>) {
        if let Some(get) = &self.get {
            match get.send(line) {
                Ok(()) => return,
                Err(mpsc::SendError(line)) => {
                    self.get = None;
                    return self.send_other(line);
                }
            }
        }
        let open = self.requests.front().map(|(_, stream)| stream.send(line.clone()));
        if open.is_some_and(|sent| sent.is_ok()) {
            return;
        }
        if self.backlog.len() >= BACKLOG {
            self.backlog.pop_front();
        }
        self.backlog.push_back(line);
    }

    /// Opens the GET stream (a later one takes the place of an earlier one), and sends it what
    /// was waiting.
    fn open_get(&mut self, stream: Sender<Vec<u8>>) {
        for line in self.backlog.drain(..) {
            let _ = stream.send(line);
        }
        self.get = Some(stream);
    }
}

/// The writer a session's relay loop writes client messages to.
struct ClientWriter {
    router: Arc<Mutex<Router>>,
    pending: Vec<u8>,
}

impl Write for ClientWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut router = self.router.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.pending.drain(..=at).collect();
            line.pop();
            router.route(line);
        }
        Ok(())
    }
}

/// One client session as the request threads see it.
struct ClientSession {
    events: Sender<Event>,
    router: Arc<Mutex<Router>>,
}

/// What every request thread shares.
struct Shared<'g> {
    config: GatewayConfig,
    gate: &'g Gate,
    contract: &'g str,
    upstream: UpstreamServer,
    log_dir: PathBuf,
    sessions: Mutex<HashMap<String, ClientSession>>,
    stopping: AtomicBool,
}

/// Serves MCP clients over Streamable HTTP at `listen` in front of `upstream` until SIGINT or
/// SIGTERM, each client session recorded in its own sealed log; returns each session's summary.
pub fn serve(
    config: GatewayConfig,
    gate: &Gate,
    contract: &str,
    listen: &Listen,
    upstream: UpstreamServer,
) -> Result<Vec<(PathBuf, Summary)>, ServeError> {
    if !listen.address.ip().is_loopback() {
        return Err(ServeError::NotLoopback(listen.address));
    }
    std::fs::create_dir_all(&listen.log_dir)
        .map_err(|source| ServeError::LogDir { path: listen.log_dir.clone(), source })?;
    let server = tiny_http::Server::http(listen.address)
        .map_err(|e| ServeError::Listen { address: listen.address, why: e.to_string() })?;
    let server = Arc::new(server);
    let mut signals = Signals::new([SIGINT, SIGTERM]).map_err(ServeError::Signals)?;
    let handle = signals.handle();
    let shared = Shared {
        config,
        gate,
        contract,
        upstream,
        log_dir: listen.log_dir.clone(),
        sessions: Mutex::new(HashMap::new()),
        stopping: AtomicBool::new(false),
    };
    let summaries = Mutex::new(Vec::new());
    eprintln!(
        "decision mcp: serving MCP over Streamable HTTP at http://{}{MCP_PATH}; each session's log goes in {}",
        listen.address,
        decision::terminal::one_line(&listen.log_dir.display().to_string())
    );
    std::thread::scope(|scope| {
        let unblock = Arc::clone(&server);
        let stopping = &shared.stopping;
        scope.spawn(move || {
            if signals.forever().next().is_some() {
                stopping.store(true, Ordering::Release);
                unblock.unblock();
            }
        });
        for request in server.incoming_requests() {
            if shared.stopping.load(Ordering::Acquire) {
                break;
            }
            let (shared, summaries) = (&shared, &summaries);
            scope.spawn(move || handle_request(scope, shared, summaries, request));
        }
        shared.stopping.store(true, Ordering::Release);
        handle.close();
        let sessions: Vec<ClientSession> =
            shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, s)| s).collect();
        for session in sessions {
            let _ = session.events.send(Event::Stop);
        }
    });
    Ok(summaries.into_inner().unwrap_or_else(PoisonError::into_inner))
}

type Summaries = Mutex<Vec<(PathBuf, Summary)>>;

/// Whether `origin` (an `Origin` header) is a page on this machine.
fn loopback_origin(origin: &str) -> bool {
    let host = origin.split("://").nth(1).unwrap_or_default();
    let host = host.rsplit_once(':').filter(|(h, port)| !h.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    let host = host.map_or_else(|| origin.split("://").nth(1).unwrap_or_default(), |(h, _)| h);
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

fn header(request: &tiny_http::Request, name: &str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str().to_owned())
}

/// A plain answer: `status` with a JSON body (a JSON-RPC error, or nothing).
fn answer(request: tiny_http::Request, status: u16, body: Option<Value>) {
    let text = body.map(|b| b.to_string()).unwrap_or_default();
    let mut response = tiny_http::Response::from_string(text).with_status_code(status);
    if let Ok(header) = tiny_http::Header::from_bytes("content-type", "application/json") {
        response.add_header(header);
    }
    let _ = request.respond(response);
}

fn error_answer(request: tiny_http::Request, status: u16, code: i64, why: &str) {
    answer(request, status, Some(framing::error_response(&Value::Null, code, why)));
}

fn handle_request<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    shared: &'env Shared<'env>,
    summaries: &'env Summaries,
    mut request: tiny_http::Request,
) {
    if let Some(origin) = header(&request, "origin")
        && !loopback_origin(&origin)
    {
        return error_answer(
            request,
            403,
            INVALID_REQUEST,
            "requests from a page that is not on this machine are refused",
        );
    }
    if request.url().split('?').next() != Some(MCP_PATH) {
        return error_answer(request, 404, INVALID_REQUEST, "MCP is served at /mcp");
    }
    let session_id = header(&request, "mcp-session-id");
    match request.method() {
        tiny_http::Method::Post => {}
        tiny_http::Method::Get => return open_get(shared, request, session_id.as_deref()),
        tiny_http::Method::Delete => {
            let ended =
                session_id.and_then(|id| shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&id));
            return match ended {
                Some(session) => {
                    let _ = session.events.send(Event::Client(Line::End));
                    answer(request, 200, None);
                }
                None => error_answer(request, 404, INVALID_REQUEST, "no such session"),
            };
        }
        _ => return error_answer(request, 405, INVALID_REQUEST, "use POST, GET or DELETE"),
    }
    let max = shared.config.max_message;
    let mut body = Vec::new();
    let read = request.as_reader().take(u64::try_from(max).unwrap_or(u64::MAX) + 1).read_to_end(&mut body);
    if read.is_err() || body.len() > max {
        let why = format!("a message larger than the gateway accepts ({max} bytes), or unreadable");
        return error_answer(request, 413, INVALID_REQUEST, &why);
    }
    let message: Value = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => return error_answer(request, 400, PARSE_ERROR, &format!("parse error: {e}")),
    };
    if !message.is_object() {
        return error_answer(request, 400, INVALID_REQUEST, "one JSON-RPC message per request (no batches)");
    }
    let kind = framing::kind(&message);
    if kind == Kind::Other {
        return error_answer(
            request,
            400,
            INVALID_REQUEST,
            "not a JSON-RPC message: it has neither a method nor an id",
        );
    }
    let (id, created) = match (session_id, kind) {
        (None, Kind::Request("initialize")) => match begin_session(scope, shared, summaries) {
            Ok(id) => (id, true),
            Err((status, why)) => return error_answer(request, status, framing::UPSTREAM_ERROR, &why),
        },
        (None, _) => return error_answer(request, 400, INVALID_REQUEST, "no Mcp-Session-Id: begin with initialize"),
        (Some(id), _) => (id, false),
    };
    let sessions = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(session) = sessions.get(&id) else {
        drop(sessions);
        return error_answer(request, 404, INVALID_REQUEST, "no such session: begin again with initialize");
    };
    let (events, router) = (session.events.clone(), Arc::clone(&session.router));
    drop(sessions);
    let Kind::Request(_) = kind else {
        let _ = events.send(Event::Client(Line::Message(body)));
        return answer(request, 202, None);
    };
    let key = message.get("id").map(Value::to_string).unwrap_or_default();
    let (stream, lines) = mpsc::channel();
    {
        let mut router = router.lock().unwrap_or_else(PoisonError::into_inner);
        if router.requests.iter().any(|(open, _)| *open == key) {
            drop(router);
            let why = "a request with this id is still open; JSON-RPC ids must be unique";
            return answer(
                request,
                400,
                Some(framing::error_response(message.get("id").unwrap_or(&Value::Null), INVALID_REQUEST, why)),
            );
        }
        router.requests.push_back((key, stream));
    }
    drop(router);
    if events.send(Event::Client(Line::Message(body))).is_err() {
        return error_answer(request, 404, INVALID_REQUEST, "the session has ended");
    }
    drop(events);
    stream_events(request, created.then_some(id.as_str()), &lines);
}

/// Opens a client's GET stream.
fn open_get(shared: &Shared<'_>, request: tiny_http::Request, session_id: Option<&str>) {
    let Some(id) = session_id else {
        return error_answer(request, 400, INVALID_REQUEST, "no Mcp-Session-Id");
    };
    let router = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).get(id).map(|s| Arc::clone(&s.router));
    let Some(router) = router else {
        return error_answer(request, 404, INVALID_REQUEST, "no such session");
    };
    let (stream, lines) = mpsc::channel();
    router.lock().unwrap_or_else(PoisonError::into_inner).open_get(stream);
    // The stream ends when the session lets go of its sender: nothing here may hold the router.
    drop(router);
    stream_events(request, None, &lines);
}

/// Answers `request` with an event stream of the lines `lines` receives, until its senders
/// are gone; each line is one event, each event one chunk, flushed as it is written.
fn stream_events(request: tiny_http::Request, session_id: Option<&str>, lines: &Receiver<Vec<u8>>) {
    let mut writer = request.into_writer();
    let session = session_id.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         Transfer-Encoding: chunked\r\n{session}\r\n"
    );
    if writer.write_all(head.as_bytes()).and_then(|()| writer.flush()).is_err() {
        return;
    }
    for line in lines {
        let mut event = Vec::with_capacity(line.len() + 20);
        event.extend_from_slice(b"event: message\ndata: ");
        event.extend_from_slice(&line);
        event.extend_from_slice(b"\n\n");
        let chunk = format!("{:x}\r\n", event.len());
        let sent = writer
            .write_all(chunk.as_bytes())
            .and_then(|()| writer.write_all(&event))
            .and_then(|()| writer.write_all(b"\r\n"))
            .and_then(|()| writer.flush());
        if sent.is_err() {
            return;
        }
    }
    let _ = writer.write_all(b"0\r\n\r\n").and_then(|()| writer.flush());
}

/// A new random session id: 128 bits, hex.
fn new_session_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random session id: {e}"))?;
    Ok(const_hex::encode(bytes))
}

/// Begins a client session: its log, its upstream server and its relay loop on its own
/// thread; returns its id, or the HTTP status and reason it could not begin.
fn begin_session<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    shared: &'env Shared<'env>,
    summaries: &'env Summaries,
) -> Result<String, (u16, String)> {
    if shared.stopping.load(Ordering::Acquire) {
        return Err((503, "the gateway is stopping".to_owned()));
    }
    if shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).len() >= MAX_SESSIONS {
        return Err((503, format!("{MAX_SESSIONS} sessions are open: end one first")));
    }
    let id = new_session_id().map_err(|why| (500, why))?;
    let log = session_log_path(&shared.log_dir, &id);
    let (session, inbox) = open_session(&shared.config, &log).map_err(|e| (500, e.to_string()))?;
    let (events, receiver) = mpsc::channel();
    let max = shared.config.max_message;
    let (upstream, shown): (Upstream, String) = match &shared.upstream {
        UpstreamServer::Command(command) => {
            let (child, stdin, shown) = spawn_child(command, &events, max).map_err(|e| (502, e.to_string()))?;
            (Upstream::Child(child, stdin), shown)
        }
        UpstreamServer::Http(url) => {
            let server = HttpUpstream::new(url.clone(), events.clone(), max, shared.config.time_budget);
            (Upstream::Http(Box::new(server)), url.url().to_owned())
        }
    };
    let router = Arc::new(Mutex::new(Router::default()));
    let client = ClientWriter { router: Arc::clone(&router), pending: Vec::new() };
    let streams = Arc::clone(&router);
    shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), ClientSession { events, router });
    let session_id = id.clone();
    scope.spawn(move || {
        let ended = run_session(shared, session, inbox, client, upstream, &receiver, &shown);
        shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&session_id);
        // Every stream still open ends with the session (a request it never answered, the
        // GET stream).
        *streams.lock().unwrap_or_else(PoisonError::into_inner) = Router::default();
        match ended {
            Ok(summary) => {
                eprintln!(
                    "decision mcp: session {} {} — {} call(s): {} forwarded, {} refused, {} held; log sealed: {}",
                    session_id.get(..8).unwrap_or(&session_id),
                    summary.ended,
                    summary.calls,
                    summary.forwarded,
                    summary.refused,
                    summary.held,
                    decision::terminal::one_line(&log.display().to_string())
                );
                summaries.lock().unwrap_or_else(PoisonError::into_inner).push((log, summary));
            }
            Err(e) => eprintln!("decision mcp: session {session_id}: {}", decision::terminal::one_line(&e.to_string())),
        }
    });
    Ok(id)
}

/// A session's upstream server, owned by its thread.
enum Upstream {
    Child(Child, std::process::ChildStdin),
    Http(Box<HttpUpstream>),
}

fn run_session(
    shared: &Shared<'_>,
    session: crate::session::Session,
    inbox: Option<crate::inbox::Inbox>,
    mut client: ClientWriter,
    upstream: Upstream,
    receiver: &Receiver<Event>,
    shown: &str,
) -> Result<Summary, ServeError> {
    let config = shared.config.clone();
    match upstream {
        Upstream::Child(mut child, mut stdin) => {
            let mut gateway = Gateway::new(config, shared.gate, session, inbox, &mut client, &mut stdin);
            gateway.start(shown, shared.contract)?;
            let summary = gateway.run(receiver);
            drop(client);
            drop(stdin);
            end_child(&mut child);
            Ok(summary?)
        }
        Upstream::Http(mut server) => {
            let mut gateway = Gateway::new(config, shared.gate, session, inbox, &mut client, server.as_mut());
            gateway.start(shown, shared.contract)?;
            let summary = gateway.run(receiver);
            drop(client);
            server.close();
            Ok(summary?)
        }
    }
}

/// Where session `id`'s log goes: the time it began and the id's first 12 characters.
fn session_log_path(dir: &Path, id: &str) -> PathBuf {
    let begun = decision::log::now_ms();
    dir.join(format!("mcp-{begun}-{}.jsonl", id.get(..12).unwrap_or(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_page_on_this_machine_is_a_loopback_origin() {
        for origin in ["http://localhost", "http://localhost:6274", "http://127.0.0.1:8080", "http://[::1]:3000"] {
            assert!(loopback_origin(origin), "{origin}");
        }
        for origin in ["https://evil.example", "http://localhost.evil.example", "http://127.0.0.1.nip.io", "null"] {
            assert!(!loopback_origin(origin), "{origin}");
        }
    }

    #[test]
    fn a_response_goes_on_its_requests_stream_and_everything_else_on_the_get_stream_or_waits() {
        let mut router = Router::default();
        let (first, first_lines) = mpsc::channel();
        router.requests.push_back(("1".into(), first));
        router.route(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#.to_vec());
        router.route(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec());
        let got: Vec<Vec<u8>> = first_lines.try_iter().collect();
        assert_eq!(got.len(), 2, "the notification rode on the open request's stream, then its response");
        assert!(router.requests.is_empty(), "the stream ended after its response");
        // No stream open: it waits, and the GET stream gets it when it opens.
        router.route(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_vec());
        assert_eq!(router.backlog.len(), 1);
        let (get, get_lines) = mpsc::channel();
        router.open_get(get);
        assert_eq!(get_lines.try_iter().count(), 1);
        // A response for no open request goes on the GET stream rather than being lost.
        router.route(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#.to_vec());
        assert_eq!(get_lines.try_iter().count(), 1);
    }
}
