//! The upstream server over Streamable HTTP (`decision mcp --upstream URL`): the gateway is
//! the server's client. Each message the gateway writes upstream is POSTed to the URL; the
//! server answers a request with one JSON body or a stream of server-sent events (its
//! response, and any requests and notifications it sends meanwhile), and a notification or a
//! response with `202 Accepted`. Every message that comes back reaches the relay loop as an
//! [`Event::Upstream`] line, exactly as a line from a stdio server would.
//!
//! The session id the server gives in its answer to `initialize` (`Mcp-Session-Id`) and the
//! negotiated protocol version (`MCP-Protocol-Version`) go on every later request; after the
//! client's `notifications/initialized` the gateway opens the GET stream the server may send
//! messages on outside any request (a `tools/list_changed`, for one), and when the session
//! ends it sends `DELETE`.
//!
//! Failures become answers, never hangs: a request the server answers with an HTTP error, or
//! that cannot reach it, is answered with a JSON-RPC error under its id, as a message from
//! upstream. Redirects are refused (a redirect would carry the request, and its headers, to
//! wherever it points). Each request runs on its own thread, at most [`MAX_REQUESTS`] at once.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use thiserror::Error;

use crate::framing::{self, Kind, Line, UPSTREAM_ERROR};
use crate::gateway::Event;
use crate::sse::EventStream;

/// The most requests in flight to the server at once; one more is answered with an error.
pub const MAX_REQUESTS: usize = 64;

/// The variable that holds headers for every request to the server, as `name=value` pairs
/// separated by commas (an `Authorization` header, for one). Values are never shown.
pub const HEADERS_VARIABLE: &str = "DECISION_MCP_UPSTREAM_HEADERS";

/// The longest session id the gateway takes from a server.
const MAX_SESSION_ID: usize = 256;

/// How long connecting to the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the upstream URL or its headers cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamError {
    /// Not an `http://` or `https://` URL with a host.
    #[error("--upstream must be an http:// or https:// URL with a host")]
    Url,
    /// The URL carries a user name or password: they would be shown and sent in the clear.
    #[error("--upstream must not carry credentials in the URL; put them in {HEADERS_VARIABLE}")]
    Credentials,
    /// The headers variable is not `name=value` pairs.
    #[error("{HEADERS_VARIABLE}: entry {0} is not a `name=value` pair with a valid header name and value")]
    Header(usize),
    /// Headers (a token, a key) would go over plain `http://` to another machine.
    #[error("{HEADERS_VARIABLE} would go in the clear over http:// to a host that is not this machine; use https://")]
    Cleartext,
}

/// The server's URL, and the headers sent with each request.
#[derive(Clone)]
pub struct Upstream {
    url: String,
    /// The URL as shown and recorded: its query, which may carry a key, left out.
    shown: String,
    headers: Vec<(String, String)>,
}

impl Upstream {
    /// The server at `url`, with the headers `headers` (the value of [`HEADERS_VARIABLE`],
    /// when set).
    pub fn new(url: &str, headers: Option<&str>) -> Result<Upstream, UpstreamError> {
        let uri: ureq::http::Uri = url.trim().parse().map_err(|_| UpstreamError::Url)?;
        uri.scheme_str().filter(|s| *s == "http" || *s == "https").ok_or(UpstreamError::Url)?;
        uri.host().filter(|h| !h.is_empty()).ok_or(UpstreamError::Url)?;
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err(UpstreamError::Credentials);
        }
        let headers = match headers.filter(|h| !h.trim().is_empty()) {
            Some(headers) => parse_headers(headers)?,
            None => Vec::new(),
        };
        let loopback = uri.host().is_some_and(|h| {
            let h = h.trim_start_matches('[').trim_end_matches(']');
            h.eq_ignore_ascii_case("localhost") || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        });
        if !headers.is_empty() && uri.scheme_str() == Some("http") && !loopback {
            return Err(UpstreamError::Cleartext);
        }
        let url = url.trim().to_owned();
        let shown = match url.split_once(['?', '#']) {
            Some((base, _)) => format!("{base}?…"),
            None => url.clone(),
        };
        Ok(Upstream { url, shown, headers })
    }

    /// The URL as shown and recorded: without its query or fragment (`?…` in their place), which
    /// may carry a key.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

fn parse_headers(text: &str) -> Result<Vec<(String, String)>, UpstreamError> {
    let mut headers = Vec::new();
    for (index, entry) in text.split(',').enumerate() {
        let (name, value) = entry.split_once('=').ok_or(UpstreamError::Header(index + 1))?;
        let (name, value) = (name.trim(), value.trim());
        let valid = ureq::http::HeaderName::from_bytes(name.as_bytes()).is_ok()
            && ureq::http::HeaderValue::from_str(value).is_ok();
        if !valid || name.is_empty() {
            return Err(UpstreamError::Header(index + 1));
        }
        headers.push((name.to_owned(), value.to_owned()));
    }
    Ok(headers)
}

/// What every request thread shares.
struct Shared {
    upstream: Upstream,
    agent: ureq::Agent,
    events: Sender<Event>,
    max_message: usize,
    /// The session id the server gave, once it gave one.
    session: Mutex<Option<String>>,
    /// The protocol version the server answered `initialize` with.
    version: Mutex<Option<String>>,
    requests: AtomicUsize,
    /// Whether the GET stream was opened (it is tried once).
    listening: AtomicBool,
    /// The order messages reach the server in.
    order: Mutex<Order>,
    settled: Condvar,
    /// The longest a message waits for those before it.
    time_budget: Duration,
}

/// What a message must wait for before it is sent, so that none overtakes one the client sent
/// before it: an `initialize` (whose answer gives the session id every later message must
/// carry), and every notification and response before it (each quick to send, one after
/// another). A request does not make later messages wait: it may take as long as a tool runs.
#[derive(Default)]
struct Order {
    /// An `initialize` was sent and is not yet answered.
    beginning: bool,
    /// How many notifications and responses were handed to the worker, and how many it sent.
    handed: u64,
    sent: u64,
}

impl Shared {
    fn order(&self) -> MutexGuard<'_, Order> {
        self.order.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An `initialize` is on its way: what is sent after it waits for its answer.
    fn begin(&self) {
        self.order().beginning = true;
    }

    /// The server answered the `initialize` (or could not be reached).
    fn begun(&self) {
        self.order().beginning = false;
        self.settled.notify_all();
    }

    /// A notification or response handed to the worker; returns its place.
    fn hand(&self) -> u64 {
        let mut order = self.order();
        order.handed += 1;
        order.handed
    }

    /// The worker sent the notification or response at `place`.
    fn sent(&self, place: u64) {
        self.order().sent = place;
        self.settled.notify_all();
    }

    /// Waits (within the time budget) while an `initialize` is unanswered or the first
    /// `before` notifications and responses are unsent.
    fn wait_for_earlier(&self, before: u64) {
        let deadline = Instant::now() + self.time_budget;
        let mut order = self.order();
        while order.beginning || order.sent < before {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            order = self.settled.wait_timeout(order, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

/// The writer the relay loop writes upstream messages to: each line written and flushed is
/// one message POSTed to the server.
pub struct HttpUpstream {
    shared: Arc<Shared>,
    pending: Vec<u8>,
    /// Notifications and responses, in order, to the one thread that POSTs them.
    ordered: Option<Sender<(Vec<u8>, Value, u64)>>,
}

impl HttpUpstream {
    /// A client of `upstream` sending what comes back to `events`; requests the server takes
    /// longer than `time_budget` to answer are given up soon after (the relay loop has
    /// answered them by then).
    pub fn new(upstream: Upstream, events: Sender<Event>, max_message: usize, time_budget: Duration) -> HttpUpstream {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(concat!("decision-mcp/", env!("CARGO_PKG_VERSION")))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_global(Some(time_budget + Duration::from_secs(5)))
            .max_redirects(0)
            .build()
            .into();
        let shared = Arc::new(Shared {
            upstream,
            agent,
            events,
            max_message,
            session: Mutex::new(None),
            version: Mutex::new(None),
            requests: AtomicUsize::new(0),
            listening: AtomicBool::new(false),
            order: Mutex::new(Order::default()),
            settled: Condvar::new(),
            time_budget,
        });
        let (ordered, queue) = mpsc::channel::<(Vec<u8>, Value, u64)>();
        let worker = Arc::clone(&shared);
        std::thread::spawn(move || {
            for (bytes, message, place) in queue {
                worker.wait_for_earlier(place - 1);
                post(&worker, &bytes, &message);
                worker.sent(place);
            }
        });
        HttpUpstream { shared, pending: Vec::new(), ordered: Some(ordered) }
    }

    /// Ends the session at the server (`DELETE` with its id), when it gave one.
    pub fn close(&mut self) {
        drop(self.ordered.take());
        // Taken, not copied: the session is ended once, by the first `close` (an explicit one,
        // or the one `Drop` makes).
        let session = self.shared.session.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(session) = session {
            let request = self
                .shared
                .agent
                .delete(&self.shared.upstream.url)
                .config()
                .timeout_global(Some(Duration::from_secs(2)))
                .build();
            let _ = with_headers(&self.shared, request.header("mcp-session-id", session)).call();
        }
    }

    fn dispatch(&mut self, bytes: Vec<u8>) {
        let Ok(message) = serde_json::from_slice::<Value>(&bytes) else { return };
        if !matches!(framing::kind(&message), Kind::Request(_)) {
            if let Some(ordered) = &self.ordered {
                let place = self.shared.hand();
                let _ = ordered.send((bytes, message, place));
            }
            return;
        }
        if self.shared.requests.fetch_add(1, Ordering::AcqRel) >= MAX_REQUESTS {
            self.shared.requests.fetch_sub(1, Ordering::AcqRel);
            let why = format!("{MAX_REQUESTS} requests are already in flight to the upstream server");
            answer_error(&self.shared, &message, &why);
            return;
        }
        let initialize = framing::kind(&message) == Kind::Request("initialize");
        // Decided here, on the relay loop's thread, in the order the client sent them.
        let before = self.shared.order().handed;
        if initialize {
            self.shared.begin();
        }
        let shared = Arc::clone(&self.shared);
        std::thread::spawn(move || {
            if !initialize {
                shared.wait_for_earlier(before);
            }
            post(&shared, &bytes, &message);
            shared.requests.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

impl Write for HttpUpstream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        while let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.pending.drain(..=at).collect();
            line.pop();
            if !line.iter().all(u8::is_ascii_whitespace) {
                self.dispatch(line);
            }
        }
        Ok(())
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        self.close();
    }
}

fn with_headers<B>(shared: &Shared, mut request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
    for (name, value) in &shared.upstream.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    if let Some(version) = shared.version.lock().unwrap_or_else(PoisonError::into_inner).as_deref() {
        request = request.header("mcp-protocol-version", version);
    }
    request
}

/// Answers `message`, when it is a request, with the gateway's upstream error, as if the
/// server had; says `why` on stderr otherwise (nobody waits for an answer to it).
fn answer_error(shared: &Shared, message: &Value, why: &str) {
    match (framing::kind(message), message.get("id")) {
        (Kind::Request(_), Some(id)) => {
            let error = framing::error_response(id, UPSTREAM_ERROR, why);
            let _ = shared.events.send(Event::Upstream(Line::Message(error.to_string().into_bytes())));
        }
        _ => eprintln!("decision mcp: a message to the upstream server was not delivered: {why}"),
    }
}

/// Lets what waits for an `initialize` go when dropped.
struct Begun<'a>(&'a Shared);

impl Drop for Begun<'_> {
    fn drop(&mut self) {
        self.0.begun();
    }
}

/// One message to the server, and whatever it answers.
fn post(shared: &Shared, bytes: &[u8], message: &Value) {
    let kind = framing::kind(message);
    let mut request = shared
        .agent
        .post(&shared.upstream.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    let session = shared.session.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(session) = &session {
        request = request.header("mcp-session-id", session.as_str());
    }
    // What waits for an `initialize` goes once this returns: its answer read (the session id
    // and protocol version noted), or its failure told.
    let _begun = (kind == Kind::Request("initialize")).then_some(Begun(shared));
    let sent = with_headers(shared, request).send(bytes);
    if kind == Kind::Request("initialize") {
        let given = sent.as_ref().ok().and_then(|r| r.headers().get("mcp-session-id")).and_then(|v| v.to_str().ok());
        if let Some(id) =
            given.filter(|id| id.len() <= MAX_SESSION_ID && id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        {
            *shared.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.to_owned());
        }
    }
    let response = match sent {
        Ok(response) => response,
        Err(ureq::Error::Timeout(_)) => return answer_error(shared, message, "the upstream server timed out"),
        Err(_) => return answer_error(shared, message, "the upstream server could not be reached"),
    };
    let status = response.status().as_u16();
    match status {
        202 if !matches!(kind, Kind::Request(_)) => {
            if kind == Kind::Notification("notifications/initialized") {
                listen(shared);
            }
        }
        200..=299 => read_answer(shared, response, message),
        404 if session.is_some() => {
            answer_error(shared, message, "the upstream server no longer knows this session (HTTP 404)");
        }
        300..=399 => {
            answer_error(
                shared,
                message,
                &format!("the upstream server answered HTTP {status} (a redirect, not followed)"),
            );
        }
        _ => answer_error(shared, message, &format!("the upstream server answered HTTP {status}")),
    }
}

/// Relays what the server answered a POST with: a JSON body, or the messages of an event
/// stream; a request the answer did not answer gets an error.
fn read_answer(shared: &Shared, response: ureq::http::Response<ureq::Body>, message: &Value) {
    let id = message.get("id");
    let answers = |line: &Line| match (line, id) {
        (Line::Message(bytes), Some(id)) => serde_json::from_slice::<Value>(bytes)
            .is_ok_and(|reply| framing::kind(&reply) == Kind::Response && reply.get("id") == Some(id)),
        _ => false,
    };
    let is_stream = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
    let mut answered = false;
    if is_stream {
        let mut events = EventStream::new(io::BufReader::new(response.into_body().into_reader()), shared.max_message);
        while let Ok(line) = events.next_message() {
            if line == Line::End {
                break;
            }
            answered |= answers(&line);
            note_version(shared, &line, message);
            if shared.events.send(Event::Upstream(line)).is_err() {
                return;
            }
            // The request is answered: a server that keeps its stream open holds no thread
            // (nor a place among the requests in flight) past that.
            if answered {
                break;
            }
        }
    } else {
        let limit = u64::try_from(shared.max_message).unwrap_or(u64::MAX);
        match response.into_body().into_with_config().limit(limit).read_to_vec() {
            Ok(body) if body.iter().all(u8::is_ascii_whitespace) => {}
            Ok(mut body) => {
                // A JSON text means the same with any whitespace between its tokens, and the
                // gateway relays one message a line.
                body.iter_mut().filter(|b| **b == b'\n' || **b == b'\r').for_each(|b| *b = b' ');
                let line = Line::Message(body);
                answered |= answers(&line);
                note_version(shared, &line, message);
                let _ = shared.events.send(Event::Upstream(line));
            }
            Err(ureq::Error::BodyExceedsLimit(_)) => {
                let _ = shared.events.send(Event::Upstream(Line::TooLong { bytes: shared.max_message + 1 }));
            }
            Err(_) => {}
        }
    }
    if matches!(framing::kind(message), Kind::Request(_)) && !answered {
        answer_error(shared, message, "the upstream server ended its answer without a response to this request");
    }
}

/// Keeps the protocol version of the server's answer to `initialize`.
fn note_version(shared: &Shared, line: &Line, message: &Value) {
    if framing::kind(message) != Kind::Request("initialize") {
        return;
    }
    let Line::Message(bytes) = line else { return };
    let version = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|reply| reply.pointer("/result/protocolVersion").and_then(Value::as_str).map(str::to_owned));
    if let Some(version) = version.filter(|v| v.len() <= 32 && v.bytes().all(|b| b.is_ascii_graphic())) {
        *shared.version.lock().unwrap_or_else(PoisonError::into_inner) = Some(version);
    }
}

/// Opens the GET stream once, on its own thread, and relays its messages until it ends. A
/// server that offers none (`405`) is fine.
fn listen(shared: &Shared) {
    if shared.listening.swap(true, Ordering::AcqRel) {
        return;
    }
    let session = shared.session.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let mut request = shared.agent.get(&shared.upstream.url).header("accept", "text/event-stream");
    if let Some(session) = &session {
        request = request.header("mcp-session-id", session.as_str());
    }
    // The stream stays open as long as the session: no time limit on it.
    let request = with_headers(shared, request).config().timeout_global(None).build();
    let events = shared.events.clone();
    let max = shared.max_message;
    std::thread::spawn(move || {
        let Ok(response) = request.call() else { return };
        if response.status().as_u16() != 200 {
            return;
        }
        let mut stream = EventStream::new(io::BufReader::new(response.into_body().into_reader()), max);
        while let Ok(line) = stream.next_message() {
            if line == Line::End || events.send(Event::Upstream(line)).is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_that_may_carry_a_key_is_never_shown_or_recorded() {
        let upstream = Upstream::new("https://mcp.example.com/mcp?api_key=s3cret&team=a", None).unwrap();
        assert_eq!(upstream.shown(), "https://mcp.example.com/mcp?…");
        assert_eq!(upstream.url, "https://mcp.example.com/mcp?api_key=s3cret&team=a", "but it is used");
        let plain = Upstream::new("http://127.0.0.1:8931/mcp", None).unwrap();
        assert_eq!(plain.shown(), "http://127.0.0.1:8931/mcp");
    }

    #[test]
    fn an_upstream_url_is_http_without_credentials_and_headers_are_name_value_pairs() {
        assert!(Upstream::new("http://127.0.0.1:8931/mcp", None).is_ok());
        assert!(Upstream::new("https://mcp.example.com/mcp", Some("Authorization=Bearer t, X-Team = a")).is_ok());
        assert_eq!(Upstream::new("ftp://127.0.0.1/mcp", None).err(), Some(UpstreamError::Url));
        assert_eq!(Upstream::new("not a url", None).err(), Some(UpstreamError::Url));
        assert_eq!(Upstream::new("http://me:pw@127.0.0.1/mcp", None).err(), Some(UpstreamError::Credentials));
        assert_eq!(Upstream::new("http://127.0.0.1/mcp", Some("a=1,nonsense")).err(), Some(UpstreamError::Header(2)));
        assert_eq!(Upstream::new("http://127.0.0.1/mcp", Some("bad name=1")).err(), Some(UpstreamError::Header(1)));
        let upstream = Upstream::new("http://127.0.0.1/mcp", Some("Authorization=Bearer t")).unwrap_or_else(|_| {
            unreachable!("a valid upstream");
        });
        assert_eq!(upstream.headers, [("Authorization".to_owned(), "Bearer t".to_owned())]);
        // Headers never go in the clear to another machine; to this one, or over https, they do.
        let token = Some("Authorization=Bearer t");
        assert_eq!(Upstream::new("http://mcp.example.com/mcp", token).err(), Some(UpstreamError::Cleartext));
        assert_eq!(Upstream::new("http://10.0.0.7:8931/mcp", token).err(), Some(UpstreamError::Cleartext));
        assert!(Upstream::new("http://mcp.example.com/mcp", None).is_ok(), "no headers, nothing to leak");
        for url in [
            "http://localhost:8931/mcp",
            "http://[::1]:8931/mcp",
            "http://127.0.0.2/mcp",
            "https://mcp.example.com/mcp",
        ] {
            assert!(Upstream::new(url, token).is_ok(), "{url}");
        }
    }
}
