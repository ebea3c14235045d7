//! `JSON.stringify(JSON.parse(text))` in one pass over the bytes, without building a tree.
//!
//! This is how records read back from a log are re-serialised for their digests. It keeps
//! what a Rust `String` cannot hold: an escaped lone surrogate (`\ud800`) stays a lone
//! surrogate and is written back as `\ud800`, exactly as V8 does. Text that is already in
//! canonical form (everything JevLoop and this crate write) is copied through almost
//! byte for byte; objects are rebuilt only when JavaScript would reorder them (integer-like
//! keys) or collapse them (a repeated key keeps its first position and its last value).

use std::ops::Range;

use thiserror::Error;

use super::stringify::{escape_of, integer_key_bytes, push_escape, write_f64};

mod span;
pub use span::JsonSpan;

/// How deeply arrays and objects may nest before the input is refused with
/// [`ScanErrorKind::TooDeep`]; a bound on the scanner's recursion, far above anything a
/// record holds.
pub const MAX_DEPTH: usize = 512;

/// How many open members (those of the objects being read, outermost first) the scanner
/// makes room for at its first object.
const OPEN_MEMBERS_RESERVED: usize = 16;

/// Why a text is not JSON, and where (a byte offset into the scanned text).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind} at byte {offset}")]
pub struct ScanError {
    /// Byte offset into the scanned text where the problem was found (for
    /// [`ScanErrorKind::InvalidUtf8`], the length of the valid prefix).
    pub offset: usize,
    /// What is wrong there.
    pub kind: ScanErrorKind,
}

/// The ways a text can fail to be JSON. New kinds may be added as the scanner learns to
/// tell more cases apart, so match with a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ScanErrorKind {
    /// The text ends inside a value (a torn log line ends this way).
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// A byte that cannot start or continue a value here.
    #[error("unexpected character")]
    UnexpectedByte,
    /// A number that is not in JSON's number grammar.
    #[error("invalid number")]
    InvalidNumber,
    /// A backslash escape JSON does not define, or a `\u` without four hex digits.
    #[error("invalid escape in string")]
    InvalidEscape,
    /// A byte below U+0020 written raw inside a string.
    #[error("unescaped control character in string")]
    ControlInString,
    /// The text is not UTF-8 (checked once, when the [`Scanner`] is made).
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// Arrays and objects nest deeper than [`MAX_DEPTH`].
    #[error("nesting deeper than 512 levels")]
    TooDeep,
    /// Something other than whitespace follows the value ([`Scanner::finish`]).
    #[error("text after the JSON value")]
    TrailingText,
}

/// What kind of value starts at the scanner's position, told from its first byte only
/// (the value itself is not validated until it is read or skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `{`.
    Object,
    /// `[`.
    Array,
    /// `"`.
    String,
    /// `-` or a digit.
    Number,
    /// `t` or `f`.
    Bool,
    /// `n`.
    Null,
}

/// One member of the outermost object written by [`Scanner::object`], as byte ranges into
/// the output: the quoted key and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key with its quotes, in canonical form: `"name"`.
    pub key: Range<usize>,
    /// The value's canonical text.
    pub value: Range<usize>,
}

/// A member while its object is still open: positions in the output buffer.
#[derive(Debug, Clone, Copy)]
struct OpenMember {
    key_start: usize,
    key_end: usize,
    value_end: usize,
    integer: Option<u32>,
}

/// A cursor over JSON text that re-emits values in canonical `JSON.stringify` form.
///
/// This is the one JSON reader the spec forces: `serde_json` cannot hold an escaped lone
/// surrogate, which JavaScript keeps and hashes. Besides [`canonicalize`] and the record
/// reader, decision-runtime's log readers walk lines with it; its method set follows what
/// those readers need and is not a stable interface.
pub struct Scanner<'a> {
    src: &'a [u8],
    pos: usize,
    members: Vec<OpenMember>,
    scratch: Vec<u8>,
    /// Whether the text holds any byte below U+0020. Inside a string such a byte is an
    /// error; when there is none anywhere, strings need not be checked for them.
    controls: bool,
    /// While [`Scanner::span`] runs: whether the text seen so far is already canonical.
    canonical: bool,
}

impl<'a> Scanner<'a> {
    /// A scanner over `src`, which must be UTF-8 (checked here, once).
    pub fn new(src: &'a [u8]) -> Result<Self, ScanError> {
        // The SIMD check is the fast path; the standard one only locates the error.
        if simdutf8::basic::from_utf8(src).is_err()
            && let Err(e) = std::str::from_utf8(src)
        {
            return Err(ScanError { offset: e.valid_up_to(), kind: ScanErrorKind::InvalidUtf8 });
        }
        // A branch-free fold, which the compiler vectorises.
        let controls = src.iter().fold(false, |found, &b| found | (b < 0x20));
        Ok(Scanner { src, pos: 0, members: Vec::new(), scratch: Vec::new(), controls, canonical: true })
    }

    /// The byte offset of the cursor.
    pub fn offset(&self) -> usize {
        self.pos
    }

    fn error(&self, kind: ScanErrorKind) -> ScanError {
        ScanError { offset: self.pos, kind }
    }

    fn byte(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, expected: u8) -> Result<(), ScanError> {
        self.skip_ws();
        match self.byte() {
            Some(b) if b == expected => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.error(ScanErrorKind::UnexpectedByte)),
            None => Err(self.error(ScanErrorKind::UnexpectedEnd)),
        }
    }

    /// The kind of the next value, after skipping whitespace.
    pub fn peek_kind(&mut self) -> Result<ValueKind, ScanError> {
        self.skip_ws();
        match self.byte() {
            Some(b'{') => Ok(ValueKind::Object),
            Some(b'[') => Ok(ValueKind::Array),
            Some(b'"') => Ok(ValueKind::String),
            Some(b'-' | b'0'..=b'9') => Ok(ValueKind::Number),
            Some(b't' | b'f') => Ok(ValueKind::Bool),
            Some(b'n') => Ok(ValueKind::Null),
            Some(_) => Err(self.error(ScanErrorKind::UnexpectedByte)),
            None => Err(self.error(ScanErrorKind::UnexpectedEnd)),
        }
    }

    /// Checks that only whitespace remains.
    pub fn finish(&mut self) -> Result<(), ScanError> {
        self.skip_ws();
        if self.pos < self.src.len() { Err(self.error(ScanErrorKind::TrailingText)) } else { Ok(()) }
    }

    /// Consumes `{` and reports whether the object has members.
    pub fn begin_object(&mut self) -> Result<bool, ScanError> {
        self.eat(b'{')?;
        self.skip_ws();
        if self.byte() == Some(b'}') {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// Reads a member key and its `:` into `key` (the key's canonical content, unquoted).
    pub fn member_key(&mut self, key: &mut Vec<u8>) -> Result<(), ScanError> {
        key.clear();
        self.skip_ws();
        if self.byte() != Some(b'"') {
            return Err(self.error(ScanErrorKind::UnexpectedByte));
        }
        // The content alone, without its quotes: callers compare it.
        self.string_content(key)?;
        self.eat(b':')
    }

    /// After a member's value: consumes `,` (more members follow) or `}` (the end).
    pub fn next_member(&mut self) -> Result<bool, ScanError> {
        self.skip_ws();
        self.comma_or(b'}')
    }

    /// Consumes `[` and reports whether the array has items.
    pub fn begin_array(&mut self) -> Result<bool, ScanError> {
        self.eat(b'[')?;
        self.skip_ws();
        if self.byte() == Some(b']') {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// After an array item: consumes `,` (more items follow) or `]` (the end).
    pub fn next_item(&mut self) -> Result<bool, ScanError> {
        self.skip_ws();
        self.comma_or(b']')
    }

    /// At a separator: consumes `,` (more follow: `true`) or `close` (the end: `false`).
    fn comma_or(&mut self, close: u8) -> Result<bool, ScanError> {
        match self.byte() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(_) => Err(self.error(ScanErrorKind::UnexpectedByte)),
            None => Err(self.error(ScanErrorKind::UnexpectedEnd)),
        }
    }

    /// Validates the next value and discards it.
    pub fn skip_value(&mut self) -> Result<(), ScanError> {
        self.skip_ws();
        // Nothing will be hashed: skip the canonical-form checks.
        self.canonical = false;
        self.span_value_at(0, None)
    }

    /// Validates the next value and discards it, returning where it lies.
    pub fn skip_span(&mut self) -> Result<Range<usize>, ScanError> {
        self.skip_ws();
        let start = self.pos;
        self.skip_value()?;
        Ok(start..self.pos)
    }

    /// Steps over the next value when the text continues with exactly `known`, the text of
    /// an object, array or string already validated elsewhere (equal bytes validate alike,
    /// and such a value ends where its text does); returns where it lies. Otherwise, and for
    /// any other `known`, the cursor does not move.
    pub fn skip_known(&mut self, known: &[u8]) -> Option<Range<usize>> {
        if !matches!(known.first(), Some(b'{' | b'[' | b'"')) {
            return None;
        }
        self.skip_ws();
        let start = self.pos;
        if !self.src.get(start..)?.starts_with(known) {
            return None;
        }
        self.pos += known.len();
        Some(start..self.pos)
    }

    /// Appends the canonical form of the next value to `out`.
    pub fn value(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        self.value_at(out, 0)
    }

    /// Appends the canonical form of the next value, which must be an object, to `out`,
    /// and lists its members (in canonical order) in `members`.
    pub fn object(&mut self, out: &mut Vec<u8>, members: &mut Vec<Member>) -> Result<(), ScanError> {
        members.clear();
        self.object_at(out, 0, Some(members))
    }

    /// Appends the canonical quoted form of the next value, which must be a string.
    pub fn string_value(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        self.skip_ws();
        if self.byte() != Some(b'"') {
            return Err(self.error(ScanErrorKind::UnexpectedByte));
        }
        self.string(out)
    }

    /// Reads the next value, which must be a number, as JavaScript's double.
    pub fn number_value(&mut self) -> Result<f64, ScanError> {
        self.skip_ws();
        let span = self.number_span()?;
        // Plain integers of up to 15 digits are exact; most numbers in a log are.
        let digits = span.strip_prefix(b"-").unwrap_or(span);
        if digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            let magnitude = digits.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
            #[allow(clippy::cast_precision_loss)] // below 10^15: exact
            let magnitude = magnitude as f64;
            return Ok(if digits.len() < span.len() { -magnitude } else { magnitude });
        }
        let text = std::str::from_utf8(span).map_err(|_| self.error(ScanErrorKind::InvalidNumber))?;
        text.parse::<f64>().map_err(|_| self.error(ScanErrorKind::InvalidNumber))
    }

    fn value_at(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), ScanError> {
        match self.peek_kind()? {
            ValueKind::Object => self.object_at(out, depth, None),
            ValueKind::Array => self.array_at(out, depth),
            ValueKind::String => self.string(out),
            ValueKind::Number => self.number(out),
            ValueKind::Bool | ValueKind::Null => self.literal(out),
        }
    }

    fn literal(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        let rest = self.src.get(self.pos..).unwrap_or(&[]);
        for word in [&b"true"[..], b"false", b"null"] {
            if rest.starts_with(word) {
                out.extend_from_slice(word);
                self.pos += word.len();
                return Ok(());
            }
        }
        Err(self.error(ScanErrorKind::UnexpectedByte))
    }

    fn array_at(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(ScanErrorKind::TooDeep));
        }
        out.push(b'[');
        if self.begin_array()? {
            let mut first = true;
            loop {
                if !first {
                    out.push(b',');
                }
                first = false;
                self.value_at(out, depth + 1)?;
                if !self.next_item()? {
                    break;
                }
            }
        }
        out.push(b']');
        Ok(())
    }

    /// Room for the open members of the first object read, made once: a state's members and
    /// those of the objects inside it then fit without the list growing one doubling at a time.
    fn reserve_members(&mut self) {
        if self.members.capacity() == 0 {
            self.members.reserve(OPEN_MEMBERS_RESERVED);
        }
    }

    fn object_at(
        &mut self,
        out: &mut Vec<u8>,
        depth: usize,
        listing: Option<&mut Vec<Member>>,
    ) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(ScanErrorKind::TooDeep));
        }
        self.reserve_members();
        let base = self.members.len();
        let start = out.len();
        out.push(b'{');
        let result = self.object_members(out, depth);
        if result.is_ok() {
            out.push(b'}');
            self.settle_object(out, start, base, listing);
        }
        self.members.truncate(base);
        result
    }

    fn object_members(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), ScanError> {
        if !self.begin_object()? {
            return Ok(());
        }
        let mut first = true;
        loop {
            self.skip_ws();
            if self.byte() != Some(b'"') {
                return Err(self.error(ScanErrorKind::UnexpectedByte));
            }
            if !first {
                out.push(b',');
            }
            first = false;
            let key_start = out.len();
            self.string(out)?;
            let key_end = out.len();
            self.eat(b':')?;
            out.push(b':');
            self.value_at(out, depth + 1)?;
            let integer = out.get(key_start + 1..key_end - 1).and_then(integer_key_bytes);
            self.members.push(OpenMember { key_start, key_end, value_end: out.len(), integer });
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    /// Puts a just-written object (`out[start..]`, members `self.members[base..]`) into
    /// JavaScript order, and lists its members when asked.
    fn settle_object(&mut self, out: &mut Vec<u8>, start: usize, base: usize, listing: Option<&mut Vec<Member>>) {
        let open = self.members.get(base..).unwrap_or(&[]);
        let order = js_order(out, open);
        match order {
            None => {
                if let Some(listing) = listing {
                    listing.extend(
                        open.iter().map(|m| Member { key: m.key_start..m.key_end, value: m.key_end + 1..m.value_end }),
                    );
                }
            }
            Some(order) => {
                self.scratch.clear();
                self.scratch.extend_from_slice(out.get(start..).unwrap_or(&[]));
                out.truncate(start);
                out.push(b'{');
                let mut listed = Vec::new();
                for (index, (key_of, value_of)) in order.into_iter().enumerate() {
                    if index > 0 {
                        out.push(b',');
                    }
                    let (Some(key), Some(value)) = (open.get(key_of), open.get(value_of)) else { continue };
                    let key_start = out.len();
                    out.extend_from_slice(self.scratch.get(key.key_start - start..key.key_end - start).unwrap_or(&[]));
                    let key_end = out.len();
                    out.push(b':');
                    out.extend_from_slice(
                        self.scratch.get(value.key_end + 1 - start..value.value_end - start).unwrap_or(&[]),
                    );
                    listed.push(Member { key: key_start..key_end, value: key_end + 1..out.len() });
                }
                out.push(b'}');
                if let Some(listing) = listing {
                    listing.extend(listed);
                }
            }
        }
    }

    /// Reads a string at the cursor (which is on its opening quote) and appends its
    /// canonical quoted form.
    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        out.push(b'"');
        self.string_content(out)?;
        out.push(b'"');
        Ok(())
    }

    /// [`Scanner::string`] without the quotes: appends the string's canonical content.
    fn string_content(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        self.pos += 1;
        loop {
            // Copy the run of bytes that need no attention in one go: find the next quote or
            // backslash with SIMD, then check the run for control characters in a loop the
            // compiler vectorises.
            let rest = self.src.get(self.pos..).unwrap_or(&[]);
            let mut run = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            let head = rest.get(..run).unwrap_or(&[]);
            if self.controls && head.iter().fold(false, |found, &b| found | (b < 0x20)) {
                run = head.iter().position(|&b| b < 0x20).unwrap_or(run);
            }
            out.extend_from_slice(rest.get(..run).unwrap_or(&[]));
            self.pos += run;
            match self.byte() {
                None => return Err(self.error(ScanErrorKind::UnexpectedEnd)),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => self.escape(out)?,
                Some(_) => return Err(self.error(ScanErrorKind::ControlInString)),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        let letter = self.src.get(self.pos + 1).copied();
        let decoded = match letter {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0C,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => return self.unicode_escape(out),
            None => return Err(self.error(ScanErrorKind::UnexpectedEnd)),
            Some(_) => return Err(self.error(ScanErrorKind::InvalidEscape)),
        };
        self.pos += 2;
        push_unit(u32::from(decoded), out);
        Ok(())
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.src.get(at..at + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(text, 16).ok()
    }

    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        let unit = self.hex4(self.pos + 2).ok_or_else(|| self.error(ScanErrorKind::InvalidEscape))?;
        self.pos += 6;
        if (0xD800..0xDC00).contains(&unit)
            && self.src.get(self.pos..self.pos + 2) == Some(b"\\u")
            && let Some(low) = self.hex4(self.pos + 2)
            && (0xDC00..0xE000).contains(&low)
        {
            self.pos += 6;
            push_unit(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), out);
            return Ok(());
        }
        push_unit(unit, out);
        Ok(())
    }

    fn number_span(&mut self) -> Result<&'a [u8], ScanError> {
        let src = self.src;
        let start = self.pos;
        let digits = |pos: &mut usize| {
            let from = *pos;
            while src.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos - from
        };
        let mut pos = start;
        if src.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match src.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => {
                digits(&mut pos);
            }
            _ => return Err(ScanError { offset: pos, kind: ScanErrorKind::InvalidNumber }),
        }
        if src.get(pos) == Some(&b'.') {
            pos += 1;
            if digits(&mut pos) == 0 {
                return Err(ScanError { offset: pos, kind: ScanErrorKind::InvalidNumber });
            }
        }
        if let Some(b'e' | b'E') = src.get(pos) {
            pos += 1;
            if let Some(b'+' | b'-') = src.get(pos) {
                pos += 1;
            }
            if digits(&mut pos) == 0 {
                return Err(ScanError { offset: pos, kind: ScanErrorKind::InvalidNumber });
            }
        }
        self.pos = pos;
        Ok(src.get(start..pos).unwrap_or(&[]))
    }

    fn number(&mut self, out: &mut Vec<u8>) -> Result<(), ScanError> {
        let span = self.number_span()?;
        // Plain integers of up to 15 digits are exact doubles and print as written.
        let digits = span.strip_prefix(b"-").unwrap_or(span);
        if digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            if digits == b"0" {
                out.push(b'0');
            } else {
                out.extend_from_slice(span);
            }
            return Ok(());
        }
        let text = std::str::from_utf8(span).map_err(|_| self.error(ScanErrorKind::InvalidNumber))?;
        let value = text.parse::<f64>().map_err(|_| self.error(ScanErrorKind::InvalidNumber))?;
        let mut formatted = String::new();
        write_f64(value, &mut formatted);
        out.extend_from_slice(formatted.as_bytes());
        Ok(())
    }
}

/// Appends one decoded code point (or lone surrogate) in canonical string form.
fn push_unit(unit: u32, out: &mut Vec<u8>) {
    if let Ok(byte) = u8::try_from(unit)
        && byte < 0x80
    {
        match escape_of(byte) {
            0 => out.push(byte),
            letter => push_escape(byte, letter, out),
        }
    } else if let Some(c) = char::from_u32(unit) {
        let mut buffer = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
    } else {
        // A lone surrogate: V8's well-formed stringify writes it as a lowercase escape.
        out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
    }
}

/// The order in which JavaScript would enumerate an object's members, as pairs of
/// (member giving the key, member giving the value); `None` when it is the written order.
fn js_order(out: &[u8], members: &[OpenMember]) -> Option<Vec<(usize, usize)>> {
    let key = |m: &OpenMember| out.get(m.key_start..m.key_end).unwrap_or(&[]);
    let mut integers_in_order = true;
    let mut last_integer: Option<u32> = None;
    let mut seen_other = false;
    for m in members {
        match m.integer {
            Some(n) => {
                if seen_other || last_integer.is_some_and(|last| last >= n) {
                    integers_in_order = false;
                }
                last_integer = Some(n);
            }
            None => seen_other = true,
        }
    }
    let duplicates = if members.len() <= 16 {
        members.iter().enumerate().any(|(i, m)| members.get(..i).unwrap_or(&[]).iter().any(|p| key(p) == key(m)))
    } else {
        let mut seen = std::collections::HashSet::with_capacity(members.len());
        !members.iter().all(|m| seen.insert(key(m)))
    };
    if integers_in_order && !duplicates {
        return None;
    }
    // First position of each distinct key, paired with its last value.
    let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(members.len());
    for (index, m) in members.iter().enumerate() {
        let found = pairs.iter_mut().find(|(k, _)| members.get(*k).is_some_and(|p| key(p) == key(m)));
        match found {
            Some(pair) => pair.1 = index,
            None => pairs.push((index, index)),
        }
    }
    let integer_of = |pair: &(usize, usize)| members.get(pair.0).and_then(|m| m.integer);
    let mut integers: Vec<(usize, usize)> = pairs.iter().copied().filter(|p| integer_of(p).is_some()).collect();
    integers.sort_by_key(|p| integer_of(p));
    integers.extend(pairs.iter().copied().filter(|p| integer_of(p).is_none()));
    Some(integers)
}

/// `JSON.stringify(JSON.parse(text))` as bytes.
pub fn canonicalize(text: &[u8]) -> Result<Vec<u8>, ScanError> {
    let mut scanner = Scanner::new(text)?;
    let mut out = Vec::with_capacity(text.len());
    scanner.value(&mut out)?;
    scanner.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        String::from_utf8(canonicalize(text.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn reorders_integer_keys_and_collapses_duplicates() {
        assert_eq!(canon(r#"{"b":1,"10":2,"2":3,"a":4}"#), r#"{"2":3,"10":2,"b":1,"a":4}"#);
        assert_eq!(canon(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(canon(r#"{"a":1,"\u0061":{"1":0,"0":1}}"#), r#"{"a":{"0":1,"1":0}}"#);
        assert_eq!(canon(r#" { "x" : [ 1 , 2 ] } "#), r#"{"x":[1,2]}"#);
    }

    #[test]
    fn lists_members_after_reordering() {
        let mut scanner = Scanner::new(br#"{"b":true,"1":"x"}"#).unwrap();
        let mut out = Vec::new();
        let mut members = Vec::new();
        scanner.object(&mut out, &mut members).unwrap();
        assert_eq!(out, br#"{"1":"x","b":true}"#);
        let parts: Vec<_> = members.iter().map(|m| (&out[m.key.clone()], &out[m.value.clone()])).collect();
        assert_eq!(parts, [(&b"\"1\""[..], &b"\"x\""[..]), (&b"\"b\""[..], &b"true"[..])]);
    }

    #[test]
    fn a_member_key_is_its_canonical_text_without_the_quotes() {
        let mut scanner = Scanner::new(br#"{"plain":1, "a\"b\u0041":2,"":3,"\ud83d":4}"#).unwrap();
        assert!(scanner.begin_object().unwrap());
        let mut key = b"left over".to_vec();
        let mut keys = Vec::new();
        loop {
            scanner.member_key(&mut key).unwrap();
            keys.push(String::from_utf8_lossy(&key).into_owned());
            scanner.skip_value().unwrap();
            if !scanner.next_member().unwrap() {
                break;
            }
        }
        // Canonical text: a quote stays escaped, `\u0041` becomes `A`, a lone surrogate stays escaped.
        assert_eq!(keys, ["plain", "a\\\"bA", "", "\\ud83d"]);
        // A key that never ends, or that is not a string, is an error.
        for text in [&br#"{"open"#[..], &br#"{1:2}"#[..]] {
            let mut scanner = Scanner::new(text).unwrap();
            scanner.begin_object().unwrap();
            assert!(scanner.member_key(&mut key).is_err(), "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn strings_keep_lone_surrogates() {
        assert_eq!(canon(r#""\ud83d""#), r#""\ud83d""#);
        assert_eq!(canon(r#""\uDC00x""#), r#""\udc00x""#);
        assert_eq!(canon(r#""\ud83d\ude00""#), "\"😀\"");
        assert_eq!(canon(r#""\ud83d\u0041""#), r#""\ud83dA""#);
        assert_eq!(canon(r#""\u00e9\/\u001F\u007f""#), "\"é/\\u001f\u{7f}\"");
    }

    #[test]
    fn numbers_are_rerendered() {
        assert_eq!(canon("[1.0,-0,1E-7,1e21,2.50,123456789012345678]"), "[1,0,1e-7,1e+21,2.5,123456789012345680]");
        assert_eq!(canon("1e400"), "null");
    }

    #[test]
    fn malformed_input_is_located() {
        for (text, offset, kind) in [
            ("{\"a\":}", 5, ScanErrorKind::UnexpectedByte),
            ("[1,", 3, ScanErrorKind::UnexpectedEnd),
            ("01", 1, ScanErrorKind::TrailingText),
            ("\"a\u{1}\"", 2, ScanErrorKind::ControlInString),
            ("\"\\x\"", 1, ScanErrorKind::InvalidEscape),
            ("\"\\u12\"", 1, ScanErrorKind::InvalidEscape),
            ("-", 1, ScanErrorKind::InvalidNumber),
            ("1.", 2, ScanErrorKind::InvalidNumber),
            ("tru", 0, ScanErrorKind::UnexpectedByte),
            ("\"abc", 4, ScanErrorKind::UnexpectedEnd),
        ] {
            assert_eq!(canonicalize(text.as_bytes()), Err(ScanError { offset, kind }), "{text}");
        }
        assert_eq!(canonicalize(b"\"\xff\"").unwrap_err().kind, ScanErrorKind::InvalidUtf8);
        let deep = "[".repeat(600);
        assert_eq!(canonicalize(deep.as_bytes()).unwrap_err().kind, ScanErrorKind::TooDeep);
    }
}
