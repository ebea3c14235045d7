//! Pass 2: reading one decision block. The reader ([`BlockReader`]) is fed the block's lines
//! one at a time ([`lines`]: what each line says, and what a single line gets wrong), then
//! hands what it read over as a [`ScannedBlock`]. What only the whole block shows (a missing
//! kind, a question without options, a kind its questions do not make) is judged by the
//! block rules in `check::blocks`, which build the [`crate::contract::Block`]. Lints for what
//! a single line gets wrong and the reference silently accepts are emitted as warnings here.

mod lines;

use super::Line;
use super::problem::{HeadingLike, ParseProblem};
use super::text::{is_js_whitespace, join_lines_trimmed, js_trim};
use crate::contract::{Frame, Kind, QuestionOption, Rule};
use crate::diag::{Diagnostic, Diagnostics, Problem, Sink, Span};

/// The initial room in a frame's lists of fields and of exclusions.
const FRAME_ROOM: usize = 8;

/// A question as its lines were read: nothing yet judged of the whole (see `check::blocks`).
#[derive(Debug)]
pub(crate) struct ScannedQuestion<'a> {
    /// Its heading text.
    pub(crate) id: &'a str,
    /// Its heading, or its first option's line once it has one.
    pub(crate) span: Span,
    /// The `ask:` text (empty when there is none).
    pub(crate) ask: String,
    ask_span: Option<Span>,
    /// The options, in order.
    pub(crate) options: Vec<QuestionOption>,
    /// Whether the span was replaced by the first option's line.
    has_option_line: bool,
}

impl<'a> ScannedQuestion<'a> {
    fn new(id: &'a str, span: Span) -> ScannedQuestion<'a> {
        ScannedQuestion { id, span, ask: String::new(), ask_span: None, options: Vec::new(), has_option_line: false }
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
    drafts: Vec<ScannedQuestion<'a>>,
    current: ScannedQuestion<'a>,
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
            current: ScannedQuestion::new(heading, heading_span),
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

    /// What the block's lines said, with the diagnostics of its lines, and the list of prose
    /// lines, emptied, for the next block.
    pub(in crate::syntax) fn into_scanned(mut self) -> (ScannedBlock<'a>, Diagnostics, Vec<&'a str>) {
        let last = std::mem::replace(&mut self.current, ScannedQuestion::new("", Span::default()));
        if last.keep() {
            self.drafts.push(last);
        }
        let rationale = join_lines_trimmed(&self.rationale);
        self.rationale.clear();
        let scanned = ScannedBlock {
            id: self.id,
            heading: self.heading,
            kind: self.kind,
            saw_kind: self.saw_kind,
            when: self.when,
            dynamic: self.dynamic,
            frame: self.frame,
            questions: self.drafts,
            rules: self.rules,
            rationale,
        };
        (scanned, self.diagnostics, self.rationale)
    }
}

/// One block as its lines were read, before the block rules judge the whole of it and build
/// the [`crate::contract::Block`].
#[derive(Debug)]
pub(crate) struct ScannedBlock<'a> {
    /// The heading text: the block id.
    pub(crate) id: &'a str,
    /// The heading's span.
    pub(crate) heading: Span,
    /// The `kind:` read, when one was read and known.
    pub(crate) kind: Option<Kind>,
    /// Whether a `kind:` line was read at all (known or not).
    pub(crate) saw_kind: bool,
    /// The `when:` value and its line's span.
    pub(crate) when: Option<(&'a str, Span)>,
    /// The `dynamic:` value and its line's span.
    pub(crate) dynamic: Option<(&'a str, Span)>,
    /// The frame, when one was read.
    pub(crate) frame: Option<Frame>,
    /// The questions, in order (a heading with neither `ask:` nor options left out).
    pub(crate) questions: Vec<ScannedQuestion<'a>>,
    /// The policy rules, in order.
    pub(crate) rules: Vec<Rule>,
    /// The prose lines, joined and trimmed.
    pub(crate) rationale: String,
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
