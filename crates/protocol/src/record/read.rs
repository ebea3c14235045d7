//! Reading a record from a `decision` event, as the reference's `recordOf` does.

use thiserror::Error;

use super::{DecisionRecord, JsonObject, JsonString, JsonText};
use crate::digest::{ScanError, Scanner, ValueKind};

/// What an event turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum EventRead {
    /// A `decision` event: a record, or the reason `recordOf` would return `null`.
    Decision(Result<Box<DecisionRecord>, NotARecord>),
    /// Any other event.
    Other {
        /// The event's `type` when that is a string; `None` when it is missing or not one.
        event_type: Option<String>,
    },
    /// The event is not a JSON object.
    NotAnObject,
}

/// Why a `decision` event does not make a record (`recordOf` returns `null`, `runtime.md`
/// §4.2): the first required field that is missing or of the wrong type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum NotARecord {
    /// `step`.
    #[error("`step` is missing or not a number")]
    Step,
    /// `id`, the node id.
    #[error("`id` is missing or not a string")]
    Id,
    /// `state`, the sent frame state.
    #[error("`state` is missing or not a plain object")]
    State,
    /// `questions`, the node's own questions.
    #[error("`questions` is missing or not an object")]
    Questions,
}

/// Reads one event from its JSON text.
pub fn read_event(text: &[u8]) -> Result<EventRead, ScanError> {
    let mut scanner = Scanner::new(text)?;
    let read = read_event_at(&mut scanner)?;
    scanner.finish()?;
    Ok(read)
}

/// The fields `recordOf` looks at, as they were last seen (JSON.parse keeps the last
/// value of a repeated key).
#[derive(Default)]
struct Fields {
    event_type: Option<JsonString>,
    step: Option<f64>,
    id: Option<JsonString>,
    state: Option<JsonObject>,
    frame_digest_nested: Option<JsonString>,
    frame_digest_flat: Option<JsonString>,
    sent_frame_digest: Option<JsonString>,
    batch_ids: Vec<JsonString>,
    request_digest: Option<JsonString>,
    questions: Option<JsonText>,
    sent_questions: Option<JsonText>,
    answers: Option<JsonText>,
    action: Option<JsonString>,
    reason: Option<JsonString>,
    provider: Option<JsonString>,
    model: Option<JsonString>,
}

/// Reads the event value at the scanner's position.
pub fn read_event_at(scanner: &mut Scanner<'_>) -> Result<EventRead, ScanError> {
    if scanner.peek_kind()? != ValueKind::Object {
        scanner.skip_value()?;
        return Ok(EventRead::NotAnObject);
    }
    let mut fields = Fields::default();
    let mut key = Vec::with_capacity(32);
    if scanner.begin_object()? {
        loop {
            scanner.member_key(&mut key)?;
            read_field(scanner, &key, &mut fields)?;
            if !scanner.next_member()? {
                break;
            }
        }
    }
    let is_decision = fields.event_type.as_ref().is_some_and(|t| t.quoted() == "\"decision\"");
    if !is_decision {
        return Ok(EventRead::Other { event_type: fields.event_type.map(|t| t.text()) });
    }
    Ok(EventRead::Decision(into_record(fields).map(Box::new)))
}

fn into_record(fields: Fields) -> Result<DecisionRecord, NotARecord> {
    let step = fields.step.ok_or(NotARecord::Step)?;
    let node = fields.id.ok_or(NotARecord::Id)?;
    let state = fields.state.ok_or(NotARecord::State)?;
    let questions = fields.questions.ok_or(NotARecord::Questions)?;
    Ok(DecisionRecord {
        step,
        node,
        state,
        frame_digest: fields.frame_digest_nested.or(fields.frame_digest_flat),
        sent_frame_digest: fields.sent_frame_digest,
        batch_ids: fields.batch_ids,
        request_digest: fields.request_digest,
        sent_questions: fields.sent_questions.unwrap_or_else(|| questions.clone()),
        questions,
        answers: fields.answers.unwrap_or_else(|| JsonText::from_canonical(b"{}".to_vec())),
        action: fields.action,
        reason: fields.reason,
        provider: fields.provider,
        model: fields.model,
    })
}

fn read_field(scanner: &mut Scanner<'_>, key: &[u8], fields: &mut Fields) -> Result<(), ScanError> {
    match key {
        b"type" => fields.event_type = optional_string(scanner)?,
        b"step" => {
            fields.step = if scanner.peek_kind()? == ValueKind::Number {
                Some(scanner.number_value()?)
            } else {
                scanner.skip_value()?;
                None
            };
        }
        b"id" => fields.id = optional_string(scanner)?,
        b"state" => {
            fields.state = if scanner.peek_kind()? == ValueKind::Object {
                let mut text = Vec::with_capacity(1024);
                let mut members = Vec::new();
                scanner.object(&mut text, &mut members)?;
                Some(JsonObject::from_parts(text, members))
            } else {
                scanner.skip_value()?;
                None
            };
        }
        b"frame" => fields.frame_digest_nested = frame_digest(scanner)?,
        b"frameDigest" => fields.frame_digest_flat = optional_string(scanner)?,
        b"sentFrameDigest" => fields.sent_frame_digest = optional_string(scanner)?,
        b"requestDigest" => fields.request_digest = optional_string(scanner)?,
        b"action" => fields.action = optional_string(scanner)?,
        b"reason" => fields.reason = optional_string(scanner)?,
        b"provider" => fields.provider = optional_string(scanner)?,
        b"model" => fields.model = optional_string(scanner)?,
        b"batchIds" => fields.batch_ids = string_items(scanner)?,
        b"questions" => {
            // `typeof questions === "object"` and not null.
            fields.questions = match scanner.peek_kind()? {
                ValueKind::Object | ValueKind::Array => Some(text_value(scanner)?),
                _ => {
                    scanner.skip_value()?;
                    None
                }
            };
        }
        // `sentQuestions ?? questions` and `answers ?? {}`: null counts as missing.
        b"sentQuestions" => fields.sent_questions = non_null_text(scanner)?,
        b"answers" => fields.answers = non_null_text(scanner)?,
        _ => scanner.skip_value()?,
    }
    Ok(())
}

fn text_value(scanner: &mut Scanner<'_>) -> Result<JsonText, ScanError> {
    let mut text = Vec::with_capacity(512);
    scanner.value(&mut text)?;
    Ok(JsonText::from_canonical(text))
}

fn non_null_text(scanner: &mut Scanner<'_>) -> Result<Option<JsonText>, ScanError> {
    if scanner.peek_kind()? == ValueKind::Null {
        scanner.skip_value()?;
        return Ok(None);
    }
    text_value(scanner).map(Some)
}

/// A string value, or `None` (after skipping it) for any other type.
fn optional_string(scanner: &mut Scanner<'_>) -> Result<Option<JsonString>, ScanError> {
    if scanner.peek_kind()? != ValueKind::String {
        scanner.skip_value()?;
        return Ok(None);
    }
    let mut text = Vec::with_capacity(32);
    scanner.string_value(&mut text)?;
    Ok(Some(JsonString::from_quoted(text)))
}

/// The string items of an array (other items dropped); `[]` for any other value.
fn string_items(scanner: &mut Scanner<'_>) -> Result<Vec<JsonString>, ScanError> {
    if scanner.peek_kind()? != ValueKind::Array {
        scanner.skip_value()?;
        return Ok(Vec::new());
    }
    let mut items = Vec::new();
    if scanner.begin_array()? {
        loop {
            if let Some(item) = optional_string(scanner)? {
                items.push(item);
            }
            if !scanner.next_item()? {
                break;
            }
        }
    }
    Ok(items)
}

/// `e.frame.digest` when `frame` is an object and `digest` a string.
fn frame_digest(scanner: &mut Scanner<'_>) -> Result<Option<JsonString>, ScanError> {
    if scanner.peek_kind()? != ValueKind::Object {
        scanner.skip_value()?;
        return Ok(None);
    }
    let mut digest = None;
    let mut key = Vec::with_capacity(16);
    if scanner.begin_object()? {
        loop {
            scanner.member_key(&mut key)?;
            if key == b"digest" {
                digest = optional_string(scanner)?;
            } else {
                scanner.skip_value()?;
            }
            if !scanner.next_member()? {
                break;
            }
        }
    }
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(text: &str) -> Result<Box<DecisionRecord>, NotARecord> {
        match read_event(text.as_bytes()).unwrap() {
            EventRead::Decision(r) => r,
            other => panic!("not a decision event: {other:?}"),
        }
    }

    #[test]
    fn reads_the_fields_record_of_reads() {
        let r = record(
            r#"{"type":"decision","step":3,"id":"loop.stepOk","state":{"a":1},"frame":{"node":"x","digest":"d1"},
            "sentFrameDigest":"d1","batchIds":["loop.stepOk",7],"requestDigest":"r","questions":{"ok":{}},
            "answers":null,"action":"continue","model":5}"#,
        )
        .unwrap();
        assert_eq!(r.step, 3.0);
        assert!(r.node.is("loop.stepOk"));
        assert_eq!(r.state.as_str(), r#"{"a":1}"#);
        assert_eq!(r.frame_digest, Some(JsonString::new("d1")));
        assert_eq!(r.batch_ids, vec![JsonString::new("loop.stepOk")]);
        assert_eq!(r.sent_questions.as_str(), r#"{"ok":{}}"#);
        assert_eq!(r.answers.as_str(), "{}");
        assert_eq!(r.model, None);
        assert_eq!(r.action.as_ref().map(JsonString::text).as_deref(), Some("continue"));
    }

    #[test]
    fn flat_records_use_the_top_level_digest_and_the_last_step() {
        let r = record(r#"{"type":"decision","step":1,"id":"b","schema":"x","step":0,"state":{},"frameDigest":"f","questions":{}}"#)
            .unwrap();
        assert_eq!(r.step, 0.0);
        assert_eq!(r.frame_digest, Some(JsonString::new("f")));
        // frame.digest wins over the flat position.
        let r = record(r#"{"type":"decision","step":1,"id":"b","state":{},"frameDigest":"f","frame":{"digest":"g"},"questions":{}}"#)
            .unwrap();
        assert_eq!(r.frame_digest, Some(JsonString::new("g")));
    }

    #[test]
    fn rejects_what_record_of_rejects() {
        let base = |step: &str, id: &str, state: &str, questions: &str| {
            format!(r#"{{"type":"decision","step":{step},"id":{id},"state":{state},"questions":{questions}}}"#)
        };
        assert_eq!(record(&base("\"1\"", "\"n\"", "{}", "{}")), Err(NotARecord::Step));
        assert_eq!(record(&base("1", "2", "{}", "{}")), Err(NotARecord::Id));
        assert_eq!(record(&base("1", "\"n\"", "[]", "{}")), Err(NotARecord::State));
        assert_eq!(record(&base("1", "\"n\"", "null", "{}")), Err(NotARecord::State));
        assert_eq!(record(&base("1", "\"n\"", "{}", "\"q\"")), Err(NotARecord::Questions));
        assert!(record(&base("1", "\"n\"", "{}", "{}")).is_ok());
        assert_eq!(
            read_event(br#"{"type":"phase","step":1}"#).unwrap(),
            EventRead::Other { event_type: Some("phase".into()) }
        );
        assert_eq!(read_event(b"[1]").unwrap(), EventRead::NotAnObject);
    }

    #[test]
    fn lone_surrogates_survive() {
        let r = record(r#"{"type":"decision","step":1,"id":"n\ud800","state":{"k":"\udc00"},"questions":{}}"#).unwrap();
        assert_eq!(r.node.quoted(), r#""n\ud800""#);
        assert_eq!(r.node.text(), "n\u{fffd}");
        assert_eq!(r.state.as_str(), r#"{"k":"\udc00"}"#);
    }
}
