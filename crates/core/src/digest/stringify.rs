//! A byte-exact reproduction of JavaScript's `JSON.stringify` for values that have been
//! through `JSON.parse` (no `undefined`, no functions): V8's property order, ECMAScript
//! number formatting and V8's string escapes.

use serde_json::{Map, Number, Value};

/// The largest integer-like property key: array indices run from 0 to 2³² − 2.
const MAX_INTEGER_KEY: u64 = 4_294_967_294;

/// `JSON.stringify(value)`.
pub fn stringify(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(value, &mut out);
    out
}

/// Appends `JSON.stringify(value)` to `out`.
pub fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(map, out),
    }
}

/// Writes an object's members in JavaScript property order: integer-like keys first in
/// ascending numeric order, then every other key in insertion order.
fn write_object(map: &Map<String, Value>, out: &mut String) {
    out.push('{');
    let mut first = true;
    let mut member = |key: &str, value: &Value, out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
        write_string(key, out);
        out.push(':');
        write_value(value, out);
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
    out.push('}');
}

/// The array index a property key denotes, if it is integer-like: the canonical decimal
/// form of an integer in 0 ..= 2³² − 2 (so `"01"` and `"-1"` are not).
pub fn integer_key(key: &str) -> Option<u32> {
    integer_key_bytes(key.as_bytes())
}

/// [`integer_key`] over the raw bytes of a key.
pub fn integer_key_bytes(key: &[u8]) -> Option<u32> {
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
    if let Some(i) = n.as_i64() {
        // Exact below 2^53; beyond that JavaScript sees the nearest double.
        if i.unsigned_abs() < (1 << 53) {
            push_display(i, out);
            return;
        }
    } else if let Some(u) = n.as_u64()
        && u < (1 << 53)
    {
        push_display(u, out);
        return;
    }
    write_f64(n.as_f64().unwrap_or(f64::NAN), out);
}

fn push_display(n: impl std::fmt::Display, out: &mut String) {
    use std::fmt::Write;
    // Writing into a String cannot fail.
    let _ = write!(out, "{n}");
}

/// ECMAScript `Number::toString` for `JSON.stringify`: `NaN` and the infinities become
/// `null`, `-0` becomes `0`, integers print without a fraction, other values use the
/// shortest round-trip digits with JavaScript's exponent style (`1e+21`, `1e-7`).
pub fn write_f64(f: f64, out: &mut String) {
    if !f.is_finite() {
        out.push_str("null");
    } else if f == 0.0 {
        out.push('0');
    } else if f.fract() == 0.0 && f.abs() < 1e15 {
        // Exactly representable as i64; the common case of counts and steps.
        #[allow(clippy::cast_possible_truncation)]
        push_display(f as i64, out);
    } else {
        let mut buffer = ryu_js::Buffer::new();
        out.push_str(buffer.format_finite(f));
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
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let letter = escape_of(byte);
        if letter == 0 {
            continue;
        }
        out.push_str(s.get(start..index).unwrap_or(""));
        let mut escaped = Vec::with_capacity(6);
        push_escape(byte, letter, &mut escaped);
        // Escapes are ASCII.
        out.push_str(std::str::from_utf8(&escaped).unwrap_or(""));
        start = index + 1;
    }
    out.push_str(s.get(start..).unwrap_or(""));
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
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
