//! `decision-record/v1` records and their verification.
//!
//! A record is read from a `decision` event ([`read_event`]) exactly as the reference's `recordOf`
//! does, keeping every JSON value in canonical `JSON.stringify` form so that digests are
//! recomputed over the bytes JavaScript would hash. [`verify_record`] runs the four checks
//! and gives a [`RecordVerdict`] whose [`VerifyOutcome`] is `verified`, `partial`,
//! `unverifiable` or `mismatch` (`runtime.md` §4.4).
//!
//! [`RecordReader`] and [`RecordView`] are the replay fast path: they read a record where it
//! lies in a log line, hash it without copying, and give up ([`Fallback`]) whenever the text
//! is not canonical, in which case [`read_event_at`] re-serialises it. Both paths give the
//! same verdict, which the crate's tests hold.

mod read;
mod verify;
mod view;

pub use read::{EventRead, NotARecord, read_event, read_event_at};
pub use verify::{
    Check, CheckName, CheckStatus, MergedDigests, REPLAY_NOTES, RecordVerdict, Rules, VerifyOutcome, verify_record,
    verify_record_with, verify_view, verify_view_with,
};
pub use view::{EventView, Fallback, RecordReader, RecordView};

use crate::digest::Member;

/// The record format name.
pub use decision_core::vocab::RECORD_SCHEMA;

/// A JSON string value kept in canonical quoted form, so that strings with lone surrogates
/// (which a Rust `String` cannot hold) still hash as JavaScript hashes them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonString {
    quoted: Vec<u8>,
}

impl JsonString {
    /// From canonical quoted JSON text (as written by [`crate::digest::Scanner`]).
    pub fn from_quoted(quoted: Vec<u8>) -> Self {
        JsonString { quoted }
    }

    /// From a Rust string.
    pub fn new(text: &str) -> Self {
        let mut quoted = String::with_capacity(text.len() + 2);
        crate::digest::write_string(text, &mut quoted);
        JsonString { quoted: quoted.into_bytes() }
    }

    /// The canonical quoted JSON form.
    pub fn quoted(&self) -> &str {
        utf8(&self.quoted)
    }

    /// The text between the quotes, still escaped.
    fn inner(&self) -> &[u8] {
        self.quoted.get(1..self.quoted.len().saturating_sub(1)).unwrap_or(&[])
    }

    /// The decoded text; a lone surrogate becomes U+FFFD.
    pub fn text(&self) -> String {
        match serde_json::from_slice::<String>(&self.quoted) {
            Ok(text) => text,
            Err(_) => decode_lossy(utf8(self.inner())),
        }
    }

    /// Whether the decoded text equals `text`.
    pub fn is(&self, text: &str) -> bool {
        // Canonical forms are unique, so comparing them compares the strings.
        self.inner() == JsonString::new(text).inner()
    }
}

/// The text of a canonical quoted JSON string; a lone surrogate becomes U+FFFD.
pub fn text_of(quoted: &[u8]) -> String {
    let inner = quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or(&[]);
    if memchr::memchr(b'\\', inner).is_none() {
        return utf8(inner).to_owned();
    }
    JsonString::from_quoted(quoted.to_vec()).text()
}

/// Canonical JSON is always UTF-8 (lone surrogates are escaped); the SIMD check is cheap.
fn utf8(bytes: &[u8]) -> &str {
    simdutf8::basic::from_utf8(bytes).unwrap_or("")
}

/// Decodes canonical string content whose escapes include lone surrogates.
fn decode_lossy(inner: &str) -> String {
    let mut units: Vec<u16> = Vec::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0u16; 2];
            units.extend_from_slice(c.encode_utf16(&mut buffer));
            continue;
        }
        let unit = match chars.next() {
            Some('n') => u16::from(b'\n'),
            Some('t') => u16::from(b'\t'),
            Some('r') => u16::from(b'\r'),
            Some('b') => 0x08,
            Some('f') => 0x0C,
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                u16::from_str_radix(&hex, 16).unwrap_or(0xFFFD)
            }
            Some(other) => u16::try_from(u32::from(other)).unwrap_or(0xFFFD),
            None => break,
        };
        units.push(unit);
    }
    String::from_utf16_lossy(&units)
}

/// A JSON value kept as canonical `JSON.stringify` text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonText {
    text: Vec<u8>,
}

impl JsonText {
    /// From canonical text.
    pub fn from_canonical(text: Vec<u8>) -> Self {
        JsonText { text }
    }

    /// From a value built in Rust.
    pub fn of(value: &serde_json::Value) -> Self {
        JsonText { text: crate::digest::stringify(value).into_bytes() }
    }

    /// The canonical text.
    pub fn as_str(&self) -> &str {
        utf8(&self.text)
    }

    /// The canonical text, as the bytes a digest hashes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }

    /// `true` for `{}`: an object with no own properties.
    pub fn is_empty_object(&self) -> bool {
        self.text == b"{}"
    }
}

/// A canonical JSON object together with the byte ranges of its members, in enumeration
/// order, so that `Object.entries` can be hashed without re-parsing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonObject {
    text: Vec<u8>,
    members: Vec<Member>,
}

impl JsonObject {
    /// From canonical text and its member list, as produced by [`crate::digest::Scanner::object`].
    pub fn from_parts(text: Vec<u8>, members: Vec<Member>) -> Self {
        JsonObject { text, members }
    }

    /// From a map built in Rust.
    pub fn of(map: &serde_json::Map<String, serde_json::Value>) -> Self {
        let text = crate::digest::stringify(&serde_json::Value::Object(map.clone()));
        let mut members = Vec::new();
        let mut out = Vec::with_capacity(text.len());
        // Stringify output is canonical JSON, so scanning it cannot fail.
        if let Ok(mut scanner) = crate::digest::Scanner::new(text.as_bytes()) {
            let _ = scanner.object(&mut out, &mut members);
        }
        JsonObject { text: out, members }
    }

    /// The canonical text.
    pub fn as_str(&self) -> &str {
        utf8(&self.text)
    }

    /// The canonical text, as the bytes a digest hashes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }

    /// Where each member's quoted key and value lie in [`JsonObject::as_bytes`], in
    /// enumeration order (`Object.entries`).
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The number of own properties.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the object has no own property.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// A `decision-record/v1` record (`runtime.md` §4.2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DecisionRecord {
    /// `e.step`.
    pub step: f64,
    /// `e.id`: the decision spec id.
    pub node: JsonString,
    /// `e.state`: the sent state (the merged frame for a batch).
    pub state: JsonObject,
    /// `e.frame.digest`, or else a top-level `frameDigest` (flat records).
    /// `None` when the event has neither (an old log): `frame-solo` is then skipped.
    pub frame_digest: Option<JsonString>,
    /// `e.sentFrameDigest`: the digest of the state actually sent (the merged frame for a
    /// batch); `None` when missing, which skips `sent-frame` and `request`.
    pub sent_frame_digest: Option<JsonString>,
    /// `e.batchIds`, strings only; empty when missing.
    pub batch_ids: Vec<JsonString>,
    /// `e.requestDigest`: the fingerprint of sent frame and sent questions; `None` when
    /// missing, which skips `request`.
    pub request_digest: Option<JsonString>,
    /// This node's own questions.
    pub questions: JsonText,
    /// The sent (merged) questions; `questions` when the event has none.
    pub sent_questions: JsonText,
    /// `e.answers ?? {}`.
    pub answers: JsonText,
    /// `e.action`: what the policy decided; `None` when it is missing or not a string.
    pub action: Option<JsonString>,
    /// `e.reason`: the rule that decided, in words; `None` when missing or not a string.
    pub reason: Option<JsonString>,
    /// `e.provider`: who answered; `None` when missing or not a string.
    pub provider: Option<JsonString>,
    /// `e.model`: the model that answered; `None` when missing or not a string.
    pub model: Option<JsonString>,
}

impl DecisionRecord {
    /// A merged decision: more than one node shared the request.
    pub fn is_merged(&self) -> bool {
        self.batch_ids.len() > 1
    }
}
