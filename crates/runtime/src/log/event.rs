//! The `decision` event as the reference loop logs it (`runtime.md` §4.1): the fields a
//! `decision-record/v1` record is read from, in emission order.

use serde_json::{Map, Value};

/// One node's decision, as logged. Optional fields are omitted when `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DecisionEvent {
    pub step: u64,
    /// The decision spec id (the node).
    pub id: String,
    /// The sent state: the merged frame when the request was batched.
    pub state: Map<String, Value>,
    /// This node's own frame artifact (`runtime.md` §2.11).
    pub frame: Option<Value>,
    pub request_digest: Option<String>,
    pub sent_frame_digest: Option<String>,
    /// The sent (merged) questions in wire form.
    pub sent_questions: Option<Value>,
    pub batch_ids: Option<Vec<String>>,
    /// `{id, kind, threshold, value, margin}`.
    pub margin: Option<Value>,
    /// This node's own questions in wire form.
    pub questions: Value,
    pub answers: Value,
    pub action: String,
    pub reason: String,
    pub latency_ms: u64,
    pub provider: String,
    pub model: Option<String>,
    pub degraded: bool,
    pub escalate: bool,
    pub warnings: Option<Vec<String>>,
}

impl DecisionEvent {
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
        Value::Object(e)
    }
}
