//! The block rules: what only a whole block shows, judged once the scanner has read its last
//! line, in the reference's order — the missing kind, the position and purpose of `when:`,
//! the `dynamic:` clause, the questions (ids, options, duplicates) and what the block's kind
//! requires of them. They build the [`Block`] from the [`ScannedBlock`]; a question without
//! options is reported and left out of it.
//!
//! Their problems are parse-layer problems ([`ParseProblem`], `DC01xx`), reported right after
//! the block's own lines' (the reference reports them at the block's end), so the scanner
//! hands each block over as it finishes it (see [`super::parse`]).

use std::collections::HashMap;

use crate::contract::{Block, Dynamic, Kind, Primitive, Question};
use crate::diag::{Diagnostics, Sink, Span};
use crate::names::NameSet;
use crate::suggest::did_you_mean;
use crate::syntax::clauses::{parse_dynamic, split_when};
use crate::syntax::problem::ParseProblem;
use crate::syntax::text::js_trim;
use crate::syntax::{ScannedBlock, ScannedQuestion};
use crate::vocab::{self, ANY_POSITION_ACTION, POSITIONS};

/// Judges `scanned` as a whole, adds what it gets wrong to `diagnostics` (the block's, after
/// its lines' own), and builds the block.
pub(crate) fn build(scanned: ScannedBlock<'_>, diagnostics: &mut Diagnostics) -> Block {
    let ScannedBlock { id, heading, kind, saw_kind, when, dynamic, frame, questions, rules, rationale } = scanned;
    let mut judge = Judge { id, heading, rules: &rules, diagnostics };
    if !saw_kind {
        judge.report(ParseProblem::KindMissing { block: id }, heading);
    }
    let (position, purpose, when_span) = judge.when_checks(when);
    let dynamic = judge.dynamic_checks(dynamic);
    let questions = judge.questions(questions);
    if let Some(kind) = kind {
        judge.kind_checks(kind, &questions, dynamic.is_some());
    }
    Block {
        id: id.to_string(),
        span: heading,
        kind: kind.unwrap_or(Kind::Rule),
        kind_declared: kind.is_some(),
        position,
        purpose,
        when_span,
        dynamic,
        frame,
        questions,
        policy: rules,
        rationale,
    }
}

/// The block being judged, and where its problems go.
struct Judge<'s, 'a> {
    id: &'a str,
    heading: Span,
    rules: &'s [crate::contract::Rule],
    diagnostics: &'s mut Diagnostics,
}

impl Judge<'_, '_> {
    /// Reports `problem` at `span`, in this block (its id left out when the diagnostic is
    /// only counted: see [`Sink::keeps`]).
    fn report(&mut self, problem: ParseProblem<'_>, span: Span) {
        self.diagnostics.report(&problem, span, Some(self.id));
    }

    fn when_checks(&mut self, when: Option<(&str, Span)>) -> (String, String, Span) {
        let (value, span) = when.unwrap_or(("", self.heading));
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

    fn dynamic_checks(&mut self, dynamic: Option<(&str, Span)>) -> Option<Dynamic> {
        let (value, span) = dynamic?;
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

    fn questions(&mut self, drafts: Vec<ScannedQuestion<'_>>) -> Vec<Question> {
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

    fn option_lints(&mut self, draft: &ScannedQuestion<'_>) {
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
