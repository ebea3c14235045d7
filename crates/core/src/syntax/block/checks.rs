//! The block-level checks, run once the block's last line is read, in the reference's order:
//! the missing kind, the position and purpose of `when:`, the `dynamic:` clause, the questions
//! (ids, options, duplicates) and what the block's kind requires of them.

use std::collections::HashMap;

use super::super::clauses::{parse_dynamic, split_when};
use super::super::problem::ParseProblem;
use super::super::text::{join_lines_trimmed, js_trim};
use super::{BlockReader, Draft};
use crate::contract::{Block, Dynamic, Kind, Primitive, Question};
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
            self.report(ParseProblem::KindMissing { block: self.id }, self.heading);
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
            self.report(ParseProblem::WhenMissing, span);
            return (position, when.purpose.to_string(), span);
        }
        if !when.leftover.is_empty() {
            self.report(ParseProblem::WhenLeftover { position: &position, leftover: when.leftover }, span);
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
                    self.report(
                        ParseProblem::ActionNotAtPosition { position: &position, action: &action, handled },
                        span,
                    );
                }
            }
            None if vocab::is_host_name(&position) => {}
            None => {
                let suggestion = did_you_mean(&position, POSITIONS.iter().map(|(p, _)| *p));
                self.report(ParseProblem::WhenUnknown { position: &position, suggestion }, span);
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
        let ascii_dashes = value.contains("--");
        for problem in &parts.problems {
            self.report(ParseProblem::Dynamic { problem, ascii_dashes }, span);
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
                self.report(ParseProblem::QuestionNoOptions { question: draft.id }, draft.span);
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
                let problem = ParseProblem::QuestionMixedStyle { question: draft.id, named, unnamed };
                self.report(problem, draft.span);
                Primitive::Choice
            };
            if draft.ask.is_empty() {
                self.report(ParseProblem::QuestionNoAsk { question: draft.id }, draft.span);
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
            self.report(ParseProblem::QuestionDuplicate { question: id }, span);
        }
        questions
    }

    fn option_lints(&mut self, draft: &Draft<'_>) {
        let mut seen = NameSet::new();
        for option in draft.options.iter().filter(|o| o.named) {
            if !seen.insert(&option.name) {
                let problem = ParseProblem::DuplicateOption { option: &option.name, question: draft.id };
                self.report(problem, option.span);
            }
        }
    }

    fn kind_checks(&mut self, kind: Kind, questions: &[Question], has_dynamic: bool) {
        let count = questions.len();
        match kind {
            Kind::Rule => {
                if count > 0 {
                    self.report(ParseProblem::RuleHasQuestions, self.heading);
                }
                return;
            }
            Kind::Mixed => {
                if count < 2 {
                    self.report(ParseProblem::MixedTooFew { count }, self.heading);
                }
            }
            Kind::Choice | Kind::Noul | Kind::Score => {
                let [question] = questions else {
                    self.report(ParseProblem::SingleCount { kind: kind.as_str(), count }, self.heading);
                    return;
                };
                if question.primitive.as_str() != kind.as_str() {
                    let problem = ParseProblem::KindMismatch {
                        kind: kind.as_str(),
                        made: question.primitive.as_str(),
                        missing_noul: missing_noul_option(question),
                    };
                    self.report(problem, question.span);
                }
            }
        }
        if !has_dynamic {
            for q in questions.iter().filter(|q| q.primitive == Primitive::Choice && q.options.len() < 2) {
                let problem = ParseProblem::ChoiceFew {
                    question: &q.id,
                    count: q.options.len(),
                    missing_noul: missing_noul_option(q),
                };
                self.report(problem, q.span);
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
