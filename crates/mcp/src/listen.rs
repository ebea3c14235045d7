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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::framing::{self, INVALID_REQUEST, Kind, Line, PARSE_ERROR};
use crate::gate::Gate;
use crate::gateway::{Event, Gateway, GatewayConfig, Summary, id_key};
use crate::http::HttpUpstream;
use crate::stdio::{ServeError, UpstreamServer, end_child, open_session, spawn_child};

/// The most messages for the client kept while no stream is open to carry them.
pub const BACKLOG: usize = 1024;

/// The most client sessions at once; an `initialize` past it gets `503`.
pub const MAX_SESSIONS: usize = 64;

/// The most requests at work at once (each open event stream is one); a request past it gets
/// `503`.
pub const MAX_CONNECTIONS: usize = 512;

/// The most messages waiting on one event stream for its client to read them; a stream whose
/// client lets more pile up is let go of.
pub const STREAM_BUFFER: usize = 256;

/// How long a session may wait for its client unless told otherwise (`--session-idle`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);

/// How often the listener looks for a stop and for idle sessions between requests.
const TICK: Duration = Duration::from_millis(200);

/// The path the gateway serves MCP at.
pub const MCP_PATH: &str = "/mcp";

/// Where the gateway serves, and where its sessions' logs go.
pub struct Listen {
    /// A loopback address and port.
    pub address: SocketAddr,
    /// The directory each session's log is created in (created when missing).
    pub log_dir: PathBuf,
    /// How long a session waits for its client: one that sent no request for this long and
    /// waits for no answer is ended and its log sealed ([`DEFAULT_IDLE`] unless told). The time
    /// counts from the client's last request, or from the last answer it waited for if that
    /// came later.
    pub idle: Duration,
}

/// Where the messages for one client go: the open streams of its requests and its GET stream.
#[derive(Default)]
struct Router {
    /// Each open request stream, by the request's id, oldest first.
    requests: VecDeque<(String, SyncSender<Vec<u8>>)>,
    get: Option<SyncSender<Vec<u8>>>,
    backlog: VecDeque<Vec<u8>>,
}

impl Router {
    /// Routes one message for the client (one JSON line).
    fn route(&mut self, line: Vec<u8>) {
        let message: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        if framing::kind(&message) == Kind::Response {
            let key = id_key(message.get("id").unwrap_or(&Value::Null));
            if let Some(at) = self.requests.iter().position(|(id, _)| *id == key)
                && let Some((_, stream)) = self.requests.remove(at)
            {
                // The stream ends after its response: its sender is dropped here.
                let _ = stream.try_send(line);
            }
            // A response whose request's stream is gone (its client closed it, or stopped
            // reading) has nowhere to go: the transport allows a response only on its
            // request's stream.
            return;
        }
        self.send_other(line);
    }

    /// Sends a message that answers no open request: on the GET stream, else on the oldest
    /// request stream, else into the backlog. A stream its client has stopped reading (its
    /// buffer full) or has closed is let go of.
    fn send_other(&mut self, mut line: Vec<u8>) {
        if let Some(get) = &self.get {
            match get.try_send(line) {
                Ok(()) => return,
                Err(TrySendError::Full(back) | TrySendError::Disconnected(back)) => {
                    self.get = None;
                    line = back;
                }
            }
        }
        while let Some((_, stream)) = self.requests.front() {
            match stream.try_send(line) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => {
                    self.requests.pop_front();
                    line = back;
                }
                // A request stream whose client went away still waits for its response's
                // place; the message goes to the backlog.
                Err(TrySendError::Disconnected(back)) => {
                    line = back;
                    break;
                }
            }
        }
        if self.backlog.len() >= BACKLOG {
            self.backlog.pop_front();
        }
        self.backlog.push_back(line);
    }

    /// Opens the GET stream (a later one takes the place of an earlier one) and sends it what
    /// was waiting: its buffer holds the whole backlog and [`STREAM_BUFFER`] more.
    fn open_get(&mut self) -> Receiver<Vec<u8>> {
        let (stream, lines) = mpsc::sync_channel(BACKLOG + STREAM_BUFFER);
        for line in self.backlog.drain(..) {
            let _ = stream.try_send(line);
        }
        self.get = Some(stream);
        lines
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
    /// When its client last sent a request (any method) or received the answer it waited for;
    /// while it waits, when the idle sweep last found it waiting.
    last_seen: Instant,
}

/// The open client sessions, and whether the gateway is stopping: one lock for both, so that
/// no session can begin after the stop has ended every open one.
#[derive(Default)]
struct Sessions {
    open: HashMap<String, ClientSession>,
    stopping: bool,
}

/// What every request thread and session thread shares.
struct Shared {
    config: GatewayConfig,
    gate: Gate,
    contract: String,
    upstream: UpstreamServer,
    log_dir: PathBuf,
    idle: Duration,
    sessions: Mutex<Sessions>,
    /// The request threads at work (each open event stream is one).
    connections: AtomicUsize,
    /// Each session's thread, joined before [`serve`] returns so that every log is sealed.
    session_threads: Mutex<Vec<JoinHandle<()>>>,
    summaries: Mutex<Vec<(PathBuf, Summary)>>,
}

impl Shared {
    fn sessions(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Session `id`'s channels, its client seen now; `None` when there is no such session.
    fn touch(&self, id: &str) -> Option<(Sender<Event>, Arc<Mutex<Router>>)> {
        let mut sessions = self.sessions();
        let session = sessions.open.get_mut(id)?;
        session.last_seen = Instant::now();
        Some((session.events.clone(), Arc::clone(&session.router)))
    }

    fn stopping(&self) -> bool {
        self.sessions().stopping
    }

    /// Ends each session whose client has waited for no answer and sent nothing for the idle
    /// time. A request in flight (a call running, held for a person, a server slow to start)
    /// keeps its session open: a client is not quiet while it waits, however long the server
    /// takes. Its idle time counts from the answer (the request's handler marks the session
    /// seen when the answer's stream ends); marking a waiting session seen here as well leaves
    /// no moment, between the answer and that mark, in which it could be found idle.
    fn end_idle_sessions(&self) {
        let mut sessions = self.sessions();
        let now = Instant::now();
        let mut idle = Vec::new();
        for (id, session) in &mut sessions.open {
            let waiting = !session.router.lock().unwrap_or_else(PoisonError::into_inner).requests.is_empty();
            if waiting {
                session.last_seen = now;
            } else if now.duration_since(session.last_seen) >= self.idle {
                idle.push(id.clone());
            }
        }
        for id in idle {
            if let Some(session) = sessions.open.remove(&id) {
                let _ = session.events.send(Event::Idle);
            }
        }
    }
}

/// Counts a request thread at work while it lives.
struct Connection(Arc<Shared>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves MCP clients over Streamable HTTP at `listen` in front of `upstream` until SIGINT or
/// SIGTERM, each client session recorded in its own sealed log; returns each session's summary.
///
/// The first signal stops taking requests, ends every session and waits for each log's seal
/// (never for a client that stopped reading or writing mid-request); a second signal during
/// that wait exits the process at once.
pub fn serve(
    config: GatewayConfig,
    gate: Gate,
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
    let shared = Arc::new(Shared {
        config,
        gate,
        contract: contract.to_owned(),
        upstream,
        log_dir: listen.log_dir.clone(),
        idle: listen.idle,
        sessions: Mutex::new(Sessions::default()),
        connections: AtomicUsize::new(0),
        session_threads: Mutex::new(Vec::new()),
        summaries: Mutex::new(Vec::new()),
    });
    eprintln!(
        "decision mcp: serving MCP over Streamable HTTP at http://{}{MCP_PATH}; each session's log goes in {}",
        listen.address,
        decision::terminal::one_line(&listen.log_dir.display().to_string())
    );
    let watcher = {
        let (shared, server) = (Arc::clone(&shared), Arc::clone(&server));
        std::thread::spawn(move || {
            let mut received = signals.forever();
            if received.next().is_none() {
                return;
            }
            shared.sessions().stopping = true;
            server.unblock();
            if received.next().is_some() {
                eprintln!("decision mcp: a second signal: exiting now, without waiting for the sessions' seals");
                std::process::exit(130);
            }
        })
    };
    accept(&shared, &server);
    let open: Vec<ClientSession> = {
        let mut sessions = shared.sessions();
        sessions.stopping = true;
        sessions.open.drain().map(|(_, s)| s).collect()
    };
    for session in open {
        let _ = session.events.send(Event::Stop);
    }
    let threads = std::mem::take(&mut *shared.session_threads.lock().unwrap_or_else(PoisonError::into_inner));
    for thread in threads {
        let _ = thread.join();
    }
    handle.close();
    let _ = watcher.join();
    let summaries = std::mem::take(&mut *shared.summaries.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(summaries)
}

/// Takes requests, each on a thread of its own, until the gateway is stopping; ends idle
/// sessions between them.
fn accept(shared: &Arc<Shared>, server: &tiny_http::Server) {
    loop {
        match server.recv_timeout(TICK) {
            Ok(Some(request)) if shared.stopping() => {
                error_answer(request, 503, &Value::Null, INVALID_REQUEST, "the gateway is stopping");
            }
            Ok(Some(request)) => {
                if shared.connections.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                    shared.connections.fetch_sub(1, Ordering::AcqRel);
                    let why = format!("{MAX_CONNECTIONS} requests are open: try again later");
                    error_answer(request, 503, &Value::Null, INVALID_REQUEST, &why);
                } else {
                    let connection = Connection(Arc::clone(shared));
                    // Not joined: a client that stops reading or writing mid-request holds
                    // only its own thread, never the gateway's stop.
                    std::thread::spawn(move || handle_request(&connection.0, request));
                }
            }
            Ok(None) => {}
            Err(e) => {
                // A connection that failed before it became a request (too many open files,
                // a reset): the listener goes on.
                eprintln!("decision mcp: a connection failed: {}", decision::terminal::one_line(&e.to_string()));
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if shared.stopping() {
            return;
        }
        shared.end_idle_sessions();
    }
}

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

/// A JSON-RPC error answering the message with `id` (`null` when there is none to answer).
fn error_answer(request: tiny_http::Request, status: u16, id: &Value, code: i64, why: &str) {
    answer(request, status, Some(framing::error_response(id, code, why)));
}

fn handle_request(shared: &Arc<Shared>, mut request: tiny_http::Request) {
    let null = &Value::Null;
    if let Some(origin) = header(&request, "origin")
        && !loopback_origin(&origin)
    {
        let why = "requests from a page that is not on this machine are refused";
        return error_answer(request, 403, null, INVALID_REQUEST, why);
    }
    if request.url().split('?').next() != Some(MCP_PATH) {
        return error_answer(request, 404, null, INVALID_REQUEST, "MCP is served at /mcp");
    }
    let session_id = header(&request, "mcp-session-id");
    match request.method() {
        tiny_http::Method::Post => {}
        tiny_http::Method::Get => return open_get(shared, request, session_id.as_deref()),
        tiny_http::Method::Delete => {
            let ended = session_id.and_then(|id| shared.sessions().open.remove(&id));
            return match ended {
                Some(session) => {
                    let _ = session.events.send(Event::Client(Line::End));
                    answer(request, 200, None);
                }
                None => error_answer(request, 404, null, INVALID_REQUEST, "no such session"),
            };
        }
        _ => {
            let why = "use POST, GET or DELETE";
            let mut response =
                tiny_http::Response::from_string(framing::error_response(null, INVALID_REQUEST, why).to_string())
                    .with_status_code(405);
            for (name, value) in [("allow", "GET, POST, DELETE"), ("content-type", "application/json")] {
                if let Ok(header) = tiny_http::Header::from_bytes(name, value) {
                    response.add_header(header);
                }
            }
            let _ = request.respond(response);
            return;
        }
    }
    let max = shared.config.max_message;
    let mut body = Vec::new();
    let read = request.as_reader().take(u64::try_from(max).unwrap_or(u64::MAX) + 1).read_to_end(&mut body);
    if read.is_err() || body.len() > max {
        let why = format!("a message larger than the gateway accepts ({max} bytes), or unreadable");
        return error_answer(request, 413, null, INVALID_REQUEST, &why);
    }
    let message: Value = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => return error_answer(request, 400, null, PARSE_ERROR, &format!("parse error: {e}")),
    };
    if !message.is_object() {
        return error_answer(request, 400, null, INVALID_REQUEST, "one JSON-RPC message per request (no batches)");
    }
    let kind = framing::kind(&message);
    let message_id = message.get("id").unwrap_or(null);
    if kind == Kind::Other {
        let why = "not a JSON-RPC message: it has neither a method nor an id";
        return error_answer(request, 400, null, INVALID_REQUEST, why);
    }
    let (id, created) = match (session_id, kind) {
        (None, Kind::Request("initialize")) => match begin_session(shared) {
            Ok(id) => (id, true),
            Err((status, why)) => return error_answer(request, status, message_id, framing::UPSTREAM_ERROR, &why),
        },
        (None, _) => {
            let why = "no Mcp-Session-Id: begin with initialize";
            return error_answer(request, 400, message_id, INVALID_REQUEST, why);
        }
        (Some(id), _) => (id, false),
    };
    let Some((events, router)) = shared.touch(&id) else {
        let why = "no such session: begin again with initialize";
        return error_answer(request, 404, message_id, INVALID_REQUEST, why);
    };
    let Kind::Request(_) = kind else {
        let _ = events.send(Event::Client(Line::Message(body)));
        return answer(request, 202, None);
    };
    let key = id_key(message_id);
    let (stream, lines) = mpsc::sync_channel(STREAM_BUFFER);
    {
        let mut router = router.lock().unwrap_or_else(PoisonError::into_inner);
        if router.requests.iter().any(|(open, _)| *open == key) {
            drop(router);
            let why = "a request with this id is still open; JSON-RPC ids must be unique";
            return error_answer(request, 400, message_id, INVALID_REQUEST, why);
        }
        router.requests.push_back((key, stream));
    }
    drop(router);
    if events.send(Event::Client(Line::Message(body))).is_err() {
        return error_answer(request, 404, null, INVALID_REQUEST, "the session has ended");
    }
    drop(events);
    stream_events(request, created.then_some(id.as_str()), &lines);
    // The client was waiting until now: its idle time counts from the answer.
    let _ = shared.touch(&id);
}

/// Opens a client's GET stream.
fn open_get(shared: &Shared, request: tiny_http::Request, session_id: Option<&str>) {
    let Some(id) = session_id else {
        return error_answer(request, 400, &Value::Null, INVALID_REQUEST, "no Mcp-Session-Id");
    };
    let Some((_, router)) = shared.touch(id) else {
        return error_answer(request, 404, &Value::Null, INVALID_REQUEST, "no such session");
    };
    let lines = router.lock().unwrap_or_else(PoisonError::into_inner).open_get();
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

/// Begins a client session: its upstream server, its log and its relay loop on its own
/// thread; returns its id, or the HTTP status and reason it could not begin.
///
/// All of it under the sessions lock: a session is begun whole before a stop ends every open
/// one, or not at all.
fn begin_session(shared: &Arc<Shared>) -> Result<String, (u16, String)> {
    let mut sessions = shared.sessions();
    if sessions.stopping {
        return Err((503, "the gateway is stopping".to_owned()));
    }
    if sessions.open.len() >= MAX_SESSIONS {
        return Err((503, format!("{MAX_SESSIONS} sessions are open: end one first")));
    }
    let id = new_session_id().map_err(|why| (500, why))?;
    let (events, receiver) = mpsc::channel();
    let max = shared.config.max_message;
    let (upstream, shown) = match &shared.upstream {
        UpstreamServer::Command(command) => match spawn_child(command, &events, max) {
            Ok((child, stdin, shown)) => (Upstream::Child(child, stdin), shown),
            Err(e) => {
                // The command is shown to whoever runs the gateway, not to its clients.
                eprintln!("decision mcp: {}", decision::terminal::one_line(&e.to_string()));
                return Err((502, "the upstream server could not be started".to_owned()));
            }
        },
        UpstreamServer::Http(url) => {
            let server = HttpUpstream::new(url.clone(), events.clone(), max, shared.config.time_budget);
            (Upstream::Http(Box::new(server)), url.shown().to_owned())
        }
    };
    let log = session_log_path(&shared.log_dir, &id);
    let (session, inbox) = match open_session(&shared.config, &log) {
        Ok(opened) => opened,
        Err(e) => {
            upstream.end();
            eprintln!("decision mcp: {}", decision::terminal::one_line(&e.to_string()));
            return Err((500, "the session's log could not be created".to_owned()));
        }
    };
    let router = Arc::new(Mutex::new(Router::default()));
    let client = ClientWriter { router: Arc::clone(&router), pending: Vec::new() };
    let streams = Arc::clone(&router);
    sessions.open.insert(id.clone(), ClientSession { events, router, last_seen: Instant::now() });
    let session_id = id.clone();
    let thread_shared = Arc::clone(shared);
    let thread = std::thread::spawn(move || {
        let shared = thread_shared;
        let ended = run_session(&shared, session, inbox, client, upstream, &receiver, &shown);
        shared.sessions().open.remove(&session_id);
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
                shared.summaries.lock().unwrap_or_else(PoisonError::into_inner).push((log, summary));
            }
            Err(e) => eprintln!(
                "decision mcp: session {}: {}",
                session_id.get(..8).unwrap_or(&session_id),
                decision::terminal::one_line(&e.to_string())
            ),
        }
    });
    shared.session_threads.lock().unwrap_or_else(PoisonError::into_inner).push(thread);
    Ok(id)
}

/// A session's upstream server, owned by its thread.
enum Upstream {
    Child(Child, std::process::ChildStdin),
    Http(Box<HttpUpstream>),
}

impl Upstream {
    /// Ends the server: the child's input is closed and it is given a moment to exit before
    /// it is killed; the HTTP session is deleted.
    fn end(self) {
        match self {
            Upstream::Child(mut child, stdin) => {
                drop(stdin);
                end_child(&mut child);
            }
            Upstream::Http(mut server) => server.close(),
        }
    }
}

/// Relays one session until it ends, then seals its log and ends its server (whether or not
/// the relay could begin).
fn run_session(
    shared: &Shared,
    session: crate::session::Session,
    inbox: Option<crate::inbox::Inbox>,
    mut client: ClientWriter,
    mut upstream: Upstream,
    receiver: &Receiver<Event>,
    shown: &str,
) -> Result<Summary, ServeError> {
    let config = shared.config.clone();
    let relayed = {
        let server: &mut dyn Write = match &mut upstream {
            Upstream::Child(_, stdin) => stdin,
            Upstream::Http(server) => server.as_mut(),
        };
        let mut gateway = Gateway::new(config, &shared.gate, session, inbox, &mut client, server);
        match gateway.start(shown, &shared.contract) {
            Ok(()) => gateway.run(receiver).map_err(ServeError::from),
            Err(e) => Err(ServeError::from(e)),
        }
    };
    drop(client);
    upstream.end();
    relayed
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
        let (first, first_lines) = mpsc::sync_channel(STREAM_BUFFER);
        router.requests.push_back(("1".into(), first));
        router.route(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#.to_vec());
        router.route(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec());
        let got: Vec<Vec<u8>> = first_lines.try_iter().collect();
        assert_eq!(got.len(), 2, "the notification rode on the open request's stream, then its response");
        assert!(router.requests.is_empty(), "the stream ended after its response");
        // No stream open: it waits, and the GET stream gets it when it opens.
        router.route(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_vec());
        assert_eq!(router.backlog.len(), 1);
        let get_lines = router.open_get();
        assert_eq!(get_lines.try_iter().count(), 1);
        // A response for no open request never goes on the GET stream.
        router.route(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#.to_vec());
        assert_eq!(get_lines.try_iter().count(), 0);
        assert!(router.backlog.is_empty());
        // A server that writes the id back as 2.0 still answers request 2.
        let (second, second_lines) = mpsc::sync_channel(STREAM_BUFFER);
        router.requests.push_back((id_key(&serde_json::json!(2)), second));
        router.route(br#"{"jsonrpc":"2.0","id":2.0,"result":{}}"#.to_vec());
        assert_eq!(second_lines.try_iter().count(), 1);
        assert!(router.requests.is_empty());
        assert_ne!(id_key(&serde_json::json!("2")), id_key(&serde_json::json!(2)), "a string id is another id");
    }

    #[test]
    fn a_stream_its_client_stops_reading_is_let_go_of_and_nothing_piles_up_without_bound() {
        let mut router = Router::default();
        let get_lines = router.open_get();
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message"}"#;
        for _ in 0..BACKLOG + STREAM_BUFFER {
            router.route(note.to_vec());
        }
        assert!(router.get.is_some(), "a full buffer is still a stream");
        assert!(router.backlog.is_empty());
        router.route(note.to_vec());
        assert!(router.get.is_none(), "one past a full buffer lets the stream go");
        assert_eq!(router.backlog.len(), 1, "and the message waits for the next stream");
        for _ in 0..BACKLOG * 2 {
            router.route(note.to_vec());
        }
        assert_eq!(router.backlog.len(), BACKLOG, "the backlog keeps the newest {BACKLOG}");
        assert_eq!(get_lines.try_iter().count(), BACKLOG + STREAM_BUFFER, "what the stream took before, it keeps");
        // A request stream its client does not read is let go of the same way.
        let (stream, _unread) = mpsc::sync_channel(STREAM_BUFFER);
        router.requests.push_back(("1".into(), stream));
        let get_lines = router.open_get();
        assert_eq!(get_lines.try_iter().count(), BACKLOG, "a new GET stream takes the whole backlog");
        drop(get_lines);
        for _ in 0..=STREAM_BUFFER {
            router.route(note.to_vec());
        }
        assert!(router.requests.is_empty(), "the unread request stream was let go of");
        assert_eq!(router.backlog.len(), 1);
    }
}
