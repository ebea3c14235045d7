//! Policies: compile `- predicate → action` rules against a block's questions, and evaluate
//! them on answers (first match wins; no match escalates).

#![deny(missing_docs)]

mod answer;
mod compile;
mod eval;
mod overrides;
mod predicate;

pub use answer::{Answer, Answers};
pub(crate) use compile::QuestionIndex;
pub use compile::{CompileError, compile_block, compile_predicate};
pub use eval::{Decision, Margin, NO_MATCH_REASON, evaluate};
pub use overrides::{Gate, GateError, apply_gates, gate_note, parse_gate, parse_gates};
pub use predicate::{Comparison, Predicate, Probe, THRESHOLD_FORMS, Target, ThresholdForm};

use serde::Serialize;

use crate::diag::Span;

/// The texts `else`, `_`, `否则` and `其余`: a true catch-all.
pub const FALLBACK_FORMS: [&str; 4] = ["else", "_", "否则", "其余"];

/// One compiled rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompiledRule {
    /// The predicate; [`Predicate::Never`] when it did not compile.
    pub predicate: Predicate,
    /// The action the rule yields when its predicate holds.
    pub action: String,
    /// The predicate as written (trimmed).
    pub text: String,
    /// The rule's line.
    pub span: Span,
}

impl CompiledRule {
    /// The reason text: the effective predicate, ` → `, the action. A threshold override
    /// replaces the number at the end of the predicate text.
    pub fn reason(&self) -> String {
        // Joined by hand: it is made for every decision, and `format!` costs several times
        // the copy.
        let mut reason = String::with_capacity(self.text.len() + " → ".len() + self.action.len());
        reason.push_str(&self.text);
        reason.push_str(" → ");
        reason.push_str(&self.action);
        reason
    }
}

/// A block's compiled policy, in document order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CompiledPolicy {
    /// The id of the block the policy belongs to.
    pub block: String,
    /// Every rule, including those that did not compile (they keep their place).
    pub rules: Vec<CompiledRule>,
}

impl CompiledPolicy {
    /// Whether every rule compiled.
    pub fn is_ok(&self) -> bool {
        self.rules.iter().all(|r| r.predicate != Predicate::Never)
    }
}
