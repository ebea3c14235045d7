//! Reading a record in place. Text that JevLoop or this crate wrote is already canonical, so
//! the record's values can be hashed where they lie in the event: nothing is copied and no
//! tree is built. When any text the checks need is not canonical (whitespace, escapes
//! `JSON.stringify` would not write, keys JavaScript would reorder), the in-place reader
//! gives up and the event is read by [`super::read_event_at`], which re-serialises.

use std::ops::Range;

use super::{DecisionRecord, JsonString, NotARecord};
use crate::digest::{Member, ScanError, Scanner, ValueKind};

/// What a record's checks read, borrowed: canonical JSON text throughout. Strings are
/// kept quoted (`"loop.pickTool"`), as their digests hash them. Made by
/// [`DecisionRecord::view`] or, in place, by [`RecordReader::event`].
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    /// `e.step`.
    pub step: f64,
    /// `e.id`, quoted.
    pub node: &'a [u8],
    /// `e.state`.
    pub state: &'a [u8],
    /// The text `state_members` index into (the whole event when read in place).
    state_base: &'a [u8],
    state_members: &'a [Member],
    /// `e.frame.digest`, or else a top-level `frameDigest`, quoted.
    pub frame_digest: Option<&'a [u8]>,
    /// `e.sentFrameDigest`, quoted; `None` when missing or not a string.
    pub sent_frame_digest: Option<&'a [u8]>,
    batch_ids: BatchIds<'a>,
    /// `e.requestDigest`, quoted; `None` when missing or not a string.
    pub request_digest: Option<&'a [u8]>,
    /// `e.questions`: the node's own questions.
    pub questions: &'a [u8],
    /// `sentQuestions ?? questions`.
    pub sent_questions: &'a [u8],
}

#[derive(Debug, Clone, Copy)]
enum BatchIds<'a> {
    InText { text: &'a [u8], ranges: &'a [Range<usize>] },
    Owned(&'a [JsonString]),
}

impl<'a> RecordView<'a> {
    /// The state's members in enumeration order, as (quoted key, value) text.
    pub fn state_entries(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let base = self.state_base;
        self.state_members
            .iter()
            .map(move |m| (base.get(m.key.clone()).unwrap_or(&[]), base.get(m.value.clone()).unwrap_or(&[])))
    }

    /// How many strings `batchIds` holds.
    pub fn batch_len(&self) -> usize {
        match self.batch_ids {
            BatchIds::InText { ranges, .. } => ranges.len(),
            BatchIds::Owned(ids) => ids.len(),
        }
    }

    /// The batch ids, quoted.
    pub fn batch_ids(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let ids = self.batch_ids;
        (0..self.batch_len()).filter_map(move |index| match ids {
            BatchIds::InText { text, ranges } => ranges.get(index).and_then(|r| text.get(r.clone())),
            BatchIds::Owned(ids) => ids.get(index).map(|id| id.quoted().as_bytes()),
        })
    }

    /// A merged decision: more than one node shared the request.
    pub fn is_merged(&self) -> bool {
        self.batch_len() > 1
    }
}

impl DecisionRecord {
    /// The record as its checks read it.
    pub fn view(&self) -> RecordView<'_> {
        RecordView {
            step: self.step,
            node: self.node.quoted().as_bytes(),
            state: self.state.as_bytes(),
            state_base: self.state.as_bytes(),
            state_members: self.state.members(),
            frame_digest: self.frame_digest.as_ref().map(|d| d.quoted().as_bytes()),
            sent_frame_digest: self.sent_frame_digest.as_ref().map(|d| d.quoted().as_bytes()),
            batch_ids: BatchIds::Owned(&self.batch_ids),
            request_digest: self.request_digest.as_ref().map(|d| d.quoted().as_bytes()),
            questions: self.questions.as_bytes(),
            sent_questions: self.sent_questions.as_bytes(),
        }
    }
}

/// An event read in place.
#[derive(Debug, Clone, Copy)]
pub enum EventView<'a> {
    /// A `decision` event: a record, or the reason `recordOf` would return `null`.
    Decision(Result<RecordView<'a>, NotARecord>),
    /// Any other event.
    Other,
    /// The event is not a JSON object.
    NotAnObject,
}

impl EventView<'_> {
    /// Everything the checks read, in words: for diagnostics, and for tests that compare
    /// two readers.
    pub fn describe(&self) -> String {
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match self {
            EventView::Decision(Ok(v)) => format!(
                "step {} node {} state {} entries {:?} frame {:?} sent {:?} batch {:?} request {:?} q {} sq {}",
                v.step,
                s(v.node),
                s(v.state),
                v.state_entries().map(|(k, v)| (s(k), s(v))).collect::<Vec<_>>(),
                v.frame_digest.map(s),
                v.sent_frame_digest.map(s),
                v.batch_ids().map(s).collect::<Vec<_>>(),
                v.request_digest.map(s),
                s(v.questions),
                s(v.sent_questions),
            ),
            EventView::Decision(Err(why)) => format!("not a record: {why}"),
            EventView::Other => "other".into(),
            EventView::NotAnObject => "not an object".into(),
        }
    }
}

/// Why the in-place reader stopped. Either way the caller reads the line again with the
/// careful reader, which gives the verdict (or the precise syntax error).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fallback {
    /// Some text the checks need is not canonical: read the event with
    /// [`super::read_event_at`].
    NotCanonical,
    /// The text is not JSON (the careful reader reports where).
    Syntax(ScanError),
}

impl From<ScanError> for Fallback {
    fn from(error: ScanError) -> Self {
        Fallback::Syntax(error)
    }
}

/// The fields `recordOf` looks at, as ranges into the scanned text (last value wins, as
/// with `JSON.parse`).
#[derive(Debug, Clone, Default)]
struct Seen {
    not_an_object: bool,
    event_type: Option<Range<usize>>,
    step: Option<f64>,
    id: Option<Range<usize>>,
    state: Option<Range<usize>>,
    frame_digest_nested: Option<Range<usize>>,
    frame_digest_flat: Option<Range<usize>>,
    sent_frame_digest: Option<Range<usize>>,
    request_digest: Option<Range<usize>>,
    questions: Option<Range<usize>>,
    sent_questions: Option<Range<usize>>,
}

/// A reusable in-place event reader: one per thread, kept across lines so that its
/// buffers are allocated once. It also remembers the values a node repeats from record to
/// record, so an unchanged question set is validated once.
///
/// The replay fast path of decision-runtime's log reader; a host verifying a few records
/// needs only [`super::read_event`] and [`super::verify_record`].
#[derive(Debug, Default)]
pub struct RecordReader {
    seen: Seen,
    state_members: Vec<Member>,
    batch_ids: Vec<Range<usize>>,
    known: KnownValues,
}

/// Values a node tends to repeat, word for word, from one record to the next: its questions
/// and most of its frame artifact (the field list, the exclusions and their reasons, …).
#[derive(Debug, Clone, Copy)]
enum Repeated {
    Questions,
    SentQuestions,
    Answers,
    FrameNode,
    FrameFields,
    FrameUntrusted,
    FrameTruncated,
    FrameUnfilled,
    FrameAbsent,
    FrameExcluded,
}

const REPEATED: usize = 10;

impl Repeated {
    /// A frame artifact member (`runtime.md` §2.11) that is worth remembering.
    fn frame_member(key: &[u8]) -> Option<Repeated> {
        Some(match key {
            b"node" => Repeated::FrameNode,
            b"fields" => Repeated::FrameFields,
            b"untrusted" => Repeated::FrameUntrusted,
            b"truncated" => Repeated::FrameTruncated,
            b"unfilled" => Repeated::FrameUnfilled,
            b"absent" => Repeated::FrameAbsent,
            b"excluded" => Repeated::FrameExcluded,
            _ => return None,
        })
    }
}

/// The text of values already validated, by node. Equal bytes validate alike (and are
/// canonical alike), so a value a node repeats is stepped over with one comparison instead
/// of being scanned again. Memory is bounded: a few dozen nodes, values up to 16 KB.
#[derive(Debug, Default)]
struct KnownValues {
    nodes: Vec<(Vec<u8>, [Vec<u8>; REPEATED])>,
    /// The node of the record being read, once its `id` is known.
    current: Option<usize>,
    /// The entry to reuse when all are taken.
    evict: usize,
}

const MAX_KNOWN_NODES: usize = 32;
const MAX_KNOWN_BYTES: usize = 16 * 1024;

impl KnownValues {
    /// Remembers values for `node` (its quoted id) from now on.
    fn select(&mut self, node: &[u8]) {
        if let Some(index) = self.nodes.iter().position(|(id, _)| id == node) {
            self.current = Some(index);
            return;
        }
        let fresh = (node.to_vec(), Default::default());
        if self.nodes.len() < MAX_KNOWN_NODES {
            self.nodes.push(fresh);
            self.current = Some(self.nodes.len() - 1);
        } else if let Some(entry) = self.nodes.get_mut(self.evict) {
            *entry = fresh;
            self.current = Some(self.evict);
            self.evict = (self.evict + 1) % MAX_KNOWN_NODES;
        }
    }

    fn slot(&mut self, value: Repeated) -> Option<&mut Vec<u8>> {
        self.nodes.get_mut(self.current?)?.1.get_mut(value as usize)
    }

    /// Steps over the next value if it repeats the one remembered.
    fn skip(&mut self, value: Repeated, scanner: &mut Scanner<'_>) -> Option<Range<usize>> {
        scanner.skip_known(self.slot(value)?)
    }

    /// Remembers a value just validated.
    fn remember(&mut self, value: Repeated, text: &[u8]) {
        if text.len() <= MAX_KNOWN_BYTES
            && let Some(slot) = self.slot(value)
        {
            slot.clear();
            slot.extend_from_slice(text);
        }
    }

    /// Validates the next value, stepping over it when it repeats the one remembered.
    fn skip_value(&mut self, value: Repeated, scanner: &mut Scanner<'_>) -> Result<(), ScanError> {
        if self.skip(value, scanner).is_none() {
            let range = scanner.skip_span()?;
            self.remember(value, scanner.text(range));
        }
        Ok(())
    }

    /// A canonical value, stepped over when it repeats the one remembered.
    fn canonical_span(&mut self, value: Repeated, scanner: &mut Scanner<'_>) -> Result<Range<usize>, Fallback> {
        if let Some(range) = self.skip(value, scanner) {
            return Ok(range);
        }
        let range = canonical(scanner.span()?)?;
        self.remember(value, scanner.text(range.clone()));
        Ok(range)
    }
}

impl RecordReader {
    /// A reader with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the event value at the scanner's position; [`RecordReader::event`] then gives
    /// it over the same text.
    pub fn read_at(&mut self, scanner: &mut Scanner<'_>) -> Result<(), Fallback> {
        self.seen = Seen::default();
        self.known.current = None;
        self.state_members.clear();
        self.batch_ids.clear();
        if scanner.peek_kind()? != ValueKind::Object {
            scanner.skip_value()?;
            self.seen.not_an_object = true;
            return Ok(());
        }
        if scanner.begin_object()? {
            loop {
                let key = plain_key(scanner)?;
                self.read_field(scanner, key)?;
                if !scanner.next_member()? {
                    break;
                }
            }
        }
        Ok(())
    }

    fn read_field(&mut self, scanner: &mut Scanner<'_>, key: &[u8]) -> Result<(), Fallback> {
        let seen = &mut self.seen;
        match key {
            b"type" => seen.event_type = string(scanner)?,
            b"step" => {
                seen.step = if scanner.peek_kind()? == ValueKind::Number {
                    Some(scanner.number_value()?)
                } else {
                    scanner.skip_value()?;
                    None
                };
            }
            b"id" => {
                seen.id = string(scanner)?;
                match &seen.id {
                    Some(id) => self.known.select(scanner.text(id.clone())),
                    None => self.known.current = None,
                }
            }
            b"state" => {
                seen.state = if scanner.peek_kind()? == ValueKind::Object {
                    let span = scanner.span_object(&mut self.state_members)?;
                    Some(canonical(span)?)
                } else {
                    scanner.skip_value()?;
                    None
                };
            }
            b"frame" => {
                let state = seen.state.clone().map(|range| scanner.text(range));
                seen.frame_digest_nested = frame_digest(scanner, state, &mut self.known)?;
            }
            b"frameDigest" => seen.frame_digest_flat = string(scanner)?,
            b"sentFrameDigest" => seen.sent_frame_digest = string(scanner)?,
            b"requestDigest" => seen.request_digest = string(scanner)?,
            b"batchIds" => {
                self.batch_ids.clear();
                if scanner.peek_kind()? != ValueKind::Array {
                    scanner.skip_value()?;
                } else if scanner.begin_array()? {
                    loop {
                        if let Some(id) = string(scanner)? {
                            self.batch_ids.push(id);
                        }
                        if !scanner.next_item()? {
                            break;
                        }
                    }
                }
            }
            b"questions" => {
                // A single node sends exactly its own questions: the same text again.
                let sent = seen.sent_questions.clone().map(|range| scanner.text(range));
                seen.questions = match scanner.peek_kind()? {
                    ValueKind::Object | ValueKind::Array => match sent.and_then(|text| scanner.skip_known(text)) {
                        Some(range) => Some(range),
                        None => Some(self.known.canonical_span(Repeated::Questions, scanner)?),
                    },
                    _ => {
                        scanner.skip_value()?;
                        None
                    }
                };
            }
            b"sentQuestions" => {
                seen.sent_questions = if scanner.peek_kind()? == ValueKind::Null {
                    scanner.skip_value()?;
                    None
                } else {
                    Some(self.known.canonical_span(Repeated::SentQuestions, scanner)?)
                };
            }
            b"answers" => self.known.skip_value(Repeated::Answers, scanner)?,
            // `action`, `reason`, `provider`, `model` and the rest: the checks do not read
            // them, but the event must still be JSON.
            _ => scanner.skip_value()?,
        }
        Ok(())
    }

    /// The event last read by [`RecordReader::read_at`]; `text` is the text it scanned.
    pub fn event<'a>(&'a self, text: &'a [u8]) -> EventView<'a> {
        let seen = &self.seen;
        if seen.not_an_object {
            return EventView::NotAnObject;
        }
        let at = |range: &Option<Range<usize>>| range.as_ref().map(|r| text.get(r.clone()).unwrap_or(&[]));
        if at(&seen.event_type) != Some(b"\"decision\"") {
            return EventView::Other;
        }
        let record = (|| {
            let step = seen.step.ok_or(NotARecord::Step)?;
            let node = at(&seen.id).ok_or(NotARecord::Id)?;
            let state = at(&seen.state).ok_or(NotARecord::State)?;
            let questions = at(&seen.questions).ok_or(NotARecord::Questions)?;
            Ok(RecordView {
                step,
                node,
                state,
                state_base: text,
                state_members: &self.state_members,
                frame_digest: at(&seen.frame_digest_nested).or(at(&seen.frame_digest_flat)),
                sent_frame_digest: at(&seen.sent_frame_digest),
                batch_ids: BatchIds::InText { text, ranges: &self.batch_ids },
                request_digest: at(&seen.request_digest),
                questions,
                sent_questions: at(&seen.sent_questions).unwrap_or(questions),
            })
        })();
        EventView::Decision(record)
    }
}

/// A member key that compares as written (no escape), as bytes between the quotes.
fn plain_key<'a>(scanner: &mut Scanner<'a>) -> Result<&'a [u8], Fallback> {
    let range = scanner.key_span()?;
    let quoted = scanner.text(range);
    let key = quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or(&[]);
    if memchr::memchr(b'\\', key).is_some() {
        return Err(Fallback::NotCanonical);
    }
    Ok(key)
}

fn canonical(span: crate::digest::JsonSpan) -> Result<Range<usize>, Fallback> {
    if span.canonical { Ok(span.range) } else { Err(Fallback::NotCanonical) }
}

/// A string value's canonical quoted text, or `None` (after skipping it) for any other type.
fn string(scanner: &mut Scanner<'_>) -> Result<Option<Range<usize>>, Fallback> {
    if scanner.peek_kind()? != ValueKind::String {
        scanner.skip_value()?;
        return Ok(None);
    }
    canonical(scanner.span()?).map(Some)
}

/// `e.frame.digest` when `frame` is an object and `digest` a string. The artifact's `state`
/// is usually the event's own `state` again (`state`, already read), and most other members
/// repeat from the node's previous record.
fn frame_digest(
    scanner: &mut Scanner<'_>,
    state: Option<&[u8]>,
    known: &mut KnownValues,
) -> Result<Option<Range<usize>>, Fallback> {
    if scanner.peek_kind()? != ValueKind::Object {
        scanner.skip_value()?;
        return Ok(None);
    }
    let mut digest = None;
    if scanner.begin_object()? {
        loop {
            let key = plain_key(scanner)?;
            if key == b"digest" {
                digest = string(scanner)?;
            } else if key == b"state" {
                if state.and_then(|text| scanner.skip_known(text)).is_none() {
                    scanner.skip_value()?;
                }
            } else if let Some(member) = Repeated::frame_member(key) {
                known.skip_value(member, scanner)?;
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
    use super::super::{EventRead, read_event};
    use super::*;

    fn in_place(text: &str) -> Result<String, Fallback> {
        in_place_with(&mut RecordReader::new(), text)
    }

    /// Reads with a reader that may remember values from the texts it read before.
    fn in_place_with(reader: &mut RecordReader, text: &str) -> Result<String, Fallback> {
        let mut scanner = Scanner::new(text.as_bytes())?;
        reader.read_at(&mut scanner)?;
        scanner.finish()?;
        Ok(reader.event(text.as_bytes()).describe())
    }

    /// A node's repeated values are stepped over only when they repeat exactly: a value
    /// that merely starts the same, or is followed by something else, is read again and
    /// refused when it is not JSON.
    #[test]
    fn repeated_values_are_recognised_only_when_whole() {
        let record = |answers: &str, frame_state: &str, excluded: &str, questions: &str| {
            format!(
                r#"{{"type":"decision","step":1,"id":"n","state":{{"a":[1,2]}},"frame":{{"node":"n","state":{frame_state},"digest":"d","excluded":{excluded}}},"sentFrameDigest":"d","sentQuestions":{{"q":{{"type":"noul"}}}},"questions":{questions},"answers":{answers},"action":"continue"}}"#
            )
        };
        let first = record(r#"{"q":{"noul":0.2}}"#, r#"{"a":[1,2]}"#, r#"[["cwd","why"]]"#, r#"{"q":{"type":"noul"}}"#);
        let mut reader = RecordReader::new();
        assert_eq!(in_place_with(&mut reader, &first).unwrap(), careful(&first));
        for text in [
            first.clone(),
            // Repeats exactly, then different text: read again.
            record(r#"{"q":{"noul":0.3}}"#, r#"{"a":[1,2,3]}"#, r#"[["cwd","why"],["x","y"]]"#, r#"{"q":{}}"#),
            record(r#"{"q":{"noul":0.2}}"#, r#"{"a":[1,2]}"#, r#"[["cwd","why"]]"#, r#"{"q":{"type":"noul"}}"#),
        ] {
            assert_eq!(in_place_with(&mut reader, &text).unwrap(), careful(&text), "{text}");
        }
        // A repeated prefix followed by text that is not JSON.
        for text in [
            record(r#"{"q":{"noul":0.2}}x"#, r#"{"a":[1,2]}"#, r#"[["cwd","why"]]"#, r#"{"q":{"type":"noul"}}"#),
            record(r#"{"q":{"noul":0.2}}"#, r#"{"a":[1,2]}}"#, r#"[["cwd","why"]]"#, r#"{"q":{"type":"noul"}}"#),
            record(r#"{"q":{"noul":0.2}}"#, r#"{"a":[1,2]}"#, r#"[["cwd","why"]],1"#, r#"{"q":{"type":"noul"}}"#),
            record(r#"{"q":{"noul":0.2}}"#, r#"{"a":[1,2]}"#, r#"[["cwd","why"]]"#, r#"{"q":{"type":"noul"}}{"#),
        ] {
            assert!(matches!(in_place_with(&mut reader, &text), Err(Fallback::Syntax(_))), "{text}");
        }
        // Questions that repeat the sent questions but are not canonical never are.
        let loose = record(r#"{}"#, r#"{}"#, "[]", r#"{"q": {"type":"noul"}}"#);
        assert_eq!(in_place_with(&mut reader, &loose), Err(Fallback::NotCanonical));
    }

    fn careful(text: &str) -> String {
        match read_event(text.as_bytes()).unwrap() {
            EventRead::Decision(Ok(record)) => EventView::Decision(Ok(record.view())).describe(),
            EventRead::Decision(Err(why)) => EventView::Decision(Err(why)).describe(),
            EventRead::Other { .. } => EventView::Other.describe(),
            EventRead::NotAnObject => EventView::NotAnObject.describe(),
        }
    }

    #[test]
    fn in_place_reading_agrees_with_the_careful_reader() {
        for text in [
            r#"{"type":"decision","step":3,"id":"loop.stepOk","state":{"a":1,"b":[2]},"frame":{"node":"x","digest":"d1"},"sentFrameDigest":"d1","batchIds":["loop.stepOk",7,"x"],"requestDigest":"r","questions":{"ok":{}},"sentQuestions":{"ok":{"t":1}},"answers":null,"action":"continue","model":5}"#,
            r#"{"type":"decision","step":1,"id":"b","schema":"x","step":0,"state":{},"frameDigest":"f","frame":{"digest":"g","digest":"h"},"questions":[]}"#,
            r#"{"type":"decision","step":-2.5,"id":"b","state":{"k":"\ud800"},"questions":{},"sentQuestions":null,"batchIds":"no"}"#,
            r#"{"type":"decision","step":"1","id":"n","state":{},"questions":{}}"#,
            r#"{"type":"decision","step":1,"id":2,"state":{},"questions":{}}"#,
            r#"{"type":"decision","step":1,"id":"n","state":[],"questions":{}}"#,
            r#"{"type":"decision","step":1,"id":"n","state":{},"questions":"q"}"#,
            r#"{"type":"phase","step":1}"#,
            r#"{"step":1}"#,
            "[1]",
            "7",
        ] {
            assert_eq!(in_place(text).unwrap(), careful(text), "{text}");
        }
    }

    #[test]
    fn text_that_is_not_canonical_is_left_to_the_careful_reader() {
        for text in [
            r#"{"type":"decision","step":1,"id":"n","state":{"b":1,"1":2},"questions":{}}"#,
            r#"{"type":"decision","step":1,"id":"n","state":{"a": 1},"questions":{}}"#,
            r#"{"type":"decision","step":1,"id":"\u006e","state":{},"questions":{}}"#,
            r#"{"type":"decisio\u006e","step":1,"id":"n","state":{},"questions":{}}"#,
            r#"{"typ\u0065":"decision","step":1,"id":"n","state":{},"questions":{}}"#,
            r#"{"type":"decision","step":1,"id":"n","state":{},"questions":{"a":1.0}}"#,
            r#"{"type":"decision","step":1,"id":"n","state":{},"questions":{},"sentQuestions":{"a":1,"a":2}}"#,
            r#"{"type":"decision","step":1,"id":"n","state":{},"questions":{},"batchIds":["\/"]}"#,
        ] {
            assert_eq!(in_place(text), Err(Fallback::NotCanonical), "{text}");
            assert!(matches!(read_event(text.as_bytes()), Ok(EventRead::Decision(_))));
        }
        // Fields the checks do not read may be written any way.
        let loose = r#"{"type":"decision","step":1,"id":"n","state":{},"questions":{},"answers":{"b": 1,"1":[1.0]},"reason":"\/"}"#;
        assert_eq!(in_place(loose).unwrap(), careful(loose));
        assert!(matches!(in_place(r#"{"type":"decision","state":{"#), Err(Fallback::Syntax(_))));
    }
}
