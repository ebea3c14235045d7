//! Pass 2: interpreting one decision block, line by line (format.md §1.3–§1.10), then the
//! block-level checks in the reference's order. Lints for what the reference silently
//! accepts are emitted here too, as warnings.

use std::collections::HashMap;

use super::Line;
use super::clauses::{DynamicProblem, list_item, parse_dynamic, split_key_line, split_option, split_when};
use super::text::{is_js_whitespace, join_lines_trimmed, js_trim, js_words, split_once_str, utf16_prefix};
use crate::contract::{Block, Dynamic, Exclusion, Frame, FrameField, Kind, Primitive, Question, QuestionOption, Rule};
use crate::diag::codes;
use crate::diag::{Diagnostic, Diagnostics, Layer, Severity, Sink, Span};
use crate::names::NameSet;
use crate::suggest::did_you_mean;
use crate::vocab::{self, ACTIONS, ANY_POSITION_ACTION, BLOCK_KEYS, POSITIONS};

/// The initial room in a frame's lists of fields and of exclusions.
const FRAME_ROOM: usize = 8;

/// The help for `--` written where the reason separator `——` belongs, as `->` gets one for `→`.
const DASHES_HELP: &str = "use `——` (two U+2014 em dashes) before the reason; `--` is not a separator here";

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
        "`###` without a question id is read as prose"
    } else if hashes >= 4 && trimmed.chars().nth(hashes).is_some_and(is_js_whitespace) {
        "a `####` heading is read as prose; questions use `###`"
    } else if hashes == 2 && line.raw.starts_with(is_js_whitespace) && !text.is_empty() {
        "an indented `##` does not start a block; it is read as prose"
    } else {
        return None;
    };
    Some(Diagnostic {
        code: codes::L_NOT_A_HEADING,
        severity: Severity::Warning,
        layer: Layer::Parse,
        message: what.to_string(),
        span: line.span_of(trimmed),
        block: block.map(str::to_string),
        help: Some("write `## id` for a block or `### id` for a question at the start of the line".into()),
    })
}

impl<'a> BlockReader<'a> {
    fn push(&mut self, code: &'static str, span: Span, message: String, help: Option<String>) {
        self.diagnostics.push(Diagnostic {
            code,
            severity: Severity::Error,
            layer: Layer::Parse,
            message,
            span,
            block: self.diagnostics.keeps(Severity::Error).then(|| self.id.to_string()),
            help,
        });
    }

    fn lint(&mut self, code: &'static str, span: Span, message: String, help: Option<String>) {
        self.diagnostics.push(Diagnostic {
            code,
            severity: Severity::Warning,
            layer: Layer::Parse,
            message,
            span,
            block: self.diagnostics.keeps(Severity::Warning).then(|| self.id.to_string()),
            help,
        });
    }

    pub(super) fn line(&mut self, line: &Line<'a>) {
        let t = js_trim(line.raw);
        // 1. Blank: ends frame and policy regions.
        if t.is_empty() {
            self.prose("");
            self.in_policy = false;
            self.in_frame = false;
            return;
        }
        // The span of the trimmed line: what `line.span()` would compute again.
        let span = line.span_of(t);
        // 2. Subheading: a new question.
        if let Some(rest) = t.strip_prefix("###")
            && rest.starts_with(is_js_whitespace)
        {
            self.items += 1;
            let id = js_trim(rest);
            let next = Draft::new(id, line.span_of(id));
            let done = std::mem::replace(&mut self.current, next);
            if done.keep() {
                self.drafts.push(done);
            }
            self.in_policy = false;
            return;
        }
        // 3. Frame region.
        if self.in_frame {
            if let Some(body) = t.strip_prefix("+ ") {
                self.items += 1;
                return self.frame_line(line, t, span, true, body);
            }
            if let Some(body) = t.strip_prefix("- ") {
                self.items += 1;
                return self.frame_line(line, t, span, false, body);
            }
            self.in_frame = false;
            if t.starts_with('+') {
                self.lint(
                    codes::L_FRAME_LINE_DROPPED,
                    span,
                    "this line ends the frame region and is read as prose, not as a frame field".into(),
                    Some("write `+ ` (plus and one space) before the field".into()),
                );
            }
        }
        // 4. List item: a policy rule or an option.
        if let Some(body) = list_item(t) {
            self.items += 1;
            if self.in_policy {
                self.rule(line, body, span);
            } else {
                self.option(body, span);
            }
            return;
        }
        // 5. Key line or prose.
        let Some((key, value)) = split_key_line(t) else {
            self.in_policy = false;
            if t.starts_with("+ ") && self.frame.is_some() {
                self.lint(
                    codes::L_FRAME_LINE_DROPPED,
                    span,
                    "a frame line outside the frame region is read as prose".into(),
                    Some("frame lines must follow `frame:` (or another frame line) with no blank line between".into()),
                );
            }
            if let Some(d) =
                heading_like_lint(line, t, Some(self.id).filter(|_| self.diagnostics.keeps(Severity::Warning)))
            {
                self.diagnostics.push(d);
            }
            self.prose(t);
            return;
        };
        // Keys are matched without regard to ASCII case.
        let is_key = |name: &str| key.eq_ignore_ascii_case(name);
        if is_key("policy") {
            self.in_policy = true;
            if !value.is_empty() {
                self.lint(
                    codes::L_POLICY_VALUE,
                    line.span_of(value),
                    "text after `policy:` is ignored".into(),
                    Some("put rules on the following lines as `- predicate → action`".into()),
                );
            }
            return;
        }
        self.in_policy = false;
        // Needed only by the lints: not computed for the usual, clean line.
        let key_span = || line.span_of(key);
        if is_key("kind") {
            self.kind_line(line, value, span);
        } else if is_key("when") {
            if let Some((_, first)) = &self.when {
                let first = first.line;
                self.lint(
                    codes::L_DUP_WHEN,
                    key_span(),
                    format!("second `when:` in this block (the first is on line {first}); the last one wins"),
                    Some("keep one `when:` line".into()),
                );
            }
            self.when = Some((value, span));
        } else if is_key("dynamic") {
            if let Some((_, first)) = &self.dynamic {
                let first = first.line;
                self.lint(
                    codes::L_DUP_DYNAMIC,
                    key_span(),
                    format!("second `dynamic:` in this block (the first is on line {first}); the last one wins"),
                    Some("keep one `dynamic:` line".into()),
                );
            }
            self.dynamic = Some((value, span));
        } else if is_key("frame") {
            if !value.is_empty() {
                self.push(
                        codes::FRAME_VALUE,
                        line.span_of(value),
                        "`frame:` takes no value".into(),
                        Some("write the frame on the following lines: `+ field bound [projection] —— why` and `- cell —— why`".into()),
                    );
            }
            if let Some(first) = &self.frame {
                let first = first.span.line;
                self.lint(
                    codes::L_SECOND_FRAME,
                    key_span(),
                    format!("a second `frame:` discards the frame on line {first}"),
                    Some("merge the two frames into one".into()),
                );
            }
            // Frames usually list a handful of fields and exclusions each: room for eight
            // spares the regrowth of both lists at four.
            let (fields, excluded) = (Vec::with_capacity(FRAME_ROOM), Vec::with_capacity(FRAME_ROOM));
            self.frame = Some(Frame { fields, excluded, span });
            self.in_frame = true;
        } else if is_key("ask") {
            if let Some(first) = self.current.ask_span {
                self.lint(
                    codes::L_DUP_ASK,
                    key_span(),
                    format!(
                        "second `ask:` for question `{}` (the first is on line {}); the last one wins",
                        self.current.id, first.line
                    ),
                    Some("keep one `ask:` per question".into()),
                );
            }
            self.current.ask = value.to_string();
            self.current.ask_span = Some(span);
        } else {
            let key_lower = key.to_ascii_lowercase();
            let help = match did_you_mean(&key_lower, BLOCK_KEYS) {
                    Some(key) => format!("did you mean `{key}:`? If this is prose, do not start the line with `word:` (e.g. wrap the word in `**…**`)"),
                    None => "the keys are kind / when / dynamic / frame / ask / policy; if this is prose, do not start the line with `word:` (e.g. wrap the word in `**…**`)".into(),
                };
            self.push(codes::UNKNOWN_KEY, key_span(), format!("unknown key `{key_lower}`"), Some(help));
        }
    }

    /// `line_span` is the span of the trimmed line.
    fn kind_line(&mut self, line: &Line<'_>, value: &str, line_span: Span) {
        let span = line.span_of(value);
        if let Some(first) = self.kind_span {
            self.lint(
                codes::L_DUP_KIND,
                line_span,
                format!("second `kind:` in this block (the first is on line {}); the last valid one wins", first.line),
                Some("keep one `kind:` line".into()),
            );
        }
        self.saw_kind = true;
        self.kind_span = Some(line_span);
        match Kind::parse(value) {
            Some(kind) => self.kind = Some(kind),
            None => {
                let help = match did_you_mean(value, Kind::ALL.iter().map(|k| k.as_str())) {
                    Some(k) => format!("did you mean `{k}`?"),
                    None => "kind is one of choice / noul / score / mixed / rule".into(),
                };
                self.push(
                    codes::KIND_INVALID,
                    if value.is_empty() { line_span } else { span },
                    format!("`{value}` is not a kind (choice / noul / score / mixed / rule)"),
                    Some(help),
                );
            }
        }
    }

    /// `span` is the span of `trimmed`, the trimmed line.
    fn frame_line(&mut self, line: &Line<'_>, trimmed: &str, span: Span, is_field: bool, body: &str) {
        if self.frame.is_none() {
            return;
        }
        // The head is not trimmed: the words read from it below skip its whitespace anyway,
        // and frame lines pad their columns with long runs of spaces.
        let (head, why) = match split_once_str(body, "——") {
            Some((head, why)) => (head, js_trim(why)),
            None => (body, ""),
        };
        // `--` written for `——`: the reason is there, behind the wrong separator. Say so, and
        // do not also report its words as extra columns (one mistake, one error).
        let ascii_dashes = why.is_empty() && head.contains("--");
        if why.is_empty() {
            let what = if is_field {
                "every field must say why it is in this decision"
            } else {
                "every deliberate exclusion must say why"
            };
            let help = match ascii_dashes {
                true => DASHES_HELP.to_string(),
                false => "add `—— reason` at the end of the line".to_string(),
            };
            self.push(
                codes::FRAME_NO_WHY,
                span,
                format!("frame line `{}` gives no reason; {what}", utf16_prefix(trimmed, 40)),
                Some(help),
            );
        }
        // At most four tokens matter (name, bound, projection, and the first extra one).
        let mut words = js_words(head);
        let tokens: [Option<&str>; 4] = [words.next(), words.next(), words.next(), words.next()];
        let count = tokens.iter().flatten().count();
        let rest =
            || tokens.iter().flatten().copied().chain(head.split(is_js_whitespace).filter(|t| !t.is_empty()).skip(4));
        let Some(first) = tokens[0] else {
            self.push(
                codes::FRAME_EMPTY,
                span,
                format!("frame line `{}` is empty", utf16_prefix(trimmed, 40)),
                Some("name a cell before `——`".into()),
            );
            return;
        };
        if !is_field {
            if count > 1 && !ascii_dashes {
                let extra = rest().skip(1).collect::<Vec<_>>().join(" ");
                self.push(
                    codes::FRAME_EXCL_EXTRA,
                    line.span_of(tokens[1].unwrap_or(first)),
                    format!("an exclusion names only the cell `{first}`; got extra `{extra}`"),
                    Some(format!("write `- {first} —— reason`")),
                );
            }
            let exclusion = Exclusion { field: first.to_string(), why: why.to_string(), span };
            if let Some(frame) = self.frame.as_mut() {
                frame.excluded.push(exclusion);
            }
            return;
        }
        let bound_token = tokens[1];
        let bound = bound_token.and_then(decimal_bound);
        let Some(bound) = bound else {
            let (message, help, at) = match bound_token {
                None => (
                    format!("frame field `{first}` lacks a positive bound in column 2"),
                    format!(
                        "write `+ {first} 200 —— reason`: bounds are mandatory (characters for text, items for lists)"
                    ),
                    line.span_of(first),
                ),
                Some(token) => (
                    format!("frame field `{first}` has bound `{token}`, which is not a positive decimal integer"),
                    match js_number_integer(token) {
                        Some(n) if n >= 1.0 => format!("write the bound as a plain decimal integer: `{n}`"),
                        _ => format!("write a whole number ≥ 1, e.g. `+ {first} 200 —— reason`"),
                    },
                    line.span_of(token),
                ),
            };
            self.push(codes::FRAME_BOUND, at, message, Some(help));
            return;
        };
        if count > 3 && !ascii_dashes {
            let extra = rest().skip(3).collect::<Vec<_>>().join(" ");
            self.push(
                codes::FRAME_COLUMNS,
                line.span_of(tokens[3].unwrap_or(first)),
                format!(
                    "frame field `{first}` has at most three columns (name / bound / projection); got extra `{extra}`"
                ),
                Some("move the extra text after `——`".into()),
            );
        }
        let field = FrameField {
            key: first.to_string(),
            bound,
            projection: tokens[2].map(str::to_string),
            why: why.to_string(),
            span,
        };
        if let Some(frame) = self.frame.as_mut() {
            frame.fields.push(field);
        }
    }

    /// `span` is the span of the trimmed line.
    fn rule(&mut self, line: &Line<'_>, body: &str, span: Span) {
        let Some((predicate, action)) = split_once_str(body, "→") else {
            let help = if body.contains("->") {
                "use `→` (U+2192); `->` is not an arrow here"
            } else {
                "write `- predicate → action`"
            };
            self.push(codes::POL_NO_ARROW, span, format!("policy rule `{body}` lacks `→ action`"), Some(help.into()));
            return;
        };
        let (predicate, action) = (js_trim(predicate), js_trim(action));
        if predicate.is_empty() || action.is_empty() {
            self.push(
                codes::POL_EMPTY,
                span,
                format!("policy rule `{body}` has an empty predicate or action"),
                Some("write `- predicate → action`".into()),
            );
            return;
        }
        if !vocab::is_action(action) && !vocab::is_host_name(action) {
            let help = match did_you_mean(action, ACTIONS) {
                Some(a) => format!("did you mean `{a}`?"),
                None => format!("actions are {}; host actions are written `host:<name>`", ACTIONS.join(" / ")),
            };
            self.push(
                codes::POL_UNKNOWN_ACTION,
                line.span_of(action),
                format!("unknown action `{action}`"),
                Some(help),
            );
        }
        self.rules.push(Rule { predicate: predicate.to_string(), action: action.to_string(), span });
    }

    /// `span` is the span of the trimmed line.
    fn option(&mut self, body: &str, span: Span) {
        if !self.current.has_option_line {
            self.current.span = span;
            self.current.has_option_line = true;
        }
        let option = match split_option(body) {
            Some((name, criterion)) => {
                QuestionOption { name: name.to_string(), named: true, criterion: criterion.to_string(), span }
            }
            None => QuestionOption {
                name: self.current.options.len().to_string(),
                named: false,
                criterion: body.to_string(),
                span,
            },
        };
        self.current.options.push(option);
    }

    /// Finish the block: run the block-level checks and move its diagnostics to `out`.
    /// Returns the block and the list of prose lines, emptied, for the next block.
    pub(super) fn finish(mut self, out: &mut Diagnostics) -> (Block, Vec<&'a str>) {
        let last = std::mem::replace(&mut self.current, Draft::new("", Span::default()));
        if last.keep() {
            self.drafts.push(last);
        }
        // Missing kind.
        if !self.saw_kind {
            self.push(
                codes::KIND_MISSING,
                self.heading,
                format!("block `{}` declares no kind", self.id),
                Some("add `kind: choice | noul | score | mixed | rule` — every block must say who answers it".into()),
            );
        }
        let (position, purpose, when_span) = self.when_checks();
        let dynamic = self.dynamic_checks();
        let questions = self.questions();
        let kind = self.kind.unwrap_or(Kind::Rule);
        if self.kind.is_some() {
            self.kind_checks(kind, &questions, dynamic.is_some());
        }
        let rationale = join_lines_trimmed(&self.rationale);
        self.rationale.clear();
        out.append(std::mem::take(&mut self.diagnostics));
        let block = Block {
            id: self.id.to_string(),
            span: self.heading,
            kind,
            kind_declared: self.kind.is_some(),
            position,
            purpose,
            when_span,
            dynamic,
            frame: self.frame,
            questions,
            policy: self.rules,
            rationale,
        };
        (block, self.rationale)
    }

    fn when_checks(&mut self) -> (String, String, Span) {
        let (value, span) = self.when.unwrap_or(("", self.heading));
        let when = split_when(js_trim(value));
        let position = when.position.to_string();
        if position.is_empty() {
            self.push(
                codes::WHEN_MISSING,
                span,
                "`when:` names no position; the position decides which code carries out this decision's actions".into(),
                Some(format!("add `when: <position> —— <purpose>`; positions are {} or host:<name>", position_names())),
            );
            return (position, when.purpose.to_string(), span);
        }
        if !when.leftover.is_empty() {
            self.push(
                codes::WHEN_LEFTOVER,
                span,
                format!(
                    "text `{}` after position `{position}` is not introduced by `——`, so nothing reads it",
                    when.leftover
                ),
                Some(match when.leftover.strip_prefix("--") {
                    Some(purpose) => format!("{DASHES_HELP}: `when: {position} —— {}`", js_trim(purpose)),
                    None => format!("write `when: {position} —— {}`", when.leftover),
                }),
            );
        }
        match vocab::position_actions(&position) {
            Some(handled) => {
                let offending: Vec<String> = self
                    .rules
                    .iter()
                    // An unknown action is reported once, as unknown (DC0108), not again here.
                    .filter(|r| {
                        !handled.contains(&r.action.as_str())
                            && r.action != ANY_POSITION_ACTION
                            && vocab::is_action(&r.action)
                    })
                    .map(|r| r.action.clone())
                    .collect();
                for action in offending {
                    self.push(
                        codes::ACTION_NOT_AT_POSITION,
                        span,
                        format!(
                            "position `{position}` does not handle action `{action}` (it handles {} / escalate)",
                            handled.join(" / ")
                        ),
                        Some(
                            "use an action this position handles, or move the block to a position that handles it"
                                .into(),
                        ),
                    );
                }
            }
            None if vocab::is_host_name(&position) => {}
            None => {
                let help = match did_you_mean(&position, POSITIONS.iter().map(|(p, _)| *p)) {
                    Some(p) => format!("did you mean `{p}`?"),
                    None => format!("positions are {} or host:<name>", position_names()),
                };
                self.push(codes::WHEN_UNKNOWN, span, format!("`{position}` is not a position"), Some(help));
            }
        }
        (position, when.purpose.to_string(), span)
    }

    fn dynamic_checks(&mut self) -> Option<Dynamic> {
        let (value, span) = self.dynamic?;
        if js_trim(value).is_empty() {
            return None;
        }
        let parts = parse_dynamic(value);
        for problem in &parts.problems {
            let (code, message, help) = match problem {
                DynamicProblem::NoWhy => (
                    codes::DYN_NO_WHY,
                    "`dynamic:` gives no reason why the candidates are rebuilt every step".to_string(),
                    match value.contains("--") {
                        true => DASHES_HELP.to_string(),
                        false => "add `—— reason` at the end".to_string(),
                    },
                ),
                DynamicProblem::NoArrow => (
                    codes::DYN_NO_ARROW,
                    "`dynamic:` lacks `→ <output>`".into(),
                    "write `provider(ctx: cells…) → candidates —— why`".into(),
                ),
                DynamicProblem::MultiArrow(n) => (
                    codes::DYN_MULTI_ARROW,
                    format!("`dynamic:` has {n} arrows; only one is allowed"),
                    "write `provider(ctx: cells…) → candidates —— why`".into(),
                ),
                DynamicProblem::Output(o) => (
                    codes::DYN_OUTPUT,
                    format!("unknown dynamic output `{o}`"),
                    "the only output is `candidates`".into(),
                ),
                DynamicProblem::Call(c) => (
                    codes::DYN_CALL,
                    format!("dynamic provider `{c}` is not written `<name>(ctx: <cell>, …)`"),
                    "name the provider and the cells it reads: `toolsFor(ctx: history, files)`".into(),
                ),
                DynamicProblem::NoCells => (
                    codes::DYN_NO_CELLS,
                    "`dynamic:` does not say which cells the provider reads".into(),
                    "list the cells: `name(ctx: cell, …)` — a cell left out silently removes a class of candidates"
                        .into(),
                ),
                DynamicProblem::BadCell(c) => (
                    codes::DYN_BAD_CELL,
                    format!("dynamic cell name `{c}` is not an identifier"),
                    "cell names are ASCII identifiers".into(),
                ),
                DynamicProblem::DupCells(d) => (
                    codes::DYN_DUP_CELLS,
                    format!("dynamic cell names repeated: {}", d.join(", ")),
                    "name each cell once".into(),
                ),
            };
            self.push(code, span, message, Some(help));
        }
        Some(Dynamic { provider: parts.provider, reads: parts.reads, output: parts.output, why: parts.why, span })
    }

    fn questions(&mut self) -> Vec<Question> {
        let drafts = std::mem::take(&mut self.drafts);
        let mut questions = Vec::with_capacity(drafts.len());
        // The first span of each id, kept only when some id repeats (rare).
        let mut ids = NameSet::new();
        let repeats = !drafts.iter().all(|d| ids.insert(d.id));
        let mut first_spans: HashMap<&str, Span> = HashMap::new();
        if repeats {
            for draft in drafts.iter().rev() {
                first_spans.insert(draft.id, draft.span);
            }
        }
        for draft in drafts {
            if draft.options.is_empty() {
                self.push(
                    codes::Q_NO_OPTIONS,
                    draft.span,
                    format!("question `{}` has no options", draft.id),
                    Some("add options as `- name — criterion` lines".into()),
                );
                continue;
            }
            let named = draft.options.iter().filter(|o| o.named).count();
            let unnamed = draft.options.len() - named;
            let is_noul = draft.options.len() == 2
                && named == 2
                && draft.options.iter().any(|o| o.name == "true")
                && draft.options.iter().any(|o| o.name == "false");
            let primitive = if is_noul {
                Primitive::Noul
            } else if unnamed == 0 {
                Primitive::Choice
            } else if named == 0 {
                Primitive::Score
            } else {
                self.push(
                    codes::Q_MIXED_STYLE,
                    draft.span,
                    format!(
                        "question `{}` mixes option styles: {named} named (`name — criterion`), {unnamed} unnamed",
                        draft.id
                    ),
                    Some("name every option (choice) or none (score levels, lowest first)".into()),
                );
                Primitive::Choice
            };
            if draft.ask.is_empty() {
                self.push(
                    codes::Q_NO_ASK,
                    draft.span,
                    format!("question `{}` lacks `ask:`", draft.id),
                    Some("add `ask: <the question>`".into()),
                );
            }
            self.option_lints(&draft);
            questions.push(Question {
                id: draft.id.to_string(),
                ask: draft.ask,
                primitive,
                options: draft.options,
                span: draft.span,
            });
        }
        let mut seen = NameSet::new();
        let mut reported: Vec<&str> = Vec::new();
        for q in &questions {
            if !seen.insert(&q.id) && !reported.contains(&q.id.as_str()) {
                reported.push(&q.id);
            }
        }
        for id in reported {
            let span = first_spans.get(id).copied().unwrap_or(self.heading);
            self.push(
                codes::Q_DUP_ID,
                span,
                format!("question id `{id}` is used twice in this block"),
                Some("give each `###` question its own id".into()),
            );
        }
        questions
    }

    fn option_lints(&mut self, draft: &Draft<'_>) {
        let mut seen = NameSet::new();
        for option in draft.options.iter().filter(|o| o.named) {
            if !seen.insert(&option.name) {
                self.lint(
                    codes::L_DUP_OPTION,
                    option.span,
                    format!(
                        "option `{}` of question `{}` is written twice; the later one replaces the earlier",
                        option.name, draft.id
                    ),
                    Some("give each option its own name".into()),
                );
            }
        }
    }

    fn kind_checks(&mut self, kind: Kind, questions: &[Question], has_dynamic: bool) {
        let count = questions.len();
        match kind {
            Kind::Rule => {
                if count > 0 {
                    self.push(
                        codes::RULE_HAS_QUESTIONS,
                        self.heading,
                        "a `kind: rule` block must not ask questions: code answers it, not the model".into(),
                        Some("remove the questions, or change the kind to choice / noul / score / mixed".into()),
                    );
                }
                return;
            }
            Kind::Mixed => {
                if count < 2 {
                    self.push(
                        codes::MIXED_TOO_FEW,
                        self.heading,
                        format!("`kind: mixed` needs at least 2 questions (got {count})"),
                        Some("with one question use choice / noul / score".into()),
                    );
                }
            }
            Kind::Choice | Kind::Noul | Kind::Score => {
                let [question] = questions else {
                    self.push(
                        codes::SINGLE_COUNT,
                        self.heading,
                        format!("`kind: {}` needs exactly 1 question (got {count})", kind.as_str()),
                        Some("for several questions use `kind: mixed`".into()),
                    );
                    return;
                };
                if question.primitive.as_str() != kind.as_str() {
                    let missing = missing_noul_option(question);
                    let hint = match (question.primitive, kind) {
                        (Primitive::Choice, Kind::Noul) if missing.is_some() => &*add_the_other(missing),
                        (Primitive::Score, _) => {
                            "the options have no names; if you meant choice, write each as `name — criterion`"
                        }
                        (Primitive::Choice, Kind::Noul) => {
                            "the options are named; a noul's two options must be `true` and `false`"
                        }
                        (Primitive::Noul, _) => "the options are `true` and `false`",
                        _ => "the options are named",
                    };
                    self.push(
                        codes::KIND_MISMATCH,
                        question.span,
                        format!(
                            "`kind: {}` does not match how the options are written: they make a {} question",
                            kind.as_str(),
                            question.primitive.as_str()
                        ),
                        Some(hint.into()),
                    );
                }
            }
        }
        if !has_dynamic {
            for q in questions.iter().filter(|q| q.primitive == Primitive::Choice && q.options.len() < 2) {
                let help = match missing_noul_option(q) {
                    Some(_) => add_the_other(missing_noul_option(q)),
                    None => "add options, or declare runtime candidates: `dynamic: provider(ctx: cells…) → candidates —— why`".into(),
                };
                self.push(
                    codes::CHOICE_FEW,
                    q.span,
                    format!("question `{}` has {} option; a choice needs at least 2", q.id, q.options.len()),
                    Some(help),
                );
            }
        }
    }
}

/// For a question whose only option is `true` or `false` (a noul with one half missing), the
/// other one.
fn missing_noul_option(question: &Question) -> Option<&'static str> {
    match question.options.as_slice() {
        [only] if only.name == "true" => Some("false"),
        [only] if only.name == "false" => Some("true"),
        _ => None,
    }
}

/// The help for a noul written with one option: add the other.
fn add_the_other(missing: Option<&str>) -> String {
    match missing {
        Some(other) => format!("a noul has two options, `true` and `false`: add `- {other} — <when it is {other}>`"),
        None => "a noul's two options must be `true` and `false`".into(),
    }
}

fn position_names() -> String {
    POSITIONS.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(" / ")
}

/// Bounds are decimal integers ≥ 1 only (no sign, hex, exponent or fraction).
fn decimal_bound(token: &str) -> Option<u64> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse::<u64>().ok().filter(|n| *n >= 1)
}

/// What JavaScript's `Number(token)` would make of a bound, when it is an integer: used only
/// to suggest the decimal spelling of `0x190`, `4e2`, `400.0` and `+400`.
fn js_number_integer(token: &str) -> Option<f64> {
    let lower = token.to_ascii_lowercase();
    let unsigned = lower.strip_prefix('+').unwrap_or(&lower);
    let radix = [("0x", 16), ("0o", 8), ("0b", 2)].into_iter().find(|(p, _)| unsigned.starts_with(p));
    let value = match radix {
        Some((prefix, radix)) => u64::from_str_radix(unsigned.get(prefix.len()..)?, radix).ok().map(|v| v as f64),
        None => unsigned.parse::<f64>().ok(),
    }?;
    (value.is_finite() && value.fract() == 0.0).then_some(value)
}
