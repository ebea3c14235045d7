//! JavaScript-compatible text classes: `String.prototype.trim` and the `\s` class, which
//! differ from Rust's (`\u{FEFF}` is JS whitespace; `\u{0085}` is not).
//!
//! Public only for [`utf16_prefix`], which `decision-protocol` uses to clip frame values as
//! the reference does; not a stable interface and not for host authors.

/// JavaScript `\s`: ASCII whitespace, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
/// U+202F, U+205F, U+3000 and U+FEFF.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// JavaScript `String.prototype.trim`.
#[inline]
pub(crate) fn js_trim(s: &str) -> &str {
    js_trim_end(js_trim_start(s))
}

/// ASCII bytes of JavaScript `\s`.
#[inline]
fn is_ascii_js_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

// The trims below run several times on every line of a contract, so they classify bytes
// instead of decoding characters. In valid UTF-8 a character's encoding is found by its bytes
// alone, so comparing against the UTF-8 encodings of the non-ASCII JavaScript whitespace
// characters is exact: U+00A0 = C2 A0, U+1680 = E1 9A 80, U+2000–U+200A = E2 80 80–8A,
// U+2028 = E2 80 A8, U+2029 = E2 80 A9, U+202F = E2 80 AF, U+205F = E2 81 9F,
// U+3000 = E3 80 80, U+FEFF = EF BB BF.

/// The length in bytes of the JavaScript whitespace character that `bytes` starts with (0 when
/// it starts with something else).
#[inline]
fn whitespace_len_at_start(bytes: &[u8]) -> usize {
    match bytes {
        [b, ..] if b.is_ascii() => usize::from(is_ascii_js_whitespace(*b)),
        [0xC2, 0xA0, ..]
        | [0xE1, 0x9A, 0x80, ..]
        | [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..]
        | [0xE2, 0x81, 0x9F, ..]
        | [0xE3, 0x80, 0x80, ..]
        | [0xEF, 0xBB, 0xBF, ..] => non_ascii_whitespace_len(bytes),
        _ => 0,
    }
}

/// The length of the (already recognised) non-ASCII whitespace character starting `bytes`.
#[inline]
fn non_ascii_whitespace_len(bytes: &[u8]) -> usize {
    if bytes.first() == Some(&0xC2) { 2 } else { 3 }
}

/// The length in bytes of the JavaScript whitespace character that `bytes` ends with (0 when
/// it ends with something else).
#[inline]
fn whitespace_len_at_end(bytes: &[u8]) -> usize {
    match bytes {
        [.., b] if b.is_ascii() => usize::from(is_ascii_js_whitespace(*b)),
        [.., 0xC2, 0xA0] => 2,
        [.., 0xE1, 0x9A, 0x80]
        | [.., 0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF]
        | [.., 0xE2, 0x81, 0x9F]
        | [.., 0xE3, 0x80, 0x80]
        | [.., 0xEF, 0xBB, 0xBF] => 3,
        _ => 0,
    }
}

/// Eight ASCII spaces as one word: long runs of spaces (frame lines align their columns with
/// them) are skipped eight bytes at a time.
const SPACES: [u8; 8] = [b' '; 8];

/// The length in bytes of the JavaScript whitespace at the start of `bytes`.
#[inline(never)]
fn leading_whitespace(bytes: &[u8]) -> usize {
    let mut at = 0;
    loop {
        // Spaces, the usual whitespace: eight at a time, then the few left one at a time.
        while bytes.get(at..).and_then(<[u8]>::first_chunk) == Some(&SPACES) {
            at += SPACES.len();
        }
        while bytes.get(at) == Some(&b' ') {
            at += 1;
        }
        match bytes.get(at) {
            Some(&b) if b.is_ascii() => {
                if !is_ascii_js_whitespace(b) {
                    return at;
                }
                at += 1;
            }
            Some(_) => match whitespace_len_at_start(bytes.get(at..).unwrap_or_default()) {
                0 => return at,
                len => at += len,
            },
            None => return at,
        }
    }
}

/// The length in bytes of the JavaScript whitespace at the end of `bytes`.
#[inline(never)]
fn trailing_whitespace(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    loop {
        while bytes.get(..end).and_then(<[u8]>::last_chunk) == Some(&SPACES) {
            end -= SPACES.len();
        }
        while end.checked_sub(1).and_then(|last| bytes.get(last)) == Some(&b' ') {
            end -= 1;
        }
        match end.checked_sub(1).and_then(|last| bytes.get(last)) {
            Some(&b) if b.is_ascii() => {
                if !is_ascii_js_whitespace(b) {
                    return bytes.len() - end;
                }
                end -= 1;
            }
            Some(_) => match whitespace_len_at_end(bytes.get(..end).unwrap_or_default()) {
                0 => return bytes.len() - end,
                len => end -= len,
            },
            None => return bytes.len() - end,
        }
    }
}

/// Whether a character starting with byte `b` can be JavaScript whitespace (an ASCII space or
/// control, or the lead byte of one of the encodings above).
#[inline(always)]
fn may_start_whitespace(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' | 0xC2 | 0xE1 | 0xE2 | 0xE3 | 0xEF)
}

/// Whether a character ending with byte `b` can be JavaScript whitespace.
#[inline(always)]
fn may_end_whitespace(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' | 0x80..=0x8A | 0x9F | 0xA0 | 0xA8 | 0xA9 | 0xAF | 0xBF)
}

/// JavaScript `trimStart`.
#[inline(always)]
pub(crate) fn js_trim_start(s: &str) -> &str {
    // The trims run several times per line and most text starts and ends with something
    // else than whitespace: a one-byte test inline, the exact loop only when it may be.
    match s.as_bytes().first() {
        Some(&b) if may_start_whitespace(b) => {
            // One space before the text (after `:`, `-`, `——`) is the usual whitespace.
            if b == b' ' && s.as_bytes().get(1).is_some_and(|next| !may_start_whitespace(*next)) {
                return s.get(1..).unwrap_or_default();
            }
            s.get(leading_whitespace(s.as_bytes())..).unwrap_or_default()
        }
        _ => s,
    }
}

/// JavaScript `trimEnd`.
#[inline(always)]
pub(crate) fn js_trim_end(s: &str) -> &str {
    match s.as_bytes().last() {
        // The exact test too: CJK punctuation (`。` is E3 80 82) ends in the same bytes.
        Some(&b) if may_end_whitespace(b) && whitespace_len_at_end(s.as_bytes()) > 0 => {
            let before_last = s.len().wrapping_sub(2);
            if b == b' ' && s.as_bytes().get(before_last).is_some_and(|previous| !may_end_whitespace(*previous)) {
                return s.get(..s.len() - 1).unwrap_or_default();
            }
            s.get(..s.len() - trailing_whitespace(s.as_bytes())).unwrap_or_default()
        }
        _ => s,
    }
}

/// The words of `s` separated by runs of JavaScript whitespace (like
/// `s.split(/\s+/).filter(Boolean)`).
pub(crate) fn js_words(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        rest = js_trim_start(rest);
        if rest.is_empty() {
            return None;
        }
        // A whitespace character starts with an ASCII or a lead byte, never with a
        // continuation byte, so stepping a byte at a time stops only at character boundaries.
        let bytes = rest.as_bytes();
        let mut end = 1;
        while let Some(&b) = bytes.get(end)
            && (!may_start_whitespace(b) || whitespace_len_at_start(bytes.get(end..).unwrap_or_default()) == 0)
        {
            end += 1;
        }
        let (word, tail) = rest.split_at_checked(end).unwrap_or((rest, ""));
        rest = tail;
        Some(word)
    })
}

/// `js_trim(lines.join("\n"))`, copied once into a string of the exact size: the lines are
/// kept as slices of the source until the text is complete.
pub(crate) fn join_lines_trimmed(lines: &[&str]) -> String {
    let Some(first) = lines.iter().position(|line| !js_trim(line).is_empty()) else {
        return String::new();
    };
    let last = lines.iter().rposition(|line| !js_trim(line).is_empty()).unwrap_or(first);
    let kept = lines.get(first..=last).unwrap_or_default();
    // Whitespace-only lines before the first and after the last text go with the `\n`s
    // around them; the first and the last line lose their outer whitespace.
    let piece = |at: usize, line: &'_ str| -> usize {
        let line = if at == 0 { js_trim_start(line) } else { line };
        if at + 1 == kept.len() { js_trim_end(line).len() } else { line.len() }
    };
    let length = kept.iter().enumerate().map(|(at, line)| piece(at, line)).sum::<usize>() + kept.len() - 1;
    let mut joined = String::with_capacity(length);
    for (at, line) in kept.iter().enumerate() {
        let mut line = *line;
        if at == 0 {
            line = js_trim_start(line);
        } else {
            joined.push('\n');
        }
        if at + 1 == kept.len() {
            line = js_trim_end(line);
        }
        joined.push_str(line);
    }
    joined
}

/// The byte offset of the first `needle` in `haystack`. Searches for the needle's first byte
/// (for `—` and `→`, 0xE2, which CJK text rarely contains) and checks the rest there.
pub(crate) fn find_str(haystack: &str, needle: &str) -> Option<usize> {
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
pub(crate) fn split_once_str<'a>(haystack: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    let at = find_str(haystack, needle)?;
    Some((haystack.get(..at)?, haystack.get(at + needle.len()..)?))
}

/// An ASCII identifier: `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The first `n` UTF-16 code units of `s` (JavaScript `slice(0, n)`), never splitting a
/// character: a surrogate pair that would be cut is left out whole.
///
/// Used by `decision-protocol` to clip frame strings to their bound exactly as the reference
/// does; not a stable interface.
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

    #[test]
    fn byte_classes_agree_with_the_char_class_for_every_character() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let mut buffer = [0u8; 4];
            let encoded = c.encode_utf8(&mut buffer).as_bytes();
            let expected = if is_js_whitespace(c) { encoded.len() } else { 0 };
            assert_eq!(whitespace_len_at_start(encoded), expected, "{c:?}");
            assert_eq!(whitespace_len_at_end(encoded), expected, "{c:?}");
            let with_text = format!("x{c}x");
            assert_eq!(js_words(&with_text).count(), if expected > 0 { 2 } else { 1 }, "{c:?}");
            let around = format!("é{c}{c}é");
            let inner = around.get(2..around.len() - 2).unwrap_or_default();
            assert_eq!(js_trim(inner), inner.trim_matches(is_js_whitespace), "{c:?}");
            assert_eq!(js_trim(&around), around.trim_matches(is_js_whitespace), "{c:?}");
        }
    }

    #[test]
    fn runs_of_spaces_are_counted_exactly() {
        for before in 0..20 {
            for after in 0..20 {
                let text = format!("{}x{}", " ".repeat(before), " ".repeat(after));
                assert_eq!(leading_whitespace(text.as_bytes()), before);
                assert_eq!(trailing_whitespace(text.as_bytes()), after);
                assert_eq!(js_trim(&text), "x");
                let mixed = format!("\u{3000}{}\tx y\t{}\u{A0}", " ".repeat(before), " ".repeat(after));
                assert_eq!(js_trim(&mixed), "x y");
                assert_eq!(js_words(&mixed).collect::<Vec<_>>(), ["x", "y"]);
            }
            assert_eq!(leading_whitespace(" ".repeat(before).as_bytes()), before);
            assert_eq!(trailing_whitespace(" ".repeat(before).as_bytes()), before);
        }
    }

    #[test]
    fn joined_lines_are_trimmed_like_the_joined_text() {
        let cases: [&[&str]; 7] = [
            &[],
            &["", " \t", "\u{3000}"],
            &["  a ", "", " b  "],
            &["", "x", ""],
            &["\r", " lone\r", "\r"],
            &["a"],
            &["\u{A0}a", " ", "b\u{FEFF}", "\u{2028}"],
        ];
        for lines in cases {
            assert_eq!(join_lines_trimmed(lines), js_trim(&lines.join("\n")), "{lines:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn byte_level_helpers_match_the_char_class(s in "[ a\\t\\u{0B}\\u{A0}\\u{3000}\\u{85}é—\\u{FEFF}\\u{2028}]{0,12}") {
            proptest::prop_assert_eq!(js_trim(&s), s.trim_matches(is_js_whitespace));
            proptest::prop_assert_eq!(js_trim_start(&s), s.trim_start_matches(is_js_whitespace));
            proptest::prop_assert_eq!(js_trim_end(&s), s.trim_end_matches(is_js_whitespace));
            let expected: Vec<&str> = s.split(is_js_whitespace).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(js_words(&s).collect::<Vec<_>>(), expected);
            let lines: Vec<&str> = s.split('a').collect();
            let joined = lines.join("\n");
            proptest::prop_assert_eq!(join_lines_trimmed(&lines), js_trim(&joined));
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
