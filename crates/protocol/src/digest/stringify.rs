//! A byte-exact reproduction of JavaScript's `JSON.stringify` for values that have been
//! through `JSON.parse` (no `undefined`, no functions): V8's property order, ECMAScript
//! number formatting and V8's string escapes.

use serde_json::{Map, Number, Value};
use wide::u8x16;

/// The largest integer-like property key: array indices run from 0 to 2³² − 2.
const MAX_INTEGER_KEY: u64 = 4_294_967_294;

/// Where serialised JSON text goes: a `String`, or straight into a hash
/// ([`super::HashOut`]), so that a digest needs no intermediate string.
pub(crate) trait JsonOut {
    /// Appends `text`, which is already serialised JSON (or a piece of it).
    fn put(&mut self, text: &str);
}

impl JsonOut for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// `JSON.stringify(value)`.
pub fn stringify(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(value, &mut out);
    out
}

/// Appends `JSON.stringify(value)` to `out`.
pub fn write_value(value: &Value, out: &mut String) {
    write_value_to(value, out);
}

/// Writes `JSON.stringify(value)` to any [`JsonOut`].
pub(crate) fn write_value_to<O: JsonOut + ?Sized>(value: &Value, out: &mut O) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(true) => out.put("true"),
        Value::Bool(false) => out.put("false"),
        Value::Number(n) => write_number_to(n, out),
        Value::String(s) => write_string_to(s, out),
        Value::Array(items) => {
            out.put("[");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.put(",");
                }
                write_value_to(item, out);
            }
            out.put("]");
        }
        Value::Object(map) => write_object(map, out),
    }
}

/// Writes an object's members in JavaScript property order: integer-like keys first in
/// ascending numeric order, then every other key in insertion order.
fn write_object<O: JsonOut + ?Sized>(map: &Map<String, Value>, out: &mut O) {
    out.put("{");
    let mut first = true;
    let mut member = |key: &str, value: &Value, out: &mut O| {
        if !first {
            out.put(",");
        }
        first = false;
        write_string_to(key, out);
        out.put(":");
        write_value_to(value, out);
    };
    // Most objects have no integer-like key; only those pay for sorting.
    if map.keys().any(|k| integer_key(k).is_some()) {
        let mut integers: Vec<(u32, &str, &Value)> =
            map.iter().filter_map(|(k, v)| integer_key(k).map(|n| (n, k.as_str(), v))).collect();
        integers.sort_unstable_by_key(|(n, _, _)| *n);
        for (_, key, value) in integers {
            member(key, value, out);
        }
        for (key, value) in map.iter().filter(|(k, _)| integer_key(k).is_none()) {
            member(key, value, out);
        }
    } else {
        for (key, value) in map {
            member(key, value, out);
        }
    }
    out.put("}");
}

/// The array index a property key denotes, if it is integer-like: the canonical decimal
/// form of an integer in 0 ..= 2³² − 2 (so `"01"` and `"-1"` are not). JavaScript lists
/// such keys first, in ascending order, whatever order they were inserted in; the
/// runtime's log writer uses this to know when an object must be reordered.
pub fn integer_key(key: &str) -> Option<u32> {
    integer_key_bytes(key.as_bytes())
}

/// [`integer_key`] over the raw bytes of a key.
pub(crate) fn integer_key_bytes(key: &[u8]) -> Option<u32> {
    match key {
        [] => None,
        [b'0'] => Some(0),
        [b'0', ..] => None,
        _ if key.len() > 10 => None,
        _ => {
            let mut n: u64 = 0;
            for &b in key {
                if !b.is_ascii_digit() {
                    return None;
                }
                n = n * 10 + u64::from(b - b'0');
            }
            if n <= MAX_INTEGER_KEY { u32::try_from(n).ok() } else { None }
        }
    }
}

/// A `serde_json` number as JavaScript prints it after `JSON.parse` turned it into a double.
pub fn write_number(n: &Number, out: &mut String) {
    write_number_to(n, out);
}

fn write_number_to<O: JsonOut + ?Sized>(n: &Number, out: &mut O) {
    if let Some(i) = n.as_i64() {
        // Exact below 2^53; beyond that JavaScript sees the nearest double.
        if i.unsigned_abs() < (1 << 53) {
            put_integer(i.is_negative(), i.unsigned_abs(), out);
            return;
        }
    } else if let Some(u) = n.as_u64()
        && u < (1 << 53)
    {
        put_integer(false, u, out);
        return;
    }
    write_f64_to(n.as_f64().unwrap_or(f64::NAN), out);
}

/// Writes an integer's decimal digits without going through `fmt`.
fn put_integer<O: JsonOut + ?Sized>(negative: bool, mut magnitude: u64, out: &mut O) {
    let mut digits = [0u8; 21];
    let mut start = digits.len();
    loop {
        start -= 1;
        if let Some(slot) = digits.get_mut(start) {
            // A remainder below 10 always fits a digit.
            *slot = b'0' + u8::try_from(magnitude % 10).unwrap_or(0);
        }
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if negative {
        start -= 1;
        if let Some(slot) = digits.get_mut(start) {
            *slot = b'-';
        }
    }
    // Digits and `-` are ASCII.
    out.put(std::str::from_utf8(digits.get(start..).unwrap_or(&[])).unwrap_or(""));
}

/// ECMAScript `Number::toString` for `JSON.stringify`: `NaN` and the infinities become
/// `null`, `-0` becomes `0`, integers print without a fraction, other values use the
/// shortest round-trip digits with JavaScript's exponent style (`1e+21`, `1e-7`).
pub fn write_f64(f: f64, out: &mut String) {
    write_f64_to(f, out);
}

fn write_f64_to<O: JsonOut + ?Sized>(f: f64, out: &mut O) {
    if !f.is_finite() {
        out.put("null");
    } else if f == 0.0 {
        out.put("0");
    } else if f.fract() == 0.0 && f.abs() < 1e15 {
        // Exactly representable as an integer; the common case of counts and steps.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        put_integer(f < 0.0, f.abs() as u64, out);
    } else {
        let mut buffer = ryu_js::Buffer::new();
        out.put(buffer.format_finite(f));
    }
}

/// How each ASCII byte is written inside a JSON string: 0 = as is, otherwise the letter of
/// the short escape, or `u` for `\u00XX`.
// Indexing here runs at compile time, where an out-of-range index is a build error.
#[allow(clippy::indexing_slicing)]
const ESCAPE: [u8; 128] = {
    let mut table = [0u8; 128];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// The escape letter for an ASCII byte, or 0 when the byte is written as is.
pub(crate) fn escape_of(byte: u8) -> u8 {
    ESCAPE.get(usize::from(byte)).copied().unwrap_or(0)
}

/// Appends the JSON form of one byte that [`escape_of`] says needs escaping.
pub(crate) fn push_escape(byte: u8, letter: u8, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if letter == b'u' {
        out.extend_from_slice(b"\\u00");
        out.push(HEX.get(usize::from(byte >> 4)).copied().unwrap_or(b'0'));
        out.push(HEX.get(usize::from(byte & 0xF)).copied().unwrap_or(b'0'));
    } else {
        out.push(b'\\');
        out.push(letter);
    }
}

/// Appends `JSON.stringify(s)`: only `"`, `\` and control characters are escaped; `/`,
/// U+007F, U+2028/2029 and all non-ASCII text are written raw.
pub fn write_string(s: &str, out: &mut String) {
    write_string_to(s, out);
}

/// [`write_string`] to any [`JsonOut`]: runs that need no escape are written whole.
pub(crate) fn write_string_to<O: JsonOut + ?Sized>(s: &str, out: &mut O) {
    out.put("\"");
    let mut rest = s;
    loop {
        let at = next_to_escape(rest.as_bytes());
        let (run, tail) = rest.split_at_checked(at).unwrap_or((rest, ""));
        out.put(run);
        let Some(&byte) = tail.as_bytes().first() else { break };
        match short_escape(escape_of(byte)) {
            Some(escape) => out.put(escape),
            None => {
                let mut buffer = [0u8; 6];
                let written = escape_into(byte, escape_of(byte), &mut buffer);
                out.put(std::str::from_utf8(buffer.get(..written).unwrap_or(&[])).unwrap_or(""));
            }
        }
        rest = tail.get(1..).unwrap_or("");
    }
    out.put("\"");
}

/// The text of a two-character escape (`\\n`, `\\"`, …), or `None` for `\\u00XX`.
fn short_escape(letter: u8) -> Option<&'static str> {
    Some(match letter {
        b'n' => "\\n",
        b'"' => "\\\"",
        b'\\' => "\\\\",
        b't' => "\\t",
        b'r' => "\\r",
        b'b' => "\\b",
        b'f' => "\\f",
        _ => return None,
    })
}

/// The index of the first byte of `bytes` that a JSON string must escape (`"`, `\\`, or
/// below U+0020), or its length: sixteen bytes per vector compare (SSE2 on x86-64). The
/// last few bytes are compared as one more vector, padded with spaces (never escaped).
fn next_to_escape(bytes: &[u8]) -> usize {
    let mut offset = 0;
    while let Some(chunk) = bytes.get(offset..offset + 16).and_then(|c| <[u8; 16]>::try_from(c).ok()) {
        if let Some(at) = first_to_escape(chunk) {
            return offset + at;
        }
        offset += 16;
    }
    let tail = bytes.get(offset..).unwrap_or(&[]);
    if tail.is_empty() {
        return offset;
    }
    let mut padded = [b' '; 16];
    if let Some(head) = padded.get_mut(..tail.len()) {
        head.copy_from_slice(tail);
    }
    first_to_escape(padded).map_or(bytes.len(), |at| offset + at)
}

/// The first of sixteen bytes that a JSON string must escape.
fn first_to_escape(chunk: [u8; 16]) -> Option<usize> {
    let (quote, backslash, last_control) = (u8x16::splat(b'"'), u8x16::splat(b'\\'), u8x16::splat(0x1f));
    let v = u8x16::new(chunk);
    let control = v.min(last_control).simd_eq(v);
    let found = (v.simd_eq(quote) | v.simd_eq(backslash) | control).to_bitmask();
    (found != 0).then(|| found.trailing_zeros() as usize)
}

/// Writes the escape of `byte` (whose letter [`escape_of`] gave) into `buffer`; returns its length.
fn escape_into(byte: u8, letter: u8, buffer: &mut [u8; 6]) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if letter == b'u' {
        *buffer = [
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX.get(usize::from(byte >> 4)).copied().unwrap_or(b'0'),
            HEX.get(usize::from(byte & 0xF)).copied().unwrap_or(b'0'),
        ];
        6
    } else {
        *buffer = [b'\\', letter, 0, 0, 0, 0];
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ascii_character_is_written_as_json_stringify_writes_it() {
        for byte in 0u8..128 {
            let text = format!("a{}b", char::from(byte));
            let mut out = String::new();
            write_string(&text, &mut out);
            let expected = match byte {
                b'"' => "\\\"".to_owned(),
                b'\\' => "\\\\".to_owned(),
                0x08 => "\\b".to_owned(),
                0x09 => "\\t".to_owned(),
                0x0A => "\\n".to_owned(),
                0x0C => "\\f".to_owned(),
                0x0D => "\\r".to_owned(),
                0x00..=0x1f => format!("\\u{byte:04x}"),
                _ => char::from(byte).to_string(),
            };
            assert_eq!(out, format!("\"a{expected}b\""), "byte {byte:#x}");
        }
    }

    #[test]
    fn finds_the_first_byte_to_escape_at_every_offset() {
        for len in 0..80 {
            for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for at in 0..=len {
                    let mut bytes = vec![b'a'; len];
                    // Bytes just outside the escaped set never match.
                    if len > 0 {
                        bytes[len / 2] = if len % 2 == 0 { 0x20 } else { 0x80 };
                    }
                    if at < len {
                        bytes[at] = special;
                    }
                    let expected = bytes.iter().position(|&b| escape_of(b) != 0).unwrap_or(len);
                    assert_eq!(next_to_escape(&bytes), expected, "len {len}, {special:#x} at {at}");
                }
            }
        }
    }
    use serde_json::json;

    #[test]
    fn integer_like_keys() {
        assert_eq!(integer_key("0"), Some(0));
        assert_eq!(integer_key("10"), Some(10));
        assert_eq!(integer_key("4294967294"), Some(4_294_967_294));
        assert_eq!(integer_key("4294967295"), None);
        assert_eq!(integer_key("01"), None);
        assert_eq!(integer_key("-1"), None);
        assert_eq!(integer_key("1a"), None);
        assert_eq!(integer_key(""), None);
        assert_eq!(integer_key("99999999999"), None);
    }

    #[test]
    fn objects_put_integer_keys_first() {
        let v: Value = serde_json::from_str(r#"{"b":1,"10":2,"2":3,"a":4,"-1":5,"01":6}"#).unwrap();
        assert_eq!(stringify(&v), r#"{"2":3,"10":2,"b":1,"a":4,"-1":5,"01":6}"#);
    }

    #[test]
    fn numbers_follow_ecmascript() {
        let cases = [
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (2.5, "2.5"),
            (-0.0, "0"),
            (100.0, "100"),
            (1e20, "100000000000000000000"),
            (-1.5e-9, "-1.5e-9"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
            (5e-324, "5e-324"),
        ];
        for (f, expected) in cases {
            let mut s = String::new();
            write_f64(f, &mut s);
            assert_eq!(s, expected, "{f}");
        }
        assert_eq!(stringify(&json!(9007199254740993u64)), "9007199254740992");
        assert_eq!(stringify(&json!(-7)), "-7");
    }

    #[test]
    fn strings_escape_like_v8() {
        assert_eq!(
            stringify(&json!("a\"b\\c\n\t\u{1}\u{7f}/\u{2028}é")),
            "\"a\\\"b\\\\c\\n\\t\\u0001\u{7f}/\u{2028}é\""
        );
        assert_eq!(stringify(&json!("\u{8}\u{c}\r\u{1f}")), "\"\\b\\f\\r\\u001f\"");
    }
}
