//! Rules that can never decide, where that silently removes an authorisation gate:
//!
//! - a rule shadowed by an earlier one on the same probe — `>=` tiers written in increasing
//!   order (`score:risk >= 2 → auto_audit` before `score:risk >= 3 → ask_human`) leave the
//!   higher tier dead, because first match wins;
//! - a gate rule whose threshold no answer can reach (`prob:x >= 7`).
//!
//! A dead rule is a warning; a dead rule whose action is an authorisation gate
//! ([`GATE_ACTIONS`]) is an error: the contract reads as if a person is asked, and never is.

use std::collections::HashMap;

use super::problem::CheckProblem;
use crate::contract::{Block, Question};
use crate::diag::{Diagnostic, Severity, Sink};
use crate::policy::{Comparison, CompiledPolicy, CompiledRule, Predicate, QuestionIndex, ThresholdForm};

/// The actions that stop a decision for a person or a fallback path: a rule that carries one
/// and can never fire is an error, not a lint.
pub const GATE_ACTIONS: [&str; 2] = ["ask_human", "escalate"];

/// Whether `action` is an authorisation gate.
pub fn is_gate_action(action: &str) -> bool {
    GATE_ACTIONS.contains(&action)
}

/// Whether `earlier` holds whenever `later` does, so that `later` never decides.
fn shadows(earlier: &Predicate, later: &Predicate) -> bool {
    match (earlier, later) {
        (Predicate::Picked { question: q1, option: o1 }, Predicate::Picked { question: q2, option: o2 }) => {
            q1 == q2 && o1 == o2
        }
        (
            Predicate::Compare { form: f1, question: q1, threshold: t1 },
            Predicate::Compare { form: f2, question: q2, threshold: t2 },
        ) if f1 == f2 && q1 == q2 => f1.comparison().covers(*t1, *t2),
        _ => false,
    }
}

/// Whether no answer can make the rule hold: a threshold outside the range its probe takes
/// on the question, on the side the comparison needs. Returns that range. `question` is the
/// block's question the rule names (`None`: the block has no such question).
pub(super) fn threshold_unreachable(
    question: Option<&Question>,
    rule: &CompiledRule,
) -> Option<(f64, f64, &'static str)> {
    let Predicate::Compare { form, threshold, .. } = &rule.predicate else {
        return None;
    };
    let (low, high, what) = form.probe().range(question?);
    form.comparison().unreachable(*threshold, low, high).then_some((low, high, what))
}

/// Policies up to this many rules are searched for a shadowing rule by a scan of the earlier
/// ones; longer ones through [`Earlier`], so the check stays linear in the file's size.
const SCAN: usize = 16;

/// The first earlier rule that shadows `rules[index]`.
fn first_shadow(rules: &[CompiledRule], index: usize) -> Option<&CompiledRule> {
    let rule = rules.get(index)?;
    rules.iter().take(index).find(|earlier| shadows(&earlier.predicate, &rule.predicate))
}

/// The rules seen so far, indexed so that the first of them that shadows a new rule is found
/// with a lookup: what [`first_shadow`] finds with a scan.
#[derive(Default)]
struct Earlier<'r> {
    /// Per (threshold form, question): the rules whose threshold is beyond that of every rule
    /// before them (lower for `>=`, higher for `<`), in order. The first earlier rule that
    /// holds whenever a threshold rule holds is always one of these.
    tiers: HashMap<(ThresholdForm, &'r str), Vec<(f64, &'r CompiledRule)>>,
    /// Per (question, option): the first `picked` rule.
    picked: HashMap<(&'r str, &'r str), &'r CompiledRule>,
}

impl<'r> Earlier<'r> {
    /// The first rule seen that shadows `rule`; then `rule` is seen.
    fn shadow_then_add(&mut self, rule: &'r CompiledRule) -> Option<&'r CompiledRule> {
        let (form, question, threshold) = match &rule.predicate {
            Predicate::Picked { question, option } => {
                let first = *self.picked.entry((question.as_str(), option.as_str())).or_insert(rule);
                return (!std::ptr::eq(first, rule)).then_some(first);
            }
            Predicate::Compare { form, question, threshold } => (*form, question.as_str(), *threshold),
            _ => return None,
        };
        // A NaN threshold compares false with everything: it neither shadows nor is shadowed.
        if threshold.is_nan() {
            return None;
        }
        let gte = form.comparison() == Comparison::AtLeast;
        let tiers = self.tiers.entry((form, question)).or_default();
        // `>=` tiers descend, `<` tiers ascend: those that hold whenever `rule` does are a suffix.
        let at = tiers.partition_point(|(t, _)| if gte { *t > threshold } else { *t < threshold });
        let shadow = tiers.get(at).map(|(_, earlier)| *earlier);
        let beyond = tiers.last().is_none_or(|(t, _)| if gte { threshold < *t } else { threshold > *t });
        if beyond {
            tiers.push((threshold, rule));
        }
        shadow
    }
}

/// Shadowed rules (a warning, an error for a gate) and gate rules with an unreachable
/// threshold (an error; the range lint then stays quiet about that rule).
pub(super) fn dead_rules(block: &Block, policy: &CompiledPolicy, out: &mut dyn Sink) {
    // Rules after a catch-all are reported by the unreachable-rule lint.
    let reachable = policy.rules.iter().position(|r| r.predicate == Predicate::Fallback).unwrap_or(policy.rules.len());
    let rules = policy.rules.get(..reachable).unwrap_or_default();
    let questions = QuestionIndex::new(&block.questions);
    let mut earlier = (rules.len() > SCAN).then(Earlier::default);
    for (index, rule) in rules.iter().enumerate() {
        let gate = is_gate_action(&rule.action);
        let shadow = match &mut earlier {
            Some(earlier) => earlier.shadow_then_add(rule),
            None => first_shadow(rules, index),
        };
        if let Some(earlier) = shadow {
            let problem = CheckProblem::Shadowed {
                rule: &rule.reason(),
                earlier: &earlier.reason(),
                earlier_line: earlier.span.line,
                gate: gate.then_some(rule.action.as_str()),
            };
            super::report(out, &problem, rule.span, block);
            continue;
        }
        let question = || rule.predicate.question().and_then(|q| questions.get(q));
        if gate && let Some((low, high, what)) = threshold_unreachable(question(), rule) {
            let problem =
                CheckProblem::GateUnreachable { predicate: &rule.text, action: &rule.action, low, high, what };
            super::report(out, &problem, rule.span, block);
        }
    }
}

/// Whether an `ask_human` rule of the block can fire: it comes before any catch-all, its
/// predicate compiled, no earlier rule shadows it and its threshold is reachable. A block
/// whose every such rule is dead asks nobody, so it is not counted as an authorisation gate.
pub(super) fn has_live_gate(block: &Block, policy: &CompiledPolicy) -> bool {
    /// The start of every rule [`dead_rules`] reports as an error (a dead gate); nothing
    /// else is kept, so no block id is copied.
    struct DeadGates(Vec<usize>);
    impl Sink for DeadGates {
        fn push(&mut self, diagnostic: Diagnostic) {
            if diagnostic.is_error() {
                self.0.push(diagnostic.span.start);
            }
        }
        fn keeps(&self, _: Severity) -> bool {
            false
        }
    }
    let reachable =
        policy.rules.iter().position(|r| r.predicate == Predicate::Fallback).map_or(policy.rules.len(), |i| i + 1);
    let candidates = || {
        policy
            .rules
            .get(..reachable)
            .unwrap_or_default()
            .iter()
            .filter(|r| r.action == "ask_human" && r.predicate != Predicate::Never)
    };
    if candidates().next().is_none() {
        return false;
    }
    let mut dead = DeadGates(Vec::new());
    dead_rules(block, policy, &mut dead);
    candidates().any(|rule| !dead.0.contains(&rule.span.start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::policy::Probe;

    fn compare(probe: Probe, comparison: Comparison, question: &str, threshold: f64) -> Predicate {
        Predicate::compare(probe, comparison, question, threshold).unwrap()
    }

    fn rule(predicate: Predicate) -> CompiledRule {
        CompiledRule { predicate, action: "continue".into(), text: String::new(), span: Span::default() }
    }

    /// A mix of every shadowing case: both tier directions on two questions, equal and NaN
    /// thresholds, `picked` repeats, and rules that shadow nothing.
    fn rules() -> Vec<CompiledRule> {
        let mut out = Vec::new();
        // A fixed pseudo-random walk, so the thresholds go up and down.
        let mut x: u64 = 7;
        for i in 0..400 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let question = if (x >> 40).is_multiple_of(2) { "a" } else { "b" }.to_string();
            let threshold = match (x >> 20) % 23 {
                0 => f64::NAN,
                n => n as f64 / 10.0,
            };
            out.push(rule(match i % 5 {
                0 => compare(Probe::Prob, Comparison::AtLeast, &question, threshold),
                1 => compare(Probe::Prob, Comparison::Below, &question, threshold),
                2 => compare(Probe::Score, Comparison::AtLeast, &question, threshold),
                3 => Predicate::Picked { question, option: format!("o{}", (x >> 30) % 7) },
                _ => Predicate::Never,
            }));
        }
        out
    }

    #[test]
    fn the_index_finds_the_shadow_the_scan_finds() {
        let rules = rules();
        let mut earlier = Earlier::default();
        let mut found = 0;
        for (index, rule) in rules.iter().enumerate() {
            let indexed = earlier.shadow_then_add(rule).map(std::ptr::from_ref);
            let scanned = first_shadow(&rules, index).map(std::ptr::from_ref);
            assert_eq!(indexed, scanned, "rule {index}: {:?}", rule.predicate);
            found += usize::from(scanned.is_some());
        }
        // Both sides of the rule are exercised: many rules are shadowed, many are not.
        assert!(found > 100 && found < 300, "{found}");
    }
}
