//! Predicate compilation: the closed grammar of runtime.md §5.1, checked against the block's
//! questions. Hand-written matchers: the grammar is five anchored forms.

use thiserror::Error;

use super::{CompiledPolicy, CompiledRule, FALLBACK_FORMS, Predicate};
use crate::contract::{Block, Primitive, Question};
use crate::syntax::text::{is_js_whitespace, js_trim, js_trim_start};

/// Why a predicate did not compile.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CompileError {
    #[error("`{0}` is not a predicate")]
    NotAPredicate(String),
    #[error("`top` needs a block with exactly one question (this block has {0})")]
    TopNeedsOneQuestion(usize),
    #[error("no question `{0}` in this block")]
    NoSuchQuestion(String),
    #[error("`{form}:{question}` needs a {expected} question, but `{question}` is a {actual} question")]
    WrongType { form: &'static str, question: String, expected: &'static str, actual: &'static str },
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
    let questions = index.questions;
    if FALLBACK_FORMS.contains(&text) {
        return Ok(Predicate::Fallback);
    }
    if let Some(rest) = text.strip_prefix("top")
        && let Some((op, threshold)) = comparison(rest, &[">=", "<"])
    {
        let [only] = questions else {
            return Err(CompileError::TopNeedsOneQuestion(questions.len()));
        };
        let question = only.id.clone();
        return Ok(if op == ">=" {
            Predicate::TopGte { question, threshold }
        } else {
            Predicate::TopLt { question, threshold }
        });
    }
    if let Some(rest) = text.strip_prefix("prob:")
        && let Some((id, rest)) = question_id(rest)
        && let Some((op, threshold)) = comparison(rest, &[">=", "<"])
    {
        let question = typed(index, "prob", id, Primitive::Noul)?;
        return Ok(if op == ">=" {
            Predicate::ProbGte { question, threshold }
        } else {
            Predicate::ProbLt { question, threshold }
        });
    }
    if let Some(rest) = text.strip_prefix("score:")
        && let Some((id, rest)) = question_id(rest)
        && let Some((_, threshold)) = comparison(rest, &[">="])
    {
        let question = typed(index, "score", id, Primitive::Score)?;
        return Ok(Predicate::ScoreGte { question, threshold });
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

/// `ws* OP ws* NUM` filling the whole of `text`, with OP one of `ops` (tried in order).
fn comparison(text: &str, ops: &[&'static str]) -> Option<(&'static str, f64)> {
    let text = js_trim_start(text);
    let op = ops.iter().find(|op| text.starts_with(**op))?;
    let number = js_trim_start(text.get(op.len()..)?);
    Some((op, decimal(number)?))
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
        assert_eq!(
            compile_predicate("prob:ok>=0.6", &qs),
            Ok(Predicate::ProbGte { question: "ok".into(), threshold: 0.6 })
        );
        assert_eq!(
            compile_predicate("prob:ok < .5", &qs),
            Ok(Predicate::ProbLt { question: "ok".into(), threshold: 0.5 })
        );
        assert_eq!(
            compile_predicate("score:risk >= 2", &qs),
            Ok(Predicate::ScoreGte { question: "risk".into(), threshold: 2.0 })
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
        assert_eq!(
            compile_predicate("top<0.6", &one),
            Ok(Predicate::TopLt { question: "done".into(), threshold: 0.6 })
        );
    }
}
