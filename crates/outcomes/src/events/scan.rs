//! The fast reader of log lines: one pass over the text that reads the members the report
//! needs, borrows their strings, and checks while skipping everything else — no JSON tree, no
//! allocation for a plain line.
//!
//! It reads only what it can read with certainty and gives up (`None`, leaving the line to
//! the careful reader in [`super`]) on anything else: a repeated member of an object
//! it reads, a type it does not expect, an unknown member of an outcome, an escape for a
//! UTF-16 surrogate, a number with an exponent or longer than [`NUMBER_LIMIT`], nesting
//! deeper than [`DEPTH_LIMIT`], a value object with more than [`SUMMARY_MEMBER_LIMIT`]
//! members, or text that is not JSON. So whatever it accepts is JSON that `serde_json` reads
//! too, and it reads it to the event the careful reader would make of it.

use std::borrow::Cow;

use super::{Event, EventResult, Line, MetadataSummary, OUTCOME_EVENT_TYPE, RecordedFlags, Strings};
use crate::telemetry::{PROSE_KEYS, SUMMARY_MEMBER_LIMIT, ValueSummary, WeakSuccessFlag};

/// The deepest nesting read; `serde_json` refuses beyond 128.
const DEPTH_LIMIT: usize = 64;
/// The longest number read. Without an exponent, a number this short cannot overflow an `f64`
/// (which `serde_json` would refuse).
const NUMBER_LIMIT: usize = 100;

/// Read one line (its trailing newline included or not), or give up.
pub(crate) fn read(text: &str) -> Option<Line<'_>> {
    let mut scanner = Scanner { text, pos: 0 };
    if scanner.token()? != b'{' {
        return None;
    }
    let mut outer = EventFields::default();
    let mut inner = None;
    scanner.event(&mut outer, Some(&mut inner), 1)?;
    scanner.skip_whitespace();
    if scanner.pos != text.len() {
        return None;
    }
    if outer.kind.as_deref() == Some("event") {
        match inner {
            Some(inner) => inner.into_line(outer.at),
            None => Some(Line::Other),
        }
    } else {
        outer.into_line(None)
    }
}

/// The members of an event object that the report reads. `seen` marks members already read,
/// so that a repeated one gives up.
#[derive(Default)]
struct EventFields<'a> {
    seen: u32,
    kind: Option<Cow<'a, str>>,
    event_type: Option<Cow<'a, str>>,
    at: Option<u64>,
    tool: Option<Cow<'a, str>>,
    method: Option<Cow<'a, str>>,
    trace_id: Option<Cow<'a, str>>,
    call_id: Option<Cow<'a, str>>,
    depth: Option<u64>,
    outcome: Option<OutcomeFields<'a>>,
    contract: Option<Cow<'a, str>>,
    weak_success: Option<RecordedFlags>,
}

/// The members of an outcome object (every one it may have; any other gives up).
#[derive(Default)]
struct OutcomeFields<'a> {
    seen: u32,
    /// `true` for `"ok"`, `false` for `"error"`.
    ok: Option<bool>,
    tool: Option<Cow<'a, str>>,
    method: Option<Cow<'a, str>>,
    value: Option<ValueSummary<'a>>,
    error_type: Option<Cow<'a, str>>,
    error_message: bool,
    retriable: bool,
    metadata: Option<MetadataSummary<'a>>,
}

/// Mark member `bit` as read; `None` when it was already.
fn first(seen: &mut u32, bit: u32) -> Option<()> {
    let mask = 1 << bit;
    if *seen & mask != 0 {
        return None;
    }
    *seen |= mask;
    Some(())
}

fn verdict(verdict: &str) -> Option<&'static str> {
    match verdict {
        "held" => Some("held"),
        "violated" => Some("violated"),
        "not_applied" => Some("not_applied"),
        _ => None,
    }
}

impl<'a> EventFields<'a> {
    /// The same rules as the careful reader: marked or plainly an outcome event, an outcome
    /// that is ok with a value or an error with a type, tool and method here or in the outcome.
    fn into_line(self, envelope_at: Option<u64>) -> Option<Line<'a>> {
        let marked =
            self.kind.as_deref() == Some(OUTCOME_EVENT_TYPE) || self.event_type.as_deref() == Some(OUTCOME_EVENT_TYPE);
        let unmarked = self.kind.is_none() && self.event_type.is_none() && self.outcome.is_some();
        if !marked && !unmarked {
            return Some(Line::Other);
        }
        let outcome = self.outcome?;
        let result = match (outcome.ok?, outcome.value, outcome.error_type) {
            (true, Some(summary), None)
                if !outcome.error_message && !outcome.retriable && outcome.metadata.is_none() =>
            {
                EventResult::Ok(summary)
            }
            (false, None, Some(error_type)) if !error_type.is_empty() => {
                EventResult::Error { error_type, metadata: outcome.metadata.unwrap_or_default() }
            }
            _ => return None,
        };
        let contract = match self.contract.as_deref() {
            None => None,
            Some(text) => Some(verdict(text)?),
        };
        Some(Line::Event(Event {
            tool: self.tool.or(outcome.tool)?,
            method: self.method.or(outcome.method)?,
            trace_id: self.trace_id,
            call_id: self.call_id,
            at_ms: self.at.or(envelope_at),
            depth: self.depth,
            result,
            contract,
            weak_success: self.weak_success,
        }))
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The offset of the first byte among eight (read little-endian) that ends a run of plain
/// string text: a quote, a backslash or a control character. Each test flags the lowest
/// matching byte exactly (a borrow can only flag bytes above a match), so the lowest flag
/// of all three is the answer.
fn first_special(word: u64) -> Option<usize> {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let found = ((quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash)
        | (word.wrapping_sub(ONES * 0x20) & !word))
        & HIGHS;
    (found != 0).then(|| (found.trailing_zeros() / 8) as usize)
}

/// A number: a plain non-negative integer that fits `u64`, or any other.
enum Number {
    Count(u64),
    Other,
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    #[inline(always)]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// The next byte that is not whitespace, consumed.
    #[inline(always)]
    fn token(&mut self) -> Option<u8> {
        self.skip_whitespace();
        let byte = self.peek()?;
        self.pos += 1;
        Some(byte)
    }

    /// The next byte that is not whitespace, not consumed.
    #[inline(always)]
    fn upcoming(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.peek()
    }

    fn literal(&mut self, rest: &str) -> Option<()> {
        let end = self.pos.checked_add(rest.len())?;
        (self.text.as_bytes().get(self.pos..end)? == rest.as_bytes()).then(|| self.pos = end)
    }

    /// The members of an object whose `{` was consumed: `member` gets each key and must read
    /// its value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>) -> Option<()> {
        if self.upcoming()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            if self.token()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if self.token()? != b':' {
                return None;
            }
            member(self, key)?;
            match self.token()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// The elements of an array whose `[` was consumed: `element` must read each one. Returns
    /// how many there were.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<usize> {
        if self.upcoming()? == b']' {
            self.pos += 1;
            return Some(0);
        }
        let mut count = 0;
        loop {
            element(self)?;
            count += 1;
            match self.token()? {
                b',' => {}
                b']' => return Some(count),
                _ => return None,
            }
        }
    }

    /// Check and skip one value. `depth` counts the objects and arrays around it.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.token()? {
            b'"' => self.skip_string().map(drop),
            b'{' if depth < DEPTH_LIMIT => self.object(|scanner, _| scanner.skip_value(depth + 1)),
            b'[' if depth < DEPTH_LIMIT => self.array(|scanner| scanner.skip_value(depth + 1)).map(drop),
            b't' => self.literal("rue"),
            b'f' => self.literal("alse"),
            b'n' => self.literal("ull"),
            first @ (b'-' | b'0'..=b'9') => self.number(first).map(drop),
            _ => None,
        }
    }

    /// Skip a string whose opening quote was consumed, checking its escapes; returns whether
    /// it had any.
    #[inline(always)]
    fn skip_string(&mut self) -> Option<bool> {
        let bytes = self.text.as_bytes();
        let mut escaped = false;
        loop {
            // Plain text, eight bytes at a time while they last.
            while let Some(chunk) = bytes.get(self.pos..self.pos + 8) {
                let word = u64::from_le_bytes(chunk.try_into().ok()?);
                match first_special(word) {
                    Some(offset) => {
                        self.pos += offset;
                        break;
                    }
                    None => self.pos += 8,
                }
            }
            match *bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    let escape = *bytes.get(self.pos + 1)?;
                    self.pos += 2;
                    match escape {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            self.hex4()?;
                        }
                        _ => return None,
                    }
                }
                // Control characters must be escaped.
                0x00..=0x1f => return None,
                _ => self.pos += 1,
            }
        }
    }

    /// The four hex digits of a `\u` escape, as a character; `None` for a surrogate (which
    /// only a pair can encode, left to the careful reader).
    fn hex4(&mut self) -> Option<char> {
        let end = self.pos.checked_add(4)?;
        let digits = self.text.get(self.pos..end)?;
        if !digits.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return None;
        }
        self.pos = end;
        char::from_u32(u32::from_str_radix(digits, 16).ok()?)
    }

    /// A string whose opening quote was consumed: borrowed from the text unless it has escapes.
    #[inline(always)]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos;
        let escaped = self.skip_string()?;
        let raw = self.text.get(start..self.pos.checked_sub(1)?)?;
        if !escaped {
            return Some(Cow::Borrowed(raw));
        }
        let mut decoded = String::with_capacity(raw.len());
        let mut escapes = Scanner { text: raw, pos: 0 };
        while let Some(at) = raw.get(escapes.pos..)?.find('\\') {
            decoded.push_str(raw.get(escapes.pos..escapes.pos + at)?);
            escapes.pos += at + 2;
            decoded.push(match raw.as_bytes().get(escapes.pos - 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => escapes.hex4()?,
                _ => return None,
            });
        }
        decoded.push_str(raw.get(escapes.pos..)?);
        Some(Cow::Owned(decoded))
    }

    /// A number whose first byte was consumed.
    fn number(&mut self, first: u8) -> Option<Number> {
        let start = self.pos - 1;
        let bytes = self.text.as_bytes();
        let digits = |scanner: &mut Self| {
            let from = scanner.pos;
            while bytes.get(scanner.pos).is_some_and(u8::is_ascii_digit) {
                scanner.pos += 1;
            }
            scanner.pos - from
        };
        let negative = first == b'-';
        let leading = if negative { self.token_digit()? } else { first };
        // No leading zeros: `0` stands alone.
        if leading != b'0' {
            digits(self);
        }
        let integer_end = self.pos;
        let mut fraction = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return None;
            }
            fraction = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) || self.pos - start > NUMBER_LIMIT {
            return None;
        }
        if negative || fraction {
            return Some(Number::Other);
        }
        let mut value: u64 = 0;
        for digit in bytes.get(start..integer_end)? {
            match value.checked_mul(10).and_then(|tens| tens.checked_add(u64::from(digit - b'0'))) {
                Some(next) => value = next,
                None => return Some(Number::Other),
            }
        }
        Some(Number::Count(value))
    }

    /// The digit right after a minus sign, consumed.
    fn token_digit(&mut self) -> Option<u8> {
        let digit = self.peek().filter(u8::is_ascii_digit)?;
        self.pos += 1;
        Some(digit)
    }

    /// A string or `null` (absent).
    fn optional_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        match self.token()? {
            b'"' => self.string().map(Some),
            b'n' => self.literal("ull").map(|()| None),
            _ => None,
        }
    }

    /// A string, and nothing else.
    fn required_string(&mut self) -> Option<Cow<'a, str>> {
        (self.token()? == b'"').then_some(())?;
        self.string()
    }

    /// A plain non-negative integer or `null` (absent).
    fn optional_count(&mut self) -> Option<Option<u64>> {
        match self.token()? {
            b'n' => self.literal("ull").map(|()| None),
            first @ b'0'..=b'9' => match self.number(first)? {
                Number::Count(count) => Some(Some(count)),
                Number::Other => None,
            },
            _ => None,
        }
    }

    /// The members of an event object whose `{` was consumed. `inner` receives the event of
    /// a session-log envelope (`e`), read on the outer level only, as the careful reader does.
    fn event(
        &mut self,
        fields: &mut EventFields<'a>,
        mut inner: Option<&mut Option<EventFields<'a>>>,
        depth: usize,
    ) -> Option<()> {
        self.object(|scanner, key| {
            match key.as_ref() {
                "kind" => {
                    first(&mut fields.seen, 0)?;
                    fields.kind = scanner.optional_string()?;
                }
                "type" => {
                    first(&mut fields.seen, 1)?;
                    fields.event_type = scanner.optional_string()?;
                }
                "at" => {
                    first(&mut fields.seen, 2)?;
                    fields.at = scanner.optional_count()?;
                }
                "tool" => {
                    first(&mut fields.seen, 3)?;
                    fields.tool = scanner.optional_string()?;
                }
                "method" => {
                    first(&mut fields.seen, 4)?;
                    fields.method = scanner.optional_string()?;
                }
                "trace_id" => {
                    first(&mut fields.seen, 5)?;
                    fields.trace_id = scanner.optional_string()?;
                }
                "call_id" => {
                    first(&mut fields.seen, 6)?;
                    fields.call_id = scanner.optional_string()?;
                }
                "depth" => {
                    first(&mut fields.seen, 7)?;
                    fields.depth = scanner.optional_count()?;
                }
                "contract" => {
                    first(&mut fields.seen, 8)?;
                    fields.contract = scanner.optional_string()?;
                }
                "outcome" => {
                    first(&mut fields.seen, 9)?;
                    fields.outcome = match scanner.token()? {
                        b'{' => {
                            let mut outcome = OutcomeFields::default();
                            scanner.outcome(&mut outcome, depth + 1)?;
                            Some(outcome)
                        }
                        b'n' => scanner.literal("ull").map(|()| None)?,
                        _ => return None,
                    };
                }
                "weak_success" => {
                    first(&mut fields.seen, 10)?;
                    fields.weak_success = match scanner.token()? {
                        b'[' => {
                            let mut recorded = RecordedFlags::default();
                            scanner.array(|scanner| {
                                let name = scanner.required_string()?;
                                recorded.add(WeakSuccessFlag::from_name(&name)?);
                                Some(())
                            })?;
                            Some(recorded)
                        }
                        b'n' => scanner.literal("ull").map(|()| None)?,
                        _ => return None,
                    };
                }
                "e" => match inner.as_deref_mut() {
                    Some(slot) => {
                        first(&mut fields.seen, 11)?;
                        *slot = match scanner.token()? {
                            b'{' => {
                                let mut event = EventFields::default();
                                scanner.event(&mut event, None, depth + 1)?;
                                Some(event)
                            }
                            b'n' => scanner.literal("ull").map(|()| None)?,
                            _ => return None,
                        };
                    }
                    None => scanner.skip_value(depth)?,
                },
                _ => scanner.skip_value(depth)?,
            }
            Some(())
        })
    }

    /// The members of an outcome object whose `{` was consumed.
    fn outcome(&mut self, fields: &mut OutcomeFields<'a>, depth: usize) -> Option<()> {
        self.object(|scanner, key| {
            match key.as_ref() {
                "status" => {
                    first(&mut fields.seen, 0)?;
                    fields.ok = match scanner.required_string()?.as_ref() {
                        "ok" => Some(true),
                        "error" => Some(false),
                        _ => return None,
                    };
                }
                "tool" => {
                    first(&mut fields.seen, 1)?;
                    fields.tool = Some(scanner.required_string()?);
                }
                "method" => {
                    first(&mut fields.seen, 2)?;
                    fields.method = Some(scanner.required_string()?);
                }
                "value" => {
                    first(&mut fields.seen, 3)?;
                    fields.value = Some(scanner.summary(depth)?);
                }
                "error_type" => {
                    first(&mut fields.seen, 4)?;
                    fields.error_type = Some(scanner.required_string()?);
                }
                "error_message" => {
                    first(&mut fields.seen, 5)?;
                    scanner.required_string()?;
                    fields.error_message = true;
                }
                "retriable" => {
                    first(&mut fields.seen, 6)?;
                    match scanner.token()? {
                        b't' => scanner.literal("rue")?,
                        b'f' => scanner.literal("alse")?,
                        _ => return None,
                    }
                    fields.retriable = true;
                }
                "metadata" => {
                    first(&mut fields.seen, 7)?;
                    (scanner.token()? == b'{').then_some(())?;
                    let mut metadata = MetadataSummary::default();
                    scanner.metadata(&mut metadata, depth + 1)?;
                    fields.metadata = Some(metadata);
                }
                _ => return None,
            }
            Some(())
        })
    }

    /// The summary of an ok value (see [`ValueSummary`]).
    fn summary(&mut self, depth: usize) -> Option<ValueSummary<'a>> {
        Some(match self.token()? {
            b'n' => self.literal("ull").map(|()| ValueSummary::Null)?,
            b't' => self.literal("rue").map(|()| ValueSummary::Scalar)?,
            b'f' => self.literal("alse").map(|()| ValueSummary::Scalar)?,
            first @ (b'-' | b'0'..=b'9') => self.number(first).map(|_| ValueSummary::Scalar)?,
            b'"' => ValueSummary::Text { blank: self.string()?.trim().is_empty() },
            b'[' => ValueSummary::Array { empty: self.array(|scanner| scanner.skip_value(depth + 1))? == 0 },
            b'{' => {
                let mut keys: [Option<Cow<'a, str>>; SUMMARY_MEMBER_LIMIT] = Default::default();
                let mut count = 0;
                let mut status = None;
                let mut empty_arrays = Vec::new();
                let mut prose_only = true;
                self.object(|scanner, key| {
                    if keys.iter().take(count).flatten().any(|earlier| *earlier == key) {
                        return None;
                    }
                    match scanner.upcoming()? {
                        b'"' if key == "status" => {
                            scanner.pos += 1;
                            status = Some(scanner.string()?);
                        }
                        b'[' => {
                            scanner.pos += 1;
                            if scanner.array(|scanner| scanner.skip_value(depth + 2))? == 0 {
                                empty_arrays.push(key.clone());
                            }
                        }
                        _ => scanner.skip_value(depth + 1)?,
                    }
                    prose_only &= PROSE_KEYS.contains(&key.as_ref());
                    *keys.get_mut(count)? = Some(key);
                    count += 1;
                    Some(())
                })?;
                ValueSummary::Object { status, empty_arrays, prose_only }
            }
            _ => return None,
        })
    }

    /// The members of a metadata object whose `{` was consumed (the last of a repeated member
    /// counts, as in a parsed object).
    fn metadata(&mut self, metadata: &mut MetadataSummary<'a>, depth: usize) -> Option<()> {
        self.object(|scanner, key| {
            match key.as_ref() {
                "boundary_axes" => metadata.boundary_axes = scanner.strings(depth)?.array(),
                "suggested_split" => metadata.suggested_splits = scanner.strings(depth)?.list(),
                "mismatch" => metadata.mismatch = scanner.strings(depth)?.string(),
                "path" => metadata.path = scanner.strings(depth)?.string(),
                _ => scanner.skip_value(depth)?,
            }
            Some(())
        })
    }

    /// A metadata member as [`Strings`].
    fn strings(&mut self, depth: usize) -> Option<Strings<'a>> {
        match self.upcoming()? {
            b'"' => {
                self.pos += 1;
                self.string().map(Strings::One)
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                self.array(|scanner| {
                    if scanner.upcoming()? == b'"' {
                        scanner.pos += 1;
                        items.push(scanner.string()?);
                        Some(())
                    } else {
                        scanner.skip_value(depth + 1)
                    }
                })?;
                Some(Strings::Many(items))
            }
            _ => self.skip_value(depth).map(|()| Strings::Other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::careful_for_tests as careful;
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn same_event(fast: &Event<'_>, careful: &Event<'_>) -> bool {
        let results = match (&fast.result, &careful.result) {
            (EventResult::Ok(a), EventResult::Ok(b)) => a == b,
            (EventResult::Error { error_type: a, metadata: m }, EventResult::Error { error_type: b, metadata: n }) => {
                a == b && m == n
            }
            _ => false,
        };
        results
            && (&fast.tool, &fast.method, &fast.trace_id, &fast.call_id)
                == (&careful.tool, &careful.method, &careful.trace_id, &careful.call_id)
            && (fast.at_ms, fast.depth, fast.contract, fast.weak_success)
                == (careful.at_ms, careful.depth, careful.contract, careful.weak_success)
    }

    /// Whatever the fast reader accepts, `serde_json` accepts too, and the careful reader makes
    /// the same of it.
    fn check(text: &str) -> Result<(), String> {
        let Some(fast) = read(text) else { return Ok(()) };
        let value: Value = serde_json::from_str(text)
            .map_err(|error| format!("accepted what serde_json refuses ({error}): {text}"))?;
        match (fast, careful(&value)) {
            (Line::Event(a), Ok(Some(b))) if same_event(&a, &b) => Ok(()),
            (Line::Other, Ok(None)) => Ok(()),
            _ => Err(format!("the readers disagree on {text}")),
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
            json!({"kind": "event", "e": null}),
            json!({"type": "tool:outcome", "tool": "t", "method": "m", "weak_success": ["weak_status", "weak_status"],
                "outcome": {"status": "ok", "value": {"status": "empty_result"}}}),
            json!({"tool": "t", "method": "m", "at": 5, "depth": 0, "contract": "violated", "outcome": {"status": "error",
                "error_type": "contract_violation", "error_message": "m", "retriable": false,
                "metadata": {"mismatch": "min_items_violation", "path": "/a", "boundary_axes": ["x", 1, "y"],
                "suggested_split": "a + b", "deep": [[{"x": [1.5, -0, 1e3]}]]}}}),
        ] {
            let text = line.to_string();
            assert!(read(&text).is_some(), "{text}");
            check(&text).unwrap();
        }
    }

    #[test]
    fn strings_are_borrowed_unless_escaped_and_escapes_are_decoded() {
        let text =
            r#"{"tool":"t\u00e9\n\"x\"\/","method":"m","outcome":{"status":"ok","value":{"st\u0061tus":"\u2003"}}}"#;
        let Some(Line::Event(event)) = read(text) else { panic!("event") };
        assert_eq!(event.tool, "té\n\"x\"/");
        assert!(matches!(event.method, Cow::Borrowed("m")));
        let EventResult::Ok(ValueSummary::Object { status, .. }) = &event.result else { panic!("object") };
        assert_eq!(status.as_deref(), Some("\u{2003}"));
        check(text).unwrap();
    }

    #[test]
    fn the_fast_reader_gives_way_on_anything_unusual() {
        for text in [
            // Repeated members of objects it reads.
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":{"a":[],"a":[1]}}}"#,
            r#"{"tool":"t","tool":"u","method":"m","outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":1,"value":2}}"#,
            // Types it does not expect, unknown outcome members, invalid outcomes.
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","tool":null,"value":1}}"#,
            r#"{"tool":5,"method":"m","outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","at":1.5,"outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","at":-1,"outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":1,"extra":1}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":1,"error_type":"x"}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"error","error_type":""}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"Ok","value":1}}"#,
            r#"{"tool":"t","method":"m","contract":"maybe","outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","weak_success":["loud"],"outcome":{"status":"ok","value":1}}"#,
            // Text serde_json refuses, or might: surrogates, exponents, control characters,
            // leading zeros, trailing commas and characters, deep nesting.
            r#"{"tool":"\ud83d\ude00","method":"m","outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","x":1e400,"outcome":{"status":"ok","value":1}}"#,
            "{\"tool\":\"t\u{1}\",\"method\":\"m\",\"outcome\":{\"status\":\"ok\",\"value\":1}}",
            r#"{"tool":"t","method":"m","x":01,"outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","x":[1,],"outcome":{"status":"ok","value":1}}"#,
            r#"{"tool":"t","method":"m","outcome":{"status":"ok","value":1}} x"#,
            r#"{"tool":"t","method":"m","x":"\q","outcome":{"status":"ok","value":1}}"#,
            r#"[{"tool":"t","method":"m","outcome":{"status":"ok","value":1}}]"#,
        ] {
            assert!(read(text).is_none(), "{text}");
        }
        let deep = format!("{{\"x\":{}{},\"tool\":\"t\"}}", "[".repeat(DEPTH_LIMIT), "]".repeat(DEPTH_LIMIT));
        assert!(read(&deep).is_none());
        let shallow = format!("{{\"x\":{}{},\"tool\":\"t\"}}", "[".repeat(8), "]".repeat(8));
        assert!(matches!(read(&shallow), Some(Line::Other)));
    }

    #[test]
    fn the_word_test_finds_the_first_special_byte() {
        let word = |bytes: &[u8; 8]| u64::from_le_bytes(*bytes);
        assert_eq!(first_special(word(b"abcdefgh")), None);
        assert_eq!(first_special(word("é€a~\x7f".as_bytes().try_into().unwrap())), None);
        assert_eq!(first_special(word(b"ab\"cd\\ef")), Some(2));
        assert_eq!(first_special(word(b"abcde\\\"f")), Some(5));
        assert_eq!(first_special(word(b"\x1fbcdefgh")), Some(0));
        assert_eq!(first_special(word(b"abcdefg\x00")), Some(7));
        // A match below another: the lower one is found (the borrow only flags upwards).
        assert_eq!(first_special(word(b"a\x00\x01\"\"\\\x1f ")), Some(1));
        for position in 0..8 {
            for special in [b'"', b'\\', 0x00, 0x1f] {
                let mut bytes = [0xffu8; 8];
                bytes[position] = special;
                assert_eq!(first_special(word(&bytes)), Some(position));
            }
        }
    }

    #[test]
    fn numbers_are_checked_while_skipped() {
        for (number, fast) in [
            ("0", true),
            ("-0", true),
            ("12.50", true),
            ("-3.25", true),
            ("18446744073709551616", true),
            ("1e3", false),
            ("1.", false),
            ("-", false),
            ("--1", false),
            ("00", false),
            ("1.2.3", false),
            ("+1", false),
            (".5", false),
        ] {
            let text = format!(r#"{{"x":{number},"tool":"t","method":"m","outcome":{{"status":"ok","value":1}}}}"#);
            assert_eq!(read(&text).is_some(), fast, "{text}");
            check(&text).unwrap();
        }
    }

    /// JSON values of every type, with objects whose members are drawn from `keys`.
    fn json_with(keys: Vec<&'static str>) -> impl Strategy<Value = Value> {
        let text = prop_oneof![
            Just(json!("tool:outcome")),
            Just(json!("event")),
            Just(json!("held")),
            Just(json!("ok")),
            Just(json!("error")),
            Just(json!("weak_status")),
            Just(json!("empty_array_success")),
            Just(json!("success")),
            Just(json!("success_no_parse")),
            Just(json!("/a~1b")),
            "[a-c ~/é\"\\\\\n]{0,4}".prop_map(Value::from),
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0u64..3).prop_map(Value::from),
            Just(json!(1.5)),
            Just(json!(-2)),
            text,
        ];
        let keys = prop::sample::select(keys);
        leaf.prop_recursive(4, 32, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|members| {
                    Value::Object(members.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
                }),
            ]
        })
    }

    /// Members the readers look at, with values of every type.
    fn relevant_json() -> impl Strategy<Value = Value> {
        json_with(vec![
            "kind",
            "type",
            "e",
            "at",
            "tool",
            "method",
            "trace_id",
            "call_id",
            "depth",
            "outcome",
            "contract",
            "weak_success",
            "status",
            "value",
            "error_type",
            "error_message",
            "retriable",
            "metadata",
            "boundary_axes",
            "suggested_split",
            "mismatch",
            "path",
        ])
    }

    /// Members no reader looks at (except inside a value or metadata), with values of every type.
    fn benign_json() -> impl Strategy<Value = Value> {
        json_with(vec!["message", "items", "status", "run", "x", "path", "boundary_axes"])
    }

    /// A plausible log line: mostly outcome events with a few odd members, some other events,
    /// some nonsense.
    fn line_json() -> impl Strategy<Value = Value> {
        let outcome = prop_oneof![
            4 => benign_json().prop_map(|value| json!({"status": "ok", "value": value})),
            2 => benign_json().prop_map(|metadata| json!({"status": "error", "error_type": "wrong_tool_boundary",
                "error_message": "m", "metadata": metadata})),
            1 => relevant_json(),
        ];
        let event_type =
            prop_oneof![6 => Just(json!("tool:outcome")), 1 => Just(json!("other")), 1 => Just(Value::Null)];
        let extra = prop_oneof![3 => benign_json(), 1 => relevant_json()];
        (outcome, event_type, extra, any::<bool>()).prop_map(|(outcome, event_type, extra, envelope)| {
            let mut event = json!({"type": event_type, "tool": "t", "method": "m", "trace_id": "x", "at": 1});
            if let (Some(event), Value::Object(extra)) = (event.as_object_mut(), extra) {
                event.extend(extra);
                event.insert("outcome".into(), outcome);
            }
            if envelope { json!({"kind": "event", "at": 2, "e": event}) } else { event }
        })
    }

    /// The properties below would hold vacuously if the fast reader gave up on everything.
    #[test]
    fn the_generated_lines_exercise_both_readers() {
        use proptest::strategy::ValueTree;
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut events, mut others, mut given_up) = (0, 0, 0);
        for _ in 0..1000 {
            let text = line_json().new_tree(&mut runner).unwrap().current().to_string();
            match read(&text) {
                Some(Line::Event(_)) => events += 1,
                Some(_) => others += 1,
                None => given_up += 1,
            }
        }
        assert!(
            events >= 100 && others >= 20 && given_up >= 100,
            "{events} events, {others} others, {given_up} given up"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn whatever_the_fast_reader_accepts_the_careful_reader_reads_the_same(line in line_json()) {
            let text = line.to_string();
            prop_assert!(check(&text).is_ok(), "{}", check(&text).unwrap_err());
        }

        #[test]
        fn damaged_lines_are_never_misread(
            line in line_json(),
            cut in any::<prop::sample::Index>(),
            insert in prop::sample::select(vec!["", "\"", "\\", "{", "}", "[", "]", ",", ":", "0", "-", "e", ".", " ",
                "\u{1}", "\\u", "null", "\"tool\":\"u\",", "é"]),
            remove in 0usize..3,
        ) {
            let text = line.to_string();
            let at = cut.index(text.len() + 1);
            let mut damaged = String::new();
            let (head, tail) = text.split_at(text.floor_char_boundary(at));
            damaged.push_str(head);
            damaged.push_str(insert);
            damaged.push_str(tail.get(tail.ceil_char_boundary(remove.min(tail.len()))..).unwrap_or(""));
            prop_assert!(check(&damaged).is_ok(), "{}", check(&damaged).unwrap_err());
        }
    }
}
