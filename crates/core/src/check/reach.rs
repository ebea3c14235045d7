//! Rules that can never decide, where that silently removes an authorisation gate:
//!
//! - a rule shadowed by an earlier one on the same probe — `>=` tiers written in increasing
//!   order (`score:risk >= 2 → auto_audit` before `score:risk >= 3 → ask_human`) leave the
//!   higher tier dead, because first match wins;
//! - a gate rule whose threshold no answer can reach (`prob:x >= 7`).
//!
//! A dead rule is a warning; a dead rule whose action is an authorisation gate
//! ([`GATE_ACTIONS`]) is an error: the contract reads as if a person is asked, and never is.

use crate::contract::Block;
use crate::diag::codes;
use crate::diag::{Diagnostic, Layer, Severity};
use crate::policy::{CompiledPolicy, CompiledRule, Predicate};

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
/// on the question, on the side the comparison needs. Returns that range.
pub(super) fn threshold_unreachable(block: &Block, rule: &CompiledRule) -> Option<(f64, f64, &'static str)> {
    let Predicate::Compare { form, question, threshold } = &rule.predicate else {
        return None;
    };
    let (low, high, what) = form.probe().range(block.question(question)?);
    form.comparison().unreachable(*threshold, low, high).then_some((low, high, what))
}

/// Shadowed rules (a warning, an error for a gate) and gate rules with an unreachable
/// threshold (an error; the range lint then stays quiet about that rule).
pub(super) fn dead_rules(block: &Block, policy: &CompiledPolicy) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Rules after a catch-all are reported by the unreachable-rule lint.
    let reachable = policy.rules.iter().position(|r| r.predicate == Predicate::Fallback).unwrap_or(policy.rules.len());
    let rules = policy.rules.get(..reachable).unwrap_or_default();
    for (index, rule) in rules.iter().enumerate() {
        let gate = is_gate_action(&rule.action);
        let shadow = rules.iter().take(index).find(|earlier| shadows(&earlier.predicate, &rule.predicate));
        if let Some(earlier) = shadow {
            let (code, severity, consequence) = match gate {
                true => (codes::DEAD_GATE, Severity::Error, format!(", so this `{}` gate never fires", rule.action)),
                false => (codes::L_SHADOWED_RULE, Severity::Warning, String::new()),
            };
            out.push(Diagnostic {
                code,
                severity,
                layer: Layer::Policy,
                message: format!(
                    "rule `{}` can never fire: the earlier rule `{}` on line {} matches every answer it matches{consequence}",
                    rule.reason(),
                    earlier.reason(),
                    earlier.span.line
                ),
                span: rule.span,
                block: Some(block.id.clone()),
                help: Some("first match wins: write `>=` tiers from the highest threshold down (and `<` tiers from the lowest up)".into()),
            });
            continue;
        }
        if gate && let Some((low, high, what)) = threshold_unreachable(block, rule) {
            out.push(Diagnostic {
                code: codes::GATE_UNREACHABLE,
                severity: Severity::Error,
                layer: Layer::Policy,
                message: format!(
                    "no answer reaches the threshold of `{}`: it is outside [{low}, {high}] ({what}), so this `{}` gate never fires",
                    rule.text, rule.action
                ),
                span: rule.span,
                block: Some(block.id.clone()),
                help: Some(format!("use a threshold inside [{low}, {high}]")),
            });
        }
    }
    out
}
