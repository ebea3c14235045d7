//! JavaScript-compatible text classes: `String.prototype.trim` and the `\s` class, which
//! differ from Rust's (`\u{FEFF}` is JS whitespace; `\u{0085}` is not).

/// JavaScript `\s`: ASCII whitespace, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
/// U+202F, U+205F, U+3000 and U+FEFF.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// JavaScript `String.prototype.trim`.
pub fn js_trim(s: &str) -> &str {
    js_trim_end(js_trim_start(s))
}

/// ASCII bytes of JavaScript `\s`.
fn is_ascii_js_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// The length in bytes of the JavaScript whitespace at the start of `s`. ASCII bytes are
/// decided without decoding; only non-ASCII characters are decoded.
fn leading_whitespace(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        if b.is_ascii() {
            if !is_ascii_js_whitespace(b) {
                break;
            }
            at += 1;
        } else {
            match s.get(at..).and_then(|rest| rest.chars().next()) {
                Some(c) if is_js_whitespace(c) => at += c.len_utf8(),
                _ => break,
            }
        }
    }
    at
}

/// JavaScript `trimStart`.
pub fn js_trim_start(s: &str) -> &str {
    s.get(leading_whitespace(s)..).unwrap_or_default()
}

/// JavaScript `trimEnd`.
pub fn js_trim_end(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    while let Some(&b) = end.checked_sub(1).and_then(|i| bytes.get(i)) {
        if b.is_ascii() {
            if !is_ascii_js_whitespace(b) {
                break;
            }
            end -= 1;
        } else {
            match s.get(..end).and_then(|head| head.chars().next_back()) {
                Some(c) if is_js_whitespace(c) => end -= c.len_utf8(),
                _ => break,
            }
        }
    }
    s.get(..end).unwrap_or_default()
}

/// The words of `s` separated by runs of JavaScript whitespace (like
/// `s.split(/\s+/).filter(Boolean)`).
pub fn js_words(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        rest = js_trim_start(rest);
        if rest.is_empty() {
            return None;
        }
        let bytes = rest.as_bytes();
        let mut end = 0;
        while let Some(&b) = bytes.get(end) {
            if b.is_ascii() {
                if is_ascii_js_whitespace(b) {
                    break;
                }
                end += 1;
            } else {
                match rest.get(end..).and_then(|tail| tail.chars().next()) {
                    Some(c) if !is_js_whitespace(c) => end += c.len_utf8(),
                    _ => break,
                }
            }
        }
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
}

/// The byte offset of the first `needle` in `haystack`. Searches for the needle's first byte
/// (for `—` and `→`, 0xE2, which CJK text rarely contains) and checks the rest there.
pub fn find_str(haystack: &str, needle: &str) -> Option<usize> {
    let bytes = haystack.as_bytes();
    let first = *needle.as_bytes().first()?;
    let mut from = 0;
    while let Some(found) = memchr::memchr(first, bytes.get(from..)?) {
        let at = from + found;
        if bytes.get(at..)?.starts_with(needle.as_bytes()) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Split at the first `needle`: the text before and after it.
pub fn split_once_str<'a>(haystack: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    let at = find_str(haystack, needle)?;
    Some((haystack.get(..at)?, haystack.get(at + needle.len()..)?))
}

/// An ASCII identifier: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The first `n` UTF-16 code units of `s` (JavaScript `slice(0, n)`), never splitting a
/// character: a surrogate pair that would be cut is left out whole.
pub fn utf16_prefix(s: &str, n: usize) -> &str {
    let mut units = 0;
    for (index, c) in s.char_indices() {
        units += c.len_utf16();
        if units > n {
            return s.get(..index).unwrap_or(s);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_follows_javascript() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{85}a"), "\u{85}a");
        assert_eq!(js_trim("\r\n a\r"), "a");
    }

    #[test]
    fn fast_paths_agree_with_the_full_class() {
        for s in ["", " ", "a", " a ", "\u{0B}a\u{0B}", "\u{A0}x\u{3000}", "x\t", "\u{85}", "é ", " é"] {
            assert_eq!(js_trim(s), s.trim_matches(is_js_whitespace), "{s:?}");
        }
        assert_eq!(js_words(" a\u{3000}b  c\u{A0}").collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(js_words("é x").collect::<Vec<_>>(), ["é", "x"]);
        assert_eq!(js_words(" \t ").count(), 0);
        assert_eq!(find_str("a — b —— c", "——"), Some(8));
        assert_eq!(find_str("a — b", "——"), None);
        assert_eq!(find_str("", "x"), None);
    }

    proptest::proptest! {
        #[test]
        fn byte_level_helpers_match_the_char_class(s in "[ a\\t\\u{0B}\\u{A0}\\u{3000}\\u{85}é—\\u{FEFF}\\u{2028}]{0,12}") {
            proptest::prop_assert_eq!(js_trim(&s), s.trim_matches(is_js_whitespace));
            proptest::prop_assert_eq!(js_trim_start(&s), s.trim_start_matches(is_js_whitespace));
            proptest::prop_assert_eq!(js_trim_end(&s), s.trim_end_matches(is_js_whitespace));
            let expected: Vec<&str> = s.split(is_js_whitespace).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(js_words(&s).collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn identifiers_are_ascii() {
        assert!(is_identifier("readFiles"));
        assert!(is_identifier("_x1"));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier("é"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("a-b"));
    }

    #[test]
    fn utf16_prefix_counts_code_units() {
        assert_eq!(utf16_prefix("abc", 2), "ab");
        assert_eq!(utf16_prefix("a😀b", 2), "a");
        assert_eq!(utf16_prefix("a😀b", 3), "a😀");
        assert_eq!(utf16_prefix("ab", 9), "ab");
    }
}
