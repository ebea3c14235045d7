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
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::telemetry::{Text, ValueSummary, WeakSuccessFlag};
use super::types::Outcome;

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
enum Strings<'a> {
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
    fn array(self) -> Vec<Cow<'a, str>> {
        match self {
            Strings::Many(items) => items,
            _ => Vec::new(),
        }
    }

    /// `suggested_split` counts a string or an array.
    fn list(self) -> Vec<Cow<'a, str>> {
        match self {
            Strings::One(text) => vec![text],
            Strings::Many(items) => items,
            Strings::Other => Vec::new(),
        }
    }

    fn string(self) -> Option<Cow<'a, str>> {
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

/// Reads [`Strings`] from text. `top` is false for array elements, where only strings count.
struct StringsSeed {
    top: bool,
}

impl<'de> DeserializeSeed<'de> for StringsSeed {
    type Value = Strings<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Strings<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

macro_rules! other_scalars {
    ($($method:ident: $type:ty),*) => {$(
        fn $method<E: de::Error>(self, _: $type) -> Result<Strings<'de>, E> {
            Ok(Strings::Other)
        }
    )*};
}

impl<'de> Visitor<'de> for StringsSeed {
    type Value = Strings<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    other_scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);

    fn visit_unit<E: de::Error>(self) -> Result<Strings<'de>, E> {
        Ok(Strings::Other)
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Strings<'de>, E> {
        Ok(Strings::One(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Strings<'de>, E> {
        Ok(Strings::One(Cow::Owned(text.to_owned())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strings<'de>, A::Error> {
        if !self.top {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Strings::Other);
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StringsSeed { top: false })? {
            if let Strings::One(text) = item {
                items.push(text);
            }
        }
        Ok(Strings::Many(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Strings<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Strings::Other)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MetadataSummary<'a> {
    /// Reads an object, keeping only the four members (the last of a repeated key wins, as in
    /// a [`Value`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetadataVisitor;
        impl<'de> Visitor<'de> for MetadataVisitor {
            type Value = MetadataSummary<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<MetadataSummary<'de>, A::Error> {
                let mut summary = MetadataSummary::default();
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    match key.as_ref() {
                        "boundary_axes" => {
                            summary.boundary_axes = map.next_value_seed(StringsSeed { top: true })?.array()
                        }
                        "suggested_split" => {
                            summary.suggested_splits = map.next_value_seed(StringsSeed { top: true })?.list();
                        }
                        "mismatch" => summary.mismatch = map.next_value_seed(StringsSeed { top: true })?.string(),
                        "path" => summary.path = map.next_value_seed(StringsSeed { top: true })?.string(),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(summary)
            }
        }
        deserializer.deserialize_map(MetadataVisitor)
    }
}

/// The weak-success flags recorded on an event: how often each was named (a name may be
/// repeated, and each mention counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RecordedFlags {
    counts: [u64; WeakSuccessFlag::ALL.len()],
}

impl RecordedFlags {
    fn add(&mut self, flag: WeakSuccessFlag) {
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

impl<'de> Deserialize<'de> for RecordedFlags {
    /// An array of flag names; an unknown name fails (for the careful reader to name it).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FlagsVisitor;
        impl<'de> Visitor<'de> for FlagsVisitor {
            type Value = RecordedFlags;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of flag names")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RecordedFlags, A::Error> {
                let mut recorded = RecordedFlags::default();
                while let Some(Text(name)) = seq.next_element::<Text<'de>>()? {
                    let flag = WeakSuccessFlag::from_name(&name)
                        .ok_or_else(|| de::Error::custom("unknown weak-success flag"))?;
                    recorded.add(flag);
                }
                Ok(recorded)
            }
        }
        deserializer.deserialize_seq(FlagsVisitor)
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
    // Only objects are events (serde would also fill a struct from an array).
    if text.trim_start().starts_with('{')
        && let Ok(line) = serde_json::from_str::<FastLine<'_, FastLine<'_, IgnoredAny>>>(text)
        && let Ok(read) = line.into_line()
    {
        return Ok(read);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => careful(&value).map(|read| match read {
            Some(event) => Line::Event(event),
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

/// A log line as the fast reader sees it. `E` is what `e` (the event inside a session-log
/// envelope) is read as: a `FastLine` on the outer level, [`IgnoredAny`] inside it, which
/// reads one level of envelope, as the careful reader does, without a recursive type.
#[derive(Deserialize)]
struct FastLine<'a, E> {
    #[serde(borrow, default)]
    kind: Option<Text<'a>>,
    #[serde(borrow, default, rename = "type")]
    event_type: Option<Text<'a>>,
    #[serde(default = "none")]
    e: Option<E>,
    #[serde(default)]
    at: Option<u64>,
    #[serde(borrow, default)]
    tool: Option<Text<'a>>,
    #[serde(borrow, default)]
    method: Option<Text<'a>>,
    #[serde(borrow, default)]
    trace_id: Option<Text<'a>>,
    #[serde(borrow, default)]
    call_id: Option<Text<'a>>,
    #[serde(default)]
    depth: Option<u64>,
    #[serde(borrow, default)]
    outcome: Option<FastOutcome<'a>>,
    #[serde(borrow, default)]
    contract: Option<Text<'a>>,
    #[serde(default)]
    weak_success: Option<RecordedFlags>,
}

fn none<E>() -> Option<E> {
    None
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FastOutcome<'a> {
    status: AnyStatus,
    #[serde(borrow, default)]
    tool: Slot<Text<'a>>,
    #[serde(borrow, default)]
    method: Slot<Text<'a>>,
    #[serde(borrow, default)]
    value: Slot<ValueSummary<'a>>,
    #[serde(borrow, default)]
    error_type: Slot<Text<'a>>,
    #[serde(default)]
    error_message: Slot<AnyString>,
    #[serde(default)]
    retriable: Slot<bool>,
    #[serde(borrow, default)]
    metadata: Slot<MetadataSummary<'a>>,
}

/// `"ok"` or `"error"`; anything else leaves the fast reader.
#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum AnyStatus {
    Ok,
    Error,
}

impl<'a> FastLine<'a, FastLine<'a, IgnoredAny>> {
    /// `Err(())`: leave it to the careful reader.
    fn into_line(self) -> Result<Line<'a>, ()> {
        if text_of(&self.kind) == Some("event") {
            match self.e {
                Some(inner) => inner.into_event(self.at),
                None => Ok(Line::Other),
            }
        } else {
            self.into_event(None)
        }
    }
}

impl<'a, E> FastLine<'a, E> {
    fn into_event(self, envelope_at: Option<u64>) -> Result<Line<'a>, ()> {
        let marked =
            text_of(&self.kind) == Some(OUTCOME_EVENT_TYPE) || text_of(&self.event_type) == Some(OUTCOME_EVENT_TYPE);
        let unmarked = self.kind.is_none() && self.event_type.is_none() && self.outcome.is_some();
        if !marked && !unmarked {
            return Ok(Line::Other);
        }
        let outcome = self.outcome.ok_or(())?;
        let result = match (outcome.status, outcome.value, outcome.error_type) {
            (AnyStatus::Ok, Slot::Present(summary), Slot::Absent)
                if matches!(outcome.error_message, Slot::Absent)
                    && matches!(outcome.retriable, Slot::Absent)
                    && matches!(outcome.metadata, Slot::Absent) =>
            {
                EventResult::Ok(summary)
            }
            (AnyStatus::Error, Slot::Absent, Slot::Present(Text(error_type))) if !error_type.is_empty() => {
                let metadata = match outcome.metadata {
                    Slot::Present(metadata) => metadata,
                    Slot::Absent => MetadataSummary::default(),
                };
                EventResult::Error { error_type, metadata }
            }
            _ => return Err(()),
        };
        let from_outcome = |slot: Slot<Text<'a>>| match slot {
            Slot::Present(Text(name)) => Some(name),
            Slot::Absent => None,
        };
        let tool = self.tool.map(Text::into_cow).or_else(|| from_outcome(outcome.tool)).ok_or(())?;
        let method = self.method.map(Text::into_cow).or_else(|| from_outcome(outcome.method)).ok_or(())?;
        let contract = match text_of(&self.contract) {
            None => None,
            Some(verdict) => Some(contract_verdict(verdict).ok_or(())?),
        };
        Ok(Line::Event(Event {
            tool,
            method,
            trace_id: self.trace_id.map(Text::into_cow),
            call_id: self.call_id.map(Text::into_cow),
            at_ms: self.at.or(envelope_at),
            depth: self.depth,
            result,
            contract,
            weak_success: self.weak_success,
        }))
    }
}

fn text_of<'t>(text: &'t Option<Text<'_>>) -> Option<&'t str> {
    text.as_ref().map(|Text(text)| text.as_ref())
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
                .collect::<Result<RecordedFlags, _>>()?,
        ),
        Some(other) => return Err(format!("`weak_success` must be an array of flag names, not {other}")),
    };
    let result = match &outcome.result {
        super::types::OutcomeResult::Ok(value) => EventResult::Ok(ValueSummary::of(value).into_owned()),
        super::types::OutcomeResult::Error(error) => EventResult::Error {
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

    /// Both readers agree on every line the fast one accepts.
    fn agree(line: &Value) {
        let text = line.to_string();
        let fast =
            serde_json::from_str::<FastLine<'_, FastLine<'_, IgnoredAny>>>(&text).ok().and_then(|l| l.into_line().ok());
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
            let fast = serde_json::from_str::<FastLine<'_, FastLine<'_, IgnoredAny>>>(text)
                .ok()
                .and_then(|l| l.into_line().ok());
            assert!(fast.is_none(), "{text}");
        }
        // More members than the summary reads straight from text: the careful reader counts
        // them all.
        let members: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!([]))).collect();
        let line = json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "value": members}}).to_string();
        assert!(serde_json::from_str::<FastLine<'_, FastLine<'_, IgnoredAny>>>(&line).is_err());
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
