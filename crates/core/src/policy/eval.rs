//! Policy evaluation: first true rule wins; no match escalates. The margin is the distance
//! from the probe to the closest threshold among the rules up to the one that decided.

use serde::Serialize;

use super::{Answer, Answers, CompiledPolicy, Predicate, ThresholdForm};

/// The reason given when no rule matched.
pub const NO_MATCH_REASON: &str = "no rule matched and there is no fallback → escalate";

/// The closest threshold to the value actually seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Margin {
    /// The question the rule reads.
    pub question: String,
    /// The rule's predicate kind ([`Predicate::kind_name`]).
    pub kind: &'static str,
    /// The rule's threshold.
    pub threshold: f64,
    /// The value the rule's probe read.
    pub value: f64,
    /// `|value − threshold|`.
    pub margin: f64,
}

/// What a policy decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The action of the rule that fired, or `escalate`.
    pub action: String,
    /// The rule's reason ([`super::CompiledRule::reason`]), or [`NO_MATCH_REASON`].
    pub reason: String,
    /// Index of the rule that fired; `None` when nothing matched.
    pub rule: Option<usize>,
    /// The closest threshold among the rules up to the one that fired, if any applied.
    pub margin: Option<Margin>,
}

/// The value the form's probe reads from the answer to `question`: `None` when there is no
/// answer or it is of a type the probe does not read.
fn read(form: ThresholdForm, question: &str, answers: &Answers) -> Option<f64> {
    form.probe().read(answers.get(question)?)
}

fn holds(predicate: &Predicate, answers: &Answers) -> bool {
    match predicate {
        Predicate::Fallback => true,
        Predicate::Never => false,
        Predicate::Compare { form, question, threshold } => form.holds(read(*form, question, answers), *threshold),
        Predicate::Picked { question, option } => {
            matches!(answers.get(question), Some(Answer::Choice { choice, .. }) if choice == option)
        }
    }
}

/// Evaluate a compiled policy on answers.
pub fn evaluate(policy: &CompiledPolicy, answers: &Answers) -> Decision {
    let winner = policy.rules.iter().position(|rule| holds(&rule.predicate, answers));
    let margin = winner.and_then(|upto| closest_margin(policy, answers, upto));
    match winner.and_then(|i| policy.rules.get(i).map(|rule| (i, rule))) {
        Some((i, rule)) => Decision { action: rule.action.clone(), reason: rule.reason(), rule: Some(i), margin },
        None => Decision { action: "escalate".into(), reason: NO_MATCH_REASON.into(), rule: None, margin: None },
    }
}

fn closest_margin(policy: &CompiledPolicy, answers: &Answers, upto: usize) -> Option<Margin> {
    policy
        .rules
        .iter()
        .take(upto + 1)
        .filter_map(|rule| {
            let Predicate::Compare { form, question, threshold } = &rule.predicate else {
                return None;
            };
            let value = read(*form, question, answers)?;
            Some(Margin {
                question: question.clone(),
                kind: form.kind(),
                threshold: *threshold,
                value,
                margin: (value - threshold).abs(),
            })
        })
        .min_by(|a, b| a.margin.total_cmp(&b.margin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::policy::{Comparison, CompiledRule, Probe};
    use std::collections::BTreeMap;

    fn compare(probe: Probe, comparison: Comparison, question: &str, threshold: f64) -> Predicate {
        Predicate::compare(probe, comparison, question, threshold).unwrap()
    }

    fn rule(predicate: Predicate, action: &str, text: &str) -> CompiledRule {
        CompiledRule { predicate, action: action.into(), text: text.into(), span: Span::default() }
    }

    fn choice(p: f64) -> Answers {
        let probabilities = BTreeMap::from([("a".to_string(), p), ("b".to_string(), 1.0 - p)]);
        BTreeMap::from([("tool".to_string(), Answer::Choice { choice: "a".into(), probabilities, confidence: None })])
    }

    fn pick_tool() -> CompiledPolicy {
        CompiledPolicy {
            block: "pick_tool".into(),
            rules: vec![
                rule(compare(Probe::Top, Comparison::AtLeast, "tool", 0.6), "call", "top >= 0.6"),
                rule(Predicate::Fallback, "escalate", "else"),
            ],
        }
    }

    #[test]
    fn first_match_wins_with_margin() {
        let d = evaluate(&pick_tool(), &choice(0.71));
        assert_eq!(d.action, "call");
        assert_eq!(d.rule, Some(0));
        assert_eq!(d.reason, "top >= 0.6 → call");
        let m = d.margin.unwrap();
        assert!((m.margin - 0.11).abs() < 1e-9);
        assert_eq!(m.kind, "topGte");
        let at = evaluate(&pick_tool(), &choice(0.6));
        assert_eq!(at.action, "call");
        assert_eq!(at.margin.unwrap().margin, 0.0);
        let below = evaluate(&pick_tool(), &choice(0.59));
        assert_eq!(below.action, "escalate");
        assert_eq!(below.rule, Some(1));
    }

    #[test]
    fn no_match_escalates_without_margin() {
        let policy = CompiledPolicy {
            block: "b".into(),
            rules: vec![rule(compare(Probe::Prob, Comparison::AtLeast, "ok", 0.6), "continue", "prob:ok >= 0.6")],
        };
        let answers = BTreeMap::from([("ok".to_string(), Answer::Noul { noul: 0.2 })]);
        let d = evaluate(&policy, &answers);
        assert_eq!((d.action.as_str(), d.rule, d.margin), ("escalate", None, None));
    }

    #[test]
    fn top_lt_is_true_for_missing_answers_and_prob_lt_is_not() {
        let policy = CompiledPolicy {
            block: "b".into(),
            rules: vec![
                rule(compare(Probe::Prob, Comparison::Below, "q", 0.5), "stop", "prob:q < 0.5"),
                rule(compare(Probe::Top, Comparison::Below, "q", 0.5), "revise", "top < 0.5"),
            ],
        };
        assert_eq!(evaluate(&policy, &Answers::new()).action, "revise");
        let noul = |p| BTreeMap::from([("q".to_string(), Answer::Noul { noul: p })]);
        // top on a noul is max(p, 1-p): 0.05 is decisive.
        assert_eq!(evaluate(&policy, &noul(0.05)).action, "stop");
        assert_eq!(evaluate(&policy, &noul(0.55)).action, "escalate");
    }

    #[test]
    fn score_and_picked() {
        let policy = CompiledPolicy {
            block: "grade_risk".into(),
            rules: vec![
                rule(compare(Probe::Score, Comparison::AtLeast, "risk", 3.0), "ask_human", "score:risk >= 3"),
                rule(Predicate::Picked { question: "tool".into(), option: "a".into() }, "call", "picked:tool = a"),
                rule(Predicate::Fallback, "auto", "else"),
            ],
        };
        let mut answers = choice(0.9);
        answers
            .insert("risk".into(), Answer::Score { score: 2.0, probabilities: BTreeMap::new(), confidence: Some(0.5) });
        let d = evaluate(&policy, &answers);
        assert_eq!(d.action, "call");
        assert_eq!(d.margin.unwrap().margin, 1.0);
        answers.insert("risk".into(), Answer::Score { score: 3.0, probabilities: BTreeMap::new(), confidence: None });
        assert_eq!(evaluate(&policy, &answers).action, "ask_human");
    }
}
