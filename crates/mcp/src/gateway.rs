//! The relay loop: one thread owns the session (the catalog, the calls in flight, the held
//! calls, the log) and reacts to [`Event`]s that reader threads send it. Messages the gateway
//! does not judge are written on as the bytes that arrived; each `tools/call` is decided
//! first.
//!
//! Requests in flight to the upstream server carry a deadline (the time budget): a request
//! the server does not answer in time, or that is in flight when the server exits, is
//! answered with a JSON-RPC error, so a client never waits forever.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use decision::log::{LogError, LogHead};
use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::approvals::{self, Answer, Held};
use crate::framing::{self, INVALID_REQUEST, Kind, Line, PARSE_ERROR, UPSTREAM_ERROR};
use crate::gate::{CallFacts, Gate, GateError};
use crate::session::Session;
use crate::tools::Catalog;

/// Enforce the contract's decisions, or only record them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refuse and hold calls as decided.
    Enforce,
    /// Forward every call and record what enforcing would have done.
    Shadow,
}

/// What happens to a call the contract gives to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Refuse it at once.
    Deny,
    /// Hold it, record it pending, and wait for `decision approve` (or the timeout).
    Queue,
    /// Ask the person through the client's elicitation capability (`elicitation/create`),
    /// holding the call as [`ApprovalMode::Queue`] does meanwhile; a client without the
    /// capability gets the queue alone.
    Elicit,
}

/// How a gateway runs.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Enforce or shadow.
    pub mode: Mode,
    /// What a call given to a person becomes.
    pub approvals: ApprovalMode,
    /// How long a held call waits for an answer before it is refused.
    pub approval_timeout: Duration,
    /// How long a request may wait for the upstream server.
    pub time_budget: Duration,
    /// The largest message accepted from either side, in bytes.
    pub max_message: usize,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            mode: Mode::Enforce,
            approvals: ApprovalMode::Queue,
            approval_timeout: Duration::from_secs(300),
            time_budget: Duration::from_secs(60),
            max_message: framing::DEFAULT_MAX_MESSAGE,
        }
    }
}

/// What reaches the relay loop.
#[derive(Debug)]
pub enum Event {
    /// A line from the client (or the end of its stream).
    Client(Line),
    /// A line from the upstream server.
    Upstream(Line),
    /// The upstream server's output ended (it exited or closed it).
    UpstreamEnd,
    /// A person's answer to a held call (or its timeout).
    Answer {
        /// The approval id.
        id: String,
        /// What came of it.
        answer: Answer,
    },
    /// SIGINT or SIGTERM: finish and seal.
    Stop,
}

/// Why the relay loop stopped before it could seal the log.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The session log could not be written; the gateway stops rather than act unrecorded.
    #[error("the session log: {0}")]
    Log(#[from] LogError),
    /// The decision could not be asked at all (a wiring error).
    #[error(transparent)]
    Gate(#[from] GateError),
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// `tools/call` requests decided.
    pub calls: u64,
    /// Calls forwarded to the server.
    pub forwarded: u64,
    /// Calls refused.
    pub refused: u64,
    /// Calls held for a person.
    pub held: u64,
    /// Why it ended: `client disconnected` or `stopped by a signal`.
    pub ended: &'static str,
    /// The log's head after the seal.
    pub head: LogHead,
}

/// A request in flight to the upstream server.
struct InFlight {
    method: String,
    deadline: Instant,
    /// For a `tools/call`: its step and tool.
    call: Option<(u64, String)>,
}

/// A call held for a person, with the request it answers.
struct HeldCall {
    request_id: Value,
    message: Vec<u8>,
    held: Held,
}

/// The relay loop's state.
pub struct Gateway<'a> {
    config: GatewayConfig,
    gate: &'a Gate,
    session: Session,
    client: &'a mut dyn Write,
    upstream: &'a mut dyn Write,
    events: Sender<Event>,
    stop: Arc<AtomicBool>,
    catalog: Catalog,
    calls_so_far: Vec<String>,
    step: u64,
    in_flight: HashMap<String, InFlight>,
    held: HashMap<String, HeldCall>,
    upstream_alive: bool,
    /// Whether the client declared the elicitation capability in `initialize`.
    client_elicits: bool,
    /// The gateway's own elicitation requests to the client: request id → approval id.
    elicitations: HashMap<String, String>,
    summary: (u64, u64, u64, u64),
}

/// The key of a JSON-RPC id in the in-flight table.
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn payload(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl<'a> Gateway<'a> {
    /// A gateway writing to `client` and `upstream`, deciding with `gate`, recording in
    /// `session`; `events` is the sender of the loop's own channel (approval waiters answer
    /// on it) and `stop` tells the waiters to give up.
    pub fn new(
        config: GatewayConfig,
        gate: &'a Gate,
        session: Session,
        client: &'a mut dyn Write,
        upstream: &'a mut dyn Write,
        events: Sender<Event>,
        stop: Arc<AtomicBool>,
    ) -> Gateway<'a> {
        Gateway {
            config,
            gate,
            session,
            client,
            upstream,
            events,
            stop,
            catalog: Catalog::new(),
            calls_so_far: Vec::new(),
            step: 0,
            in_flight: HashMap::new(),
            held: HashMap::new(),
            upstream_alive: true,
            client_elicits: false,
            elicitations: HashMap::new(),
            summary: (0, 0, 0, 0),
        }
    }

    /// Records the start of the session (what is relayed, how it is decided).
    pub fn start(&mut self, upstream: &str, contract: &str) -> Result<(), GatewayError> {
        let mode = match self.config.mode {
            Mode::Enforce => "enforce",
            Mode::Shadow => "shadow",
        };
        let approvals = match self.config.approvals {
            ApprovalMode::Deny => "deny",
            ApprovalMode::Queue => "queue",
            ApprovalMode::Elicit => "elicit",
        };
        let event = json!({"upstream": upstream, "contract": contract, "block": self.gate.block_id(),
                           "provider": self.gate.provider_name(), "mode": mode, "approvals": approvals});
        self.session.event("mcp:start", payload(event))?;
        Ok(())
    }

    /// Runs until the client disconnects or a stop arrives, then seals the log.
    pub fn run(mut self, events: &Receiver<Event>) -> Result<Summary, GatewayError> {
        let ended = loop {
            let wait = self.next_deadline().map(|d| d.saturating_duration_since(Instant::now()));
            let event = match wait {
                Some(wait) => match events.recv_timeout(wait) {
                    Ok(event) => Some(event),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break "client disconnected",
                },
                None => match events.recv() {
                    Ok(event) => Some(event),
                    Err(_) => break "client disconnected",
                },
            };
            self.expire()?;
            match event {
                None => {}
                Some(Event::Client(Line::End)) => break "client disconnected",
                Some(Event::Client(line)) => self.on_client(line)?,
                Some(Event::Upstream(line)) => self.on_upstream(line)?,
                Some(Event::UpstreamEnd) => self.upstream_ended()?,
                Some(Event::Answer { id, answer }) => self.answered(&id, answer)?,
                Some(Event::Stop) => break "stopped by a signal",
            }
        };
        self.finish(ended)
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.in_flight.values().map(|f| f.deadline).min()
    }

    fn send_client(&mut self, message: &Value) {
        // A client that went away is noticed by its reader; nothing more to do here.
        let _ = writeln!(self.client, "{message}").and_then(|()| self.client.flush());
    }

    fn send_client_raw(&mut self, bytes: &[u8]) {
        let _ =
            self.client.write_all(bytes).and_then(|()| self.client.write_all(b"\n")).and_then(|()| self.client.flush());
    }

    /// Writes `bytes` to the upstream server; `false` when it cannot be reached.
    fn send_upstream(&mut self, bytes: &[u8]) -> bool {
        if !self.upstream_alive {
            return false;
        }
        let sent = self
            .upstream
            .write_all(bytes)
            .and_then(|()| self.upstream.write_all(b"\n"))
            .and_then(|()| self.upstream.flush());
        if sent.is_err() {
            self.upstream_alive = false;
        }
        sent.is_ok()
    }

    fn on_client(&mut self, line: Line) -> Result<(), GatewayError> {
        let bytes = match line {
            Line::Message(bytes) => bytes,
            Line::TooLong { bytes } => {
                let why = format!(
                    "a message of {bytes} bytes is larger than the gateway accepts ({} bytes); it was not read",
                    self.config.max_message
                );
                self.session.event("mcp:bad-input", payload(json!({"from": "client", "why": why})))?;
                self.send_client(&framing::error_response(&Value::Null, INVALID_REQUEST, &why));
                return Ok(());
            }
            Line::End => return Ok(()),
        };
        let message: Value = match serde_json::from_slice(&bytes) {
            Ok(value) => value,
            Err(e) => {
                let why = format!("not JSON: {e}");
                self.session.event("mcp:bad-input", payload(json!({"from": "client", "why": why})))?;
                self.send_client(&framing::error_response(&Value::Null, PARSE_ERROR, &format!("parse error: {e}")));
                return Ok(());
            }
        };
        if message.is_array() {
            // A batch could carry a tools/call past the gate; the protocol dropped batches.
            let why = "JSON-RPC batches are not accepted: send one message per line";
            self.session.event("mcp:bad-input", payload(json!({"from": "client", "why": why})))?;
            self.send_client(&framing::error_response(&Value::Null, INVALID_REQUEST, why));
            return Ok(());
        }
        match framing::kind(&message) {
            Kind::Request("tools/call") => self.call(&message, bytes),
            Kind::Request(method) => {
                if method == "initialize" {
                    let capabilities = message.get("params").and_then(|p| p.get("capabilities"));
                    self.client_elicits = capabilities.and_then(|c| c.get("elicitation")).is_some();
                }
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let method = method.to_string();
                self.forward_request(&id, &method, None, &bytes)?;
                Ok(())
            }
            Kind::Response => {
                // The client's answer to the gateway's own elicitation is not the server's.
                let ours = message.get("id").and_then(Value::as_str).and_then(|id| self.elicitations.remove(id));
                match ours {
                    Some(approval) => self.elicited(&approval, &message),
                    None => {
                        self.send_upstream(&bytes);
                        Ok(())
                    }
                }
            }
            _ => {
                self.send_upstream(&bytes);
                Ok(())
            }
        }
    }

    /// A person's answer through the client's elicitation: recorded as an `approval:answer`,
    /// then used as one from `decision approve` would be.
    fn elicited(&mut self, approval: &str, response: &Value) -> Result<(), GatewayError> {
        let Some(call) = self.held.get(approval) else { return Ok(()) };
        let answer = approvals::elicited_answer(response);
        let event = match &answer {
            Answer::Denied(reason) => call.held.answer_event(false, Some(reason)),
            _ => call.held.answer_event(true, None),
        };
        self.session.event(approvals::ANSWER_EVENT, event)?;
        self.answered(approval, answer)
    }

    /// Forwards a request and tracks it until its response; answers it with an error at once
    /// when the server cannot be reached.
    fn forward_request(
        &mut self,
        id: &Value,
        method: &str,
        call: Option<(u64, String)>,
        bytes: &[u8],
    ) -> Result<bool, GatewayError> {
        if self.send_upstream(bytes) {
            let deadline = Instant::now() + self.config.time_budget;
            self.in_flight.insert(id_key(id), InFlight { method: method.to_string(), deadline, call });
            return Ok(true);
        }
        let why = "the upstream server is not running";
        if let Some((step, tool)) = call {
            self.session.event("mcp:unanswered", payload(json!({"step": step, "tool": tool, "why": why})))?;
        }
        self.send_client(&framing::error_response(id, UPSTREAM_ERROR, why));
        Ok(false)
    }

    fn call(&mut self, message: &Value, bytes: Vec<u8>) -> Result<(), GatewayError> {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let params = message.get("params");
        let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            self.send_client(&framing::error_response(&id, -32602, "tools/call needs params.name, a string"));
            return Ok(());
        };
        let tool = tool.to_string();
        let arguments = params.and_then(|p| p.get("arguments")).cloned().unwrap_or(Value::Null);
        self.step += 1;
        self.summary.0 += 1;
        let step = self.step;
        let facts = CallFacts {
            tool: &tool,
            arguments: &arguments,
            known: self.catalog.get(&tool),
            calls_so_far: &self.calls_so_far,
        };
        let verdict = self.gate.decide(&facts, step)?;
        self.session.decision(&verdict)?;
        let action = verdict.decision.action.clone();
        let rule = verdict.decision.reason.clone();
        if self.config.mode == Mode::Shadow {
            let would = match action.as_str() {
                "auto" | "auto_audit" => "forward",
                "ask_human" => "ask a person",
                _ => "refuse",
            };
            self.session.event(
                "mcp:shadow",
                payload(json!({"step": step, "tool": tool, "action": action, "wouldHave": would})),
            )?;
            return self.forward_call(&id, step, &tool, &arguments, &bytes);
        }
        match action.as_str() {
            "auto" | "auto_audit" => self.forward_call(&id, step, &tool, &arguments, &bytes),
            "ask_human" => match self.config.approvals {
                ApprovalMode::Deny => {
                    let why = format!(
                        "the contract asks a person to approve this call ({rule}), and this gateway refuses such calls (--approvals deny); \
                         a contract whose policy lets this call run would allow it"
                    );
                    self.refuse(&id, step, &tool, &why)
                }
                ApprovalMode::Queue | ApprovalMode::Elicit => {
                    self.hold(id, step, &tool, &arguments, &verdict.decision.request_digest, &rule, bytes)
                }
            },
            _ => {
                let why = format!("the decision escalated ({rule}); nothing was run");
                self.refuse(&id, step, &tool, &why)
            }
        }
    }

    fn forward_call(
        &mut self,
        id: &Value,
        step: u64,
        tool: &str,
        arguments: &Value,
        bytes: &[u8],
    ) -> Result<(), GatewayError> {
        let input = input_text(arguments);
        self.session.event("tool:call", payload(json!({"step": step, "tool": tool, "input": input})))?;
        self.calls_so_far.push(tool.to_string());
        if self.forward_request(id, "tools/call", Some((step, tool.to_string())), bytes)? {
            self.summary.1 += 1;
        }
        Ok(())
    }

    fn refuse(&mut self, id: &Value, step: u64, tool: &str, why: &str) -> Result<(), GatewayError> {
        self.summary.2 += 1;
        self.session.event("mcp:refused", payload(json!({"step": step, "tool": tool, "why": why})))?;
        self.send_client(&framing::refusal(id, &format!("The decision gateway refused `{tool}`: {why}")));
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn hold(
        &mut self,
        request_id: Value,
        step: u64,
        tool: &str,
        arguments: &Value,
        request_digest: &str,
        rule: &str,
        message: Vec<u8>,
    ) -> Result<(), GatewayError> {
        let held = Held::new(0, step, tool, &input_text(arguments), request_digest, rule);
        self.session.event(approvals::PENDING_EVENT, held.pending_event())?;
        self.summary.3 += 1;
        let path = self.session.path().to_path_buf();
        eprintln!(
            "decision mcp: `{}` is held for a person ({}): decision approve {} {}   (or --deny)",
            decision::terminal::one_line(tool),
            decision::terminal::one_line(rule),
            path.display(),
            held.id
        );
        let from = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let (events, stop, timeout, waiting) =
            (self.events.clone(), Arc::clone(&self.stop), self.config.approval_timeout, held.clone());
        std::thread::spawn(move || {
            let answer = approvals::wait_for_answer(&path, &waiting, from, timeout, &stop);
            let _ = events.send(Event::Answer { id: waiting.id, answer });
        });
        if self.config.approvals == ApprovalMode::Elicit && self.client_elicits {
            let ask = format!("decision-mcp-elicit-{}", held.step);
            self.send_client(&held.elicitation_request(&ask));
            self.elicitations.insert(ask, held.id.clone());
        }
        self.held.insert(held.id.clone(), HeldCall { request_id, message, held });
        Ok(())
    }

    fn answered(&mut self, id: &str, answer: Answer) -> Result<(), GatewayError> {
        let Some(call) = self.held.remove(id) else { return Ok(()) };
        let HeldCall { request_id, message, held } = call;
        match answer {
            Answer::Approved => {
                self.session.event(approvals::USED_EVENT, held.used_event())?;
                let arguments: Value = serde_json::from_str(&held.input).unwrap_or(Value::Null);
                self.forward_call(&request_id, held.step, &held.tool, &arguments, &message)
            }
            Answer::Denied(reason) => {
                self.session.event(approvals::USED_EVENT, held.used_event())?;
                let why = format!("a person denied it: {reason}");
                self.refuse(&request_id, held.step, &held.tool, &why)
            }
            Answer::TimedOut => {
                let why = format!(
                    "no person answered within {} s (approval {}); ask again, or answer sooner with `decision approve`",
                    self.config.approval_timeout.as_secs(),
                    held.id
                );
                self.refuse(&request_id, held.step, &held.tool, &why)
            }
            Answer::Stopped => {
                self.refuse(&request_id, held.step, &held.tool, "the gateway stopped before a person answered")
            }
        }
    }

    fn on_upstream(&mut self, line: Line) -> Result<(), GatewayError> {
        let bytes = match line {
            Line::Message(bytes) => bytes,
            Line::TooLong { bytes } => {
                let why = format!(
                    "the server sent a message of {bytes} bytes, over the limit of {}; dropped",
                    self.config.max_message
                );
                eprintln!("decision mcp: {why}");
                self.session.event("mcp:bad-input", payload(json!({"from": "upstream", "why": why})))?;
                return Ok(());
            }
            Line::End => return self.upstream_ended(),
        };
        let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
            self.session.event("mcp:bad-input", payload(json!({"from": "upstream", "why": "not JSON; dropped"})))?;
            return Ok(());
        };
        if framing::kind(&message) == Kind::Response
            && let Some(id) = message.get("id")
            && let Some(request) = self.in_flight.remove(&id_key(id))
        {
            self.observe(&request, &message)?;
        }
        self.send_client_raw(&bytes);
        Ok(())
    }

    /// Reads what the gateway needs from a response: the negotiated version, the tools, a
    /// call's outcome.
    fn observe(&mut self, request: &InFlight, message: &Value) -> Result<(), GatewayError> {
        let result = message.get("result");
        match (request.method.as_str(), &request.call) {
            ("initialize", _) => {
                let version = result.and_then(|r| r.get("protocolVersion")).cloned().unwrap_or(Value::Null);
                let server = result.and_then(|r| r.get("serverInfo")).cloned().unwrap_or(Value::Null);
                self.session
                    .event("mcp:initialize", payload(json!({"protocolVersion": version, "serverInfo": server})))?;
            }
            ("tools/list", _) => {
                let Some(result) = result else { return Ok(()) };
                for change in self.catalog.record_listing(result) {
                    eprintln!(
                        "decision mcp: the definition of tool `{}` changed since it was first listed; its calls now go as the contract decides a changed tool",
                        decision::terminal::one_line(&change.tool)
                    );
                    let event = json!({"tool": change.tool, "pinned": change.pinned, "now": change.now});
                    self.session.event("mcp:tool-changed", payload(event))?;
                }
                let count = result.get("tools").and_then(Value::as_array).map_or(0, Vec::len);
                self.session.event("mcp:tools", payload(json!({"listed": count, "known": self.catalog.len()})))?;
            }
            (_, Some((step, tool))) => {
                let is_error = message.get("error").is_some()
                    || result.and_then(|r| r.get("isError")).and_then(Value::as_bool) == Some(true);
                self.session.event("tool:result", payload(json!({"step": step, "tool": tool, "isError": is_error})))?;
            }
            _ => {}
        }
        Ok(())
    }

    fn upstream_ended(&mut self) -> Result<(), GatewayError> {
        if !self.upstream_alive && self.in_flight.is_empty() {
            return Ok(());
        }
        self.upstream_alive = false;
        eprintln!("decision mcp: the upstream server exited");
        self.session.event("mcp:upstream-exit", Map::new())?;
        self.fail_in_flight(|_| true, "the upstream server exited before it answered")
    }

    /// Answers every in-flight request `pick` selects with an upstream error.
    fn fail_in_flight(&mut self, pick: impl Fn(&InFlight) -> bool, why: &str) -> Result<(), GatewayError> {
        let keys: Vec<String> = self.in_flight.iter().filter(|(_, f)| pick(f)).map(|(k, _)| k.clone()).collect();
        for key in keys {
            let Some(request) = self.in_flight.remove(&key) else { continue };
            if let Some((step, tool)) = &request.call {
                self.session.event("mcp:unanswered", payload(json!({"step": step, "tool": tool, "why": why})))?;
            }
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            self.send_client(&framing::error_response(&id, UPSTREAM_ERROR, why));
        }
        Ok(())
    }

    fn expire(&mut self) -> Result<(), GatewayError> {
        let now = Instant::now();
        if self.next_deadline().is_some_and(|d| d <= now) {
            let why = format!("the upstream server did not answer within {} s", self.config.time_budget.as_secs_f64());
            self.fail_in_flight(|f| f.deadline <= now, &why)?;
        }
        Ok(())
    }

    fn finish(mut self, ended: &'static str) -> Result<Summary, GatewayError> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let held: Vec<String> = self.held.keys().cloned().collect();
        for id in held {
            self.answered(&id, Answer::Stopped)?;
        }
        let why = format!("the session ended ({ended}) before the server answered");
        self.fail_in_flight(|_| true, &why)?;
        self.session.event("mcp:end", payload(json!({"ended": ended, "calls": self.summary.0})))?;
        let (calls, forwarded, refused, held) = self.summary;
        let head = self.session.seal()?;
        Ok(Summary { calls, forwarded, refused, held, ended, head })
    }
}

/// The `input` a call is recorded and fingerprinted with: `JSON.stringify` of its arguments
/// (`{}` when it sent none).
pub fn input_text(arguments: &Value) -> String {
    match arguments {
        Value::Null => "{}".to_string(),
        other => decision::digest::stringify(other),
    }
}
