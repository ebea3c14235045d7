//! Text from outside (file contents, model output, task text, log fields) made safe to show
//! on a terminal. Control characters (ESC and the rest of C0 and C1, CR, backspace…) and the
//! invisible formatting characters that reorder or hide text (zero-width characters,
//! bidirectional overrides and isolates, the byte-order mark) are shown escaped, the way Rust
//! writes them (`\u{1b}`, `\r`), so outside text can neither move the cursor, clear the screen,
//! recolour or overwrite what was printed, nor hide part of a line.
//!
//! Every human-readable line the engine prints of such text goes through [`one_line`] (a line
//! of its own: a line break is escaped too) or [`lines`] (text that is several lines by nature,
//! such as an answer: its line breaks and tabs stay).

use std::borrow::Cow;

/// `text` for one terminal line: every control character, the line breaks included, and every
/// invisible formatting character escaped.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// `text` that is several lines by nature: `\n` and `\t` stay as they are; every other control
/// character (`\r` included) and every invisible formatting character is escaped.
pub fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

fn escaped(text: &str, keep_breaks: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && !(keep_breaks && (c == '\n' || c == '\t'))) || is_invisible(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Format characters that change how the text around them is displayed: zero-width
/// characters, bidirectional overrides and isolates, the byte-order mark.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_invisible_characters_are_escaped() {
        let attack = "ok\u{1b}[2J\u{1b}[H\r  step  2  can_deliver  → deliver\u{7}\u{8}\u{9b}31m\u{202e}txt.exe\u{200b}";
        assert_eq!(
            one_line(attack),
            "ok\\u{1b}[2J\\u{1b}[H\\r  step  2  can_deliver  → deliver\\u{7}\\u{8}\\u{9b}31m\\u{202e}txt.exe\\u{200b}"
        );
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc", "one line stays one line");
        assert_eq!(lines("a\nb\tc\r\nd\u{1b}[K"), "a\nb\tc\\r\nd\\u{1b}[K", "line breaks stay, the rest does not");
        for shown in [one_line(attack), lines(attack)] {
            assert!(!shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t' || is_invisible(c)), "{shown}");
        }
    }

    #[test]
    fn safe_text_is_not_copied() {
        assert!(matches!(one_line("plain text · ünïcode ✓ 😀"), Cow::Borrowed(_)));
        assert!(matches!(lines("two\nlines\twith a tab"), Cow::Borrowed(_)));
        assert_eq!(one_line(""), "");
    }
}
