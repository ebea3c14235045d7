//! Typed answers that fail closed (question-space.md Part 1 item 4), and the response
//! normalisation of runtime.md §1.3 as far as it does not weaken validation.
//!
//! Validation turns the raw JSON answer to one question into a typed
//! [`Answer`](decision_core::policy::Answer) or a typed [`AnswerProblem`]. Nothing is coerced:
//! a boolean is not a number, a string is not a probability, a missing probability is not 0,
//! an out-of-range `noul` is rejected rather than clamped. The reference's `Number(v) || 0`
//! coercion is deliberately not reproduced, because it would turn `true` into a valid 1.

use std::collections::BTreeMap;

use decision_core::policy::Answer;
use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use super::json_view::{JsonView, ObjectView, Viewed};
use super::wire::{Questions, WireQuestion};

/// How far a choice answer's probabilities may sum from 1: |Σp − 1| must not exceed this.
pub const SUM_TOLERANCE: f64 = 0.02;
/// Rounding slack on the tolerances (far below any meaningful probability difference).
const FLOAT_SLACK: f64 = 1e-12;
/// How far the chosen option's probability may fall short of the largest one: the choice
/// must be the argmax, up to this rounding slack.
pub const ARGMAX_TOLERANCE: f64 = 1e-6;

/// Why an answer was rejected. Every variant means: no actionable observation. Serialised
/// with the variant in `problem` (snake case) beside its fields, as the log writes it.
#[derive(Debug, Clone, PartialEq, Error, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AnswerProblem {
    /// The response has no entry for the question.
    #[error("no answer was returned")]
    Missing,
    /// The entry is not a JSON object.
    #[error("the answer is not a JSON object")]
    NotAnObject,
    /// The entry neither carries a `noul`, `choice` or `score` value nor a known `type` tag.
    #[error("the answer has no recognisable type (no `noul`, `choice` or `score`)")]
    Unrecognised,
    /// The entry answers another kind of question than was asked.
    #[error("a {found} answer to a {expected} question")]
    WrongType {
        /// The asked question's type (`noul`, `choice`, `score`).
        expected: &'static str,
        /// The type the entry declares.
        found: &'static str,
    },
    /// A field the answer type requires is absent.
    #[error("`{field}` is missing")]
    MissingField {
        /// The field's name.
        field: &'static str,
    },
    /// `choice` holds something other than a string.
    #[error("`choice` is not a string")]
    ChoiceNotString,
    /// `choice` names an id the question did not offer.
    #[error("choice `{choice}` was not offered")]
    NotOffered {
        /// The id as answered.
        choice: String,
    },
    /// `probabilities` holds something other than an object.
    #[error("`probabilities` is not an object")]
    ProbabilitiesNotObject,
    /// The probabilities must name exactly the offered ids.
    #[error("the probability keys differ from the offered set (missing {missing:?}, not offered {extra:?})")]
    KeysDiffer {
        /// Offered ids with no probability.
        missing: Vec<String>,
        /// Keys that were not offered.
        extra: Vec<String>,
    },
    /// A number field holds `true` or `false` (never coerced to 1 or 0).
    #[error("`{field}` is a boolean, not a number")]
    Boolean {
        /// The field, as a path (`probabilities.a`).
        field: String,
    },
    /// A number field holds a string, `null`, a list or an object.
    #[error("`{field}` is not a number")]
    NotANumber {
        /// The field, as a path.
        field: String,
    },
    /// A probability or confidence outside [0, 1] (never clamped).
    #[error("`{field}` = {value} is not a finite number in [0, 1]")]
    OutOfRange {
        /// The field, as a path.
        field: String,
        /// The value as received.
        value: f64,
    },
    /// The probabilities sum further from 1 than [`SUM_TOLERANCE`].
    #[error("the probabilities sum to {sum}, not 1 ± 0.02")]
    SumOff {
        /// Their sum.
        sum: f64,
    },
    /// The chosen option is not the most probable one (beyond [`ARGMAX_TOLERANCE`]).
    #[error("choice `{choice}` (p = {p}) is not the most probable option (max p = {max})")]
    NotArgmax {
        /// The chosen id.
        choice: String,
        /// Its probability.
        p: f64,
        /// The largest probability given.
        max: f64,
    },
    /// A score that is not one of the levels 0 ..= `max_level`.
    #[error("score {score} is outside [0, {max_level}]")]
    ScoreOutOfRange {
        /// The score as received.
        score: f64,
        /// The highest level the question has.
        max_level: usize,
    },
    /// The question has no option or level, so no answer can be valid.
    #[error("the question offers nothing to choose")]
    NothingOffered,
    /// The provider found the reply malformed where this answer was (a duplicate key, a
    /// positive log-probability): nothing in it can be trusted.
    #[error("the reply is malformed: {detail}")]
    Malformed {
        /// The provider's reason, or `no reason given`.
        detail: String,
    },
}

/// The `type` tag of the entry a provider puts in place of an answer it found malformed
/// (see [`malformed_answer`]).
pub const MALFORMED_TYPE: &str = "malformed";

/// The entry a provider records in place of an answer it found malformed, saying why:
/// `{"type": "malformed", "problem": …}`. Validation rejects it with
/// [`AnswerProblem::Malformed`].
pub fn malformed_answer(problem: impl Into<String>) -> Value {
    let mut entry = Map::new();
    entry.insert("type".into(), Value::from(MALFORMED_TYPE));
    entry.insert("problem".into(), Value::from(problem.into()));
    Value::Object(entry)
}

/// The answer type an entry declares by its value (preferred) or its `type` tag (§1.3:
/// "value wins over type tag"). `None` when neither says.
pub(crate) fn answer_kind<O: ObjectView + ?Sized>(entry: &O) -> Option<&'static str> {
    let tag = text(entry.get("type"));
    if tag == Some("noul") || entry.get("noul").is_some() {
        Some("noul")
    } else if tag == Some("score") || entry.get("score").is_some() {
        Some("score")
    } else if tag == Some("choice") || entry.get("choice").is_some() {
        Some("choice")
    } else {
        None
    }
}

/// The text of a value that is a string.
fn text<V: JsonView + ?Sized>(value: Option<&V>) -> Option<&str> {
    match value?.view() {
        Viewed::String(text) => Some(text),
        _ => None,
    }
}

/// Validate the raw answer to one question. `None` means no answer came back.
pub fn validate_answer(question: &WireQuestion, raw: Option<&Value>) -> Result<Answer, AnswerProblem> {
    validate_entry(question, raw)
}

/// [`validate_answer`] over any view of the JSON answer.
fn validate_entry<V: JsonView>(question: &WireQuestion, raw: Option<&V>) -> Result<Answer, AnswerProblem> {
    let Viewed::Object(entry) = raw.ok_or(AnswerProblem::Missing)?.view() else {
        return Err(AnswerProblem::NotAnObject);
    };
    if text(entry.get("type")) == Some(MALFORMED_TYPE) {
        let detail = text(entry.get("problem")).unwrap_or("no reason given");
        return Err(AnswerProblem::Malformed { detail: detail.to_owned() });
    }
    let kind = answer_kind(entry).ok_or(AnswerProblem::Unrecognised)?;
    if kind != question.type_name() {
        return Err(AnswerProblem::WrongType { expected: question.type_name(), found: kind });
    }
    match question {
        WireQuestion::Noul { .. } => {
            let noul = unit(entry.get("noul"), "noul")?;
            if let Some(confidence) = entry.get("confidence") {
                unit(Some(confidence), "confidence")?;
            }
            Ok(Answer::Noul { noul })
        }
        WireQuestion::Choice { criteria, .. } => {
            if criteria.is_empty() {
                return Err(AnswerProblem::NothingOffered);
            }
            let choice = match entry.get("choice").map(JsonView::view) {
                None | Some(Viewed::Null) => return Err(AnswerProblem::MissingField { field: "choice" }),
                Some(Viewed::String(s)) => s.to_owned(),
                Some(_) => return Err(AnswerProblem::ChoiceNotString),
            };
            if !criteria.iter().any(|(id, _)| *id == choice) {
                return Err(AnswerProblem::NotOffered { choice });
            }
            let probabilities = distribution(entry, criteria.iter().map(|(id, _)| id.as_str()))?;
            let confidence = confidence(entry, &probabilities)?;
            let p = probabilities.get(&choice).copied().unwrap_or(0.0);
            let max = probabilities.values().copied().fold(0.0, f64::max);
            if p < max - ARGMAX_TOLERANCE - FLOAT_SLACK {
                return Err(AnswerProblem::NotArgmax { choice, p, max });
            }
            Ok(Answer::Choice { choice, probabilities, confidence: Some(confidence) })
        }
        WireQuestion::Score { criteria, .. } => {
            let max_level = criteria.len().checked_sub(1).ok_or(AnswerProblem::NothingOffered)?;
            let score = number(entry.get("score"), "score")?;
            if !(0.0..=max_level as f64).contains(&score) {
                return Err(AnswerProblem::ScoreOutOfRange { score, max_level });
            }
            let ids: Vec<String> = (0..criteria.len()).map(|k| k.to_string()).collect();
            let probabilities = distribution(entry, ids.iter().map(String::as_str))?;
            let confidence = confidence(entry, &probabilities)?;
            Ok(Answer::Score { score, probabilities, confidence: Some(confidence) })
        }
    }
}

/// Up to this many probability keys, each is looked for among the offered ids one by one.
const OFFERED_SEARCHED: usize = 16;

/// `probabilities`: keys exactly the offered ids, values in [0, 1], summing to 1 ± 0.02.
fn distribution<'a, O: ObjectView + ?Sized>(
    entry: &O,
    offered: impl Iterator<Item = &'a str> + Clone,
) -> Result<BTreeMap<String, f64>, AnswerProblem> {
    let raw = match entry.get("probabilities").map(JsonView::view) {
        None | Some(Viewed::Null) => return Err(AnswerProblem::MissingField { field: "probabilities" }),
        Some(Viewed::Object(map)) => map,
        Some(_) => return Err(AnswerProblem::ProbabilitiesNotObject),
    };
    let missing: Vec<String> = offered.clone().filter(|id| raw.get(id).is_none()).map(str::to_string).collect();
    // A set of the offered ids for a long list, so that many keys against many ids cost
    // time in proportion to their number (a hostile answer can hold thousands).
    let offered_set: Option<std::collections::HashSet<&str>> =
        (raw.len() > OFFERED_SEARCHED).then(|| offered.clone().collect());
    let is_offered = |key: &str| match &offered_set {
        Some(set) => set.contains(key),
        None => offered.clone().any(|id| id == key),
    };
    let extra: Vec<String> = raw.members().filter(|(k, _)| !is_offered(k)).map(|(k, _)| k.to_string()).collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Err(AnswerProblem::KeysDiffer { missing, extra });
    }
    let mut probabilities = BTreeMap::new();
    for (id, value) in raw.members() {
        // The field's path is written only for a problem: most answers have none.
        let p = unit(Some(value), "").map_err(|problem| problem.at(|| format!("probabilities.{id}")))?;
        probabilities.insert(id.to_string(), p);
    }
    let sum: f64 = probabilities.values().sum();
    // The slack absorbs binary rounding, so 0.7 + 0.32 counts as the 1.02 it is written as.
    if (sum - 1.0).abs() > SUM_TOLERANCE + FLOAT_SLACK {
        return Err(AnswerProblem::SumOff { sum });
    }
    Ok(probabilities)
}

/// A present confidence must be a number in [0, 1]; an absent one is the largest
/// probability (§1.3, pinned by the reference tests).
fn confidence<O: ObjectView + ?Sized>(entry: &O, probabilities: &BTreeMap<String, f64>) -> Result<f64, AnswerProblem> {
    match entry.get("confidence") {
        Some(value) if !matches!(value.view(), Viewed::Null) => unit(Some(value), "confidence"),
        _ => Ok(probabilities.values().copied().fold(0.0, f64::max)),
    }
}

fn number<V: JsonView + ?Sized>(value: Option<&V>, field: &str) -> Result<f64, AnswerProblem> {
    match value.map(JsonView::view) {
        None => Err(AnswerProblem::MissingField { field: static_field(field) }),
        Some(Viewed::Bool) => Err(AnswerProblem::Boolean { field: field.to_string() }),
        Some(Viewed::Number(n)) => match n {
            Some(v) if v.is_finite() => Ok(v),
            _ => Err(AnswerProblem::NotANumber { field: field.to_string() }),
        },
        Some(_) => Err(AnswerProblem::NotANumber { field: field.to_string() }),
    }
}

fn unit<V: JsonView + ?Sized>(value: Option<&V>, field: &str) -> Result<f64, AnswerProblem> {
    let v = number(value, field)?;
    if (0.0..=1.0).contains(&v) { Ok(v) } else { Err(AnswerProblem::OutOfRange { field: field.to_string(), value: v }) }
}

impl AnswerProblem {
    /// The same problem, about the field whose path `path` writes (a problem about a value
    /// names its field).
    fn at(self, path: impl FnOnce() -> String) -> AnswerProblem {
        match self {
            AnswerProblem::Boolean { .. } => AnswerProblem::Boolean { field: path() },
            AnswerProblem::NotANumber { .. } => AnswerProblem::NotANumber { field: path() },
            AnswerProblem::OutOfRange { value, .. } => AnswerProblem::OutOfRange { field: path(), value },
            other => other,
        }
    }
}

fn static_field(field: &str) -> &'static str {
    match field {
        "noul" => "noul",
        "score" => "score",
        "confidence" => "confidence",
        _ => "value",
    }
}

/// One question's rejection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionProblem {
    /// The question id.
    pub question: String,
    /// Why its answer was rejected.
    #[serde(flatten)]
    pub problem: AnswerProblem,
}

impl std::fmt::Display for QuestionProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.question, self.problem)
    }
}

/// Validate the answers to every question in `questions`: the typed answers when all are
/// valid, otherwise every problem found (in question order). `raw` is a `serde_json` map or
/// a [`BorrowedObject`](super::BorrowedObject) read from text; both validate alike.
pub fn validate_answers<O: ObjectView + ?Sized>(
    questions: &Questions,
    raw: &O,
) -> Result<decision_core::policy::Answers, Vec<QuestionProblem>> {
    let mut answers = decision_core::policy::Answers::new();
    let mut problems = Vec::new();
    for (id, question) in questions.iter() {
        match validate_entry(question, raw.get(id)) {
            Ok(answer) => {
                answers.insert(id.to_string(), answer);
            }
            Err(problem) => problems.push(QuestionProblem { question: id.to_string(), problem }),
        }
    }
    if problems.is_empty() { Ok(answers) } else { Err(problems) }
}

/// The result of normalising a response's `answers` (§1.3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Normalized {
    /// Every entry as received (answers to unasked ids included, as the reference keeps them;
    /// the decider hands each node only its own ids).
    pub answers: Map<String, Value>,
    /// Asked ids with no entry.
    pub missing: Vec<String>,
    /// Entries that are unrecognisable: not objects, of no known type, or whose value is not
    /// a finite number (`noul`, `score`) or a non-empty string (`choice`). They stay in
    /// `answers`; validation rejects them.
    pub dropped: Vec<String>,
    /// The provider's own warnings first, then one per missing or dropped id, in words.
    pub warnings: Vec<String>,
}

impl Normalized {
    /// Whether some asked question has no usable entry (missing or dropped): the response
    /// is marked degraded in the log.
    pub fn degraded(&self) -> bool {
        !self.missing.is_empty() || !self.dropped.is_empty()
    }
}

/// Normalise a response's `answers` value against the asked questions. Unrecognisable entries
/// are reported as dropped and mark the response degraded, but stay in `answers`: validation
/// then rejects them with a precise reason, and the audit trail keeps what was received.
/// `server_warnings` come first in the warnings, as in the reference.
pub fn normalize(asked: &Questions, answers: Option<&Value>, server_warnings: Vec<String>) -> Normalized {
    let mut out = Normalized { warnings: server_warnings, ..Normalized::default() };
    if let Some(Value::Object(map)) = answers {
        for (id, entry) in map {
            if !is_recognisable(entry) {
                out.dropped.push(id.clone());
            }
            out.answers.insert(id.clone(), entry.clone());
        }
    }
    out.missing = asked.ids().filter(|id| !out.answers.contains_key(*id)).map(str::to_string).collect();
    if !out.missing.is_empty() {
        out.warnings.push(format!(
            "the backend returned no answer for {}/{} question(s): {}",
            out.missing.len(),
            asked.len(),
            out.missing.join(", ")
        ));
    }
    if !out.dropped.is_empty() {
        out.warnings.push(format!("unrecognisable answers dropped: {}", out.dropped.join(", ")));
    }
    out
}

fn is_recognisable(entry: &Value) -> bool {
    let Some(map) = entry.as_object() else { return false };
    let finite = |key: &str| ObjectView::get(map, key).and_then(Value::as_f64).is_some_and(f64::is_finite);
    match answer_kind(map) {
        Some("noul") => finite("noul"),
        Some("score") => finite("score"),
        Some("choice") => text(ObjectView::get(map, "choice")).is_some_and(|s| !s.is_empty()),
        _ => false,
    }
}

/// The reason of a fail-closed decision: every problem, then what happened.
pub fn invalid_reason(problems: &[QuestionProblem]) -> String {
    let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
    format!("invalid answer ({}) → escalate; no action taken", listed.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn two() -> WireQuestion {
        WireQuestion::Choice {
            instructions: "?".into(),
            criteria: vec![("a".into(), "A".into()), ("b".into(), "B".into())],
        }
    }

    #[test]
    fn normalisation_drops_unrecognisable_entries_and_reports_missing() {
        let mut asked = Questions::new();
        asked.insert("x", two());
        asked.insert("n", WireQuestion::Noul { instructions: "?".into(), criteria: None });
        asked.insert("s", WireQuestion::Score { instructions: "?".into(), criteria: vec!["l".into(), "h".into()] });
        let raw =
            json!({"x": {"type": "choice", "choice": ""}, "n": {"type": "choice", "noul": 0.4}, "extra": {"noul": 1}});
        let out = normalize(&asked, Some(&raw), vec!["server says hi".into()]);
        assert_eq!(out.dropped, ["x"]);
        assert_eq!(out.missing, ["s"]);
        assert!(out.answers.contains_key("x"), "kept for validation and audit");
        assert!(out.answers.contains_key("n"), "value wins over type tag");
        assert!(out.answers.contains_key("extra"));
        assert_eq!(out.warnings[0], "server says hi");
        assert!(out.degraded());
        let fine =
            normalize(&asked, Some(&json!({"x": {"choice": "a"}, "n": {"noul": 0.1}, "s": {"score": 1}})), vec![]);
        assert!(!fine.degraded());
        assert!(fine.warnings.is_empty());
    }

    #[test]
    fn many_keys_are_checked_against_the_offered_ids_in_their_order() {
        let ids: Vec<String> = (0..20).map(|i| format!("o{i}")).collect();
        let question = WireQuestion::Choice {
            instructions: "?".into(),
            criteria: ids.iter().map(|id| (id.clone(), String::new())).collect(),
        };
        // Past the searched bound: o0 and o1 missing, two keys not offered, in this order.
        let mut probabilities: Map<String, Value> = Map::new();
        probabilities.insert("zz".into(), json!(0.0));
        for id in &ids[2..] {
            probabilities.insert(id.clone(), json!(1.0 / 18.0));
        }
        probabilities.insert("aa".into(), json!(0.0));
        let answer = json!({"choice": "o2", "probabilities": probabilities});
        assert_eq!(
            validate_answer(&question, Some(&answer)),
            Err(AnswerProblem::KeysDiffer {
                missing: vec!["o0".into(), "o1".into()],
                extra: vec!["zz".into(), "aa".into()]
            })
        );
        // And all present: valid.
        let all: Map<String, Value> = ids.iter().map(|id| (id.clone(), json!(1.0 / 20.0))).collect();
        assert!(validate_answer(&question, Some(&json!({"choice": "o0", "probabilities": all}))).is_ok());
    }

    #[test]
    fn a_bad_probability_is_named_by_its_path() {
        let problem =
            |b: Value| validate_answer(&two(), Some(&json!({"choice": "a", "probabilities": {"a": 0.9, "b": b}})));
        let named = |b: Value| problem(b).unwrap_err().to_string();
        assert_eq!(named(json!(true)), "`probabilities.b` is a boolean, not a number");
        assert_eq!(named(json!("0.1")), "`probabilities.b` is not a number");
        assert_eq!(problem(json!(1.5)), Err(AnswerProblem::OutOfRange { field: "probabilities.b".into(), value: 1.5 }));
        assert!(problem(json!(0.1)).is_ok());
    }

    #[test]
    fn missing_confidence_is_the_largest_probability() {
        let a = validate_answer(&two(), Some(&json!({"choice": "a", "probabilities": {"a": 0.9, "b": 0.1}}))).unwrap();
        assert_eq!(
            a,
            Answer::Choice {
                choice: "a".into(),
                probabilities: [("a".into(), 0.9), ("b".into(), 0.1)].into(),
                confidence: Some(0.9)
            }
        );
    }
}
