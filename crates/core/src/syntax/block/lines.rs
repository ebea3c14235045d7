//! A block's lines, one at a time (format.md §1.3–§1.10): the `kind:`, `when:` and `dynamic:`
//! keys, question headings and options, frame fields and exclusions, policy rules, and prose.
//! What a single line gets wrong is reported here; what only the whole block shows waits for
//! the block rules (`check::blocks`).

use super::super::Line;
use super::super::clauses::{list_item, split_key_line, split_option};
use super::super::problem::ParseProblem;
use super::super::text::{is_js_whitespace, js_trim, js_words, split_once_str, utf16_prefix};
use super::{BlockReader, FRAME_ROOM, ScannedQuestion, heading_like_lint};
use crate::contract::{Exclusion, Frame, FrameField, Kind, QuestionOption, Rule};
use crate::diag::{Severity, Sink, Span};
use crate::suggest::did_you_mean;
use crate::vocab::{self, ACTIONS, BLOCK_KEYS};

impl<'a> BlockReader<'a> {
    pub(in crate::syntax) fn line(&mut self, line: &Line<'a>) {
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
            let next = ScannedQuestion::new(id, line.span_of(id));
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
                self.report(ParseProblem::FrameRegionEnded, span);
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
                self.report(ParseProblem::FrameLineOutside, span);
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
                self.report(ParseProblem::PolicyValue, line.span_of(value));
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
                let first_line = first.line;
                self.report(ParseProblem::DuplicateWhen { first_line }, key_span());
            }
            self.when = Some((value, span));
        } else if is_key("dynamic") {
            if let Some((_, first)) = &self.dynamic {
                let first_line = first.line;
                self.report(ParseProblem::DuplicateDynamic { first_line }, key_span());
            }
            self.dynamic = Some((value, span));
        } else if is_key("frame") {
            if !value.is_empty() {
                self.report(ParseProblem::FrameValue, line.span_of(value));
            }
            if let Some(first) = &self.frame {
                let first_line = first.span.line;
                self.report(ParseProblem::SecondFrame { first_line }, key_span());
            }
            // Frames usually list a handful of fields and exclusions each: room for eight
            // spares the regrowth of both lists at four.
            let (fields, excluded) = (Vec::with_capacity(FRAME_ROOM), Vec::with_capacity(FRAME_ROOM));
            self.frame = Some(Frame { fields, excluded, span });
            self.in_frame = true;
        } else if is_key("ask") {
            if let Some(first) = self.current.ask_span {
                let problem = ParseProblem::DuplicateAsk { question: self.current.id, first_line: first.line };
                self.report(problem, key_span());
            }
            self.current.ask = value.to_string();
            self.current.ask_span = Some(span);
        } else {
            let key_lower = key.to_ascii_lowercase();
            let suggestion = did_you_mean(&key_lower, BLOCK_KEYS);
            self.report(ParseProblem::UnknownKey { key: &key_lower, suggestion }, key_span());
        }
    }

    /// `line_span` is the span of the trimmed line.
    fn kind_line(&mut self, line: &Line<'_>, value: &str, line_span: Span) {
        let span = line.span_of(value);
        if let Some(first) = self.kind_span {
            self.report(ParseProblem::DuplicateKind { first_line: first.line }, line_span);
        }
        self.saw_kind = true;
        self.kind_span = Some(line_span);
        match Kind::parse(value) {
            Some(kind) => self.kind = Some(kind),
            None => {
                let suggestion = did_you_mean(value, Kind::ALL.iter().map(|k| k.as_str()));
                let at = if value.is_empty() { line_span } else { span };
                self.report(ParseProblem::KindInvalid { value, suggestion }, at);
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
            let problem = ParseProblem::FrameNoWhy { line: utf16_prefix(trimmed, 40), field: is_field, ascii_dashes };
            self.report(problem, span);
        }
        // At most four tokens matter (name, bound, projection, and the first extra one).
        let mut words = js_words(head);
        let tokens: [Option<&str>; 4] = [words.next(), words.next(), words.next(), words.next()];
        let count = tokens.iter().flatten().count();
        let rest =
            || tokens.iter().flatten().copied().chain(head.split(is_js_whitespace).filter(|t| !t.is_empty()).skip(4));
        let Some(first) = tokens[0] else {
            self.report(ParseProblem::FrameEmpty { line: utf16_prefix(trimmed, 40) }, span);
            return;
        };
        if !is_field {
            if count > 1 && !ascii_dashes {
                let extra = rest().skip(1).collect::<Vec<_>>().join(" ");
                let problem = ParseProblem::FrameExclusionExtra { cell: first, extra: &extra };
                self.report(problem, line.span_of(tokens[1].unwrap_or(first)));
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
            let (problem, at) = match bound_token {
                None => (ParseProblem::FrameBoundMissing { field: first }, line.span_of(first)),
                Some(token) => {
                    let plain = js_number_integer(token).filter(|n| *n >= 1.0);
                    (ParseProblem::FrameBoundInvalid { field: first, bound: token, plain }, line.span_of(token))
                }
            };
            self.report(problem, at);
            return;
        };
        if count > 3 && !ascii_dashes {
            let extra = rest().skip(3).collect::<Vec<_>>().join(" ");
            let problem = ParseProblem::FrameColumns { field: first, extra: &extra };
            self.report(problem, line.span_of(tokens[3].unwrap_or(first)));
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
            self.report(ParseProblem::RuleNoArrow { rule: body, ascii_arrow: body.contains("->") }, span);
            return;
        };
        let (predicate, action) = (js_trim(predicate), js_trim(action));
        if predicate.is_empty() || action.is_empty() {
            self.report(ParseProblem::RuleEmpty { rule: body }, span);
            return;
        }
        if !vocab::is_action(action) && !vocab::is_host_name(action) {
            let suggestion = did_you_mean(action, ACTIONS);
            self.report(ParseProblem::UnknownAction { action, suggestion }, line.span_of(action));
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
