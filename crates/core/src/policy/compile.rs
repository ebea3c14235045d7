//! Predicate compilation: the closed grammar of runtime.md §5.1, checked against the block's
//! questions. Hand-written matchers: the grammar is five anchored forms.

use thiserror::Error;

use super::{CompiledPolicy, CompiledRule, FALLBACK_FORMS, Predicate, THRESHOLD_FORMS, Target, ThresholdForm};
use crate::contract::{Block, Primitive, Question};
use crate::syntax::text::{is_js_whitespace, js_trim, js_trim_start};

/// Why a predicate did not compile.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The text is none of the grammar's forms (the trimmed text).
    #[error("`{0}` is not a predicate")]
    NotAPredicate(String),
    /// A `top` form in a block without exactly one question (how many it has).
    #[error("`top` needs a block with exactly one question (this block has {0})")]
    TopNeedsOneQuestion(usize),
    /// The form names a question the block does not have (its id).
    #[error("no question `{0}` in this block")]
    NoSuchQuestion(String),
    /// The form names a question of a type it does not read.
    #[error("`{form}:{question}` needs a {expected} question, but `{question}` is a {actual} question")]
    WrongType {
        /// The form's keyword (`prob`, `score`, `picked`).
        form: &'static str,
        /// The question named.
        question: String,
        /// The type the form reads.
        expected: &'static str,
        /// The question's type.
        actual: &'static str,
    },
}

/// Compile every rule of a block. Rules that fail keep their place with [`Predicate::Never`];
/// the errors are returned beside them, with the rule index.
pub fn compile_block(block: &Block) -> (CompiledPolicy, Vec<(usize, CompileError)>) {
    let mut errors = Vec::new();
    let questions = QuestionIndex::new(&block.questions);
    let rules = block
        .policy
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let text = js_trim(&rule.predicate).to_string();
            let predicate = match compile_indexed(&text, &questions) {
                Ok(p) => p,
                Err(e) => {
                    errors.push((index, e));
                    Predicate::Never
                }
            };
            CompiledRule { predicate, action: rule.action.clone(), text, span: rule.span }
        })
        .collect();
    (CompiledPolicy { block: block.id.clone(), rules }, errors)
}

/// Compile one trimmed predicate against a block's questions.
pub fn compile_predicate(text: &str, questions: &[Question]) -> Result<Predicate, CompileError> {
    compile_indexed(text, &QuestionIndex::new(questions))
}

/// Question lookup by id: a scan for the usual handful, a map for pathological blocks, so
/// compiling stays linear in the size of the file.
pub(crate) struct QuestionIndex<'a> {
    questions: &'a [Question],
    by_id: Option<std::collections::HashMap<&'a str, &'a Question>>,
}

impl<'a> QuestionIndex<'a> {
    pub(crate) fn new(questions: &'a [Question]) -> QuestionIndex<'a> {
        let by_id = (questions.len() > 16).then(|| {
            let mut map = std::collections::HashMap::new();
            for q in questions {
                map.entry(q.id.as_str()).or_insert(q);
            }
            map
        });
        QuestionIndex { questions, by_id }
    }

    /// The first question named `id`, as [`crate::Block::question`] finds it.
    pub(crate) fn get(&self, id: &str) -> Option<&'a Question> {
        match &self.by_id {
            Some(map) => map.get(id).copied(),
            None => self.questions.iter().find(|q| q.id == id),
        }
    }
}

fn compile_indexed(text: &str, index: &QuestionIndex<'_>) -> Result<Predicate, CompileError> {
    if FALLBACK_FORMS.contains(&text) {
        return Ok(Predicate::Fallback);
    }
    // At most one form matches a whole text: forms differ in keyword or operator, and only a
    // number may follow the operator, so trying them in any order gives the same result
    // (`<` does not read `<= 1`: `= 1` is not a number).
    if let Some(compiled) = THRESHOLD_FORMS.into_iter().find_map(|form| threshold_predicate(text, form, index)) {
        return compiled;
    }
    if let Some(rest) = text.strip_prefix("picked:")
        && let Some((id, rest)) = question_id(rest)
    {
        let rest = js_trim_start(rest);
        if let Some(rest) = rest.strip_prefix('=') {
            let option = js_trim_start(rest);
            if !option.is_empty() && !option.chars().any(is_js_whitespace) {
                let question = typed(index, "picked", id, Primitive::Choice)?;
                return Ok(Predicate::Picked { question, option: option.to_string() });
            }
        }
    }
    Err(CompileError::NotAPredicate(text.to_string()))
}

/// `text` read as `form`: `None` when it is not written that way, else the predicate, or why
/// the question it reads does not fit the block.
fn threshold_predicate(
    text: &str,
    form: ThresholdForm,
    index: &QuestionIndex<'_>,
) -> Option<Result<Predicate, CompileError>> {
    let probe = form.probe();
    let rest = text.strip_prefix(probe.keyword())?;
    let (rest, named) = match probe.target() {
        Target::OnlyQuestion => (rest, None),
        Target::Named(primitive) => {
            let (id, rest) = question_id(rest.strip_prefix(':')?)?;
            (rest, Some((id, primitive)))
        }
    };
    let threshold = comparison(rest, form.comparison().operator())?;
    let question = match named {
        None => match index.questions {
            [only] => Ok(only.id.clone()),
            questions => Err(CompileError::TopNeedsOneQuestion(questions.len())),
        },
        Some((id, primitive)) => typed(index, probe.keyword(), id, primitive),
    };
    Some(question.map(|question| Predicate::Compare { form, question, threshold }))
}

fn typed(index: &QuestionIndex<'_>, form: &'static str, id: &str, expected: Primitive) -> Result<String, CompileError> {
    let question = index.get(id).ok_or_else(|| CompileError::NoSuchQuestion(id.to_string()))?;
    if question.primitive != expected {
        return Err(CompileError::WrongType {
            form,
            question: id.to_string(),
            expected: expected.as_str(),
            actual: question.primitive.as_str(),
        });
    }
    Ok(question.id.clone())
}

/// `[A-Za-z_][A-Za-z0-9_.-]*` at the start of `text`; returns it and the rest.
fn question_id(text: &str) -> Option<(&str, &str)> {
    let first = *text.as_bytes().first()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let end = text
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'))
        .unwrap_or(text.len());
    text.split_at_checked(end)
}

/// `ws* OP ws* NUM` filling the whole of `text`; returns the number.
fn comparison(text: &str, operator: &str) -> Option<f64> {
    let rest = js_trim_start(text).strip_prefix(operator)?;
    decimal(js_trim_start(rest))
}

/// NUM = `[0-9]*\.?[0-9]+`, the whole string: the number grammar of predicates (also used
/// for threshold overrides, so an overridden rule text still reads as a valid predicate).
pub(crate) fn decimal(text: &str) -> Option<f64> {
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (text, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let valid = match frac {
        Some(frac) => digits(int) && !frac.is_empty() && digits(frac),
        None => !int.is_empty() && digits(int),
    };
    if valid { text.parse().ok().filter(|v: &f64| v.is_finite()) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::policy::{Comparison, Probe};

    fn compare(probe: Probe, comparison: Comparison, question: &str, threshold: f64) -> Predicate {
        Predicate::compare(probe, comparison, question, threshold).unwrap()
    }

    fn q(id: &str, primitive: Primitive) -> Question {
        Question { id: id.into(), ask: "a".into(), primitive, options: vec![], span: Span::default() }
    }

    #[test]
    fn numbers_follow_the_reference_grammar() {
        for ok in ["0.6", ".5", "2", "05", "1.25"] {
            assert!(decimal(ok).is_some(), "{ok}");
        }
        for bad in ["1.", "-1", "1e3", "", ".", "0x1", "1.2.3", " 1"] {
            assert!(decimal(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn forms_compile_against_question_types() {
        let qs = [q("ok", Primitive::Noul), q("risk", Primitive::Score), q("tool", Primitive::Choice)];
        assert_eq!(compile_predicate("else", &qs), Ok(Predicate::Fallback));
        assert_eq!(compile_predicate("其余", &qs), Ok(Predicate::Fallback));
        assert_eq!(compile_predicate("prob:ok>=0.6", &qs), Ok(compare(Probe::Prob, Comparison::AtLeast, "ok", 0.6)));
        assert_eq!(compile_predicate("prob:ok < .5", &qs), Ok(compare(Probe::Prob, Comparison::Below, "ok", 0.5)));
        assert_eq!(
            compile_predicate("score:risk >= 2", &qs),
            Ok(compare(Probe::Score, Comparison::AtLeast, "risk", 2.0))
        );
        assert_eq!(
            compile_predicate("picked:tool = read_file", &qs),
            Ok(Predicate::Picked { question: "tool".into(), option: "read_file".into() })
        );
        assert!(matches!(compile_predicate("prob:tool >= 0.9", &qs), Err(CompileError::WrongType { .. })));
        assert!(matches!(compile_predicate("score:ok >= 2", &qs), Err(CompileError::WrongType { .. })));
        assert!(matches!(compile_predicate("picked:ok = a", &qs), Err(CompileError::WrongType { .. })));
        assert!(matches!(compile_predicate("prob:nope >= 0.5", &qs), Err(CompileError::NoSuchQuestion(_))));
        assert!(matches!(compile_predicate("top >= 0.6", &qs), Err(CompileError::TopNeedsOneQuestion(3))));
        for bad in [
            "top > 0.6",
            "prob:ok <= 0.5",
            "confidence >= 0.9",
            "prob: ok >= 0.5",
            "score:risk < 2",
            "Else",
            "picked:tool = a b",
        ] {
            assert!(matches!(compile_predicate(bad, &qs), Err(CompileError::NotAPredicate(_))), "{bad}");
        }
        let one = [q("done", Primitive::Noul)];
        assert_eq!(compile_predicate("top<0.6", &one), Ok(compare(Probe::Top, Comparison::Below, "done", 0.6)));
    }
}
