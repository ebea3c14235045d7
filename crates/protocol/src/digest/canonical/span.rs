//! Validating a value without copying it, and telling whether its text is already canonical
//! (`JSON.stringify(JSON.parse(text))` gives the same bytes back).
//!
//! Everything JevLoop and this crate write is canonical, so a reader can hash such text
//! where it lies instead of re-serialising it; only text that is not canonical needs
//! [`Scanner::value`]. The checks mirror the re-serialiser rule for rule, and the errors
//! are the ones [`Scanner::value`] reports, at the same offsets.

use std::ops::Range;

use wide::u8x16;

use super::{MAX_DEPTH, Member, OpenMember, ScanError, ScanErrorKind, Scanner};
use crate::digest::stringify::{escape_of, integer_key_bytes, write_f64};

/// Objects with more members than this are left to the re-serialiser, which finds repeated
/// keys with a hash set; the in-place check compares every pair.
const MAX_PAIRWISE_MEMBERS: usize = 32;

/// Where a value lies in the scanned text, and whether that text is already canonical.
#[derive(Debug, Clone, PartialEq, Eq)]
///
/// Named apart from `decision_core::diag::Span`, which locates contract source text.
pub struct JsonSpan {
    /// Byte range of the value in the scanned text.
    pub range: Range<usize>,
    /// `true` when those bytes are already what `JSON.stringify(JSON.parse(text))` gives,
    /// so they can be hashed where they lie; `false` means [`Scanner::value`] must rewrite
    /// them first.
    pub canonical: bool,
}

impl<'a> Scanner<'a> {
    /// Validates the next value without copying it.
    pub fn span(&mut self) -> Result<JsonSpan, ScanError> {
        self.skip_ws();
        let start = self.pos;
        self.canonical = true;
        self.span_value_at(0, None)?;
        Ok(JsonSpan { range: start..self.pos, canonical: self.canonical })
    }

    /// Validates the next value, which must be an object. When its text is canonical,
    /// `members` lists its members as ranges into the scanned text (quoted key, value), in
    /// enumeration order; otherwise `members` is left empty.
    pub(crate) fn span_object(&mut self, members: &mut Vec<Member>) -> Result<JsonSpan, ScanError> {
        members.clear();
        self.skip_ws();
        if self.byte() != Some(b'{') {
            return Err(self.error(ScanErrorKind::UnexpectedByte));
        }
        let start = self.pos;
        self.canonical = true;
        self.span_value_at(0, Some(members))?;
        if !self.canonical {
            members.clear();
        }
        Ok(JsonSpan { range: start..self.pos, canonical: self.canonical })
    }

    /// The source text of a span.
    pub fn text(&self, range: Range<usize>) -> &'a [u8] {
        self.src.get(range).unwrap_or(&[])
    }

    /// Reads a member key and its `:`, returning the quoted key's range in the source
    /// (as written: compare it only when it has no escape).
    pub fn key_span(&mut self) -> Result<Range<usize>, ScanError> {
        self.skip_ws();
        if self.byte() != Some(b'"') {
            return Err(self.error(ScanErrorKind::UnexpectedByte));
        }
        let start = self.pos;
        self.span_string()?;
        let end = self.pos;
        self.eat(b':')?;
        Ok(start..end)
    }

    /// Whitespace between tokens: allowed, but never canonical.
    fn gap(&mut self) {
        if let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte() {
            self.canonical = false;
            self.skip_ws();
        }
    }

    pub(super) fn span_value_at(&mut self, depth: usize, listing: Option<&mut Vec<Member>>) -> Result<(), ScanError> {
        self.gap();
        match self.byte() {
            Some(b'"') => self.span_string(),
            Some(b'{') => self.span_object_at(depth, listing),
            Some(b'[') => self.span_array_at(depth),
            Some(b'-' | b'0'..=b'9') => self.span_number(),
            Some(b't' | b'f' | b'n') => self.span_literal(),
            Some(_) => Err(self.error(ScanErrorKind::UnexpectedByte)),
            None => Err(self.error(ScanErrorKind::UnexpectedEnd)),
        }
    }

    fn span_literal(&mut self) -> Result<(), ScanError> {
        let rest = self.src.get(self.pos..).unwrap_or(&[]);
        for word in [&b"true"[..], b"false", b"null"] {
            if rest.starts_with(word) {
                self.pos += word.len();
                return Ok(());
            }
        }
        Err(self.error(ScanErrorKind::UnexpectedByte))
    }

    fn span_number(&mut self) -> Result<(), ScanError> {
        let span = self.number_span()?;
        let digits = span.strip_prefix(b"-").unwrap_or(span);
        // Plain integers of up to 15 digits print as written, except `-0`.
        if digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
            if span == b"-0" {
                self.canonical = false;
            }
            return Ok(());
        }
        if self.canonical {
            let value = std::str::from_utf8(span).ok().and_then(|text| text.parse::<f64>().ok());
            let mut formatted = String::new();
            if let Some(value) = value {
                write_f64(value, &mut formatted);
            }
            if formatted.as_bytes() != span {
                self.canonical = false;
            }
        }
        Ok(())
    }

    fn span_array_at(&mut self, depth: usize) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(ScanErrorKind::TooDeep));
        }
        self.pos += 1;
        self.gap();
        if self.byte() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.span_value_at(depth + 1, None)?;
            if !self.next_item_in_span()? {
                return Ok(());
            }
        }
    }

    fn next_item_in_span(&mut self) -> Result<bool, ScanError> {
        self.gap();
        self.comma_or(b']')
    }

    fn span_object_at(&mut self, depth: usize, mut listing: Option<&mut Vec<Member>>) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(ScanErrorKind::TooDeep));
        }
        self.pos += 1;
        self.gap();
        if self.byte() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        self.reserve_members();
        let base = self.members.len();
        let result = self.span_members(depth, base, &mut listing);
        self.members.truncate(base);
        result
    }

    fn span_members(
        &mut self,
        depth: usize,
        base: usize,
        listing: &mut Option<&mut Vec<Member>>,
    ) -> Result<(), ScanError> {
        let mut last_integer: Option<u32> = None;
        let mut seen_other = false;
        loop {
            self.gap();
            if self.byte() != Some(b'"') {
                return Err(self.error(ScanErrorKind::UnexpectedByte));
            }
            let key_start = self.pos;
            self.span_string()?;
            let key_end = self.pos;
            self.gap();
            match self.byte() {
                Some(b':') => self.pos += 1,
                Some(_) => return Err(self.error(ScanErrorKind::UnexpectedByte)),
                None => return Err(self.error(ScanErrorKind::UnexpectedEnd)),
            }
            self.gap();
            let value_start = self.pos;
            self.span_value_at(depth + 1, None)?;
            if self.canonical {
                // JavaScript enumerates integer-like keys first, ascending: the text is
                // canonical only if they already come that way.
                let key = self.src.get(key_start + 1..key_end - 1).unwrap_or(&[]);
                let integer = match key.first() {
                    Some(b'0'..=b'9') => integer_key_bytes(key),
                    _ => None,
                };
                match integer {
                    Some(n) => {
                        if seen_other || last_integer.is_some_and(|last| last >= n) {
                            self.canonical = false;
                        }
                        last_integer = Some(n);
                    }
                    None => seen_other = true,
                }
                // A repeated key collapses (first position, last value). Keys in canonical
                // text compare by their bytes.
                let open = self.members.get(base..).unwrap_or(&[]);
                let src = self.src;
                let quoted = src.get(key_start..key_end).unwrap_or(&[]);
                if open.len() >= MAX_PAIRWISE_MEMBERS
                    || open.iter().any(|m| src.get(m.key_start..m.key_end) == Some(quoted))
                {
                    self.canonical = false;
                }
                self.members.push(OpenMember { key_start, key_end, value_end: self.pos, integer });
                if let Some(listing) = listing.as_deref_mut() {
                    listing.push(Member { key: key_start..key_end, value: value_start..self.pos });
                }
            }
            self.gap();
            if !self.comma_or(b'}')? {
                return Ok(());
            }
        }
    }

    /// A string at the cursor (on its opening quote).
    fn span_string(&mut self) -> Result<(), ScanError> {
        self.pos += 1;
        loop {
            let rest = self.src.get(self.pos..).unwrap_or(&[]);
            let Some(run) = find_quote_or_backslash(rest) else {
                self.pos += self.control_in(rest).unwrap_or(rest.len());
                return Err(self.error(if self.pos < self.src.len() {
                    ScanErrorKind::ControlInString
                } else {
                    ScanErrorKind::UnexpectedEnd
                }));
            };
            if let Some(at) = self.control_in(rest.get(..run).unwrap_or(&[])) {
                self.pos += at;
                return Err(self.error(ScanErrorKind::ControlInString));
            }
            self.pos += run;
            if self.byte() == Some(b'"') {
                self.pos += 1;
                return Ok(());
            }
            self.span_escape()?;
        }
    }

    /// The first byte below U+0020 in `run`, when the text has any at all.
    fn control_in(&self, run: &[u8]) -> Option<usize> {
        if !self.controls || !run.iter().fold(false, |found, &b| found | (b < 0x20)) {
            return None;
        }
        run.iter().position(|&b| b < 0x20)
    }

    /// An escape at the cursor (on its backslash). Canonical text escapes only what
    /// `JSON.stringify` escapes, in the form it uses.
    fn span_escape(&mut self) -> Result<(), ScanError> {
        match self.src.get(self.pos + 1).copied() {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 2;
                Ok(())
            }
            Some(b'/') => {
                self.canonical = false;
                self.pos += 2;
                Ok(())
            }
            Some(b'u') => self.span_unicode_escape(),
            None => Err(self.error(ScanErrorKind::UnexpectedEnd)),
            Some(_) => Err(self.error(ScanErrorKind::InvalidEscape)),
        }
    }

    fn span_unicode_escape(&mut self) -> Result<(), ScanError> {
        let unit = self.hex4(self.pos + 2).ok_or_else(|| self.error(ScanErrorKind::InvalidEscape))?;
        let lowercase = self.src.get(self.pos + 2..self.pos + 6).is_some_and(|d| !d.iter().any(u8::is_ascii_uppercase));
        self.pos += 6;
        if (0xD800..0xDC00).contains(&unit)
            && self.src.get(self.pos..self.pos + 2) == Some(b"\\u")
            && self.hex4(self.pos + 2).is_some_and(|low| (0xDC00..0xE000).contains(&low))
        {
            // An escaped surrogate pair is written back as the raw character.
            self.pos += 6;
            self.canonical = false;
            return Ok(());
        }
        // Kept escaped: control characters without a short escape, and lone surrogates.
        let kept = match u8::try_from(unit) {
            Ok(byte) => escape_of(byte) == b'u',
            Err(_) => (0xD800..0xE000).contains(&unit),
        };
        if !(kept && lowercase) {
            self.canonical = false;
        }
        Ok(())
    }
}

/// The first `"` or `\\` in `bytes`. Most strings in a record are short keys and values:
/// sixteen bytes at a time with one vector compare each (SSE2 on x86-64) costs less than
/// setting up a SIMD search, which takes over after the first 64 bytes.
#[inline]
fn find_quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    let (quote, backslash) = (u8x16::splat(b'"'), u8x16::splat(b'\\'));
    let mut offset = 0;
    while offset < 64 {
        let Some(chunk) = bytes.get(offset..offset + 16).and_then(|c| <[u8; 16]>::try_from(c).ok()) else {
            let tail = bytes.get(offset..).unwrap_or(&[]);
            return tail.iter().position(|&b| b == b'"' || b == b'\\').map(|at| offset + at);
        };
        let v = u8x16::new(chunk);
        let found = (v.simd_eq(quote) | v.simd_eq(backslash)).to_bitmask();
        if found != 0 {
            return Some(offset + found.trailing_zeros() as usize);
        }
        offset += 16;
    }
    memchr::memchr2(b'"', b'\\', bytes.get(offset..)?).map(|at| offset + at)
}

#[cfg(test)]
mod tests {
    use super::super::canonicalize;
    use super::*;

    fn span_of(text: &str) -> Result<JsonSpan, ScanError> {
        let mut scanner = Scanner::new(text.as_bytes())?;
        let span = scanner.span()?;
        scanner.finish()?;
        Ok(span)
    }

    /// The in-place verdict agrees with the re-serialiser: canonical exactly when the
    /// re-serialised text is the text itself, and the same error otherwise.
    fn agrees(text: &str) {
        let expected = canonicalize(text.as_bytes());
        match (span_of(text), expected) {
            (Ok(span), Ok(canonical)) => {
                // Very large objects are always left to the re-serialiser.
                assert_eq!(span.range, text.len() - text.trim_start().len()..text.trim_end().len());
                assert!(!span.canonical || canonical == text.as_bytes()[span.range], "{text:?}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{text:?}"),
            (a, b) => panic!("{text:?}: span {a:?}, value {b:?}"),
        }
    }

    #[test]
    fn canonical_text_is_recognised() {
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            r#"{"1":0,"2":0,"x":0}"#,
            r#""tab\tquote\"back\\slash\b\f\n\r""#,
            r#""\u0001\u001f\udfff\ud800""#,
            "\"é⟨untrusted⟩ \u{7f}\"",
            "[1.5,-2,1e+21,1e-7,0.30000000000000004,123456789012345]",
            "[]",
            "{}",
            "-7",
        ] {
            assert!(span_of(text).unwrap().canonical, "{text}");
            agrees(text);
        }
    }

    #[test]
    fn text_that_would_change_is_not_canonical() {
        for text in [
            r#"{"a": 1}"#,
            " [1 ,2]",
            r#"{"b":1,"a":2,"b":3}"#,
            r#"{"x":0,"1":0}"#,
            r#"{"2":0,"1":0}"#,
            r#"{"a":{"b":1,"b":2}}"#,
            r#""\/""#,
            r#""\u0041""#,
            r#""\u001F""#,
            r#""\u0008""#,
            r#""\uD800""#,
            r#""\ud83d\ude00""#,
            "[1.0]",
            "[-0]",
            "[1E5]",
            "[1e400]",
            "[1234567890123456789]",
        ] {
            assert!(!span_of(text).unwrap().canonical, "{text}");
            agrees(text);
        }
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        agrees(&format!("{{{}}}", many.join(",")));
    }

    #[test]
    fn errors_match_the_reserialiser() {
        for text in [
            "{\"a\":}",
            "[1,",
            "{",
            "{\"a\"",
            "{\"a\":1,}",
            "{\"a\":1 \"b\":2}",
            "[1 2]",
            "\"a\u{1}\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\",
            "-",
            "1.",
            "1e",
            "tru",
            "\"abc",
            "\"ab\u{1}c",
            "nul",
            "",
            "]",
        ] {
            agrees(text);
        }
        agrees(&"[".repeat(600));
        agrees(&format!("{}{}", "{\"a\":".repeat(600), "1"));
    }

    #[test]
    fn objects_list_their_members_in_place() {
        let text = br#"  {"a":[1,{"b":2}],"c":"d"}"#;
        let mut scanner = Scanner::new(text).unwrap();
        let mut members = Vec::new();
        let span = scanner.span_object(&mut members).unwrap();
        assert!(span.canonical);
        assert_eq!(span.range, 2..text.len());
        let parts: Vec<_> = members.iter().map(|m| (&text[m.key.clone()], &text[m.value.clone()])).collect();
        assert_eq!(parts, [(&br#""a""#[..], &br#"[1,{"b":2}]"#[..]), (&br#""c""#[..], &br#""d""#[..])]);
        let mut scanner = Scanner::new(br#"{"b":1,"1":2}"#).unwrap();
        assert!(!scanner.span_object(&mut members).unwrap().canonical);
        assert!(members.is_empty());
        assert_eq!(
            Scanner::new(b"[]").unwrap().span_object(&mut members).unwrap_err().kind,
            ScanErrorKind::UnexpectedByte
        );
    }

    #[test]
    fn finds_the_first_quote_or_backslash() {
        for text in [
            "",
            "abc",
            "\"",
            "a\\",
            "é\"",
            &"x".repeat(7),
            &format!("{}\"", "x".repeat(8)),
            &format!("{}\\x\"", "é".repeat(40)),
        ] {
            let expected = text.bytes().position(|b| b == b'"' || b == b'\\');
            assert_eq!(find_quote_or_backslash(text.as_bytes()), expected, "{text}");
        }
        for len in 0..200 {
            let mut bytes = vec![b'a'; len];
            bytes.extend_from_slice(b"\"\\");
            assert_eq!(find_quote_or_backslash(&bytes), Some(len));
            bytes[len] = 0xA2; // `"` + 0x80: must not match
            assert_eq!(find_quote_or_backslash(&bytes), Some(len + 1));
        }
    }

    proptest::proptest! {
        /// Token soups, mostly malformed: the in-place check never disagrees with the
        /// re-serialiser, on the verdict or on the error.
        #[test]
        fn agrees_on_token_soups(tokens in proptest::collection::vec(proptest::sample::select(vec![
            "{", "}", "[", "]", ",", ":", "\"", "\"a\"", "\"1\"", "\"10\"", "\\", "\\u", "\\ud800", "\\udc00",
            "\\u00e9", "\\n", "\\/", "0", "-", "1", ".", "e", "5", "true", "null", " ", "\t", "é", "\u{1}",
        ]), 0..24)) {
            agrees(&tokens.concat());
        }

        /// Generated JSON values: canonical text is always recognised.
        #[test]
        fn stringify_output_is_canonical(value in json_value()) {
            let text = crate::digest::stringify(&value);
            proptest::prop_assert!(span_of(&text).unwrap().canonical, "{}", text);
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "\\PC{0,6}|[\\x00-\\x20\"\\\\]{0,3}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                proptest::collection::vec(("[a-c0-9]{0,2}", inner), 0..4)
                    .prop_map(|pairs| serde_json::Value::Object(pairs.into_iter().collect())),
            ]
        })
    }
}
