//! `JSON.stringify`-compatible serialisation and the reference's frame and request digests.
//!
//! A digest is the first 16 lowercase hex characters of SHA-256 over the UTF-8 bytes of
//! `JSON.stringify(value)`. Two pre-images exist:
//! - `frameDigest(node, state)` hashes `[node, Object.entries(state)]`;
//! - `requestDigest(sentFrameDigest, sentQuestions)` hashes `[sentFrameDigest, sentQuestions]`.
//!
//! [`stringify`](fn@stringify) serialises values built in Rust; [`canonical`] re-serialises JSON text read
//! back from a log (keeping escaped lone surrogates), so both sides hash the same bytes.

pub mod canonical;
mod stringify;

use std::ops::Range;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use canonical::{JsonSpan, Member, ScanError, ScanErrorKind, Scanner, ValueKind, canonicalize};
pub(crate) use stringify::{JsonOut, write_string_to, write_value_to};
pub use stringify::{integer_key, stringify, write_f64, write_number, write_string, write_value};

/// How many hex characters of the SHA-256 a digest keeps: 16, i.e. 64 bits (`runtime.md` §2.10).
pub const DIGEST_CHARS: usize = 16;

/// The first [`DIGEST_CHARS`] lowercase hex characters of SHA-256 over `bytes`.
pub fn digest_bytes(bytes: &[u8]) -> String {
    hex_prefix(&Sha256::digest(bytes), DIGEST_CHARS)
}

fn hex_prefix(hash: &[u8], chars: usize) -> String {
    let mut out = const_hex::encode(hash.get(..chars.div_ceil(2)).unwrap_or(hash));
    out.truncate(chars);
    out
}

/// The pre-image of `frameDigest(node, state)`: `JSON.stringify([node, Object.entries(state)])`.
pub fn frame_preimage(node: &str, state: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(512);
    write_frame_preimage(node, state, &mut out);
    out
}

fn write_frame_preimage<O: JsonOut>(node: &str, state: &Map<String, Value>, out: &mut O) {
    out.put("[");
    write_string_to(node, out);
    out.put(",[");
    let entry = |index: usize, key: &str, value: &Value, out: &mut O| {
        out.put(if index == 0 { "[" } else { ",[" });
        write_string_to(key, out);
        out.put(",");
        write_value_to(value, out);
        out.put("]");
    };
    // Object.entries enumerates in property order: integer-like keys first.
    if state.keys().any(|k| integer_key(k).is_some()) {
        let mut integers: Vec<(u32, &String, &Value)> =
            state.iter().filter_map(|(k, v)| integer_key(k).map(|n| (n, k, v))).collect();
        integers.sort_by_key(|(n, _, _)| *n);
        let others = state.iter().filter(|(k, _)| integer_key(k).is_none());
        for (index, (key, value)) in integers.into_iter().map(|(_, k, v)| (k, v)).chain(others).enumerate() {
            entry(index, key, value, out);
        }
    } else {
        for (index, (key, value)) in state.iter().enumerate() {
            entry(index, key, value, out);
        }
    }
    out.put("]]");
}

/// An object's `JSON.stringify` text and where each member's key and value lie in it, in
/// property order (integer-like keys first, as both `JSON.stringify` and `Object.entries`
/// enumerate them). Written once, it is both the object's text and, piece by piece, the
/// pre-image of `frameDigest`, so a host that records a frame's state and its digest writes
/// the state's values once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectText {
    text: String,
    members: Vec<(Range<usize>, Range<usize>)>,
}

impl ObjectText {
    /// Writes `JSON.stringify(object)` once, remembering where each member lies.
    pub fn new(object: &Map<String, Value>) -> ObjectText {
        let mut text = String::with_capacity(512);
        let mut members = Vec::with_capacity(object.len());
        text.push('{');
        let mut member = |key: &str, value: &Value| {
            if !members.is_empty() {
                text.push(',');
            }
            let key_start = text.len();
            write_string_to(key, &mut text);
            let key_end = text.len();
            text.push(':');
            let value_start = text.len();
            write_value_to(value, &mut text);
            members.push((key_start..key_end, value_start..text.len()));
        };
        if object.keys().any(|k| integer_key(k).is_some()) {
            let mut integers: Vec<(u32, &String, &Value)> =
                object.iter().filter_map(|(k, v)| integer_key(k).map(|n| (n, k, v))).collect();
            integers.sort_by_key(|(n, _, _)| *n);
            for (_, key, value) in integers {
                member(key, value);
            }
            for (key, value) in object.iter().filter(|(k, _)| integer_key(k).is_none()) {
                member(key, value);
            }
        } else {
            for (key, value) in object {
                member(key, value);
            }
        }
        text.push('}');
        ObjectText { text, members }
    }

    /// `JSON.stringify` of the object.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// `frameDigest(node, object)`, hashed from the text.
    pub fn frame_digest(&self, node: &str) -> String {
        let mut out = HashOut::new();
        out.put("[");
        write_string_to(node, &mut out);
        out.put(",[");
        for (index, (key, value)) in self.members.iter().enumerate() {
            out.put(if index == 0 { "[" } else { ",[" });
            out.put(self.text.get(key.clone()).unwrap_or_default());
            out.put(",");
            out.put(self.text.get(value.clone()).unwrap_or_default());
            out.put("]");
        }
        out.put("]]");
        out.finish()
    }
}

/// `frameDigest(node, state)`.
pub fn frame_digest(node: &str, state: &Map<String, Value>) -> String {
    let mut out = HashOut::new();
    write_frame_preimage(node, state, &mut out);
    out.finish()
}

/// The pre-image of `requestDigest`: `JSON.stringify([sentFrameDigest, sentQuestions])`.
/// `sent_questions` is the wire form of the merged question set (keys `type`,
/// `instructions`, `criteria`).
pub fn request_preimage(sent_frame_digest: &str, sent_questions: &Value) -> String {
    let mut out = String::with_capacity(512);
    write_request_preimage(sent_frame_digest, sent_questions, &mut out);
    out
}

fn write_request_preimage<O: JsonOut>(sent_frame_digest: &str, sent_questions: &Value, out: &mut O) {
    out.put("[");
    write_string_to(sent_frame_digest, out);
    out.put(",");
    write_value_to(sent_questions, out);
    out.put("]");
}

/// `requestDigest(sentFrameDigest, sentQuestions)`.
pub fn request_digest(sent_frame_digest: &str, sent_questions: &Value) -> String {
    let mut out = HashOut::new();
    write_request_preimage(sent_frame_digest, sent_questions, &mut out);
    out.finish()
}

/// [`request_digest`] of sent questions already written as `JSON.stringify` text (what a
/// host that keeps that text hashes instead of writing it again).
pub fn request_digest_of_text(sent_frame_digest: &str, sent_questions_json: &str) -> String {
    let mut out = HashOut::new();
    out.put("[");
    write_string_to(sent_frame_digest, &mut out);
    out.put(",");
    out.put(sent_questions_json);
    out.put("]");
    out.finish()
}

/// Room made at once for a state's members: a frame's state has a handful.
const STATE_MEMBERS_RESERVED: usize = 16;

/// [`frame_digest`] of a state given as JSON text: read as `JSON.parse` reads it (a key given
/// twice keeps its first place and its last value, integer keys come first) and hashed from
/// its canonical text, with no value built. An error when the text is not one JSON object.
pub fn frame_digest_of_json(node: &str, state_json: &[u8]) -> Result<String, ScanError> {
    let mut members = Vec::with_capacity(STATE_MEMBERS_RESERVED);
    // Canonical text (what `JSON.stringify` wrote) is hashed where it lies; only other
    // text is re-serialised first.
    let mut scanner = Scanner::new(state_json)?;
    let span = scanner.span_object(&mut members)?;
    scanner.finish()?;
    if span.canonical {
        return Ok(raw::frame_digest(quoted(node).as_bytes(), state_json, &members));
    }
    let mut scanner = Scanner::new(state_json)?;
    let mut text = Vec::with_capacity(state_json.len());
    scanner.object(&mut text, &mut members)?;
    Ok(raw::frame_digest(quoted(node).as_bytes(), &text, &members))
}

/// [`request_digest`] of sent questions given as JSON text, read as `JSON.parse` reads it and
/// hashed from its canonical text, with no value built. An error when the text is not JSON.
pub fn request_digest_of_json(sent_frame_digest: &str, sent_questions_json: &[u8]) -> Result<String, ScanError> {
    let mut scanner = Scanner::new(sent_questions_json)?;
    let span = scanner.span()?;
    scanner.finish()?;
    let frame = quoted(sent_frame_digest);
    if span.canonical {
        // The value's own bytes: whitespace around it is not part of it.
        return Ok(raw::request_digest(frame.as_bytes(), scanner.text(span.range)));
    }
    Ok(raw::request_digest(frame.as_bytes(), &canonicalize(sent_questions_json)?))
}

/// `text` as a `JSON.stringify` string: the canonical quoted form `raw` takes.
fn quoted(text: &str) -> String {
    let mut json = String::with_capacity(text.len() + 2);
    write_string(text, &mut json);
    json
}

/// Serialised JSON fed straight into SHA-256 through a small buffer, so that a digest
/// builds no pre-image string.
pub(crate) struct HashOut {
    hasher: Sha256,
    buffer: [u8; HASH_BUFFER],
    len: usize,
}

const HASH_BUFFER: usize = 512;

impl HashOut {
    /// An empty hash.
    pub(crate) fn new() -> Self {
        HashOut { hasher: Sha256::new(), buffer: [0; HASH_BUFFER], len: 0 }
    }

    fn flush(&mut self) {
        self.hasher.update(self.buffer.get(..self.len).unwrap_or(&[]));
        self.len = 0;
    }

    /// The digest: the first [`DIGEST_CHARS`] hex characters.
    pub(crate) fn finish(mut self) -> String {
        self.flush();
        hex_prefix(&self.hasher.finalize(), DIGEST_CHARS)
    }
}

impl Default for HashOut {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonOut for HashOut {
    fn put(&mut self, text: &str) {
        let bytes = text.as_bytes();
        if self.len + bytes.len() > HASH_BUFFER {
            self.flush();
            if bytes.len() > HASH_BUFFER {
                self.hasher.update(bytes);
                return;
            }
        }
        if let Some(slot) = self.buffer.get_mut(self.len..self.len + bytes.len()) {
            slot.copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }
}

/// Digests over text that is already canonical (`JSON.stringify` output), as read back from
/// a log by [`Scanner`]. The pieces are fed to SHA-256 directly, with no intermediate copy.
///
/// This is the record verifier's fast path ([`crate::record::verify_view_with`]); it is
/// public so that the crate's tests and benchmarks can hold it against the value digests
/// above. The caller vouches that the text is canonical: nothing here checks it, and
/// non-canonical text gives a digest no other implementation computes.
pub mod raw {
    use super::*;

    /// A digest's [`DIGEST_CHARS`] lowercase hex characters, held without allocating.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Hex([u8; DIGEST_CHARS]);

    impl Hex {
        fn of(hash: &[u8]) -> Self {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let mut out = [b'0'; DIGEST_CHARS];
            for (pair, &byte) in out.chunks_exact_mut(2).zip(hash) {
                for (slot, nibble) in pair.iter_mut().zip([byte >> 4, byte & 0xF]) {
                    *slot = HEX.get(usize::from(nibble)).copied().unwrap_or(b'0');
                }
            }
            Hex(out)
        }

        /// The 16 hex characters, as a digest is written in a record (without quotes).
        pub fn as_str(&self) -> &str {
            // Hex digits are ASCII.
            std::str::from_utf8(&self.0).unwrap_or("")
        }

        /// Whether `quoted` (canonical quoted JSON) is this digest.
        pub fn is_quoted(&self, quoted: &[u8]) -> bool {
            quoted.len() == DIGEST_CHARS + 2
                && quoted.first() == Some(&b'"')
                && quoted.last() == Some(&b'"')
                && quoted.get(1..=DIGEST_CHARS) == Some(&self.0[..])
        }
    }

    impl std::fmt::Display for Hex {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.as_str())
        }
    }

    /// `frameDigest(names.join("+"), state)` from canonical text: `names` are canonical
    /// quoted strings (one for a single node), `entries` the state's (quoted key, value)
    /// pairs in enumeration order. Canonical escapes do not depend on their neighbours, so
    /// joining canonical texts gives the canonical text of the joined name.
    pub fn frame_digest_hex<'n, 'e>(
        names: impl Iterator<Item = &'n [u8]>,
        entries: impl Iterator<Item = (&'e [u8], &'e [u8])>,
    ) -> Hex {
        let mut hasher = Sha256::new();
        hasher.update(b"[\"");
        for (index, name) in names.enumerate() {
            if index > 0 {
                hasher.update(b"+");
            }
            hasher.update(name.get(1..name.len().saturating_sub(1)).unwrap_or(&[]));
        }
        hasher.update(b"\",[");
        for (index, (key, value)) in entries.enumerate() {
            hasher.update(if index == 0 { &b"["[..] } else { &b",["[..] });
            hasher.update(key);
            hasher.update(b",");
            hasher.update(value);
            hasher.update(b"]");
        }
        hasher.update(b"]]");
        Hex::of(&hasher.finalize())
    }

    /// `frameDigest` from the canonical quoted node string and the canonical state object
    /// (`state`, whose members `members` lists in enumeration order).
    pub fn frame_digest(node_json: &[u8], state: &[u8], members: &[Member]) -> String {
        let entries = members
            .iter()
            .map(|m| (state.get(m.key.clone()).unwrap_or(&[]), state.get(m.value.clone()).unwrap_or(&[])));
        frame_digest_hex(std::iter::once(node_json), entries).as_str().to_owned()
    }

    /// `requestDigest` from the quoted sent frame digest and canonical question text.
    pub fn request_digest_hex(sent_frame_digest_json: &[u8], questions: &[u8]) -> Hex {
        let mut hasher = Sha256::new();
        hasher.update(b"[");
        hasher.update(sent_frame_digest_json);
        hasher.update(b",");
        hasher.update(questions);
        hasher.update(b"]");
        Hex::of(&hasher.finalize())
    }

    /// `requestDigest` from the sent frame digest and canonical question text.
    pub fn request_digest(sent_frame_digest_json: &[u8], questions: &[u8]) -> String {
        request_digest_hex(sent_frame_digest_json, questions).as_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digests_of_json_text_equal_the_digests_of_its_value() {
        let states = [
            r#"{"tool":"Bash","base_risk":2,"task":"list the files"}"#,
            r#"{"b":1,"10":"ten","a":[1.0,2.50,{"z":null}],"2":true,"b":3}"#,
            r#" { "text" : "caf\u00e9 \ud83d\ude00", "n": -0.0, "big": 12345678901234567890 } "#,
            "{}",
            // Canonical text inside whitespace: hashed where it lies, without the whitespace.
            " \n{\"a\":[1,\"\\n\"],\"b\":{\"0\":\"é\"}}\t",
            "{\"3\":1,\"x\":2.5,\"y\":-0}",
        ];
        for text in states {
            let state: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(
                frame_digest_of_json("loop.pickTool", text.as_bytes()).ok(),
                Some(frame_digest("loop.pickTool", &state)),
                "{text}"
            );
            let questions: Value = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(
                request_digest_of_json("0123456789abcdef", text.as_bytes()).ok(),
                Some(request_digest("0123456789abcdef", &questions)),
                "{text}"
            );
        }
        // A lone surrogate, which no value holds, is hashed as JavaScript writes it back.
        let lone = br#"{"a":"\ud800x","b":["\udfff"]}"#;
        let mut scanner = Scanner::new(lone).unwrap();
        let (mut text, mut members) = (Vec::new(), Vec::new());
        scanner.object(&mut text, &mut members).unwrap();
        assert_eq!(frame_digest_of_json("n", lone).ok(), Some(raw::frame_digest(b"\"n\"", &text, &members)));
        assert_eq!(request_digest_of_json("f", lone).ok(), Some(raw::request_digest(b"\"f\"", &text)));
        for not_an_object in ["[1]", "\"a\"", "{", "{} {}", "", "{\"a\":}"] {
            assert!(frame_digest_of_json("n", not_an_object.as_bytes()).is_err(), "{not_an_object}");
        }
        for not_json in ["{", "[1,]", "{} {}", ""] {
            assert!(request_digest_of_json("n", not_json.as_bytes()).is_err(), "{not_json}");
        }
    }

    #[test]
    fn v1_frame_and_request() {
        let state = json!({"tool":"Bash","base_risk":2,"task":"list the files"});
        let state = state.as_object().unwrap();
        assert_eq!(
            frame_preimage("grade_risk", state),
            r#"["grade_risk",[["tool","Bash"],["base_risk",2],["task","list the files"]]]"#
        );
        assert_eq!(frame_digest("grade_risk", state), "64a553646d6147af");
        assert_eq!(request_digest("64a553646d6147af", &json!({"risk":{"type":"score"}})), "46be7920fb6250bb");
    }

    #[test]
    fn raw_digests_agree_with_value_digests() {
        let text = br#"{"b":1,"2":"x","a":[1.5e300]}"#;
        let mut scanner = Scanner::new(text).unwrap();
        let mut out = Vec::new();
        let mut members = Vec::new();
        scanner.object(&mut out, &mut members).unwrap();
        let value: Value = serde_json::from_slice(text).unwrap();
        assert_eq!(raw::frame_digest(b"\"n\"", &out, &members), frame_digest("n", value.as_object().unwrap()));
        assert_eq!(raw::request_digest(b"\"f\"", &out), request_digest("f", &value));
    }

    #[test]
    fn hex_is_lowercase_and_sized() {
        assert_eq!(digest_bytes(b"").len(), 16);
        assert_eq!(
            hex_prefix(&Sha256::digest(b""), 64),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
