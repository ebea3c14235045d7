//! A structural index over one JSON text, and a cursor that reads the text through it.
//!
//! Replay reads every line of a session log, and most of a line is text the checks only
//! need to know is valid JSON. [`Scanner`] decides that byte by byte; here the text is first
//! classified 64 bytes at a time into bit masks (quotes, backslashes, operators, whitespace),
//! from which the positions of every token are collected: operators outside strings, both
//! quotes of every string, and the first byte of every number or literal. Walking those
//! positions validates the grammar and finds a string's end without looking inside it.
//!
//! The mask loops are plain Rust that the compiler turns into vector compares. Anything
//! unusual (escapes, numbers that might not be canonical) is handed to the same rules
//! [`Scanner`] applies. The cursor only ever answers "valid, and here is where things are"
//! or "not sure": callers that get an error re-read the text with [`Scanner`], which
//! reports the exact error, so errors here need not be precise.

use std::ops::Range;

use wide::u8x16;

use super::span::{KeyOrder, number_is_canonical};
use super::{MAX_DEPTH, Member, ScanError, ScanErrorKind, Scanner, Span, ValueKind, number_end};

const CHUNK: usize = 64;

/// Objects with more members than this are not checked for canonical form here (the
/// pairwise duplicate-key check would grow quadratically); as in [`Scanner::span`].
const MAX_PAIRWISE_MEMBERS: usize = 32;

/// The token positions of one text, with reusable buffers.
#[derive(Debug, Default)]
pub struct StructuralIndex {
    /// Byte offsets of every token, ascending: the first `count` entries.
    tokens: Vec<u32>,
    count: usize,
    /// Byte offsets of every character that follows an escaping backslash, ascending.
    escaped: Vec<u32>,
    /// Keys of the objects open while checking canonical form (start, end of the quoted key).
    keys: Vec<(u32, u32)>,
}

/// What one chunk hands to the next.
#[derive(Debug, Default)]
struct Carries {
    /// Whether the text holds any byte below U+0020 at all.
    controls: bool,
    /// All ones when the previous chunk ended inside a string.
    in_string: u64,
    /// The previous chunk ended on an escaping backslash.
    escape: bool,
    /// 1 when the previous chunk ended inside a number or literal.
    scalar: u64,
}

/// Bit `i` of each mask describes byte `i` of a 64-byte chunk.
#[derive(Debug, Clone, Copy)]
struct Masks {
    quote: u64,
    backslash: u64,
    operator: u64,
    whitespace: u64,
    control: u64,
}

impl Masks {
    /// Sixteen bytes per compare. The brackets pair up by case: `b | 0x20` maps `[` to `{`
    /// and `]` to `}`. Control characters are classified only when the text has any;
    /// without them the only whitespace is the space.
    #[inline]
    fn of(chunk: &[u8; CHUNK], controls: bool) -> Masks {
        let mut masks = Masks { quote: 0, backslash: 0, operator: 0, whitespace: 0, control: 0 };
        let splat = u8x16::splat;
        for (k, bytes) in chunk.chunks_exact(16).enumerate() {
            let Ok(bytes) = <[u8; 16]>::try_from(bytes) else { continue };
            let v = u8x16::new(bytes);
            let shift = 16 * k;
            let bits = |m: u8x16| u64::from(m.to_bitmask()) << shift;
            masks.quote |= bits(v.simd_eq(splat(b'"')));
            masks.backslash |= bits(v.simd_eq(splat(b'\\')));
            let folded = v | splat(0x20);
            masks.operator |= bits(
                folded.simd_eq(splat(b'{'))
                    | folded.simd_eq(splat(b'}'))
                    | v.simd_eq(splat(b':'))
                    | v.simd_eq(splat(b',')),
            );
            let space = v.simd_eq(splat(b' '));
            if controls {
                let control = v.min(splat(0x1f)).simd_eq(v);
                masks.control |= bits(control);
                masks.whitespace |=
                    bits(space | v.simd_eq(splat(b'\t')) | v.simd_eq(splat(b'\n')) | v.simd_eq(splat(b'\r')));
            } else {
                masks.whitespace |= bits(space);
            }
        }
        masks
    }
}

/// Bit `i` set when an odd number of bits `0..=i` of `x` are set: inside a string, given
/// its quotes (the opening quote is inside, the closing one is not).
#[inline]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The characters escaped by a backslash, for a chunk whose first character is escaped
/// when `carry` is set; `carry` is left set when the chunk ends on an escaping backslash.
/// Backslashes are rare in logs, so they are simply taken one by one.
fn escaped_bits(backslash: u64, carry: &mut bool) -> u64 {
    let mut escaped = 0u64;
    let mut escapes = backslash;
    if *carry {
        escaped |= 1;
        escapes &= !1;
    }
    *carry = false;
    while escapes != 0 {
        let at = escapes.trailing_zeros();
        escapes &= !(1u64 << at);
        if at == 63 {
            *carry = true;
        } else {
            escaped |= 1u64 << (at + 1);
            // The escaped character is never itself an escape.
            escapes &= !(1u64 << (at + 1));
        }
    }
    escaped
}

/// Whether the escape whose character is at `at` (just after its backslash) is valid JSON.
fn valid_escape(src: &[u8], at: usize) -> bool {
    match src.get(at) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => true,
        Some(b'u') => src.get(at + 1..at + 5).is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit)),
        _ => false,
    }
}

impl StructuralIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Indexes `src`. Returns `false` when the text is certainly not JSON (invalid UTF-8, a
    /// raw control character or an invalid escape in a string, an unterminated string) or
    /// too long to index; the cursor finds every other error.
    pub fn build(&mut self, src: &[u8]) -> bool {
        self.count = 0;
        self.escaped.clear();
        if u32::try_from(src.len()).is_err() || simdutf8::basic::from_utf8(src).is_err() {
            return false;
        }
        // Room for every token (at most one per byte) up front, so that storing one costs
        // no capacity check; the buffer only ever grows.
        if self.tokens.len() < src.len() + CHUNK {
            self.tokens.resize(src.len() + CHUNK, 0);
        }
        let mut carries = Carries {
            // A branch-free fold, which the compiler vectorises.
            controls: src.iter().fold(false, |found, &b| found | (b < 0x20)),
            ..Carries::default()
        };
        let mut chunks = src.chunks_exact(CHUNK);
        for (n, bytes) in chunks.by_ref().enumerate() {
            let Ok(chunk) = <&[u8; CHUNK]>::try_from(bytes) else { return false };
            if !self.index_chunk(src, chunk, n * CHUNK, &mut carries) {
                return false;
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // The last chunk is padded with spaces, which are neither tokens nor errors.
            let mut chunk = [b' '; CHUNK];
            if let Some(head) = chunk.get_mut(..rest.len()) {
                head.copy_from_slice(rest);
            }
            if !self.index_chunk(src, &chunk, src.len() - rest.len(), &mut carries) {
                return false;
            }
        }
        carries.in_string == 0 && !carries.escape
    }

    /// Indexes the 64 bytes of `src` at `base` (`chunk`, padded when it is the last).
    #[inline]
    fn index_chunk(&mut self, src: &[u8], chunk: &[u8; CHUNK], base: usize, carries: &mut Carries) -> bool {
        let masks = Masks::of(chunk, carries.controls);
        let escaped = if masks.backslash == 0 && !carries.escape {
            0
        } else {
            let escaped = escaped_bits(masks.backslash, &mut carries.escape);
            if !self.note_escapes(src, base, escaped) {
                return false;
            }
            escaped
        };
        let quote = masks.quote & !escaped;
        let in_string = prefix_xor(quote) ^ carries.in_string;
        carries.in_string = 0u64.wrapping_sub(in_string >> 63);
        if masks.control & in_string != 0 {
            return false;
        }
        let scalar = !(masks.operator | masks.whitespace | masks.quote | in_string);
        let scalar_start = scalar & !((scalar << 1) | carries.scalar);
        carries.scalar = scalar >> 63;
        let mut structural = (masks.operator & !in_string) | quote | scalar_start;
        let (tokens, mut count) = (&mut self.tokens, self.count);
        while structural != 0 {
            // Always in bounds (room was made for one token per byte); the offset fits in
            // u32 because the text's length does.
            if let Some(slot) = tokens.get_mut(count) {
                *slot = (base + structural.trailing_zeros() as usize) as u32;
            }
            count += 1;
            structural &= structural - 1;
        }
        self.count = count;
        true
    }

    /// Records a chunk's escaped characters and checks each escape.
    fn note_escapes(&mut self, src: &[u8], base: usize, mut escaped: u64) -> bool {
        while escaped != 0 {
            let at = base + escaped.trailing_zeros() as usize;
            if !valid_escape(src, at) {
                return false;
            }
            self.escaped.push(at as u32);
            escaped &= escaped - 1;
        }
        true
    }

    /// A cursor over `src`, which must be the text last given to [`StructuralIndex::build`].
    pub fn cursor<'a>(&'a mut self, src: &'a [u8]) -> IndexCursor<'a> {
        IndexCursor {
            src,
            tokens: self.tokens.get(..self.count).unwrap_or(&[]),
            escaped: &self.escaped,
            keys: &mut self.keys,
            next: 0,
            next_escape: 0,
            expected: 0,
            canonical: true,
        }
    }
}

/// Reads a text through its [`StructuralIndex`]; the same reading operations as
/// [`Scanner`] offers for in-place reading (see [`JsonCursor`]).
#[derive(Debug)]
pub struct IndexCursor<'a> {
    src: &'a [u8],
    tokens: &'a [u32],
    escaped: &'a [u32],
    keys: &'a mut Vec<(u32, u32)>,
    /// The next token.
    next: usize,
    /// The first escape not yet passed.
    next_escape: usize,
    /// Where the next token starts when nothing but tokens lies between them.
    expected: usize,
    /// While a span is read: whether its text is canonical so far.
    canonical: bool,
}

impl<'a> IndexCursor<'a> {
    /// An error at the next token. Its kind and place are indicative only: callers re-read
    /// text this cursor refuses with [`Scanner`], which reports the exact error.
    fn error(&self) -> ScanError {
        let offset = self.tokens.get(self.next).map_or(self.src.len(), |&p| p as usize);
        let kind =
            if self.next < self.tokens.len() { ScanErrorKind::UnexpectedByte } else { ScanErrorKind::UnexpectedEnd };
        ScanError { offset, kind }
    }

    /// The next token's offset and first byte.
    #[inline]
    fn peek(&self) -> Option<(usize, u8)> {
        let at = *self.tokens.get(self.next)? as usize;
        Some((at, *self.src.get(at)?))
    }

    /// Consumes the next token if it is the operator `op`.
    #[inline]
    fn eat(&mut self, op: u8) -> Option<()> {
        let (at, b) = self.peek()?;
        (b == op).then(|| self.step(at, at + 1))
    }

    /// Moves past a token that spans `at..end`, noting any gap before it.
    #[inline]
    fn step(&mut self, at: usize, end: usize) {
        if at != self.expected {
            self.canonical = false;
        }
        self.expected = end;
        self.next += 1;
    }

    /// Consumes a string token (on its opening quote at `open`), returning its quoted range.
    #[inline]
    fn string(&mut self, open: usize) -> Option<Range<usize>> {
        if open != self.expected {
            self.canonical = false;
        }
        // The index holds both quotes of every string and nothing inside one.
        let close = *self.tokens.get(self.next + 1)? as usize;
        self.next += 2;
        self.expected = close + 1;
        if self.canonical && self.has_escape(open, close) {
            // Escapes are canonical only in the forms `JSON.stringify` writes.
            self.canonical = Scanner::at_string(self.src, open).string_is_canonical();
        }
        Some(open..close + 1)
    }

    /// Whether an escape lies between `open` and `close`. Strings are met in order, so
    /// the escapes before them are passed for good.
    fn has_escape(&mut self, open: usize, close: usize) -> bool {
        while self.escaped.get(self.next_escape).is_some_and(|&e| (e as usize) < open) {
            self.next_escape += 1;
        }
        self.escaped.get(self.next_escape).is_some_and(|&e| (e as usize) < close)
    }

    /// Where the number or literal starting at `at` ends, when it is one.
    #[inline]
    fn scalar_end(&self, at: usize, first: u8) -> Option<usize> {
        let end = match first {
            b'-' | b'0'..=b'9' => number_end(self.src, at).ok()?,
            b't' => at + self.src.get(at..)?.starts_with(b"true").then_some(4)?,
            b'f' => at + self.src.get(at..)?.starts_with(b"false").then_some(5)?,
            b'n' => at + self.src.get(at..)?.starts_with(b"null").then_some(4)?,
            _ => return None,
        };
        // The token must end where the scalar does: `1x` or `truex` is one token here.
        match self.src.get(end) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"') => Some(end),
            Some(_) => None,
        }
    }

    /// Consumes a number or literal token starting at `at`.
    fn scalar(&mut self, at: usize, first: u8) -> Option<Range<usize>> {
        let end = self.scalar_end(at, first)?;
        if self.canonical && first != b't' && first != b'f' && first != b'n' {
            self.canonical = number_is_canonical(self.src.get(at..end)?);
        }
        self.step(at, end);
        Some(at..end)
    }

    /// Validates the next value and checks its canonical form; `listing` receives the
    /// members of the outermost object when it is canonical.
    fn value(&mut self, depth: usize, listing: Option<&mut Vec<Member>>) -> Option<()> {
        let (at, first) = self.peek()?;
        match first {
            b'"' => self.string(at).map(drop),
            b'{' => self.object(at, depth, listing),
            b'[' => self.array(at, depth),
            _ => self.scalar(at, first).map(drop),
        }
    }

    fn array(&mut self, at: usize, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.step(at, at + 1);
        if let Some((end, b']')) = self.peek() {
            self.step(end, end + 1);
            return Some(());
        }
        loop {
            self.value(depth + 1, None)?;
            match self.peek()? {
                (comma, b',') => self.step(comma, comma + 1),
                (end, b']') => {
                    self.step(end, end + 1);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, at: usize, depth: usize, mut listing: Option<&mut Vec<Member>>) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.step(at, at + 1);
        if let Some((end, b'}')) = self.peek() {
            self.step(end, end + 1);
            return Some(());
        }
        let base = self.keys.len();
        let result = self.members(depth, base, &mut listing);
        self.keys.truncate(base);
        result
    }

    fn members(&mut self, depth: usize, base: usize, listing: &mut Option<&mut Vec<Member>>) -> Option<()> {
        let mut order = KeyOrder::default();
        loop {
            let key = match self.peek()? {
                (open, b'"') => self.string(open)?,
                _ => return None,
            };
            self.eat(b':')?;
            let value_start = self.peek()?.0;
            self.value(depth + 1, None)?;
            if self.canonical {
                // As in `Scanner::span`: integer-like keys first, ascending; no key twice.
                if !order.next(self.src.get(key.start + 1..key.end - 1)?).0 {
                    self.canonical = false;
                }
                let src = self.src;
                let quoted = src.get(key.clone());
                let open = self.keys.get(base..).unwrap_or(&[]);
                if open.len() >= MAX_PAIRWISE_MEMBERS
                    || open.iter().any(|&(s, e)| src.get(s as usize..e as usize) == quoted)
                {
                    self.canonical = false;
                }
                // Offsets fit in u32: the text's length does.
                self.keys.push((key.start as u32, key.end as u32));
                if let Some(listing) = listing.as_deref_mut() {
                    listing.push(Member { key, value: value_start..self.expected });
                }
            }
            match self.peek()? {
                (comma, b',') => self.step(comma, comma + 1),
                (end, b'}') => {
                    self.step(end, end + 1);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads a value as [`Scanner::span`] does.
    fn span_with(&mut self, listing: Option<&mut Vec<Member>>) -> Option<Span> {
        let start = self.peek()?.0;
        self.expected = start;
        self.canonical = true;
        self.value(0, listing)?;
        Some(Span { range: start..self.expected, canonical: self.canonical })
    }

    /// Validates the next value without checking its form: a flat walk over the tokens
    /// with the open containers as bits of a word (1 for an object). Values nested deeper
    /// than the word holds go to the recursive walk, which has the scanner's depth limit.
    fn skip(&mut self) -> Option<()> {
        #[derive(Clone, Copy, PartialEq)]
        enum Expect {
            Value,
            Key,
            AfterValue,
        }
        let mut open: u64 = 0;
        let mut depth = 0u32;
        let mut expect = Expect::Value;
        loop {
            let (at, b) = self.peek()?;
            match expect {
                Expect::Value => match b {
                    b'"' => {
                        self.next += 2;
                        expect = Expect::AfterValue;
                    }
                    b'{' | b'[' => {
                        if depth == 64 {
                            self.canonical = false;
                            self.value(64, None)?;
                            expect = Expect::AfterValue;
                            continue;
                        }
                        self.next += 1;
                        let object = b == b'{';
                        open = (open << 1) | u64::from(object);
                        depth += 1;
                        let close = if object { b'}' } else { b']' };
                        if let Some((_, c)) = self.peek()
                            && c == close
                        {
                            self.next += 1;
                            open >>= 1;
                            depth -= 1;
                            expect = Expect::AfterValue;
                        } else {
                            expect = if object { Expect::Key } else { Expect::Value };
                        }
                    }
                    _ => {
                        self.scalar_end(at, b)?;
                        self.next += 1;
                        expect = Expect::AfterValue;
                    }
                },
                Expect::Key => {
                    if b != b'"' {
                        return None;
                    }
                    self.next += 2;
                    if self.peek()?.1 != b':' {
                        return None;
                    }
                    self.next += 1;
                    expect = Expect::Value;
                }
                Expect::AfterValue => {
                    if depth == 0 {
                        return Some(());
                    }
                    let object = open & 1 == 1;
                    match b {
                        b',' => {
                            self.next += 1;
                            expect = if object { Expect::Key } else { Expect::Value };
                        }
                        b'}' if object => {
                            self.next += 1;
                            open >>= 1;
                            depth -= 1;
                        }
                        b']' if !object => {
                            self.next += 1;
                            open >>= 1;
                            depth -= 1;
                        }
                        _ => return None,
                    }
                }
            }
            if depth == 0 && expect == Expect::AfterValue {
                return Some(());
            }
        }
    }
}

/// The reading operations in-place readers use, offered by [`Scanner`] (byte by byte, with
/// exact errors) and by [`IndexCursor`] (through a structural index).
pub trait JsonCursor<'a> {
    /// The kind of the next value.
    fn peek_kind(&mut self) -> Result<ValueKind, ScanError>;
    /// Validates the next value and discards it.
    fn skip_value(&mut self) -> Result<(), ScanError>;
    /// Consumes `{` and reports whether the object has members.
    fn begin_object(&mut self) -> Result<bool, ScanError>;
    /// Reads a member key and its `:`, returning the quoted key's range as written.
    fn key_span(&mut self) -> Result<Range<usize>, ScanError>;
    /// After a member's value: `,` (more follow) or `}` (the end).
    fn next_member(&mut self) -> Result<bool, ScanError>;
    /// Consumes `[` and reports whether the array has items.
    fn begin_array(&mut self) -> Result<bool, ScanError>;
    /// After an item: `,` (more follow) or `]` (the end).
    fn next_item(&mut self) -> Result<bool, ScanError>;
    /// Reads a number.
    fn number_value(&mut self) -> Result<f64, ScanError>;
    /// Validates the next value, telling whether its text is canonical.
    fn span(&mut self) -> Result<Span, ScanError>;
    /// As [`JsonCursor::span`] for an object, listing its members when it is canonical.
    fn span_object(&mut self, members: &mut Vec<Member>) -> Result<Span, ScanError>;
    /// The text of a range of the input.
    fn text(&self, range: Range<usize>) -> &'a [u8];
    /// Checks that nothing but whitespace remains.
    fn finish(&mut self) -> Result<(), ScanError>;
}

impl<'a> JsonCursor<'a> for IndexCursor<'a> {
    fn peek_kind(&mut self) -> Result<ValueKind, ScanError> {
        match self.peek() {
            Some((_, b'{')) => Ok(ValueKind::Object),
            Some((_, b'[')) => Ok(ValueKind::Array),
            Some((_, b'"')) => Ok(ValueKind::String),
            Some((_, b'-' | b'0'..=b'9')) => Ok(ValueKind::Number),
            Some((_, b't' | b'f')) => Ok(ValueKind::Bool),
            Some((_, b'n')) => Ok(ValueKind::Null),
            _ => Err(self.error()),
        }
    }

    fn skip_value(&mut self) -> Result<(), ScanError> {
        self.skip().ok_or_else(|| self.error())
    }

    fn begin_object(&mut self) -> Result<bool, ScanError> {
        self.eat(b'{').ok_or_else(|| self.error())?;
        if let Some((end, b'}')) = self.peek() {
            self.step(end, end + 1);
            return Ok(false);
        }
        Ok(true)
    }

    fn key_span(&mut self) -> Result<Range<usize>, ScanError> {
        let key = match self.peek() {
            Some((open, b'"')) => self.string(open),
            _ => None,
        };
        key.and_then(|key| self.eat(b':').map(|()| key)).ok_or_else(|| self.error())
    }

    fn next_member(&mut self) -> Result<bool, ScanError> {
        match self.peek() {
            Some((comma, b',')) => {
                self.step(comma, comma + 1);
                Ok(true)
            }
            Some((end, b'}')) => {
                self.step(end, end + 1);
                Ok(false)
            }
            _ => Err(self.error()),
        }
    }

    fn begin_array(&mut self) -> Result<bool, ScanError> {
        self.eat(b'[').ok_or_else(|| self.error())?;
        if let Some((end, b']')) = self.peek() {
            self.step(end, end + 1);
            return Ok(false);
        }
        Ok(true)
    }

    fn next_item(&mut self) -> Result<bool, ScanError> {
        match self.peek() {
            Some((comma, b',')) => {
                self.step(comma, comma + 1);
                Ok(true)
            }
            Some((end, b']')) => {
                self.step(end, end + 1);
                Ok(false)
            }
            _ => Err(self.error()),
        }
    }

    fn number_value(&mut self) -> Result<f64, ScanError> {
        let range = match self.peek() {
            Some((at, first @ (b'-' | b'0'..=b'9'))) => self.scalar(at, first),
            _ => None,
        };
        let range = range.ok_or_else(|| self.error())?;
        // The scanner's conversion, so that both readers agree on every value.
        Scanner::at_string(self.src, range.start).number_value()
    }

    fn span(&mut self) -> Result<Span, ScanError> {
        self.span_with(None).ok_or_else(|| self.error())
    }

    fn span_object(&mut self, members: &mut Vec<Member>) -> Result<Span, ScanError> {
        members.clear();
        let span = match self.peek() {
            Some((_, b'{')) => self.span_with(Some(members)),
            _ => None,
        };
        let span = span.ok_or_else(|| self.error())?;
        if !span.canonical {
            members.clear();
        }
        Ok(span)
    }

    fn text(&self, range: Range<usize>) -> &'a [u8] {
        self.src.get(range).unwrap_or(&[])
    }

    fn finish(&mut self) -> Result<(), ScanError> {
        if self.next < self.tokens.len() {
            Err(ScanError {
                offset: self.peek().map_or(self.src.len(), |(at, _)| at),
                kind: ScanErrorKind::TrailingText,
            })
        } else {
            Ok(())
        }
    }
}

impl<'a> JsonCursor<'a> for Scanner<'a> {
    fn peek_kind(&mut self) -> Result<ValueKind, ScanError> {
        Scanner::peek_kind(self)
    }
    fn skip_value(&mut self) -> Result<(), ScanError> {
        Scanner::skip_value(self)
    }
    fn begin_object(&mut self) -> Result<bool, ScanError> {
        Scanner::begin_object(self)
    }
    fn key_span(&mut self) -> Result<Range<usize>, ScanError> {
        Scanner::key_span(self)
    }
    fn next_member(&mut self) -> Result<bool, ScanError> {
        Scanner::next_member(self)
    }
    fn begin_array(&mut self) -> Result<bool, ScanError> {
        Scanner::begin_array(self)
    }
    fn next_item(&mut self) -> Result<bool, ScanError> {
        Scanner::next_item(self)
    }
    fn number_value(&mut self) -> Result<f64, ScanError> {
        Scanner::number_value(self)
    }
    fn span(&mut self) -> Result<Span, ScanError> {
        Scanner::span(self)
    }
    fn span_object(&mut self, members: &mut Vec<Member>) -> Result<Span, ScanError> {
        Scanner::span_object(self, members)
    }
    fn text(&self, range: Range<usize>) -> &'a [u8] {
        Scanner::text(self, range)
    }
    fn finish(&mut self) -> Result<(), ScanError> {
        Scanner::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::span::tests::{CANONICAL_SAMPLES, json_value};
    use super::*;

    /// What a reader learns from a text: the span of its one value (with the members of a
    /// top-level object), and where the value ends.
    #[derive(Debug, PartialEq)]
    struct Reading {
        span: Span,
        members: Vec<Member>,
    }

    fn by_scanner(text: &[u8]) -> Option<Reading> {
        let mut scanner = Scanner::new(text).ok()?;
        read(&mut scanner)
    }

    fn by_index(text: &[u8]) -> Option<Reading> {
        let mut index = StructuralIndex::new();
        if !index.build(text) {
            return None;
        }
        read(&mut index.cursor(text))
    }

    fn read<'a>(cursor: &mut impl JsonCursor<'a>) -> Option<Reading> {
        let mut members = Vec::new();
        let span = if cursor.peek_kind().ok()? == ValueKind::Object {
            cursor.span_object(&mut members).ok()?
        } else {
            cursor.span().ok()?
        };
        cursor.finish().ok()?;
        Some(Reading { span, members })
    }

    fn skipped_by_scanner(text: &[u8]) -> Option<()> {
        let mut scanner = Scanner::new(text).ok()?;
        scanner.skip_value().ok()?;
        scanner.finish().ok()
    }

    fn skipped_by_index(text: &[u8]) -> Option<()> {
        let mut index = StructuralIndex::new();
        if !index.build(text) {
            return None;
        }
        let mut cursor = index.cursor(text);
        cursor.skip_value().ok()?;
        cursor.finish().ok()
    }

    /// The index never accepts what the scanner refuses and never reads differently; it
    /// may give up on valid text only when that text is not canonical.
    fn agrees(text: &[u8]) {
        let (fast, careful) = (by_index(text), by_scanner(text));
        match (&fast, &careful) {
            (Some(f), Some(c)) => assert_eq!(f, c, "{}", String::from_utf8_lossy(text)),
            (Some(f), None) => panic!("accepted what the scanner refuses: {:?} {f:?}", String::from_utf8_lossy(text)),
            (None, Some(c)) => {
                assert!(!c.span.canonical, "gave up on canonical text {:?}", String::from_utf8_lossy(text))
            }
            (None, None) => {}
        }
        let (fast, careful) = (skipped_by_index(text), skipped_by_scanner(text));
        assert!(
            fast.is_none() || careful.is_some(),
            "skipped what the scanner refuses: {:?}",
            String::from_utf8_lossy(text)
        );
    }

    #[test]
    fn canonical_text_reads_as_the_scanner_reads_it() {
        for text in CANONICAL_SAMPLES.into_iter().chain(["0", "true", r#"{"k":"\\","l":"\\\\\"","m":"a\\\"b"}"#]) {
            assert!(by_index(text.as_bytes()).is_some_and(|r| r.span.canonical), "{text}");
            agrees(text.as_bytes());
        }
    }

    #[test]
    fn text_that_is_not_canonical_or_not_json_is_never_read_differently() {
        for text in [
            r#"{"a": 1}"#,
            " [1 ,2]",
            "[1 2]",
            "[1,]",
            "{\"a\":1,}",
            r#"{"b":1,"a":2,"b":3}"#,
            r#"{"x":0,"1":0}"#,
            r#"{"2":0,"1":0}"#,
            r#""\/""#,
            r#""\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            "\"a\u{1}b\"",
            "\"abc",
            "[1.0]",
            "[-0]",
            "[01]",
            "[1x]",
            "[truex]",
            "[tru]",
            "[nul]",
            "1 2",
            "{\"a\"}",
            "{\"a\" 1}",
            "{,}",
            "[\"a\":1]",
            "{\"a\":1]",
            "[1}",
            "]",
            "",
            "   ",
            "\\",
            "[\\\"a\"]",
            "{\"a\":\"b\"\"c\":1}",
        ] {
            agrees(text.as_bytes());
        }
        agrees(&[b'"', 0xff, b'"']);
        agrees("[".repeat(600).as_bytes());
        agrees(format!("{}1{}", "[".repeat(100), "]".repeat(100)).as_bytes());
        agrees(format!("{}1{}", "[".repeat(512), "]".repeat(512)).as_bytes());
        agrees(format!("{}1{}", "[".repeat(511), "]".repeat(511)).as_bytes());
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        agrees(format!("{{{}}}", many.join(",")).as_bytes());
    }

    #[test]
    fn strings_and_escapes_across_chunk_boundaries() {
        // Quotes, escapes and numbers placed at every offset around the 64-byte edges.
        for pad in 0..140 {
            for tail in [r#""a\"b""#, r#""\\""#, r#""\u00e9x""#, "12345", "\"x\"", r#""\n\\\"""#] {
                let text = format!(r#"["{}",{tail}]"#, "p".repeat(pad));
                assert!(by_index(text.as_bytes()).is_some(), "{text}");
                agrees(text.as_bytes());
            }
        }
    }

    #[test]
    fn escaped_characters_are_found_exactly() {
        let mut carry = false;
        // `\\` escapes the second backslash; `\"` escapes the quote.
        let backslash = 0b0000_1011u64; // bytes 0, 1, 3
        assert_eq!(escaped_bits(backslash, &mut carry), 0b0001_0010);
        assert!(!carry);
        let mut carry = false;
        assert_eq!(escaped_bits(1 << 63, &mut carry), 0);
        assert!(carry);
        assert_eq!(escaped_bits(1, &mut carry), 1, "a backslash escaped by the previous chunk escapes nothing");
        assert!(!carry);
        assert_eq!(prefix_xor(0b1001_0000), 0b0111_0000);
    }

    proptest::proptest! {
        /// Token soups, mostly malformed.
        #[test]
        fn agrees_on_token_soups(tokens in proptest::collection::vec(proptest::sample::select(vec![
            "{", "}", "[", "]", ",", ":", "\"", "\"a\"", "\"1\"", "\"10\"", "\\", "\\u", "\\ud800", "\\udc00",
            "\\u00e9", "\\n", "\\/", "\\\"", "0", "-", "1", ".", "e", "5", "true", "null", "fals", " ", "\t", "é",
            "\u{1}", "\n", "x",
        ]), 0..32)) {
            agrees(tokens.concat().as_bytes());
        }

        /// Generated values: canonical text is always read in place, and reads as the
        /// scanner reads it.
        #[test]
        fn stringify_output_reads_in_place(value in json_value(80, 6), pad in 0usize..70) {
            let text = crate::digest::stringify(&serde_json::json!([" ".repeat(pad), value]));
            proptest::prop_assert!(by_index(text.as_bytes()).is_some_and(|r| r.span.canonical), "{}", text);
            agrees(text.as_bytes());
        }

        /// Valid text with one byte changed, inserted or removed.
        #[test]
        fn agrees_on_damaged_text(value in json_value(80, 6), at in 0usize..400, byte in proptest::sample::select(
            b"{}[]:,\"\\ 0-1.eEtfn\x01x".to_vec()), how in 0u8..3) {
            let mut text = crate::digest::stringify(&value).into_bytes();
            let at = at % (text.len() + 1);
            match how {
                0 if at < text.len() => text[at] = byte,
                1 => text.insert(at, byte),
                _ if at < text.len() => { text.remove(at); }
                _ => {}
            }
            agrees(&text);
        }
    }
}
