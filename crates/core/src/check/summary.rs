//! The headline summary of a contract.

use serde::Serialize;

use crate::contract::{Contract, Kind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    pub blocks: usize,
    pub questions: usize,
    pub model_decisions: usize,
    pub code_decisions: usize,
    pub gates: usize,
    pub options: usize,
}

impl Summary {
    pub fn of(contract: &Contract) -> Summary {
        let blocks = contract.blocks.len();
        let code_decisions = contract.blocks.iter().filter(|b| b.kind == Kind::Rule).count();
        Summary {
            blocks,
            questions: contract.blocks.iter().map(|b| b.questions.len()).sum(),
            model_decisions: blocks - code_decisions,
            code_decisions,
            gates: contract.blocks.iter().filter(|b| b.is_gate()).count(),
            options: contract.blocks.iter().flat_map(|b| &b.questions).map(|q| q.options.len()).sum(),
        }
    }

    /// e.g. `7 decisions, 9 questions, 7 answered by the decision model, 0 decided by code,
    /// 1 authorisation gate; 22 options in total`
    pub fn headline(&self) -> String {
        let mut parts = vec![
            format!("{} decisions", self.blocks),
            format!("{} questions", self.questions),
            format!("{} answered by the decision model", self.model_decisions),
            format!("{} decided by code", self.code_decisions),
        ];
        if self.gates > 0 {
            parts.push(format!("{} authorisation {}", self.gates, if self.gates == 1 { "gate" } else { "gates" }));
        }
        format!("{}; {} options in total", parts.join(", "), self.options)
    }
}
