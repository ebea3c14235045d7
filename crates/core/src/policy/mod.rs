//! Policies: compile `- predicate → action` rules against a block's questions, and evaluate
//! them on answers (first match wins; no match escalates).

mod answer;
mod compile;
mod eval;
mod overrides;

pub use answer::{Answer, Answers};
pub(crate) use compile::QuestionIndex;
pub use compile::{CompileError, compile_block, compile_predicate};
pub use eval::{Decision, Margin, NO_MATCH_REASON, evaluate};
pub use overrides::{Gate, GateError, apply_gates, gate_note, parse_gate, parse_gates};

use serde::Serialize;

use crate::diag::Span;

/// The texts `else`, `_`, `否则` and `其余`: a true catch-all.
pub const FALLBACK_FORMS: [&str; 4] = ["else", "_", "否则", "其余"];

/// A compiled predicate. Each threshold form has a probe: the quantity it compares.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Predicate {
    /// `else` / `_` / `否则` / `其余`: always true.
    Fallback,
    /// `top >= t` on the block's only question.
    TopGte { question: String, threshold: f64 },
    /// `top < t`: exactly `!(top >= t)`, so also true when the answer is missing.
    TopLt { question: String, threshold: f64 },
    /// `prob:q >= t` on a noul question.
    ProbGte { question: String, threshold: f64 },
    /// `prob:q < t` on a noul question.
    ProbLt { question: String, threshold: f64 },
    /// `score:q >= t` on a score question.
    ScoreGte { question: String, threshold: f64 },
    /// `picked:q = option` on a choice question.
    Picked { question: String, option: String },
    /// A predicate that did not compile: never true, so the policy falls through.
    Never,
}

impl Predicate {
    /// The predicate's threshold, if it has one.
    pub fn threshold(&self) -> Option<f64> {
        match self {
            Predicate::TopGte { threshold, .. }
            | Predicate::TopLt { threshold, .. }
            | Predicate::ProbGte { threshold, .. }
            | Predicate::ProbLt { threshold, .. }
            | Predicate::ScoreGte { threshold, .. } => Some(*threshold),
            _ => None,
        }
    }

    /// The question the predicate reads, if any.
    pub fn question(&self) -> Option<&str> {
        match self {
            Predicate::TopGte { question, .. }
            | Predicate::TopLt { question, .. }
            | Predicate::ProbGte { question, .. }
            | Predicate::ProbLt { question, .. }
            | Predicate::ScoreGte { question, .. }
            | Predicate::Picked { question, .. } => Some(question),
            Predicate::Fallback | Predicate::Never => None,
        }
    }

    /// The reference's name for the predicate kind (as used in margins).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Predicate::Fallback => "else",
            Predicate::TopGte { .. } => "topGte",
            Predicate::TopLt { .. } => "topLt",
            Predicate::ProbGte { .. } => "probGte",
            Predicate::ProbLt { .. } => "probLt",
            Predicate::ScoreGte { .. } => "scoreGte",
            Predicate::Picked { .. } => "picked",
            Predicate::Never => "uncompiled",
        }
    }
}

/// One compiled rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompiledRule {
    pub predicate: Predicate,
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
        format!("{} → {}", self.text, self.action)
    }
}

/// A block's compiled policy, in document order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CompiledPolicy {
    pub block: String,
    pub rules: Vec<CompiledRule>,
}

impl CompiledPolicy {
    /// Whether every rule compiled.
    pub fn is_ok(&self) -> bool {
        self.rules.iter().all(|r| r.predicate != Predicate::Never)
    }
}
