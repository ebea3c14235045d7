//! Reading outcome events from log lines (the format is documented in [`super::report`]).
//!
//! Two readers with one meaning. The fast one deserialises a line straight into borrowed
//! fields and summarises the ok value without building a JSON tree; it gives up (never
//! guesses) on anything unusual — a type it does not expect, a repeated key, an outcome that is
//! not plainly valid. The careful one then reads the line as a [`Value`] and applies the same
//! rules member by member, so that it can name exactly what is wrong. A `null` member counts
//! as absent in both.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::{Map, Value};

use super::telemetry::{ValueSummary, WeakSuccessFlag};
use super::types::Outcome;

/// The event type of an outcome event.
pub const OUTCOME_EVENT_TYPE: &str = "tool:outcome";

/// What an outcome event says about the call's result.
pub(crate) enum EventResult {
    Ok(ValueSummary),
    Error { error_type: String, metadata: MetadataSummary },
}

/// The members of an error's metadata that the report reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct MetadataSummary {
    /// `boundary_axes`: the strings of the array.
    pub boundary_axes: Vec<String>,
    /// `suggested_split`: a string, or the strings of an array.
    pub suggested_splits: Vec<String>,
    pub mismatch: Option<String>,
    pub path: Option<String>,
}

impl MetadataSummary {
    fn of(metadata: &Map<String, Value>) -> MetadataSummary {
        let strings = |value: Option<&Value>| -> Vec<String> {
            match value {
                Some(Value::String(text)) => vec![text.clone()],
                Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                _ => Vec::new(),
            }
        };
        MetadataSummary {
            boundary_axes: match metadata.get("boundary_axes") {
                Some(Value::Array(_)) => strings(metadata.get("boundary_axes")),
                _ => Vec::new(),
            },
            suggested_splits: strings(metadata.get("suggested_split")),
            mismatch: metadata.get("mismatch").and_then(Value::as_str).map(str::to_owned),
            path: metadata.get("path").and_then(Value::as_str).map(str::to_owned),
        }
    }
}

impl<'de> Deserialize<'de> for MetadataSummary {
    /// Reads an object, keeping only the four members (the last of a repeated key wins, as in
    /// a [`Value`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetadataVisitor;
        impl<'de> Visitor<'de> for MetadataVisitor {
            type Value = MetadataSummary;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<MetadataSummary, A::Error> {
                let mut summary = MetadataSummary::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "boundary_axes" | "suggested_split" | "mismatch" | "path" => {
                            let value: Value = map.next_value()?;
                            let mut one = Map::new();
                            one.insert(key.into_owned(), value);
                            let part = MetadataSummary::of(&one);
                            if one.contains_key("boundary_axes") {
                                summary.boundary_axes = part.boundary_axes;
                            } else if one.contains_key("suggested_split") {
                                summary.suggested_splits = part.suggested_splits;
                            } else if one.contains_key("mismatch") {
                                summary.mismatch = part.mismatch;
                            } else {
                                summary.path = part.path;
                            }
                        }
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(summary)
            }
        }
        deserializer.deserialize_map(MetadataVisitor)
    }
}

/// A checked outcome event.
pub(crate) struct Event<'a> {
    pub tool: Cow<'a, str>,
    pub method: Cow<'a, str>,
    pub trace_id: Option<Cow<'a, str>>,
    pub call_id: Option<Cow<'a, str>>,
    pub at_ms: Option<u64>,
    pub depth: Option<u64>,
    pub result: EventResult,
    pub contract: Option<&'static str>,
    pub weak_success: Option<Vec<WeakSuccessFlag>>,
}

/// One line, read.
pub(crate) enum Line<'a> {
    Event(Box<Event<'a>>),
    /// Blank, or not an outcome event (a header, another event type).
    Other,
    /// An unreadable final line without a newline: a torn write.
    Torn,
}

/// Read one line. Errors are messages for the caller to locate.
pub(crate) fn read_line(text: &str, last_unterminated: bool) -> Result<Line<'_>, String> {
    if text.trim().is_empty() {
        return Ok(Line::Other);
    }
    // Only objects are events (serde would also fill a struct from an array).
    if text.trim_start().starts_with('{')
        && let Ok(line) = serde_json::from_str::<FastLine<'_>>(text)
        && let Ok(read) = line.into_line()
    {
        return Ok(read);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => careful(&value).map(|read| match read {
            Some(event) => Line::Event(Box::new(event)),
            None => Line::Other,
        }),
        Err(_) if last_unterminated => Ok(Line::Torn),
        Err(error) => Err(format!("not JSON: {error}")),
    }
}

fn contract_verdict(verdict: &str) -> Option<&'static str> {
    match verdict {
        "held" => Some("held"),
        "violated" => Some("violated"),
        "not_applied" => Some("not_applied"),
        _ => None,
    }
}

/// A member present in the JSON (`null` counts as absent).
#[derive(Default)]
enum Slot<T> {
    #[default]
    Absent,
    Present(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Slot<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Slot::Present)
    }
}

/// A string whose content is not needed.
struct AnyString;

impl<'de> Deserialize<'de> for AnyString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StringVisitor;
        impl Visitor<'_> for StringVisitor {
            type Value = AnyString;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<AnyString, E> {
                Ok(AnyString)
            }
        }
        deserializer.deserialize_str(StringVisitor)
    }
}

#[derive(Deserialize)]
struct FastLine<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "type")]
    event_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    e: Option<Box<FastLine<'a>>>,
    #[serde(default)]
    at: Option<u64>,
    #[serde(borrow, default)]
    tool: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    trace_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(default)]
    depth: Option<u64>,
    #[serde(default)]
    outcome: Option<FastOutcome>,
    #[serde(borrow, default)]
    contract: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    weak_success: Option<Vec<Cow<'a, str>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastOutcome {
    status: AnyStatus,
    #[serde(default)]
    tool: Slot<String>,
    #[serde(default)]
    method: Slot<String>,
    #[serde(default)]
    value: Slot<ValueSummary>,
    #[serde(default)]
    error_type: Slot<String>,
    #[serde(default)]
    error_message: Slot<AnyString>,
    #[serde(default)]
    retriable: Slot<bool>,
    #[serde(default)]
    metadata: Slot<MetadataSummary>,
}

/// `"ok"` or `"error"`; anything else leaves the fast reader.
#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum AnyStatus {
    Ok,
    Error,
}

impl<'a> FastLine<'a> {
    /// `Err(())`: leave it to the careful reader.
    fn into_line(self) -> Result<Line<'a>, ()> {
        let (mut line, envelope_at) = if self.kind.as_deref() == Some("event") {
            match self.e {
                Some(inner) => (*inner, self.at),
                None => return Ok(Line::Other),
            }
        } else {
            (self, None)
        };
        let marked =
            line.kind.as_deref() == Some(OUTCOME_EVENT_TYPE) || line.event_type.as_deref() == Some(OUTCOME_EVENT_TYPE);
        let unmarked = line.kind.is_none() && line.event_type.is_none() && line.outcome.is_some();
        if !marked && !unmarked {
            return Ok(Line::Other);
        }
        let outcome = line.outcome.take().ok_or(())?;
        let result = match (outcome.status, outcome.value, outcome.error_type) {
            (AnyStatus::Ok, Slot::Present(summary), Slot::Absent)
                if matches!(outcome.error_message, Slot::Absent)
                    && matches!(outcome.retriable, Slot::Absent)
                    && matches!(outcome.metadata, Slot::Absent) =>
            {
                EventResult::Ok(summary)
            }
            (AnyStatus::Error, Slot::Absent, Slot::Present(error_type)) if !error_type.is_empty() => {
                let metadata = match outcome.metadata {
                    Slot::Present(metadata) => metadata,
                    Slot::Absent => MetadataSummary::default(),
                };
                EventResult::Error { error_type, metadata }
            }
            _ => return Err(()),
        };
        let from_outcome = |slot: Slot<String>| match slot {
            Slot::Present(name) => Some(Cow::Owned(name)),
            Slot::Absent => None,
        };
        let tool = line.tool.or_else(|| from_outcome(outcome.tool)).ok_or(())?;
        let method = line.method.or_else(|| from_outcome(outcome.method)).ok_or(())?;
        let contract = match line.contract.as_deref() {
            None => None,
            Some(verdict) => Some(contract_verdict(verdict).ok_or(())?),
        };
        let weak_success = match &line.weak_success {
            None => None,
            Some(names) => {
                Some(names.iter().map(|name| WeakSuccessFlag::from_name(name).ok_or(())).collect::<Result<_, _>>()?)
            }
        };
        Ok(Line::Event(Box::new(Event {
            tool,
            method,
            trace_id: line.trace_id,
            call_id: line.call_id,
            at_ms: line.at.or(envelope_at),
            depth: line.depth,
            result,
            contract,
            weak_success,
        })))
    }
}

/// A member, `null` counting as absent.
fn member<'v>(object: &'v Value, name: &str) -> Option<&'v Value> {
    object.get(name).filter(|value| !value.is_null())
}

fn string_member<'v>(object: &'v Value, name: &str) -> Result<Option<&'v str>, String> {
    match member(object, name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!("`{name}` must be a string, not {other}")),
    }
}

fn count_member(object: &Value, name: &str) -> Result<Option<u64>, String> {
    match member(object, name) {
        None => Ok(None),
        Some(value) => {
            value.as_u64().map(Some).ok_or_else(|| format!("`{name}` must be a non-negative integer, not {value}"))
        }
    }
}

/// The careful reader: `Ok(None)` for lines that are not outcome events.
fn careful(line: &Value) -> Result<Option<Event<'static>>, String> {
    if !line.is_object() {
        return Ok(None);
    }
    let (event, envelope_at) = if member(line, "kind").and_then(Value::as_str) == Some("event") {
        match member(line, "e") {
            Some(inner) => (inner, Some(line)),
            None => return Ok(None),
        }
    } else {
        (line, None)
    };
    if !event.is_object() {
        return Ok(None);
    }
    let kind = member(event, "kind");
    let event_type = member(event, "type");
    let marked = kind.and_then(Value::as_str) == Some(OUTCOME_EVENT_TYPE)
        || event_type.and_then(Value::as_str) == Some(OUTCOME_EVENT_TYPE);
    let unmarked = kind.is_none() && event_type.is_none() && member(event, "outcome").is_some();
    if !marked && !unmarked {
        return Ok(None);
    }
    let document = member(event, "outcome").ok_or("an outcome event needs `outcome`")?;
    let outcome = Outcome::from_json(document).map_err(|error| {
        if error.pointer.is_empty() {
            format!("`outcome`: {error}")
        } else {
            format!("`outcome{}`: {error}", error.pointer)
        }
    })?;
    let owned = |text: Option<&str>| text.map(|text| Cow::Owned(text.to_owned()));
    let tool = owned(string_member(event, "tool")?)
        .or_else(|| outcome.tool.clone().map(Cow::Owned))
        .ok_or("an outcome event needs `tool` (on the event or in its outcome)")?;
    let method = owned(string_member(event, "method")?)
        .or_else(|| outcome.method.clone().map(Cow::Owned))
        .ok_or("an outcome event needs `method` (on the event or in its outcome)")?;
    let at_ms = match count_member(event, "at")? {
        Some(at) => Some(at),
        None => match envelope_at {
            Some(envelope) => count_member(envelope, "at")?,
            None => None,
        },
    };
    let contract = match string_member(event, "contract")? {
        None => None,
        Some(verdict) => Some(
            contract_verdict(verdict)
                .ok_or_else(|| format!("`contract` must be held, violated or not_applied, not {verdict:?}"))?,
        ),
    };
    let weak_success = match member(event, "weak_success") {
        None => None,
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .map(|name| {
                    name.as_str()
                        .and_then(WeakSuccessFlag::from_name)
                        .ok_or_else(|| format!("unknown weak-success flag {name}"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => return Err(format!("`weak_success` must be an array of flag names, not {other}")),
    };
    let result = match outcome.result {
        super::types::OutcomeResult::Ok(value) => EventResult::Ok(ValueSummary::of(&value)),
        super::types::OutcomeResult::Error(error) => {
            EventResult::Error { error_type: error.error_type, metadata: MetadataSummary::of(&error.metadata) }
        }
    };
    Ok(Some(Event {
        tool,
        method,
        trace_id: owned(string_member(event, "trace_id")?),
        call_id: owned(string_member(event, "call_id")?),
        at_ms,
        depth: count_member(event, "depth")?,
        result,
        contract,
        weak_success,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Both readers agree on every line the fast one accepts.
    fn agree(line: &Value) {
        let text = line.to_string();
        let fast = serde_json::from_str::<FastLine<'_>>(&text).ok().and_then(|l| l.into_line().ok());
        let careful = careful(line).unwrap();
        match (fast, careful) {
            (Some(Line::Event(a)), Some(b)) => {
                assert_eq!((&a.tool, &a.method, &a.trace_id, &a.at_ms), (&b.tool, &b.method, &b.trace_id, &b.at_ms));
                match (&a.result, &b.result) {
                    (EventResult::Ok(x), EventResult::Ok(y)) => assert_eq!(x, y),
                    (
                        EventResult::Error { error_type: x, metadata: m },
                        EventResult::Error { error_type: y, metadata: n },
                    ) => {
                        assert_eq!((x, m), (y, n));
                    }
                    _ => panic!("results differ for {text}"),
                }
            }
            (Some(Line::Other), None) | (None, _) => {}
            _ => panic!("readers disagree on {text}"),
        }
    }

    #[test]
    fn the_readers_agree() {
        for line in [
            json!({"kind": "event", "at": 7, "e": {"type": "tool:outcome", "tool": "t", "method": "m",
                "outcome": {"status": "ok", "value": {"status": " Success ", "items": [], "more": [1], "x": {"a": []}}}}}),
            json!({"tool": "t", "method": "m", "trace_id": "a", "outcome": {"status": "ok", "value": []}}),
            json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "value": "  "}}),
            json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "value": {"message": "m", "status": []}}}),
            json!({"outcome": {"status": "error", "tool": "t", "method": "m", "error_type": "x", "metadata": {"a": 1}}}),
            json!({"kind": "header", "v": 2}),
        ] {
            agree(&line);
        }
    }

    #[test]
    fn the_fast_reader_gives_way_on_anything_unusual() {
        for text in [
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":{"a":[],"a":[1]}}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","tool":null,"value":1}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":1,"error_type":"x"}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"error","error_type":""}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"Ok","value":1}}"#,
            r#"{"tool":"t","method":"m","contract":"maybe","outcome":{"status":"ok","value":1}}"#,
        ] {
            let fast = serde_json::from_str::<FastLine<'_>>(text).ok().and_then(|l| l.into_line().ok());
            assert!(fast.is_none(), "{text}");
        }
        // More members than the summary reads straight from text: the careful reader counts
        // them all.
        let members: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!([]))).collect();
        let line = json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "value": members}}).to_string();
        assert!(serde_json::from_str::<FastLine<'_>>(&line).is_err());
        let Line::Event(event) = read_line(&line, false).unwrap() else { panic!("event") };
        let EventResult::Ok(ValueSummary::Object { empty_arrays, .. }) = &event.result else { panic!("object") };
        assert_eq!(empty_arrays.len(), 20);
        // The repeated key: the careful reader keeps the last, like `serde_json`.
        let Line::Event(event) =
            read_line(r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":{"a":[],"a":[1]}}}"#, false)
                .unwrap()
        else {
            panic!("event")
        };
        let EventResult::Ok(ValueSummary::Object { empty_arrays, .. }) = &event.result else { panic!("object") };
        assert!(empty_arrays.is_empty());
    }
}
