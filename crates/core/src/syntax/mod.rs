//! The line scanner: the only place that knows the text. Reads source bytes line by line into
//! the contract's preamble and one `ScannedBlock` per block, with the diagnostics of what a
//! line gets wrong (errors, and the lints the reference silently accepts, as warnings), never
//! stopping at the first problem and never panicking. Time is linear in the input.
//!
//! It judges nothing of a whole block: it hands each block, as it finishes reading it, to the
//! block rules it is given (`check::blocks`, through [`crate::parse`]), which build the
//! [`crate::contract::Block`].

mod block;
pub(crate) mod clauses;
mod limits;
pub mod problem;
#[doc(hidden)]
pub mod text;

use std::collections::HashMap;

use crate::contract::{Block, Contract, Located};
use crate::diag::{Diagnostic, Diagnostics, Problem, Sink, Span};
use crate::vocab::GENERATOR_HEADINGS;
use text::{is_js_whitespace, join_lines_trimmed, js_trim, js_trim_end};

use clauses::split_key_line;
pub use limits::{MAX_BLOCKS, MAX_ITEMS};
use problem::ParseProblem;

pub(crate) use block::{ScannedBlock, ScannedQuestion};

/// What turns a block, as its lines were read, into the contract's [`Block`]: it adds what
/// it finds wrong with the whole block to the block's diagnostics (after its lines' own).
pub(crate) type BlockRules = fn(ScannedBlock<'_>, &mut Diagnostics) -> Block;

/// One line of the source (split on `\n` only; a CRLF line keeps its `\r`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based.
    pub number: u32,
    /// Byte offset of the line in the original source.
    pub start: usize,
    pub raw: &'a str,
}

impl<'a> Line<'a> {
    /// The span of `part`, which must be a sub-slice of this line (else the trimmed line).
    pub fn span_of(&self, part: &str) -> Span {
        let base = self.raw.as_ptr() as usize;
        let at = part.as_ptr() as usize;
        match at.checked_sub(base) {
            Some(offset) if offset + part.len() <= self.raw.len() => self.span_at(offset, part.len()),
            _ => self.span(),
        }
    }

    /// The span of the trimmed line (the whole line when it is blank).
    pub fn span(&self) -> Span {
        let trimmed = js_trim(self.raw);
        if trimmed.is_empty() {
            return self.span_at(0, 0);
        }
        self.span_of(trimmed)
    }

    fn span_at(&self, offset: usize, len: usize) -> Span {
        // Characters are counted as the bytes that do not continue one (the prefix is valid
        // UTF-8), inline: the prefix is usually empty or a short indent.
        let prefix = self.raw.as_bytes().get(..offset).unwrap_or_default();
        let column = prefix.iter().filter(|b| (**b as i8) >= -0x40).count() + 1;
        Span {
            line: self.number,
            column: u32::try_from(column).unwrap_or(u32::MAX),
            start: self.start + offset,
            end: self.start + offset + len,
        }
    }
}

/// Reads a `DECISION.md` from bytes, each block through `rules`, adding every diagnostic to
/// a new collector. Invalid UTF-8 is reported at its location; each invalid byte is then read
/// as U+001A (SUBSTITUTE), one byte for one byte, so that every span still points at the
/// right bytes of the original input.
pub(crate) fn scan_bytes(source: &[u8], rules: BlockRules) -> (Contract, Diagnostics) {
    match simdutf8::basic::from_utf8(source) {
        Ok(text) => scan(text, Diagnostics::new(), rules),
        Err(_) => {
            let (problems, repaired) = invalid_utf8(source);
            let text = String::from_utf8(repaired).unwrap_or_default();
            let mut diagnostics = Diagnostics::new();
            for problem in problems {
                diagnostics.push(problem);
            }
            scan(&text, diagnostics, rules)
        }
    }
}

/// Reads `source`, each block through `rules`, adding its diagnostics after those in
/// `diagnostics`.
pub(crate) fn scan(source: &str, diagnostics: Diagnostics, rules: BlockRules) -> (Contract, Diagnostics) {
    // A byte-order mark at the start is harmless: JavaScript's trim strips U+FEFF.
    let (body, offset) = match source.strip_prefix('\u{FEFF}') {
        Some(rest) => (rest, '\u{FEFF}'.len_utf8()),
        None => (source, 0),
    };
    Scanner::new(diagnostics, rules).run(body, offset)
}

/// Every invalid UTF-8 sequence (at most 100 reported), and the input with each invalid byte
/// replaced by U+001A. One pass: the line and column of each problem are counted on from
/// the previous one, never from the start of the input.
fn invalid_utf8(source: &[u8]) -> (Vec<Diagnostic>, Vec<u8>) {
    const SUBSTITUTE: u8 = 0x1A;
    let mut problems = Vec::new();
    let mut repaired = Vec::with_capacity(source.len());
    let mut position = Position { at: 0, line: 1, column: 1 };
    let mut at = 0;
    while let Some(rest) = source.get(at..) {
        match std::str::from_utf8(rest) {
            Ok(_) => {
                repaired.extend_from_slice(rest);
                break;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                repaired.extend_from_slice(rest.get(..valid).unwrap_or_default());
                let start = at + valid;
                let len = e.error_len().unwrap_or(rest.len() - valid).max(1);
                if problems.len() < 100 {
                    position.advance(&repaired, start);
                    problems.push(utf8_problem(source, &position, len));
                }
                repaired.extend(std::iter::repeat_n(SUBSTITUTE, len));
                at = start + len;
            }
        }
    }
    (problems, repaired)
}

/// A byte offset with its 1-based line and column, columns counted as [`Line`] counts them
/// (each invalid byte, read as U+001A, one character).
struct Position {
    at: usize,
    line: usize,
    column: usize,
}

impl Position {
    /// Move to `to`, counting over `repaired` (the input repaired up to at least `to`).
    fn advance(&mut self, repaired: &[u8], to: usize) {
        for byte in repaired.get(self.at..to).unwrap_or_default() {
            if *byte == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if (*byte as i8) >= -0x40 {
                self.column += 1;
            }
        }
        self.at = to.max(self.at);
    }
}

fn utf8_problem(source: &[u8], at: &Position, len: usize) -> Diagnostic {
    let start = at.at;
    let span = Span {
        line: u32::try_from(at.line).unwrap_or(u32::MAX),
        column: u32::try_from(at.column).unwrap_or(u32::MAX),
        start,
        end: start + len,
    };
    ParseProblem::InvalidUtf8 { byte: source.get(start).copied().unwrap_or(0) }.at(span, None)
}

/// The section being read.
enum Section<'a> {
    Block(Box<block::BlockReader<'a>>),
    Generator,
}

/// Pass 1: split the text into the preamble (title, schema, intro) and sections.
struct Scanner<'a> {
    /// What judges each block once it is read, and builds it.
    rules: BlockRules,
    contract: Contract,
    diagnostics: Diagnostics,
    /// The intro's and the generator sections' lines, joined and trimmed at the end: copied
    /// once, into the contract.
    intro: Vec<&'a str>,
    generator: Vec<&'a str>,
    saw_generator: bool,
    /// Duplicate block ids, reported after all blocks.
    duplicates: Diagnostics,
    /// The list blocks collect their prose lines in, handed from one block to the next.
    rationale: Vec<&'a str>,
    /// The items of the blocks finished so far (see [`MAX_ITEMS`]).
    items: usize,
}

/// `## text` (raw line): the heading text, trailing whitespace removed.
fn section_heading(raw: &str) -> Option<&str> {
    let rest = raw.strip_prefix("##")?;
    if !rest.starts_with(is_js_whitespace) {
        return None;
    }
    let heading = js_trim_end(rest.trim_start_matches(is_js_whitespace));
    (!heading.is_empty()).then_some(heading)
}

/// One of the generator headings, compared as JavaScript's `toLowerCase()` would: the
/// headings are ASCII or caseless CJK, and no non-ASCII character lower-cases into them.
fn is_generator_heading(heading: &str) -> bool {
    GENERATOR_HEADINGS.iter().any(|g| g.eq_ignore_ascii_case(heading))
}

/// `# text` (raw line): the title.
fn title(raw: &str) -> Option<&str> {
    let rest = raw.strip_prefix('#')?;
    if !rest.starts_with(is_js_whitespace) {
        return None;
    }
    let title = js_trim(rest);
    (!title.is_empty()).then_some(title)
}

impl<'a> Scanner<'a> {
    fn new(diagnostics: Diagnostics, rules: BlockRules) -> Scanner<'a> {
        Scanner {
            rules,
            contract: Contract::default(),
            diagnostics,
            intro: Vec::new(),
            generator: Vec::new(),
            saw_generator: false,
            duplicates: Diagnostics::new(),
            rationale: Vec::new(),
            items: 0,
        }
    }

    fn run(mut self, source: &'a str, offset: usize) -> (Contract, Diagnostics) {
        let mut lines = lines(source, offset).peekable();
        // The preamble, before the first section.
        while let Some(line) = lines.next_if(|l| section_heading(l.raw).is_none()) {
            if let Some(title) = title(line.raw) {
                self.contract.title = Some(title.to_string());
                continue;
            }
            let trimmed = js_trim(line.raw);
            if let Some((key, value)) = split_key_line(trimmed)
                && key == "schema"
            {
                self.contract.schema = Some(Located { value: value.to_string(), span: line.span() });
                continue;
            }
            self.lint_heading_like(&line, trimmed);
            self.intro.push(line.raw);
        }
        // Sections, read as a stream: a heading finishes the section before it.
        let mut seen_blocks = SeenBlocks::default();
        let mut section: Option<Section> = None;
        for line in lines {
            if let Some(heading) = section_heading(line.raw) {
                if let Some(done) = section.take() {
                    self.finish(done, &mut seen_blocks);
                }
                let generator = is_generator_heading(heading);
                if !generator && self.contract.blocks.len() == MAX_BLOCKS {
                    self.diagnostics.push_first(limits::too_many_blocks(&line));
                    break;
                }
                section = Some(if generator {
                    self.saw_generator = true;
                    Section::Generator
                } else {
                    let rationale = std::mem::take(&mut self.rationale);
                    Section::Block(Box::new(block::BlockReader::new(heading, &line, rationale)))
                });
                continue;
            }
            match section.as_mut() {
                Some(Section::Block(reader)) => {
                    reader.line(&line);
                    if self.items + reader.items() > MAX_ITEMS {
                        self.diagnostics.push_first(limits::too_many_items(&line));
                        break;
                    }
                }
                // The preamble loop stops at a heading, so there is always a section here.
                Some(Section::Generator) | None => self.generator.push(line.raw),
            }
        }
        if let Some(done) = section.take() {
            self.finish(done, &mut seen_blocks);
        }
        // Duplicate ids are a whole-document problem, reported after every block's own.
        self.diagnostics.append(std::mem::take(&mut self.duplicates));
        self.contract.intro = join_lines_trimmed(&self.intro);
        if self.saw_generator {
            self.contract.generator = Some(join_lines_trimmed(&self.generator));
        }
        (self.contract, self.diagnostics)
    }

    fn finish(&mut self, section: Section<'a>, seen_blocks: &mut SeenBlocks<'a>) {
        let Section::Block(reader) = section else { return };
        let id = reader.id();
        self.items += reader.items();
        let (scanned, mut diagnostics, rationale) = reader.into_scanned();
        self.rationale = rationale;
        let block = (self.rules)(scanned, &mut diagnostics);
        self.diagnostics.append(diagnostics);
        if let Some(first) = seen_blocks.get(id) {
            let problem = ParseProblem::DuplicateBlock { id: &block.id, first_line: first };
            self.duplicates.push(problem.at(block.span, Some(block.id.clone())));
        } else {
            seen_blocks.insert(id, block.span.line);
        }
        self.contract.blocks.push(block);
    }

    /// `trimmed` is the trimmed line.
    fn lint_heading_like(&mut self, line: &Line<'_>, trimmed: &str) {
        if let Some(d) = block::heading_like_lint(line, trimmed, None) {
            self.diagnostics.push(d);
        }
    }
}

/// Block ids seen so far, with the line of the first block of each: a scan while there are
/// few (no hashing, no allocation), a map once there are many, so reading stays linear.
#[derive(Default)]
struct SeenBlocks<'a> {
    few: [(&'a str, u32); SeenBlocks::FEW],
    len: usize,
    many: Option<HashMap<&'a str, u32>>,
}

impl<'a> SeenBlocks<'a> {
    const FEW: usize = 16;

    fn get(&self, id: &str) -> Option<u32> {
        match &self.many {
            Some(map) => map.get(id).copied(),
            None => self.few.get(..self.len)?.iter().find(|(seen, _)| *seen == id).map(|(_, line)| *line),
        }
    }

    /// Records the first block with `id` (call only when `get(id)` is `None`).
    fn insert(&mut self, id: &'a str, line: u32) {
        if let Some(map) = &mut self.many {
            map.insert(id, line);
            return;
        }
        match self.few.get_mut(self.len) {
            Some(slot) => {
                *slot = (id, line);
                self.len += 1;
            }
            None => {
                let mut map: HashMap<&'a str, u32> = self.few.iter().copied().collect();
                map.insert(id, line);
                self.many = Some(map);
            }
        }
    }
}

/// Split on `\n` only (SIMD search), keeping byte offsets.
fn lines(source: &str, offset: usize) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0;
    let mut number: u32 = 0;
    let mut ends = memchr::memchr_iter(b'\n', source.as_bytes()).chain(std::iter::once(source.len()));
    std::iter::from_fn(move || {
        let end = ends.next()?;
        let raw = source.get(start..end).unwrap_or_default();
        number = number.saturating_add(1);
        let line = Line { number, start: offset + start, raw };
        start = end + 1;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_blocks_agree_before_and_after_the_map() {
        let ids: Vec<String> = (0..40).map(|i| format!("b{}", i % 25)).collect();
        let mut seen = SeenBlocks::default();
        for (line, id) in ids.iter().enumerate() {
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            match seen.get(id) {
                Some(first) => assert_eq!(ids.get(first as usize), Some(id)),
                None => seen.insert(id, line),
            }
        }
        assert_eq!(seen.get("b3"), Some(3));
        assert_eq!(seen.get("b20"), Some(20));
        assert_eq!(seen.get("b25"), None);
    }

    #[test]
    fn invalid_bytes_are_located_as_every_other_span_counts_columns() {
        // `E2 82` (a cut-off `→`) is two invalid bytes, two columns: the `FF` is at column 5,
        // and so is the span of `b` plus one, as the line scanner counts it.
        let (problems, repaired) = invalid_utf8(b"a\xE2\x82b\xFF\nx\xFF");
        let at: Vec<_> = problems.iter().map(|d| (d.span.line, d.span.column, d.span.start)).collect();
        assert_eq!(at, [(1, 2, 1), (1, 5, 4), (2, 2, 7)]);
        assert_eq!(repaired, b"a\x1A\x1Ab\x1A\nx\x1A");
    }

    #[test]
    fn at_most_100_invalid_bytes_are_reported() {
        let (problems, repaired) = invalid_utf8(&[0xFF; 1000]);
        assert_eq!(problems.len(), 100);
        assert_eq!(problems.last().map(|d| d.span.column), Some(100));
        assert_eq!(repaired.len(), 1000);
    }
}
