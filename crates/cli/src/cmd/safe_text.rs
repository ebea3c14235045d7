//! Text from logs, contracts and models shown on a terminal: control and invisible
//! characters escaped, so such text cannot redraw or hide what is printed around it.

/// `text` with control characters and display-changing format characters escaped.
pub fn safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_invisible(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Zero-width characters, bidirectional overrides and isolates, the byte-order mark.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_and_invisible_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(super::safe("a\u{1b}[2Jb\u{202E}c — ü"), "a\\u{1b}[2Jb\\u{202e}c — ü");
    }
}
