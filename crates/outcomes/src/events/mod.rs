//! Reading outcome events from log lines (the format is documented in [`crate::report`]).
//!
//! Two readers with one meaning. The fast one ([`scan`]) reads the members the report
//! needs straight from the text, borrowing their strings, and gives up (never guesses) on
//! anything unusual. The careful one then reads the line as a [`Value`] and applies the same
//! rules member by member, so that it can name exactly what is wrong. A `null` member counts
//! as absent in both.

use std::borrow::Cow;

use serde_json::{Map, Value};

mod scan;
use crate::telemetry::{ValueSummary, WeakSuccessFlag};
use crate::types::Outcome;

/// The event type of an outcome event.
pub const OUTCOME_EVENT_TYPE: &str = "tool:outcome";

/// What an outcome event says about the call's result, borrowed from the line where it can be.
pub(crate) enum EventResult<'a> {
    Ok(ValueSummary<'a>),
    Error { error_type: Cow<'a, str>, metadata: MetadataSummary<'a> },
}

/// The members of an error's metadata that the report reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct MetadataSummary<'a> {
    /// `boundary_axes`: the strings of the array.
    pub boundary_axes: Vec<Cow<'a, str>>,
    /// `suggested_split`: a string, or the strings of an array.
    pub suggested_splits: Vec<Cow<'a, str>>,
    pub mismatch: Option<Cow<'a, str>>,
    pub path: Option<Cow<'a, str>>,
}

/// A metadata member as far as the report cares: a string, the strings of an array (other
/// elements skipped), or anything else.
pub(crate) enum Strings<'a> {
    One(Cow<'a, str>),
    Many(Vec<Cow<'a, str>>),
    Other,
}

impl<'a> Strings<'a> {
    fn of(value: Option<&'a Value>) -> Strings<'a> {
        match value {
            Some(Value::String(text)) => Strings::One(Cow::Borrowed(text)),
            Some(Value::Array(items)) => {
                Strings::Many(items.iter().filter_map(Value::as_str).map(Cow::Borrowed).collect())
            }
            _ => Strings::Other,
        }
    }

    /// `boundary_axes` counts only an array.
    pub fn array(self) -> Vec<Cow<'a, str>> {
        match self {
            Strings::Many(items) => items,
            _ => Vec::new(),
        }
    }

    /// `suggested_split` counts a string or an array.
    pub fn list(self) -> Vec<Cow<'a, str>> {
        match self {
            Strings::One(text) => vec![text],
            Strings::Many(items) => items,
            Strings::Other => Vec::new(),
        }
    }

    pub fn string(self) -> Option<Cow<'a, str>> {
        match self {
            Strings::One(text) => Some(text),
            _ => None,
        }
    }
}

impl<'a> MetadataSummary<'a> {
    fn of(metadata: &'a Map<String, Value>) -> MetadataSummary<'a> {
        let member = |name: &str| Strings::of(metadata.get(name));
        MetadataSummary {
            boundary_axes: member("boundary_axes").array(),
            suggested_splits: member("suggested_split").list(),
            mismatch: member("mismatch").string(),
            path: member("path").string(),
        }
    }

    fn into_owned(self) -> MetadataSummary<'static> {
        let owned = |items: Vec<Cow<'a, str>>| items.into_iter().map(|item| Cow::Owned(item.into_owned())).collect();
        MetadataSummary {
            boundary_axes: owned(self.boundary_axes),
            suggested_splits: owned(self.suggested_splits),
            mismatch: self.mismatch.map(|text| Cow::Owned(text.into_owned())),
            path: self.path.map(|text| Cow::Owned(text.into_owned())),
        }
    }
}

/// The weak-success flags recorded on an event: how often each was named (a name may be
/// repeated, and each mention counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RecordedFlags {
    counts: [u64; WeakSuccessFlag::ALL.len()],
}

impl RecordedFlags {
    pub fn add(&mut self, flag: WeakSuccessFlag) {
        if let Some(count) = self.counts.get_mut(flag as usize) {
            *count += 1;
        }
    }

    /// Each named flag with the number of mentions.
    pub fn counts(&self) -> impl Iterator<Item = (WeakSuccessFlag, u64)> + '_ {
        WeakSuccessFlag::ALL.into_iter().zip(self.counts).filter(|(_, count)| *count > 0)
    }
}

impl FromIterator<WeakSuccessFlag> for RecordedFlags {
    fn from_iter<I: IntoIterator<Item = WeakSuccessFlag>>(flags: I) -> Self {
        let mut recorded = RecordedFlags::default();
        for flag in flags {
            recorded.add(flag);
        }
        recorded
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
    pub result: EventResult<'a>,
    pub contract: Option<&'static str>,
    pub weak_success: Option<RecordedFlags>,
}

/// One line, read.
// The event is folded into the report as soon as it is read; boxing it would cost an
// allocation per line.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Line<'a> {
    Event(Event<'a>),
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
    if let Some(read) = scan::read(text) {
        return Ok(read);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => careful(&value).map(|read| match read {
            Some(event) => Line::Event(event),
            None => Line::Other,
        }),
        Err(_) if last_unterminated => Ok(Line::Torn),
        Err(error) => Err(not_json(&error)),
    }
}

/// A line that is not JSON, for a message the caller prefixes with the line's number: the
/// column, and serde's message without its own `at line … column …` (which would name the
/// line a second time).
fn not_json(error: &serde_json::Error) -> String {
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full);
    format!("not JSON at column {}: {message}", error.column())
}

fn contract_verdict(verdict: &str) -> Option<&'static str> {
    match verdict {
        "held" => Some("held"),
        "violated" => Some("violated"),
        "not_applied" => Some("not_applied"),
        _ => None,
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

/// The careful reader, for the fast reader's tests.
#[cfg(test)]
pub(crate) fn careful_for_tests(line: &Value) -> Result<Option<Event<'static>>, String> {
    careful(line)
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
                .collect::<Result<RecordedFlags, _>>()?,
        ),
        Some(other) => return Err(format!("`weak_success` must be an array of flag names, not {other}")),
    };
    let result = match &outcome.result {
        crate::types::OutcomeResult::Ok(value) => EventResult::Ok(ValueSummary::of(value).into_owned()),
        crate::types::OutcomeResult::Error(error) => EventResult::Error {
            error_type: Cow::Owned(error.error_type.clone()),
            metadata: MetadataSummary::of(&error.metadata).into_owned(),
        },
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

    #[test]
    fn a_value_too_wide_for_the_fast_reader_is_read_carefully() {
        // More members than the summary reads straight from text: the careful reader counts
        // them all.
        let members: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!([]))).collect();
        let line = json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "value": members}}).to_string();
        assert!(scan::read(&line).is_none());
        let Line::Event(event) = read_line(&line, false).unwrap() else { panic!("event") };
        let EventResult::Ok(ValueSummary::Object { empty_arrays, .. }) = &event.result else { panic!("object") };
        assert_eq!(empty_arrays.len(), 20);
    }

    #[test]
    fn a_repeated_key_is_read_carefully_and_the_last_counts() {
        let line = r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":{"a":[],"a":[1]}}}"#;
        assert!(scan::read(line).is_none());
        let Line::Event(event) = read_line(line, false).unwrap() else { panic!("event") };
        let EventResult::Ok(ValueSummary::Object { empty_arrays, .. }) = &event.result else { panic!("object") };
        assert!(empty_arrays.is_empty());
    }

    #[test]
    fn what_neither_reader_accepts_is_a_located_message_or_a_torn_tail() {
        let line = r#"{"tool":"t","method":"m","contract":"maybe","outcome":{"status":"ok","value":1}}"#;
        let Err(message) = read_line(line, false) else { panic!("an error") };
        assert!(message.contains("`contract` must be held, violated or not_applied"), "{message}");
        let Err(message) = read_line("{\"tool\":", false) else { panic!("an error") };
        assert!(message.starts_with("not JSON"), "{message}");
        assert!(matches!(read_line("{\"tool\":", true), Ok(Line::Torn)));
        assert!(matches!(read_line("  \n", false), Ok(Line::Other)));
    }
}
