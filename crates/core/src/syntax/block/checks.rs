//! The block-level checks, run once the block's last line is read, in the reference's order:
//! the missing kind, the position and purpose of `when:`, the `dynamic:` clause, the questions
//! (ids, options, duplicates) and what the block's kind requires of them.

use std::collections::HashMap;

use super::super::clauses::{DynamicProblem, parse_dynamic, split_when};
use super::super::text::{join_lines_trimmed, js_trim};
use super::{BlockReader, DASHES_HELP, Draft};
use crate::contract::{Block, Dynamic, Kind, Primitive, Question};
use crate::diag::codes;
use crate::diag::{Diagnostics, Span};
use crate::names::NameSet;
use crate::suggest::did_you_mean;
use crate::vocab::{self, ANY_POSITION_ACTION, POSITIONS};

impl<'a> BlockReader<'a> {
    /// Finish the block: run the block-level checks and move its diagnostics to `out`.
    /// Returns the block and the list of prose lines, emptied, for the next block.
    pub(in crate::syntax) fn finish(mut self, out: &mut Diagnostics) -> (Block, Vec<&'a str>) {
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
