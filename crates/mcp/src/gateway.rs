//! The relay loop: one thread owns the session (the catalog, the calls in flight, the held
//! calls, the log) and reacts to [`Event`]s that reader threads send it. Messages the gateway
//! does not judge are written on as the bytes that arrived; each `tools/call` is decided
//! first.
//!
//! Requests in flight to the upstream server carry a deadline (the time budget): a request
//! the server does not answer in time, or that is in flight when the server exits, is
//! answered with a JSON-RPC error, so a client never waits forever. A held call carries one
//! too (the approval timeout), and while calls are held the loop looks in the inbox beside the
//! log ([`crate::inbox`]) for answers from `decision approve` every [`INBOX_LOOK`].

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use decision::log::approval::{ApprovalError, Pending, Verdict};
use decision::log::{LogError, LogHead};
use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::approvals;
use crate::framing::{self, INVALID_REQUEST, Kind, Line, PARSE_ERROR, UPSTREAM_ERROR};
use crate::gate::{CallFacts, Gate, GateError, Hidden};
use crate::inbox::{Inbox, START_EVENT};
use crate::outcome;
use crate::schema::{OutputSchemas, SchemaCheck};
use crate::session::Session;
use crate::tools::Catalog;
use decision::outcomes::report::OUTCOME_EVENT_TYPE;
use decision::outcomes::{ContractSet, Outcome, Validated, ValidationVerdict, error_type};

/// How often the loop looks in the inbox for answers while calls are held.
pub const INBOX_LOOK: Duration = Duration::from_millis(100);

/// The members an answer event may have (what [`decision::log::approval::answer_event`]
/// writes); an answer handed in with any other is refused, so nothing unbound is recorded.
const ANSWER_MEMBERS: [&str; 9] =
    ["id", "fingerprint", "approved", "reason", "input", "allowsFingerprint", "at", "keyed", "binding"];

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
    /// holding the call as [`ApprovalMode::Queue`] does meanwhile (whichever answer comes
    /// first counts); a client without the capability gets the queue alone.
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
    /// The deliverable contracts tool results are checked against (tool `mcp`, method the
    /// tool's name; [`crate::outcome`]). With a set, every call's outcome is recorded as
    /// `tool:outcome`; a result that breaks its contract reaches the agent as the typed
    /// `contract_violation` (in enforce mode). `None`: results are relayed unread.
    pub outcome_contracts: Option<Arc<ContractSet>>,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            mode: Mode::Enforce,
            approvals: ApprovalMode::Queue,
            approval_timeout: Duration::from_secs(300),
            time_budget: Duration::from_secs(60),
            max_message: framing::DEFAULT_MAX_MESSAGE,
            outcome_contracts: None,
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
    /// SIGINT or SIGTERM: finish and seal.
    Stop,
    /// The client sent nothing for longer than the gateway waits (`--listen`): finish and seal.
    Idle,
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
    /// An approval could not be recorded as the runtime requires (a wiring error).
    #[error("an approval: {0}")]
    Approval(ApprovalError),
}

impl From<ApprovalError> for GatewayError {
    fn from(error: ApprovalError) -> Self {
        match error {
            ApprovalError::Log(e) => GatewayError::Log(e),
            other => GatewayError::Approval(other),
        }
    }
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
    /// The `tools/call` as it arrived, forwarded as it is when approved.
    message: Vec<u8>,
    step: u64,
    /// The held call as the log records it.
    pending: Pending,
    /// When it is refused if nobody answered.
    deadline: Instant,
}

/// Where an answer to a held call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// `decision approve`, through the inbox.
    Approve,
    /// The client's elicitation.
    Elicitation,
    /// Nobody answered in time: the gateway recorded a denial.
    Timeout,
    /// The session ended first: the gateway recorded a denial.
    Stop,
}

impl Via {
    fn as_str(self) -> &'static str {
        match self {
            Via::Approve => "decision approve",
            Via::Elicitation => "elicitation",
            Via::Timeout => "timeout",
            Via::Stop => "stop",
        }
    }
}

/// The relay loop's state.
pub struct Gateway<'a> {
    config: GatewayConfig,
    gate: &'a Gate,
    session: Session,
    client: &'a mut dyn Write,
    upstream: &'a mut dyn Write,
    /// Where `decision approve` hands in answers (only when calls can be held).
    inbox: Option<Inbox>,
    /// When the inbox is looked in next, while calls are held.
    next_look: Instant,
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
    /// The tools' output schemas, compiled once each.
    schemas: OutputSchemas,
    /// Tools whose output schema could not be used, said once each.
    unusable_schemas: HashSet<String>,
}

/// A request id as responses are matched to requests: a number that is a whole one is the
/// same id however it is written (`1`, `1.0`), since a server may write back what it read as a
/// number; a string is another id (`"1"` is not `1`).
pub(crate) fn id_key(id: &Value) -> String {
    match id.as_f64() {
        Some(n) if !id.is_i64() && !id.is_u64() && n.fract() == 0.0 && n.abs() < 9.0e15 => format!("{n:.0}"),
        _ => id.to_string(),
    }
}

fn payload(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl<'a> Gateway<'a> {
    /// A gateway writing to `client` and `upstream`, deciding with `gate`, recording in
    /// `session`, taking answers from `decision approve` through `inbox` (without one, held
    /// calls are answered only through the client, or refused at their timeout).
    pub fn new(
        config: GatewayConfig,
        gate: &'a Gate,
        session: Session,
        inbox: Option<Inbox>,
        client: &'a mut dyn Write,
        upstream: &'a mut dyn Write,
    ) -> Gateway<'a> {
        Gateway {
            config,
            gate,
            session,
            client,
            upstream,
            inbox,
            next_look: Instant::now(),
            catalog: Catalog::new(),
            calls_so_far: Vec::new(),
            step: 0,
            in_flight: HashMap::new(),
            held: HashMap::new(),
            upstream_alive: true,
            client_elicits: false,
            elicitations: HashMap::new(),
            summary: (0, 0, 0, 0),
            schemas: OutputSchemas::default(),
            unusable_schemas: HashSet::new(),
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
        let inbox = self.inbox.as_ref().map(|i| i.dir().display().to_string());
        let event = json!({"upstream": upstream, "contract": contract, "block": self.gate.block_id(),
                           "provider": self.gate.provider_name(), "mode": mode, "approvals": approvals,
                           "keyed": self.session.keyed(), "inbox": inbox});
        self.session.event(START_EVENT, payload(event))?;
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
            self.look_for_answers()?;
            match event {
                None => {}
                Some(Event::Client(Line::End)) => break "client disconnected",
                Some(Event::Client(line)) => self.on_client(line)?,
                Some(Event::Upstream(line)) => self.on_upstream(line)?,
                Some(Event::UpstreamEnd) => self.upstream_ended()?,
                Some(Event::Stop) => break "stopped by a signal",
                Some(Event::Idle) => break "client idle",
            }
        };
        self.finish(ended)
    }

    /// The next moment the loop has something to do without a message: a request's time
    /// budget, a held call's timeout, the next look in the inbox.
    fn next_deadline(&self) -> Option<Instant> {
        let in_flight = self.in_flight.values().map(|f| f.deadline);
        let held = self.held.values().map(|h| h.deadline);
        let look = (self.inbox.is_some() && !self.held.is_empty()).then_some(self.next_look);
        in_flight.chain(held).chain(look).min()
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
        let bytes = one_line(bytes);
        if framing::kind(&message) == Kind::Notification("tools/call") {
            // A call without an id would run undecided: it is not passed on.
            let why = "tools/call sent as a notification (no id) is not passed on: it would run undecided";
            self.session.event("mcp:bad-input", payload(json!({"from": "client", "why": why})))?;
            return Ok(());
        }
        let not_a_message = match &message {
            // A batch could carry a tools/call past the gate; the protocol dropped batches.
            Value::Array(_) => Some("JSON-RPC batches are not accepted: send one message per line"),
            Value::Object(_) if framing::kind(&message) == Kind::Other => {
                Some("not a JSON-RPC message: it has neither a method nor an id")
            }
            Value::Object(_) => None,
            _ => Some("not a JSON-RPC message: a message is a JSON object"),
        };
        if let Some(why) = not_a_message {
            // Never passed on: the server need not survive what is not a message.
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

    /// A person's answer through the client's elicitation: recorded as an `approval:answer`
    /// bound to the held call, then acted on. An answer that comes after the call was
    /// answered otherwise is ignored.
    fn elicited(&mut self, approval: &str, response: &Value) -> Result<(), GatewayError> {
        self.answer_ourselves(approval, &approvals::elicited_verdict(response), Via::Elicitation)
    }

    /// Records the gateway's own bound answer to a held call (a person's at the client, or a
    /// denial when nobody answered), then acts on it.
    fn answer_ourselves(&mut self, approval: &str, verdict: &Verdict, via: Via) -> Result<(), GatewayError> {
        let Some(call) = self.held.get_mut(approval) else { return Ok(()) };
        self.session.bound_answer(&mut call.pending, verdict)?;
        self.release(approval, via)
    }

    /// Looks in the inbox for answers to the held calls (at most every [`INBOX_LOOK`]), and
    /// refuses the held calls whose timeout passed.
    fn look_for_answers(&mut self) -> Result<(), GatewayError> {
        if self.held.is_empty() {
            return Ok(());
        }
        let now = Instant::now();
        if now >= self.next_look {
            self.next_look = now + INBOX_LOOK;
            let mut ids: Vec<String> = self.held.keys().cloned().collect();
            ids.sort();
            for id in ids {
                let Some(found) = self.inbox.as_ref().and_then(|inbox| inbox.take(&id)) else { continue };
                self.handed_in(&id, found)?;
            }
        }
        let mut expired: Vec<(u64, String)> =
            self.held.iter().filter(|(_, h)| h.deadline <= now).map(|(id, h)| (h.step, id.clone())).collect();
        expired.sort();
        for (_, id) in expired {
            let why = format!(
                "no person answered within {} s (approval {id}); ask again, or answer sooner with `decision approve`",
                self.config.approval_timeout.as_secs_f64()
            );
            self.answer_ourselves(&id, &Verdict::Deny(why), Via::Timeout)?;
        }
        Ok(())
    }

    /// An answer `decision approve` handed in for held call `id`: recorded and acted on when
    /// its binding holds for this call in this session; otherwise refused — reported on
    /// stderr and in the log — and the call stays held.
    fn handed_in(&mut self, id: &str, found: Result<Map<String, Value>, String>) -> Result<(), GatewayError> {
        let event = match found {
            Ok(event) => event,
            Err(why) => return self.refuse_answer(id, &why),
        };
        if let Some(extra) = event.keys().find(|k| !ANSWER_MEMBERS.contains(&k.as_str())) {
            let why = format!("it has a member an answer does not have (`{extra}`)");
            return self.refuse_answer(id, &why);
        }
        let Some(call) = self.held.get_mut(id) else { return Ok(()) };
        match self.session.checked_answer(&mut call.pending, event) {
            Ok(()) => self.release(id, Via::Approve),
            Err(ApprovalError::Log(e)) => Err(e.into()),
            Err(_) => {
                self.refuse_answer(id, "its binding does not hold for this call in this session under this log's key")
            }
        }
    }

    fn refuse_answer(&mut self, id: &str, why: &str) -> Result<(), GatewayError> {
        eprintln!(
            "decision mcp: an answer handed in for approval {id} was refused: {}; the call is still held",
            decision::terminal::one_line(why)
        );
        self.session.event("mcp:answer-refused", payload(json!({"id": id, "why": why})))?;
        Ok(())
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
        if self.in_flight.contains_key(&id_key(id)) {
            // Its response could not be told from the other's: refused, never forwarded.
            let why = "a request with this id is still in flight; JSON-RPC ids must be unique";
            self.send_client(&framing::error_response(id, INVALID_REQUEST, why));
            if let Some((step, tool)) = call {
                let event = json!({"step": step, "tool": tool, "id": clipped_id(id), "why": why});
                self.session.event("mcp:unanswered", payload(event))?;
            }
            return Ok(false);
        }
        if self.send_upstream(bytes) {
            let deadline = Instant::now() + self.config.time_budget;
            self.in_flight.insert(id_key(id), InFlight { method: method.to_string(), deadline, call });
            return Ok(true);
        }
        self.unanswered(id, call.as_ref(), "the upstream server is not running", error_type::EXECUTION)?;
        Ok(false)
    }

    /// Answers request `id`, which the server will not answer, with an upstream error; a call
    /// among them is recorded as `mcp:unanswered` and, with outcome contracts, its outcome as
    /// the tool's failure of type `kind`.
    fn unanswered(
        &mut self,
        id: &Value,
        call: Option<&(u64, String)>,
        why: &str,
        kind: &str,
    ) -> Result<(), GatewayError> {
        if let Some((step, tool)) = call {
            self.session.event(
                "mcp:unanswered",
                payload(json!({"step": step, "tool": tool, "id": clipped_id(id), "why": why})),
            )?;
            if self.config.outcome_contracts.is_some() {
                let failed = Validated {
                    outcome: outcome::unanswered(tool, kind, why),
                    verdict: ValidationVerdict::ErrorNotValidated,
                };
                self.session.event(OUTCOME_EVENT_TYPE, outcome::recorded_event(*step, &failed, None))?;
            }
        }
        self.send_client(&framing::error_response(id, UPSTREAM_ERROR, why));
        Ok(())
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
            return self.forward_call(&id, step, &tool, &input_text(&arguments), &bytes);
        }
        match action.as_str() {
            "auto" | "auto_audit" => self.forward_call(&id, step, &tool, &input_text(&arguments), &bytes),
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

    /// Forwards a call, recorded as `tool:call` with its `input` (`JSON.stringify` of its
    /// arguments, see [`input_text`]).
    fn forward_call(
        &mut self,
        id: &Value,
        step: u64,
        tool: &str,
        input: &str,
        bytes: &[u8],
    ) -> Result<(), GatewayError> {
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
        let input = input_text(arguments);
        let pending = self.session.pending(approvals::pending_call(0, step, tool, &input, request_digest, rule))?;
        self.summary.3 += 1;
        let id = pending.id.clone();
        let elicit = self.config.approvals == ApprovalMode::Elicit && self.client_elicits;
        if elicit {
            let ask = format!("decision-mcp-elicit-{step}");
            self.send_client(&approvals::elicitation_request(&ask, tool, &input, rule));
            self.elicitations.insert(ask, id.clone());
        }
        eprintln!(
            "decision mcp: `{}` is held for a person ({}){}: decision approve {} {}   (or --deny --reason TEXT)",
            decision::terminal::one_line(tool),
            decision::terminal::one_line(rule),
            if elicit { ", asked at the client too" } else { "" },
            decision::terminal::one_line(&self.session.path().display().to_string()),
            id
        );
        let deadline = Instant::now() + self.config.approval_timeout;
        self.held.insert(id, HeldCall { request_id, message, step, pending, deadline });
        Ok(())
    }

    /// Acts on the recorded answer to held call `id`: an approval records `approval:used` and
    /// forwards the call exactly as it arrived; a denial refuses it with the reason.
    fn release(&mut self, id: &str, via: Via) -> Result<(), GatewayError> {
        let Some(mut call) = self.held.remove(id) else { return Ok(()) };
        self.session.event("mcp:answered", payload(json!({"id": id, "step": call.step, "via": via.as_str()})))?;
        let tool = call.pending.tool.clone();
        let answer = call.pending.answer.clone();
        match answer {
            Some(answer) if answer.approved => {
                self.session.used(&mut call.pending, call.step)?;
                let input = call.pending.input.as_str().unwrap_or_default().to_string();
                self.forward_call(&call.request_id, call.step, &tool, &input, &call.message)
            }
            answer => {
                let reason = answer.and_then(|a| a.reason).unwrap_or_else(|| "denied by a person".to_string());
                let why = match via {
                    Via::Approve | Via::Elicitation => format!("a person denied it: {reason}"),
                    Via::Timeout | Via::Stop => reason,
                };
                self.refuse(&call.request_id, call.step, &tool, &why)
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
        let bytes = one_line(bytes);
        if framing::kind(&message) == Kind::Response {
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            let Some(request) = self.in_flight.remove(&id_key(&id)) else {
                // Answered already (its time budget ran out) or never asked: relaying it would
                // give the client a second answer, or a result nobody checked.
                let why = "no request in flight has this id (it was answered already, or never asked); dropped";
                self.session.event("mcp:late-response", payload(json!({"id": clipped_id(&id), "why": why})))?;
                return Ok(());
            };
            if let Some(instead) = self.observe(&request, &message)? {
                // A listing with forbidden tools taken out, or a result that broke its contract.
                self.send_client(&instead);
                return Ok(());
            }
        }
        self.send_client_raw(&bytes);
        Ok(())
    }

    /// The tools of a listing the contract forbids ([`Gate::forbids`]), recorded as
    /// `mcp:hidden`; in enforce mode the listing the client gets instead (`None`: relay it as
    /// it came). Shadow mode records what it would have hidden and hides nothing.
    fn hide_forbidden(&mut self, message: &Value) -> Result<Option<Value>, GatewayError> {
        let Some(tools) = message.get("result").and_then(|r| r.get("tools")).and_then(Value::as_array) else {
            return Ok(None);
        };
        let hidden: Vec<Hidden> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .filter_map(|name| self.catalog.get(name).and_then(|known| self.gate.forbids(name, known)))
            .collect();
        if hidden.is_empty() {
            return Ok(None);
        }
        let shadow = self.config.mode == Mode::Shadow;
        let listed: Vec<Value> = hidden.iter().map(|h| json!({"tool": h.tool, "rule": h.rule})).collect();
        self.session.event("mcp:hidden", payload(json!({"tools": listed, "shadow": shadow})))?;
        if shadow {
            return Ok(None);
        }
        let names: HashSet<&str> = hidden.iter().map(|h| h.tool.as_str()).collect();
        let mut filtered = message.clone();
        if let Some(tools) = filtered.pointer_mut("/result/tools").and_then(Value::as_array_mut) {
            tools.retain(|t| !t.get("name").and_then(Value::as_str).is_some_and(|n| names.contains(n)));
        }
        Ok(Some(filtered))
    }

    /// Reads what the gateway needs from a response: the negotiated version, the tools, a
    /// call's outcome. Returns the message to send instead, for a listing with forbidden tools.
    fn observe(&mut self, request: &InFlight, message: &Value) -> Result<Option<Value>, GatewayError> {
        let result = message.get("result");
        match (request.method.as_str(), &request.call) {
            ("initialize", _) => {
                let version = result.and_then(|r| r.get("protocolVersion")).cloned().unwrap_or(Value::Null);
                let server = result.and_then(|r| r.get("serverInfo")).cloned().unwrap_or(Value::Null);
                self.session
                    .event("mcp:initialize", payload(json!({"protocolVersion": version, "serverInfo": server})))?;
            }
            ("tools/list", _) => {
                let Some(result) = result else { return Ok(None) };
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
                return self.hide_forbidden(message);
            }
            (_, Some((step, tool))) => {
                let is_error = message.get("error").is_some()
                    || result.and_then(|r| r.get("isError")).and_then(Value::as_bool) == Some(true);
                self.session.event("tool:result", payload(json!({"step": step, "tool": tool, "isError": is_error})))?;
                return self.check_outcome(*step, tool, message);
            }
            _ => {}
        }
        Ok(None)
    }

    /// Checks a call's result against its tool's `outputSchema` and its deliverable contract
    /// and records its outcome; returns the `contract_violation` the agent gets instead of a
    /// result that broke either (enforce mode only: shadow mode records and relays). A result
    /// that broke its deliverable is recorded as that violation; one that met it (or had none)
    /// but broke its `outputSchema`, as the schema's.
    fn check_outcome(&mut self, step: u64, tool: &str, message: &Value) -> Result<Option<Value>, GatewayError> {
        let schema_violation = self.check_schema(step, tool, message)?;
        let violation = match self.config.outcome_contracts.clone() {
            Some(contracts) => {
                let validated = outcome::validate(&contracts, tool, message);
                let (validated, contract) = match (validated.verdict, schema_violation) {
                    (verdict @ ValidationVerdict::Violated(_), _) => {
                        (Validated { outcome: validated.outcome, verdict }, None)
                    }
                    (_, Some(schema)) => {
                        (Validated { outcome: schema, verdict: ValidationVerdict::ErrorNotValidated }, Some("violated"))
                    }
                    (verdict, None) => (Validated { outcome: validated.outcome, verdict }, None),
                };
                self.session.event(OUTCOME_EVENT_TYPE, outcome::recorded_event(step, &validated, contract))?;
                let violated = matches!(validated.verdict, ValidationVerdict::Violated(_)) || contract.is_some();
                violated.then_some(validated.outcome)
            }
            None => schema_violation,
        };
        if self.config.mode == Mode::Shadow {
            return Ok(None);
        }
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        Ok(violation.map(|violation| outcome::violation_response(&id, &violation)))
    }

    /// Checks a call's result against its tool's `outputSchema`: a violation is recorded
    /// (`mcp:schema-violation`) and returned; a schema that cannot be used is said once per
    /// tool (`mcp:schema-unusable`, and on stderr) and the result relayed unchecked.
    fn check_schema(&mut self, step: u64, tool: &str, message: &Value) -> Result<Option<Outcome>, GatewayError> {
        let declared = self.catalog.get(tool).and_then(|known| known.output_schema.as_ref());
        match self.schemas.check(tool, declared, message) {
            SchemaCheck::NotDeclared | SchemaCheck::Conforms => Ok(None),
            SchemaCheck::Violated { path, why } => {
                let event = json!({"step": step, "tool": tool, "path": path, "why": why});
                self.session.event("mcp:schema-violation", payload(event))?;
                Ok(Some(outcome::schema_violation(tool, &path, &why)))
            }
            SchemaCheck::Unusable(why) => {
                if self.unusable_schemas.insert(tool.to_owned()) {
                    eprintln!(
                        "decision mcp: the outputSchema of tool `{}` cannot be used ({}); its results are relayed unchecked",
                        decision::terminal::one_line(tool),
                        decision::terminal::one_line(&why)
                    );
                    self.session.event("mcp:schema-unusable", payload(json!({"tool": tool, "why": why})))?;
                }
                Ok(None)
            }
        }
    }

    fn upstream_ended(&mut self) -> Result<(), GatewayError> {
        if !self.upstream_alive && self.in_flight.is_empty() {
            return Ok(());
        }
        self.upstream_alive = false;
        eprintln!("decision mcp: the upstream server exited");
        self.session.event("mcp:upstream-exit", Map::new())?;
        self.fail_in_flight(|_| true, "the upstream server exited before it answered", error_type::EXECUTION)
    }

    /// Answers every in-flight request `pick` selects with an upstream error, in the order the
    /// calls were made; a call's outcome is the tool's failure of type `kind`.
    fn fail_in_flight(&mut self, pick: impl Fn(&InFlight) -> bool, why: &str, kind: &str) -> Result<(), GatewayError> {
        let mut keys: Vec<(Option<u64>, String)> = self
            .in_flight
            .iter()
            .filter(|(_, f)| pick(f))
            .map(|(k, f)| (f.call.as_ref().map(|(step, _)| *step), k.clone()))
            .collect();
        keys.sort();
        for (_, key) in keys {
            let Some(request) = self.in_flight.remove(&key) else { continue };
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            self.unanswered(&id, request.call.as_ref(), why, kind)?;
        }
        Ok(())
    }

    fn expire(&mut self) -> Result<(), GatewayError> {
        let now = Instant::now();
        if self.next_deadline().is_some_and(|d| d <= now) {
            let why = format!("the upstream server did not answer within {} s", self.config.time_budget.as_secs_f64());
            self.fail_in_flight(|f| f.deadline <= now, &why, error_type::TIMEOUT)?;
        }
        Ok(())
    }

    fn finish(mut self, ended: &'static str) -> Result<Summary, GatewayError> {
        let mut held: Vec<(u64, String)> = self.held.iter().map(|(id, h)| (h.step, id.clone())).collect();
        held.sort();
        for (_, id) in held {
            let why = Verdict::Deny("the gateway stopped before a person answered".into());
            self.answer_ourselves(&id, &why, Via::Stop)?;
        }
        if let Some(inbox) = self.inbox.take() {
            inbox.remove();
        }
        let why = format!("the session ended ({ended}) before the server answered");
        self.fail_in_flight(|_| true, &why, error_type::EXECUTION)?;
        self.session.event("mcp:end", payload(json!({"ended": ended, "calls": self.summary.0})))?;
        let (calls, forwarded, refused, held) = self.summary;
        let head = self.session.seal()?;
        Ok(Summary { calls, forwarded, refused, held, ended, head })
    }
}

/// A message that parsed as JSON, as one line: a carriage return or line feed in it can only be
/// whitespace between tokens (JSON strings cannot hold them raw), and a reader that splits
/// lines on either must see exactly the one message the gateway judged, never a second one
/// smuggled after a line break.
fn one_line(mut bytes: Vec<u8>) -> Vec<u8> {
    for byte in &mut bytes {
        if *byte == b'\r' || *byte == b'\n' {
            *byte = b' ';
        }
    }
    bytes
}

/// A JSON-RPC id as recorded: the sender's, so one longer than 200 characters (as text, for
/// anything but a string) is clipped, and a log line stays small.
fn clipped_id(id: &Value) -> Value {
    let text = match id {
        Value::String(text) => std::borrow::Cow::Borrowed(text.as_str()),
        other => std::borrow::Cow::Owned(other.to_string()),
    };
    match text.char_indices().nth(200) {
        Some((at, _)) => json!(format!("{}…", text.get(..at).unwrap_or_default())),
        None => id.clone(),
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
