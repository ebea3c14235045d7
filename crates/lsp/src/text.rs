//! An open document's text and the conversion between the checker's byte offsets and the
//! protocol's positions.
//!
//! The Language Server Protocol counts a position's `character` in UTF-16 code units (its
//! default, and the only encoding every client supports); the checker counts bytes. A line
//! ends at `\n`, `\r\n` or a lone `\r`, as the protocol says. A position past the end of its
//! line means the line's end, and a line past the last means the end of the document (the
//! protocol's rule for the first; the second is the only position such an edit can mean) —
//! both are reported to the caller so that the server can say the client sent it.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

/// Where each line starts, in bytes, for one version of a text.
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// The byte offset of the first byte of each line; the first is 0.
    starts: Vec<usize>,
    /// The text's length in bytes.
    len: usize,
}

/// A position resolved to a byte offset, and whether it had to be clamped to the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// The byte offset, always on a character boundary of the text.
    pub offset: usize,
    /// Whether the position lay outside its line or outside the document.
    pub clamped: bool,
}

impl LineIndex {
    /// The index of `text`.
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            i += 1;
            match b {
                b'\n' => starts.push(i),
                // A lone `\r` ends a line; in `\r\n` the `\n` does.
                b'\r' if bytes.get(i) != Some(&b'\n') => starts.push(i),
                _ => {}
            }
        }
        LineIndex { starts, len: text.len() }
    }

    /// How many lines the text has (an empty text has one).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The byte range of line `line`'s content, without its line ending.
    fn line_bounds(&self, text: &str, line: usize) -> (usize, usize) {
        let start = self.starts.get(line).copied().unwrap_or(self.len);
        let next = self.starts.get(line + 1).copied().unwrap_or(self.len);
        let content = text.get(start..next).unwrap_or("");
        let trimmed = content.strip_suffix('\n').unwrap_or(content);
        let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
        (start, start + trimmed.len())
    }

    /// The protocol position of byte `offset` of `text` (an offset inside a character, or
    /// past the end, counts as the start of that character, or the end).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(self.len);
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&start| start <= offset).saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0);
        let character: usize = text.get(start..offset).unwrap_or("").chars().map(char::len_utf16).sum();
        Position { line: to_u32(line), character: to_u32(character) }
    }

    /// The protocol range of the byte range `start..end` of `text`.
    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range { start: self.position(text, start), end: self.position(text, end.max(start)) }
    }

    /// The byte offset of a protocol position in `text`. A character count that falls inside
    /// a surrogate pair resolves to the start of that character.
    pub fn offset(&self, text: &str, position: Position) -> Resolved {
        let line = position.line as usize;
        if line >= self.line_count() {
            return Resolved { offset: self.len, clamped: true };
        }
        let (start, end) = self.line_bounds(text, line);
        let wanted = position.character as usize;
        let mut units = 0;
        for (i, c) in text.get(start..end).unwrap_or("").char_indices() {
            let next = units + c.len_utf16();
            if next > wanted {
                return Resolved { offset: start + i, clamped: false };
            }
            units = next;
        }
        Resolved { offset: end, clamped: wanted > units }
    }
}

/// The byte range of the word (letters, digits, `_`) around `offset` of `text`; empty when
/// there is none.
pub fn word_around(text: &str, offset: usize) -> (usize, usize) {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let before = text.get(..offset).unwrap_or_default();
    let after = text.get(offset..).unwrap_or_default();
    let start = before.char_indices().rev().take_while(|(_, c)| is_word(*c)).last().map_or(offset, |(i, _)| i);
    let end = offset + after.char_indices().find(|(_, c)| !is_word(*c)).map_or(after.len(), |(i, _)| i);
    (start, end)
}

/// A `usize` as the protocol's `u32`, saturating (a line or column past 4 billion cannot be
/// sent, and a document that long is refused long before).
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// An open document: its text, version and line index.
#[derive(Debug, Clone)]
pub struct Document {
    /// The whole text.
    pub text: String,
    /// The version the client gave with the last change.
    pub version: i32,
    /// The index of `text`.
    pub index: LineIndex,
}

impl Document {
    /// A document opened with `text` at `version`.
    pub fn new(text: String, version: i32) -> Document {
        let index = LineIndex::new(&text);
        Document { text, version, index }
    }

    /// Applies one change: the whole text when it has no range, else the range replaced.
    /// Returns whether a position of the range was out of the document (and was clamped).
    pub fn apply(&mut self, change: TextDocumentContentChangeEvent) -> bool {
        let Some(range) = change.range else {
            self.text = change.text;
            self.index = LineIndex::new(&self.text);
            return false;
        };
        let start = self.index.offset(&self.text, range.start);
        let end = self.index.offset(&self.text, range.end);
        // A range whose end comes before its start is read as the span between the two.
        let (from, to) =
            if start.offset <= end.offset { (start.offset, end.offset) } else { (end.offset, start.offset) };
        self.text.replace_range(from..to, &change.text);
        self.index = LineIndex::new(&self.text);
        start.clamped || end.clamped || start.offset > end.offset
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    fn change(start: Position, end: Position, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent { range: Some(Range { start, end }), range_length: None, text: text.into() }
    }

    #[test]
    fn columns_count_utf16_code_units() {
        // `é` is 2 bytes and 1 unit; `😀` is 4 bytes and 2 units.
        let text = "a\né😀x\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(text, x), pos(1, 3));
        assert_eq!(index.offset(text, pos(1, 3)), Resolved { offset: x, clamped: false });
        // Inside the surrogate pair: the start of the emoji.
        assert_eq!(index.offset(text, pos(1, 2)).offset, text.find('😀').unwrap());
        // An offset inside a multi-byte character counts as its start.
        assert_eq!(index.position(text, text.find('😀').unwrap() + 1), pos(1, 1));
    }

    #[test]
    fn every_line_ending_ends_a_line() {
        let text = "a\r\nb\rc\nd";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.position(text, text.find('c').unwrap()), pos(2, 0));
        // The end of line 0 is before its `\r\n`.
        assert_eq!(index.offset(text, pos(0, 9)), Resolved { offset: 1, clamped: true });
        assert_eq!(index.offset(text, pos(3, 1)), Resolved { offset: text.len(), clamped: false });
    }

    #[test]
    fn out_of_range_positions_are_clamped_and_reported() {
        let text = "ab\ncd";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(text, pos(0, 2)), Resolved { offset: 2, clamped: false });
        assert_eq!(index.offset(text, pos(0, 3)), Resolved { offset: 2, clamped: true });
        assert_eq!(index.offset(text, pos(7, 0)), Resolved { offset: 5, clamped: true });
        assert_eq!(index.offset(text, pos(u32::MAX, u32::MAX)), Resolved { offset: 5, clamped: true });
        assert_eq!(index.position(text, 99), pos(1, 2));
    }

    #[test]
    fn incremental_changes_edit_the_text() {
        let mut doc = Document::new("kind: choise\n".into(), 1);
        assert!(!doc.apply(change(pos(0, 6), pos(0, 12), "choice")));
        assert_eq!(doc.text, "kind: choice\n");
        // Inserting a line, then replacing everything.
        assert!(!doc.apply(change(pos(1, 0), pos(1, 0), "when: x\n")));
        assert_eq!(doc.text, "kind: choice\nwhen: x\n");
        assert!(!doc.apply(TextDocumentContentChangeEvent { range: None, range_length: None, text: "new".into() }));
        assert_eq!(doc.text, "new");
        assert_eq!(doc.index.line_count(), 1);
    }

    #[test]
    fn out_of_range_and_reversed_edits_never_panic() {
        let mut doc = Document::new("ab😀".into(), 1);
        assert!(doc.apply(change(pos(9, 9), pos(12, 0), "!")));
        assert_eq!(doc.text, "ab😀!");
        assert!(doc.apply(change(pos(0, 2), pos(0, 0), "")));
        assert_eq!(doc.text, "😀!");
        // A position inside a surrogate pair snaps to the character's start: no half
        // character is ever left behind.
        assert!(!doc.apply(change(pos(0, 1), pos(0, 2), "")));
        assert_eq!(doc.text, "!");
    }
}
