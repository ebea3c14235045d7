//! A block's lines, one at a time (format.md §1.3–§1.10): the `kind:`, `when:` and `dynamic:`
//! keys, question headings and options, frame fields and exclusions, policy rules, and prose.
//! What a single line gets wrong is reported here; what only the whole block shows waits for
//! [`super::BlockReader::finish`].

use super::super::Line;
use super::super::clauses::{list_item, split_key_line, split_option};
use super::super::text::{is_js_whitespace, js_trim, js_words, split_once_str, utf16_prefix};
use super::{BlockReader, DASHES_HELP, Draft, FRAME_ROOM, heading_like_lint};
use crate::contract::{Exclusion, Frame, FrameField, Kind, QuestionOption, Rule};
use crate::diag::codes;
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
