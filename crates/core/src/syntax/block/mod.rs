//! Pass 2: interpreting one decision block. The reader ([`BlockReader`]) is fed the block's
//! lines one at a time ([`lines`]: what each line says, and what a single line gets wrong),
//! then runs the block-level checks in the reference's order ([`checks`]). Lints for what the
//! reference silently accepts are emitted as warnings on the way.

mod checks;
mod lines;

use super::Line;
use super::problem::{HeadingLike, ParseProblem};
use super::text::{is_js_whitespace, js_trim};
use crate::contract::{Frame, Kind, QuestionOption, Rule};
use crate::diag::{Diagnostic, Diagnostics, Problem, Sink, Span};

/// The initial room in a frame's lists of fields and of exclusions.
const FRAME_ROOM: usize = 8;

/// A question being read.
struct Draft<'a> {
    id: &'a str,
    span: Span,
    ask: String,
    ask_span: Option<Span>,
    options: Vec<QuestionOption>,
    /// Whether the span was replaced by the first option's line.
    has_option_line: bool,
}

impl<'a> Draft<'a> {
    fn new(id: &'a str, span: Span) -> Draft<'a> {
        Draft { id, span, ask: String::new(), ask_span: None, options: Vec::new(), has_option_line: false }
    }

    fn keep(&self) -> bool {
        !self.ask.is_empty() || !self.options.is_empty()
    }
}

/// Reads one block. Borrows the source: text is copied only into the [`Block`] it builds.
pub(super) struct BlockReader<'a> {
    id: &'a str,
    heading: Span,
    diagnostics: Diagnostics,
    /// Lines read as items: question headings, options, frame lines, policy rules.
    items: usize,
    kind: Option<Kind>,
    saw_kind: bool,
    kind_span: Option<Span>,
    when: Option<(&'a str, Span)>,
    dynamic: Option<(&'a str, Span)>,
    frame: Option<Frame>,
    in_frame: bool,
    in_policy: bool,
    drafts: Vec<Draft<'a>>,
    current: Draft<'a>,
    rules: Vec<Rule>,
    /// Prose lines, trimmed (blank lines as empty ones): joined with `\n` at the end.
    rationale: Vec<&'a str>,
}

impl<'a> BlockReader<'a> {
    /// Start reading a block: its heading text on its heading line. `rationale` is an empty
    /// list to collect prose lines in (handed from block to block, so that it grows only once).
    pub(super) fn new(heading: &'a str, heading_line: &Line<'a>, rationale: Vec<&'a str>) -> BlockReader<'a> {
        let heading_span = heading_line.span_of(heading);
        BlockReader {
            id: heading,
            heading: heading_span,
            diagnostics: Diagnostics::new(),
            items: 0,
            kind: None,
            saw_kind: false,
            kind_span: None,
            when: None,
            dynamic: None,
            frame: None,
            in_frame: false,
            in_policy: false,
            drafts: Vec::new(),
            current: Draft::new(heading, heading_span),
            rules: Vec::new(),
            rationale,
        }
    }

    /// The block id: its heading text.
    pub(super) fn id(&self) -> &'a str {
        self.id
    }

    /// How many lines have been read as items (see [`super::MAX_ITEMS`]).
    pub(super) fn items(&self) -> usize {
        self.items
    }

    fn prose(&mut self, text: &'a str) {
        self.rationale.push(text);
    }
}

/// A line that looks like a heading but is read as prose (`###`, `#### x`, `  ## x`).
/// `trimmed` is the trimmed line.
pub(super) fn heading_like_lint(line: &Line<'_>, trimmed: &str, block: Option<&str>) -> Option<Diagnostic> {
    // Every case starts with `##`: the usual prose line is dismissed at once.
    if !trimmed.starts_with("##") {
        return None;
    }
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    let text = js_trim(trimmed.trim_start_matches('#'));
    let what = if hashes == 3 && text.is_empty() {
        HeadingLike::BareQuestion
    } else if hashes >= 4 && trimmed.chars().nth(hashes).is_some_and(is_js_whitespace) {
        HeadingLike::FourHashes
    } else if hashes == 2 && line.raw.starts_with(is_js_whitespace) && !text.is_empty() {
        HeadingLike::IndentedBlock
    } else {
        return None;
    };
    Some(ParseProblem::NotAHeading(what).at(line.span_of(trimmed), block.map(str::to_string)))
}

impl<'a> BlockReader<'a> {
    /// Reports `problem` at `span`, in this block (its id left out when the diagnostic is
    /// only counted: see [`Sink::keeps`]).
    fn report(&mut self, problem: ParseProblem<'_>, span: Span) {
        self.diagnostics.report(&problem, span, Some(self.id));
    }
}
