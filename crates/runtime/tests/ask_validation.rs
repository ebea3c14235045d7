//! Every answer-validation rule (question-space.md Part 1 item 4), each with a failing and a
//! passing example.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_core::policy::Answer;
use decision_protocol::ask::{AnswerProblem, Questions, WireQuestion, validate_answer, validate_answers};
use serde_json::{Map, Value, json};

fn choice() -> WireQuestion {
    WireQuestion::Choice {
        instructions: "Which?".into(),
        criteria: vec![("a".into(), "first".into()), ("b".into(), "second".into())],
    }
}

fn noul() -> WireQuestion {
    WireQuestion::Noul { instructions: "Ok?".into(), criteria: Some(("yes".into(), "no".into())) }
}

fn score() -> WireQuestion {
    WireQuestion::Score {
        instructions: "Risk?".into(),
        criteria: vec!["read".into(), "write".into(), "irreversible".into(), "destructive".into()],
    }
}

fn valid_choice() -> Value {
    json!({"type": "choice", "choice": "a", "probabilities": {"a": 0.7, "b": 0.3}, "confidence": 0.4})
}

fn check(question: &WireQuestion, answer: Value) -> Result<Answer, AnswerProblem> {
    validate_answer(question, Some(&answer))
}

fn mutate(f: impl FnOnce(&mut Map<String, Value>)) -> Value {
    let mut v = valid_choice();
    f(v.as_object_mut().unwrap());
    v
}

#[test]
fn a_valid_choice_passes() {
    let a = check(&choice(), valid_choice()).unwrap();
    assert_eq!(
        a,
        Answer::Choice {
            choice: "a".into(),
            probabilities: [("a".into(), 0.7), ("b".into(), 0.3)].into(),
            confidence: Some(0.4)
        }
    );
}

#[test]
fn rule_choice_is_an_offered_string() {
    let e = check(&choice(), mutate(|m| drop(m.insert("choice".into(), json!("invented"))))).unwrap_err();
    assert_eq!(e, AnswerProblem::NotOffered { choice: "invented".into() });
    assert_eq!(
        check(&choice(), mutate(|m| drop(m.insert("choice".into(), json!(1))))).unwrap_err(),
        AnswerProblem::ChoiceNotString
    );
    assert_eq!(
        check(
            &choice(),
            mutate(|m| {
                m.remove("choice");
                m.remove("type");
            })
        )
        .unwrap_err(),
        AnswerProblem::Unrecognised,
        "without `choice` or a type tag the entry has no type"
    );
    assert_eq!(
        check(&choice(), json!({"type": "choice", "probabilities": {"a": 0.7, "b": 0.3}})).unwrap_err(),
        AnswerProblem::MissingField { field: "choice" }
    );
    assert!(check(&choice(), mutate(|m| drop(m.insert("choice".into(), json!("b"))))).is_err(), "b is not the argmax");
}

#[test]
fn rule_probability_keys_equal_the_offered_set() {
    let missing = check(&choice(), json!({"choice": "a", "probabilities": {"a": 1.0}})).unwrap_err();
    assert_eq!(missing, AnswerProblem::KeysDiffer { missing: vec!["b".into()], extra: vec![] });
    let extra = check(&choice(), json!({"choice": "a", "probabilities": {"a": 0.6, "b": 0.3, "c": 0.1}})).unwrap_err();
    assert_eq!(extra, AnswerProblem::KeysDiffer { missing: vec![], extra: vec!["c".into()] });
    assert_eq!(
        check(&choice(), json!({"choice": "a", "probabilities": [0.7, 0.3]})).unwrap_err(),
        AnswerProblem::ProbabilitiesNotObject
    );
    assert_eq!(
        check(&choice(), json!({"choice": "a"})).unwrap_err(),
        AnswerProblem::MissingField { field: "probabilities" }
    );
    assert!(check(&choice(), json!({"choice": "a", "probabilities": {"b": 0.3, "a": 0.7}})).is_ok(), "order is free");
}

#[test]
fn rule_values_are_finite_numbers_in_unit_range_and_booleans_are_rejected() {
    let bad = |p: Value| check(&choice(), json!({"choice": "a", "probabilities": {"a": p, "b": 0.3}})).unwrap_err();
    assert_eq!(bad(json!(true)), AnswerProblem::Boolean { field: "probabilities.a".into() });
    assert_eq!(bad(json!("0.7")), AnswerProblem::NotANumber { field: "probabilities.a".into() });
    assert_eq!(bad(json!(null)), AnswerProblem::NotANumber { field: "probabilities.a".into() });
    assert_eq!(bad(json!(-1)), AnswerProblem::OutOfRange { field: "probabilities.a".into(), value: -1.0 });
    assert_eq!(bad(json!(1.2)), AnswerProblem::OutOfRange { field: "probabilities.a".into(), value: 1.2 });
    // JSON has no NaN or infinity (1e400 does not even parse), and `serde_json::Value` cannot
    // hold one; a provider that computes NaN can only produce `null`, which is rejected above.
    assert!(serde_json::from_str::<Value>(r#"{"a":1e400}"#).is_err());
    assert!(
        check(&choice(), json!({"choice": "a", "probabilities": {"a": 1, "b": 0}})).is_ok(),
        "integers are numbers"
    );
}

#[test]
fn rule_confidence_is_a_finite_number_in_unit_range() {
    let with = |c: Value| check(&choice(), mutate(|m| drop(m.insert("confidence".into(), c))));
    assert_eq!(with(json!(5)).unwrap_err(), AnswerProblem::OutOfRange { field: "confidence".into(), value: 5.0 });
    assert_eq!(with(json!(true)).unwrap_err(), AnswerProblem::Boolean { field: "confidence".into() });
    assert_eq!(with(json!("high")).unwrap_err(), AnswerProblem::NotANumber { field: "confidence".into() });
    assert!(with(json!(0)).is_ok());
    assert!(with(json!(1)).is_ok());
}

#[test]
fn rule_probabilities_sum_to_one_within_two_hundredths() {
    let sum = |a: f64, b: f64| check(&choice(), json!({"choice": "a", "probabilities": {"a": a, "b": b}}));
    assert!(sum(0.7, 0.32).is_ok(), "1.02 is inside");
    assert!(sum(0.6, 0.38).is_ok(), "0.98 is inside");
    assert!(matches!(sum(0.7, 0.33), Err(AnswerProblem::SumOff { .. })), "1.03 is outside");
    assert!(matches!(sum(0.5, 0.47), Err(AnswerProblem::SumOff { .. })), "0.97 is outside");
    assert!(matches!(sum(0.0, 0.0), Err(AnswerProblem::SumOff { .. })));
}

#[test]
fn rule_choice_is_the_argmax_within_one_millionth() {
    let pick = |a: f64, b: f64| check(&choice(), json!({"choice": "a", "probabilities": {"a": a, "b": b}}));
    assert_eq!(pick(0.3, 0.7).unwrap_err(), AnswerProblem::NotArgmax { choice: "a".into(), p: 0.3, max: 0.7 });
    assert!(pick(0.5, 0.5).is_ok(), "a tie is an argmax");
    assert!(pick(0.4999995, 0.5000005).is_ok(), "within 1e-6");
    assert!(pick(0.49999, 0.50001).is_err(), "beyond 1e-6");
}

#[test]
fn rule_noul_is_a_probability_in_unit_range() {
    assert_eq!(check(&noul(), json!({"type": "noul", "noul": 0.95})).unwrap(), Answer::Noul { noul: 0.95 });
    assert!(check(&noul(), json!({"noul": 0})).is_ok());
    assert!(check(&noul(), json!({"noul": 1})).is_ok());
    assert_eq!(
        check(&noul(), json!({"noul": 1.5})).unwrap_err(),
        AnswerProblem::OutOfRange { field: "noul".into(), value: 1.5 },
        "rejected, not clamped"
    );
    assert_eq!(
        check(&noul(), json!({"noul": -0.1})).unwrap_err(),
        AnswerProblem::OutOfRange { field: "noul".into(), value: -0.1 }
    );
    assert_eq!(check(&noul(), json!({"noul": true})).unwrap_err(), AnswerProblem::Boolean { field: "noul".into() });
    assert_eq!(check(&noul(), json!({"noul": "0.9"})).unwrap_err(), AnswerProblem::NotANumber { field: "noul".into() });
    assert_eq!(check(&noul(), json!({"type": "noul"})).unwrap_err(), AnswerProblem::MissingField { field: "noul" });
    assert!(check(&noul(), json!({"noul": 0.9, "confidence": 3})).is_err(), "a present confidence is checked too");
}

#[test]
fn rule_score_is_within_the_levels_with_probabilities_over_the_levels() {
    let probabilities = json!({"0": 0.1, "1": 0.2, "2": 0.3, "3": 0.4});
    let ok = check(&score(), json!({"type": "score", "score": 2.0, "probabilities": probabilities, "confidence": 0.3}))
        .unwrap();
    assert!(matches!(ok, Answer::Score { score, .. } if score == 2.0));
    assert!(check(&score(), json!({"score": 3, "probabilities": probabilities})).is_ok(), "the top level is in range");
    assert!(check(&score(), json!({"score": 0, "probabilities": probabilities})).is_ok());
    assert_eq!(
        check(&score(), json!({"score": 3.5, "probabilities": probabilities})).unwrap_err(),
        AnswerProblem::ScoreOutOfRange { score: 3.5, max_level: 3 }
    );
    assert_eq!(
        check(&score(), json!({"score": -1, "probabilities": probabilities})).unwrap_err(),
        AnswerProblem::ScoreOutOfRange { score: -1.0, max_level: 3 }
    );
    assert_eq!(
        check(&score(), json!({"score": 1, "probabilities": {"0": 0.5, "1": 0.5}})).unwrap_err(),
        AnswerProblem::KeysDiffer { missing: vec!["2".into(), "3".into()], extra: vec![] }
    );
    assert_eq!(
        check(&score(), json!({"score": 1})).unwrap_err(),
        AnswerProblem::MissingField { field: "probabilities" }
    );
    assert!(matches!(
        check(&score(), json!({"score": 1, "probabilities": {"0": 0.5, "1": 0.5, "2": 0.5, "3": 0.5}})),
        Err(AnswerProblem::SumOff { .. })
    ));
    assert_eq!(check(&score(), json!({"score": false})).unwrap_err(), AnswerProblem::Boolean { field: "score".into() });
}

#[test]
fn rule_answer_type_matches_the_question() {
    assert_eq!(
        check(&choice(), json!({"noul": 0.5})).unwrap_err(),
        AnswerProblem::WrongType { expected: "choice", found: "noul" }
    );
    assert_eq!(
        check(&noul(), json!({"type": "choice", "noul": 0.5})).unwrap(),
        Answer::Noul { noul: 0.5 },
        "the value wins over the type tag"
    );
    assert_eq!(
        check(&noul(), valid_choice()).unwrap_err(),
        AnswerProblem::WrongType { expected: "noul", found: "choice" }
    );
    assert_eq!(check(&choice(), json!("a")).unwrap_err(), AnswerProblem::NotAnObject);
    assert_eq!(check(&choice(), json!({"type": "vote"})).unwrap_err(), AnswerProblem::Unrecognised);
    assert_eq!(validate_answer(&choice(), None).unwrap_err(), AnswerProblem::Missing);
    let empty = WireQuestion::Choice { instructions: "?".into(), criteria: vec![] };
    assert_eq!(check(&empty, valid_choice()).unwrap_err(), AnswerProblem::NothingOffered);
}

#[test]
fn the_reference_six_mutations_are_all_rejected() {
    // jev-ultrafast's validate_choice tests (§A5), plus its TypeScript boolean cases.
    let nan: Value =
        serde_json::from_str(r#"{"choice":"a","probabilities":{"a":null,"b":0.3},"confidence":0.4}"#).unwrap();
    let cases = [
        ("unknown", mutate(|m| drop(m.insert("choice".into(), json!("invented"))))),
        ("nan", nan),
        ("missing", mutate(|m| drop(m["probabilities"].as_object_mut().unwrap().remove("b")))),
        ("negative", mutate(|m| m["probabilities"]["b"] = json!(-1))),
        ("non_max", mutate(|m| drop(m.insert("choice".into(), json!("b"))))),
        ("confidence", mutate(|m| drop(m.insert("confidence".into(), json!(5))))),
        ("bool_probability", mutate(|m| m["probabilities"]["a"] = json!(true))),
        ("bool_confidence", mutate(|m| drop(m.insert("confidence".into(), json!(false))))),
    ];
    for (name, answer) in cases {
        assert!(check(&choice(), answer).is_err(), "{name} must be rejected");
    }
    assert!(check(&choice(), valid_choice()).is_ok(), "the unmodified answer passes");
}

#[test]
fn all_questions_are_validated_and_every_problem_is_reported() {
    let mut questions = Questions::new();
    questions.insert("tool", choice());
    questions.insert("ok", noul());
    let raw: Map<String, Value> = serde_json::from_value(json!({"tool": valid_choice(), "ok": {"noul": 0.2}})).unwrap();
    let answers = validate_answers(&questions, &raw).unwrap();
    assert_eq!(answers.len(), 2);
    let bad: Map<String, Value> =
        serde_json::from_value(json!({"tool": {"choice": "zzz"}, "stray": {"noul": 1}})).unwrap();
    let problems = validate_answers(&questions, &bad).unwrap_err();
    assert_eq!(problems.len(), 2);
    assert_eq!(problems[0].question, "tool");
    assert_eq!(problems[1].problem, AnswerProblem::Missing);
    let shown = serde_json::to_value(&problems[0]).unwrap();
    assert_eq!(shown, json!({"question": "tool", "problem": "not_offered", "choice": "zzz"}));
}
