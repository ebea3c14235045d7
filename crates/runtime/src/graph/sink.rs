//! The event sink (registration 7): where a host's events go. Every event is a JSON object
//! with a `type`; decisions carry the decision id, position, frame digest, request digest,
//! answers, action, policy reason and evidence.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::log::{GraphEvent, LogHead, NodeDecisionEvent, SessionLog};

/// Why an event could not be recorded. A host that cannot record must stop.
#[derive(Debug, Error)]
#[error("cannot record event `{event}`: {message}")]
pub struct SinkError {
    /// The type of the event that could not be recorded (`commit` or `seal` for those).
    pub event: String,
    /// Why, as the sink says it.
    pub message: String,
}

/// Receives every event of a run, in order.
pub trait EventSink: Send {
    /// Record one event: `event_type` plus its payload (a `type` key in the payload is ignored).
    fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), SinkError>;

    /// Record a graph node's `decision` event. By default its event object is built and
    /// [`EventSink::emit`]ted; a sink that writes JSON can write the record as it is.
    fn emit_decision(&mut self, record: NodeDecisionEvent<'_>) -> Result<(), SinkError> {
        self.emit("decision", record.into_event())
    }

    /// Record one of the executor's own events. By default its payload is built and
    /// [`EventSink::emit`]ted; a sink that writes JSON can write it as it is.
    fn emit_graph(&mut self, event: GraphEvent<'_>) -> Result<(), SinkError> {
        self.emit(event.event_type(), event.payload())
    }

    /// Make every event recorded so far durable as far as this sink goes (a session log
    /// with group commit writes its held lines). Hosts call it before every side effect, so
    /// a decision is recorded before the action it led to takes effect; the executor calls it
    /// at every step boundary and hosts at the end of a run.
    fn commit(&mut self) -> Result<(), SinkError> {
        Ok(())
    }

    /// End the run: a session log writes its seal line and returns its head
    /// ([`crate::log::seal`]); other sinks commit and return `None`. Hosts call it once, after
    /// the run's last event.
    fn seal(&mut self) -> Result<Option<LogHead>, SinkError> {
        self.commit().map(|()| None)
    }
}

impl EventSink for SessionLog {
    fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), SinkError> {
        self.append_event(event_type, &payload)
            .map_err(|e| SinkError { event: event_type.to_owned(), message: e.to_string() })
    }

    fn emit_decision(&mut self, record: NodeDecisionEvent<'_>) -> Result<(), SinkError> {
        self.append_node_decision(&record)
            .map_err(|e| SinkError { event: "decision".to_owned(), message: e.to_string() })
    }

    fn emit_graph(&mut self, event: GraphEvent<'_>) -> Result<(), SinkError> {
        self.append_graph_event(&event)
            .map_err(|e| SinkError { event: event.event_type().to_owned(), message: e.to_string() })
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        SessionLog::commit(self).map_err(|e| SinkError { event: "commit".to_owned(), message: e.to_string() })
    }

    fn seal(&mut self) -> Result<Option<LogHead>, SinkError> {
        SessionLog::seal(self).map(Some).map_err(|e| SinkError { event: "seal".to_owned(), message: e.to_string() })
    }
}

/// Keeps events in memory, shareable: clone the sink to read what was recorded.
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    events: Arc<Mutex<Vec<Value>>>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        MemorySink::default()
    }

    /// Every event so far, each `{"type": …, …payload}`.
    pub fn events(&self) -> Vec<Value> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// The events of one type.
    pub fn of_type(&self, event_type: &str) -> Vec<Value> {
        self.events().into_iter().filter(|e| e.get("type").and_then(Value::as_str) == Some(event_type)).collect()
    }
}

impl EventSink for MemorySink {
    fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), SinkError> {
        // A payload that already starts with this `type` (a decision record) is kept as it is.
        let typed = payload.iter().next().is_some_and(|(k, v)| k == "type" && v.as_str() == Some(event_type));
        let event = match typed {
            true => payload,
            false => {
                let mut event = Map::with_capacity(payload.len() + 1);
                event.insert("type".to_owned(), Value::from(event_type));
                event.extend(payload.into_iter().filter(|(k, _)| k != "type"));
                event
            }
        };
        self.events
            .lock()
            .map_err(|_| SinkError { event: event_type.to_owned(), message: "memory sink poisoned".into() })?
            .push(Value::Object(event));
        Ok(())
    }
}

/// Sends every event to several sinks in turn (e.g. the session log and a progress display).
pub struct Tee {
    sinks: Vec<Box<dyn EventSink>>,
}

impl Tee {
    /// A sink that sends each event to `sinks`, in order, stopping at the first failure.
    pub fn new(sinks: Vec<Box<dyn EventSink>>) -> Self {
        Tee { sinks }
    }
}

impl EventSink for Tee {
    fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), SinkError> {
        // Every sink but the last gets a copy; the last one takes the payload.
        let Some((last, rest)) = self.sinks.split_last_mut() else { return Ok(()) };
        for sink in rest {
            sink.emit(event_type, payload.clone())?;
        }
        last.emit(event_type, payload)
    }

    fn emit_decision(&mut self, record: NodeDecisionEvent<'_>) -> Result<(), SinkError> {
        let Some((last, rest)) = self.sinks.split_last_mut() else { return Ok(()) };
        for sink in rest {
            sink.emit_decision(record.clone())?;
        }
        last.emit_decision(record)
    }

    fn emit_graph(&mut self, event: GraphEvent<'_>) -> Result<(), SinkError> {
        self.sinks.iter_mut().try_for_each(|sink| sink.emit_graph(event))
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        self.sinks.iter_mut().try_for_each(|sink| sink.commit())
    }

    /// Seals every sink; the head is the first one a sink returns.
    fn seal(&mut self) -> Result<Option<LogHead>, SinkError> {
        let mut head = None;
        for sink in &mut self.sinks {
            let sealed = sink.seal()?;
            head = head.or(sealed);
        }
        Ok(head)
    }
}

/// Calls a function for every event (for progress displays).
pub struct FnSink<F>(pub F);

impl<F: FnMut(&str, &Map<String, Value>) + Send> EventSink for FnSink<F> {
    fn emit(&mut self, event_type: &str, payload: Map<String, Value>) -> Result<(), SinkError> {
        (self.0)(event_type, &payload);
        Ok(())
    }
}
