//! The `decision` event as the reference loop logs it (`runtime.md` §4.1): the fields a
//! `decision-record/v1` record is read from, in emission order — as an owned event
//! ([`DecisionEvent`]) and as a graph node's decision borrowed where it was decided
//! ([`NodeDecisionEvent`]). Neither is a `decision-record/v1` itself: replay reads the record
//! out of the logged event (`decision_protocol::record`). Both are written straight into a log line, byte for byte what
//! `JSON.stringify` writes for their event objects, without building those objects.

use std::ops::Range;
use std::sync::Arc;

use decision_protocol::digest::{integer_key, write_f64, write_number, write_string, write_value};
use serde_json::{Map, Number, Value, json};

use crate::decide::NodeDecision;
use decision_protocol::frame::{FrameArtifact, Mode};

/// One node's decision, as logged. Optional fields are omitted when `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DecisionEvent {
    /// The host's step number when the decision was made.
    pub step: u64,
    /// The decision spec id (the node).
    pub id: String,
    /// The sent state: the merged frame when the request was batched.
    pub state: Map<String, Value>,
    /// This node's own frame artifact (`runtime.md` §2.11).
    pub frame: Option<Value>,
    /// `requestDigest`: the digest over the sent frame digest and the sent questions' text
    /// (`runtime.md` §2.11); `None` for an event that records no request.
    pub request_digest: Option<String>,
    /// `sentFrameDigest`: the digest of the frame actually sent (merged when batched).
    pub sent_frame_digest: Option<String>,
    /// The sent (merged) questions in wire form.
    pub sent_questions: Option<Value>,
    /// `batchIds`: every node id of the shared request, in order.
    pub batch_ids: Option<Vec<String>>,
    /// `{id, kind, threshold, value, margin}`.
    pub margin: Option<Value>,
    /// This node's own questions in wire form.
    pub questions: Value,
    /// This node's answers exactly as received, valid or not (the raw answers).
    pub answers: Value,
    /// The action taken.
    pub action: String,
    /// The policy's reason, or why the node escalated.
    pub reason: String,
    /// `latencyMs`: milliseconds of the provider call.
    pub latency_ms: u64,
    /// The provider that served the request.
    pub provider: String,
    /// The model that answered, when known.
    pub model: Option<String>,
    /// A fallback was taken, answers were missing or dropped, or the provider failed.
    pub degraded: bool,
    /// The action is `escalate`.
    pub escalate: bool,
    /// The provider's warnings; `None` (omitted) when there were none.
    pub warnings: Option<Vec<String>>,
    /// The threshold overrides the policy was evaluated with (`{"block.question": value}`),
    /// when any were given, so replay can evaluate the same policy (omitted otherwise).
    pub gates: Option<Map<String, Value>>,
}

impl DecisionEvent {
    /// Appends `JSON.stringify` of [`DecisionEvent::to_value`] to `out`.
    pub fn write_to(&self, out: &mut String) {
        let mut o = Members::open(out);
        o.key("type").push_str("\"decision\"");
        o.number("step", self.step);
        write_string(&self.id, o.key("id"));
        write_map(&self.state, o.key("state"));
        if let Some(frame) = &self.frame {
            write_value(frame, o.key("frame"));
        }
        if let Some(d) = &self.request_digest {
            write_string(d, o.key("requestDigest"));
        }
        if let Some(d) = &self.sent_frame_digest {
            write_string(d, o.key("sentFrameDigest"));
        }
        if let Some(q) = &self.sent_questions {
            write_value(q, o.key("sentQuestions"));
        }
        if let Some(ids) = &self.batch_ids {
            write_strings(ids, o.key("batchIds"));
        }
        if let Some(m) = &self.margin {
            write_value(m, o.key("margin"));
        }
        write_value(&self.questions, o.key("questions"));
        write_value(&self.answers, o.key("answers"));
        write_string(&self.action, o.key("action"));
        write_string(&self.reason, o.key("reason"));
        o.number("latencyMs", self.latency_ms);
        write_string(&self.provider, o.key("provider"));
        if let Some(m) = &self.model {
            write_string(m, o.key("model"));
        }
        o.boolean("degraded", self.degraded);
        o.boolean("escalate", self.escalate);
        if let Some(w) = &self.warnings {
            write_strings(w, o.key("warnings"));
        }
        if let Some(gates) = &self.gates {
            write_map(gates, o.key("gates"));
        }
        o.close();
    }

    /// The event object, keys in the reference's emission order.
    pub fn to_value(&self) -> Value {
        self.clone().into_value()
    }

    /// [`DecisionEvent::to_value`], moving the fields instead of copying them. The object has
    /// room for the members a host adds after these (node, block, position, state version,
    /// evidence).
    pub fn into_value(self) -> Value {
        let mut e = Map::with_capacity(26);
        let mut put = |key: &str, value: Value| {
            e.insert(key.to_owned(), value);
        };
        put("type", Value::from("decision"));
        put("step", Value::from(self.step));
        put("id", Value::String(self.id));
        put("state", Value::Object(self.state));
        if let Some(frame) = self.frame {
            put("frame", frame);
        }
        if let Some(d) = self.request_digest {
            put("requestDigest", Value::String(d));
        }
        if let Some(d) = self.sent_frame_digest {
            put("sentFrameDigest", Value::String(d));
        }
        if let Some(q) = self.sent_questions {
            put("sentQuestions", q);
        }
        if let Some(ids) = self.batch_ids {
            put("batchIds", Value::from(ids));
        }
        if let Some(m) = self.margin {
            put("margin", m);
        }
        put("questions", self.questions);
        put("answers", self.answers);
        put("action", Value::String(self.action));
        put("reason", Value::String(self.reason));
        put("latencyMs", Value::from(self.latency_ms));
        put("provider", Value::String(self.provider));
        if let Some(m) = self.model {
            put("model", Value::String(m));
        }
        put("degraded", Value::from(self.degraded));
        put("escalate", Value::from(self.escalate));
        if let Some(w) = self.warnings {
            put("warnings", Value::from(w));
        }
        if let Some(gates) = self.gates {
            put("gates", Value::Object(gates));
        }
        Value::Object(e)
    }
}

// The conversion lives with the event, not with the decider: the log reads decisions, the
// decider never needs the log.
impl NodeDecision {
    /// The `decision` event of this node (runtime.md §4.1), with its own frame artifact when it
    /// has one. The one place a decision becomes a logged event.
    pub fn to_event(&self, frame: Option<Value>) -> DecisionEvent {
        DecisionEvent {
            step: self.step,
            id: self.id.clone(),
            state: Map::clone(&self.state),
            frame,
            request_digest: Some(self.request_digest.clone()),
            sent_frame_digest: Some(self.sent_frame_digest.clone()),
            sent_questions: Some(Value::clone(&self.sent_questions)),
            batch_ids: Some(self.batch_ids.clone()),
            margin: self.margin.as_ref().map(|m| {
                json!({"id": m.question, "kind": m.kind, "threshold": m.threshold, "value": m.value, "margin": m.margin})
            }),
            questions: Value::clone(&self.questions),
            answers: Value::Object(self.raw_answers.clone()),
            action: self.action.clone(),
            reason: self.reason.clone(),
            latency_ms: self.latency_ms,
            provider: self.provider.clone(),
            model: self.model.clone(),
            degraded: self.degraded,
            escalate: self.escalate,
            warnings: (!self.warnings.is_empty()).then(|| self.warnings.clone()),
            gates: None,
        }
    }
}

/// A graph node's `decision` event, borrowed from where it was decided: the decision, the
/// node's own frame artifact, where in the graph it was decided, and the evidence its action
/// needed. [`NodeDecisionEvent::into_event`] builds the event object;
/// [`NodeDecisionEvent::write_to`] writes the same object's JSON without building it.
#[derive(Debug, Clone)]
pub struct NodeDecisionEvent<'a> {
    /// The decision, as the decider returned it.
    pub decision: &'a NodeDecision,
    /// This node's own frame artifact (`runtime.md` §2.11), given up to the record: its
    /// names and lists move into the event object when one is built.
    pub frame: Option<FrameArtifact>,
    /// The graph node (`node`), the contract block (`block`) and its position.
    pub node: &'a str,
    /// The contract block (`block`) the decision is for.
    pub block: &'a str,
    /// The block's position (`position`, its `when:`).
    pub position: &'a str,
    /// The host's state version the node saw (`stateVersion`).
    pub state_version: u64,
    /// The evidence the action needed (the first block's record only).
    pub evidence: Option<&'a Value>,
}

impl NodeDecisionEvent<'_> {
    /// The event object: [`NodeDecision::to_event`]'s members, then `node`, `block`,
    /// `position`, `stateVersion` and, when there is some, `evidence`.
    pub fn into_event(self) -> Map<String, Value> {
        let mut event = match self.decision.to_event(self.frame.map(FrameArtifact::into_value)).into_value() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        event.insert("node".into(), json!(self.node));
        event.insert("block".into(), json!(self.block));
        event.insert("position".into(), json!(self.position));
        event.insert("stateVersion".into(), json!(self.state_version));
        if let Some(evidence) = self.evidence {
            event.insert("evidence".into(), evidence.clone());
        }
        event
    }

    /// Appends `JSON.stringify` of [`NodeDecisionEvent::into_event`] to `out`.
    pub fn write_to(&self, out: &mut String) {
        let d = self.decision;
        let mut o = Members::open(out);
        o.key("type").push_str("\"decision\"");
        o.number("step", d.step);
        write_string(&d.id, o.key("id"));
        // A node asked alone sent its frame's own state, whose text the frame kept.
        let kept = self.frame.as_ref().and_then(|frame| frame.state_text.of(&d.state));
        let state_text = write_state(&d.state, kept, o.key("state"));
        if let Some(frame) = &self.frame {
            // A node asked alone sent its own frame's state (the same one, shared, when it
            // came from the frame): its text is copied, not rewritten.
            let same = Arc::ptr_eq(&d.state, &frame.state) || same_text(&d.state, &frame.state);
            write_frame(frame, same.then_some(state_text), o.key("frame"));
        }
        write_string(&d.request_digest, o.key("requestDigest"));
        write_string(&d.sent_frame_digest, o.key("sentFrameDigest"));
        let sent_questions_text = {
            let out = o.key("sentQuestions");
            let start = out.len();
            match d.sent_questions_text() {
                Some(text) => out.push_str(text),
                None => write_value(&d.sent_questions, out),
            }
            start..out.len()
        };
        write_strings(&d.batch_ids, o.key("batchIds"));
        if let Some(m) = &d.margin {
            let mut margin = Members::open(o.key("margin"));
            write_string(&m.question, margin.key("id"));
            write_string(m.kind, margin.key("kind"));
            write_f64(m.threshold, margin.key("threshold"));
            write_f64(m.value, margin.key("value"));
            write_f64(m.margin, margin.key("margin"));
            margin.close();
        }
        let out = o.key("questions");
        if Arc::ptr_eq(&d.questions, &d.sent_questions) {
            // A node alone in its request sent exactly its own questions.
            out.extend_from_within(sent_questions_text);
        } else {
            write_value(&d.questions, out);
        }
        write_map(&d.raw_answers, o.key("answers"));
        write_string(&d.action, o.key("action"));
        write_string(&d.reason, o.key("reason"));
        o.number("latencyMs", d.latency_ms);
        write_string(&d.provider, o.key("provider"));
        if let Some(m) = &d.model {
            write_string(m, o.key("model"));
        }
        o.boolean("degraded", d.degraded);
        o.boolean("escalate", d.escalate);
        if !d.warnings.is_empty() {
            write_strings(&d.warnings, o.key("warnings"));
        }
        write_string(self.node, o.key("node"));
        write_string(self.block, o.key("block"));
        write_string(self.position, o.key("position"));
        o.number("stateVersion", self.state_version);
        if let Some(evidence) = self.evidence {
            write_value(evidence, o.key("evidence"));
        }
        o.close();
    }
}

/// The `decision` event of one block asked alone, written from its frame artifact and its
/// questions' text as they were prepared (a host that frames its own cells step after step,
/// the Python tool gate's heuristic path): byte for byte the [`DecisionEvent`] whose `id` and
/// `batchIds` are the frame's node, whose `state` is the frame's state, whose `frame` is the
/// artifact, whose `sentQuestions` and `questions` are the block's questions, with no
/// latency, model, margin, warnings or gates — without building or copying any of them.
#[derive(Debug, Clone, Copy)]
pub struct FramedDecisionEvent<'a> {
    /// The host's step.
    pub step: u64,
    /// The frame sent (its node, state and digest are the event's).
    pub frame: &'a FrameArtifact,
    /// `requestDigest` of the frame and the questions.
    pub request_digest: &'a str,
    /// `JSON.stringify` of the block's questions as sent.
    pub questions_text: &'a str,
    /// The answers, as given.
    pub answers: &'a Map<String, Value>,
    /// The policy's action and its reason.
    pub action: &'a str,
    /// Why the policy chose `action`.
    pub reason: &'a str,
    /// The provider's name.
    pub provider: &'a str,
}

impl FramedDecisionEvent<'_> {
    /// Appends `JSON.stringify` of the event object (see the type's documentation).
    pub fn write_to(&self, out: &mut String) {
        let frame = self.frame;
        let mut o = Members::open(out);
        o.key("type").push_str("\"decision\"");
        o.number("step", self.step);
        write_string(&frame.node, o.key("id"));
        let state_text = write_state(&frame.state, frame.state_text.of(&frame.state), o.key("state"));
        write_frame(frame, Some(state_text), o.key("frame"));
        write_string(self.request_digest, o.key("requestDigest"));
        write_string(&frame.digest, o.key("sentFrameDigest"));
        o.key("sentQuestions").push_str(self.questions_text);
        write_strings(std::slice::from_ref(&frame.node), o.key("batchIds"));
        o.key("questions").push_str(self.questions_text);
        write_map(self.answers, o.key("answers"));
        write_string(self.action, o.key("action"));
        write_string(self.reason, o.key("reason"));
        o.number("latencyMs", 0);
        write_string(self.provider, o.key("provider"));
        o.boolean("degraded", false);
        o.boolean("escalate", self.action == "escalate");
        o.close();
    }
}

/// `JSON.stringify` of [`FrameArtifact::into_value`]: `node`, `state`, `digest`, `fields`,
/// `untrusted`, `truncated`, `unfilled`, `absent`, `excluded`, and in provenance mode
/// `provenance`. `state_text`, when given, is where `out` already holds the state's text.
fn write_frame(frame: &FrameArtifact, state_text: Option<Range<usize>>, out: &mut String) {
    let mut o = Members::open(out);
    write_string(&frame.node, o.key("node"));
    let out = o.key("state");
    match (state_text, frame.state_text.of(&frame.state)) {
        (Some(written), _) => out.extend_from_within(written),
        (None, Some(text)) => out.push_str(text),
        (None, None) => write_map(&frame.state, out),
    }
    write_string(&frame.digest, o.key("digest"));
    o.key("fields").push_str(frame.fields.json());
    write_strings(&frame.untrusted, o.key("untrusted"));
    let mut truncated = Items::open(o.key("truncated"));
    for t in &frame.truncated {
        let mut item = Members::open(truncated.next());
        write_string(&t.key, item.key("key"));
        item.number("from", t.from);
        item.number("to", t.to);
        item.close();
    }
    truncated.close();
    let mut unfilled = Items::open(o.key("unfilled"));
    for u in &frame.unfilled {
        let mut item = Members::open(unfilled.next());
        write_string(&u.key, item.key("key"));
        write_string(&u.from, item.key("from"));
        write_string(&u.why, item.key("why"));
        item.close();
    }
    unfilled.close();
    let mut absent = Items::open(o.key("absent"));
    for a in &frame.absent {
        let mut item = Members::open(absent.next());
        write_string(&a.key, item.key("key"));
        write_string(&a.why, item.key("why"));
        item.close();
    }
    absent.close();
    o.key("excluded").push_str(frame.excluded.json());
    if frame.mode == Mode::Provenance {
        let mut provenance = Items::open(o.key("provenance"));
        for (key, from, marked) in frame.provenance_entries() {
            let mut item = Members::open(provenance.next());
            write_string(key, item.key("key"));
            write_string(from, item.key("from"));
            item.key("trust").push_str("\"untrusted\"");
            write_string(marked, item.key("marked"));
            item.close();
        }
        provenance.close();
    }
    o.close();
}

/// Appends a decision's `state`: its `kept` text when there is one, else the map written out.
/// Returns where in `out` the text lies (a frame of the same state copies it from there).
fn write_state(state: &Map<String, Value>, kept: Option<&str>, out: &mut String) -> Range<usize> {
    let start = out.len();
    match kept {
        Some(text) => out.push_str(text),
        None => write_map(state, out),
    }
    start..out.len()
}

/// `JSON.stringify` of an object held as a map (`write_value` would need it copied into a
/// `Value`).
fn write_map(map: &Map<String, Value>, out: &mut String) {
    if map.keys().any(|k| integer_key(k).is_some()) {
        // Integer-like keys are written first, in numeric order: `write_value` knows how.
        write_value(&Value::Object(map.clone()), out);
        return;
    }
    let mut o = Members::open(out);
    for (key, value) in map {
        let slot = o.slot();
        write_string(key, slot);
        slot.push(':');
        write_value(value, slot);
    }
    o.close();
}

/// Whether two objects are written as the same text: the same members in the same order,
/// with values that are too (`Value`'s own equality ignores member order).
fn same_text(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && same_value_text(va, vb))
}

fn same_value_text(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => same_text(a, b),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value_text(a, b)),
        // Equal numbers have the same representation, so the same text.
        _ => a == b,
    }
}

fn write_strings(items: &[String], out: &mut String) {
    let mut list = Items::open(out);
    for item in items {
        write_string(item, list.next());
    }
    list.close();
}

/// What a transition records when no edge consumes the outcome.
pub const NO_CONSUMER: &str = "no transition consumes this outcome";

/// The executor's own frequent events. A sink that writes JSON writes them straight into a
/// log line; the payload object is built only for sinks that take objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphEvent<'a> {
    /// `phase{step, kind:"decide", id}`: the blocks of a node (ids joined by `" + "`) are
    /// about to be asked.
    Decide {
        /// The step the node runs in.
        step: u64,
        /// The ids of the node's blocks, joined by `" + "`.
        id: &'a str,
    },
    /// `transition{node, step, stateVersion, visit, action?, outcome, to}`, or with
    /// `refused` in place of `to` when no edge consumes the outcome (`to` is `None`).
    Transition {
        /// The node the transition leaves.
        node: &'a str,
        /// The step the node ran in.
        step: u64,
        /// The host's state version the node saw.
        state_version: u64,
        /// The node's visit count in the run, this one included.
        visit: u64,
        /// The dispatched action (decision nodes only).
        action: Option<&'a str>,
        /// The outcome label the handler produced.
        outcome: &'a str,
        /// The node or terminal state the edge leads to; `None` when no edge consumes the
        /// outcome (written as `refused`).
        to: Option<&'a str>,
    },
}

impl GraphEvent<'_> {
    /// The event's `type`: `phase` or `transition`.
    pub fn event_type(&self) -> &'static str {
        match self {
            GraphEvent::Decide { .. } => "phase",
            GraphEvent::Transition { .. } => "transition",
        }
    }

    /// The payload, members in the order [`GraphEvent::write_to`] writes them.
    pub fn payload(&self) -> Map<String, Value> {
        let mut payload = Map::with_capacity(8);
        let mut put = |key: &str, value: Value| {
            payload.insert(key.to_owned(), value);
        };
        match *self {
            GraphEvent::Decide { step, id } => {
                put("step", json!(step));
                put("kind", json!("decide"));
                put("id", json!(id));
            }
            GraphEvent::Transition { node, step, state_version, visit, action, outcome, to } => {
                put("node", json!(node));
                put("step", json!(step));
                put("stateVersion", json!(state_version));
                put("visit", json!(visit));
                if let Some(action) = action {
                    put("action", json!(action));
                }
                put("outcome", json!(outcome));
                match to {
                    Some(to) => put("to", json!(to)),
                    None => put("refused", json!(NO_CONSUMER)),
                }
            }
        }
        payload
    }

    /// Appends `JSON.stringify` of `{"type": …, …payload}` to `out`.
    pub fn write_to(&self, out: &mut String) {
        let mut o = Members::open(out);
        write_string(self.event_type(), o.key("type"));
        match *self {
            GraphEvent::Decide { step, id } => {
                o.number("step", step);
                o.key("kind").push_str("\"decide\"");
                write_string(id, o.key("id"));
            }
            GraphEvent::Transition { node, step, state_version, visit, action, outcome, to } => {
                write_string(node, o.key("node"));
                o.number("step", step);
                o.number("stateVersion", state_version);
                o.number("visit", visit);
                if let Some(action) = action {
                    write_string(action, o.key("action"));
                }
                write_string(outcome, o.key("outcome"));
                match to {
                    Some(to) => write_string(to, o.key("to")),
                    None => write_string(NO_CONSUMER, o.key("refused")),
                }
            }
        }
        o.close();
    }
}

/// An object being written: `{`, then members separated by `,`, then `}` on close.
struct Members<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'o> Members<'o> {
    fn open(out: &'o mut String) -> Self {
        out.push('{');
        Members { out, first: true }
    }

    /// Where the next member goes (its separator written).
    fn slot(&mut self) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out
    }

    /// Starts a member whose key needs no escaping; its value goes to the returned string.
    fn key(&mut self, key: &str) -> &mut String {
        let out = self.slot();
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out
    }

    fn number(&mut self, key: &str, n: impl Into<Number>) {
        write_number(&n.into(), self.key(key));
    }

    fn boolean(&mut self, key: &str, b: bool) {
        self.key(key).push_str(if b { "true" } else { "false" });
    }

    fn close(self) {
        self.out.push('}');
    }
}

/// An array being written: `[`, items separated by `,`, `]` on close.
struct Items<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'o> Items<'o> {
    fn open(out: &'o mut String) -> Self {
        out.push('[');
        Items { out, first: true }
    }

    /// Where the next item goes (its separator written).
    fn next(&mut self) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out
    }

    fn close(self) {
        self.out.push(']');
    }
}
