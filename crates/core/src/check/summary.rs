//! The headline summary of a contract.

use serde::Serialize;

use crate::contract::{Contract, Kind};
use crate::policy::CompiledPolicy;

/// Counts over a contract's blocks, as shown by `decision check` and recorded in logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    /// Decision blocks (`##` sections, generator sections excluded).
    pub blocks: usize,
    /// Questions over all blocks.
    pub questions: usize,
    /// Blocks whose kind is not `rule`: answered by the decision model.
    pub model_decisions: usize,
    /// Blocks of kind `rule`: decided by code from the policy alone.
    pub code_decisions: usize,
    /// Authorisation gates: blocks with a rule whose action is `ask_human` (with
    /// [`Summary::of_checked`], one that can fire).
    pub gates: usize,
    /// Options over all questions.
    pub options: usize,
}

impl Summary {
    /// Count a contract's blocks, questions, gates and options.
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

    /// [`Summary::of`], with a block counted as an authorisation gate only when one of its
    /// `ask_human` rules can fire: a gate that is shadowed, unreachable or after a catch-all
    /// asks nobody. `policies` are the blocks' compiled policies, in block order.
    pub fn of_checked(contract: &Contract, policies: &[CompiledPolicy]) -> Summary {
        let mut summary = Summary::of(contract);
        summary.gates = contract
            .blocks
            .iter()
            .zip(policies)
            .filter(|(block, policy)| block.is_gate() && super::reach::has_live_gate(block, policy))
            .count();
        summary
    }

    /// e.g. `7 decisions, 9 questions, 7 answered by the decision model, 0 decided by code,
    /// 1 authorisation gate; 22 options in total`
    pub fn headline(&self) -> String {
        let mut parts = vec![
            count(self.blocks, "decision"),
            count(self.questions, "question"),
            format!("{} answered by the decision model", self.model_decisions),
            format!("{} decided by code", self.code_decisions),
        ];
        if self.gates > 0 {
            parts.push(count(self.gates, "authorisation gate"));
        }
        format!("{}; {} in total", parts.join(", "), count(self.options, "option"))
    }
}

/// `1 decision`, `0 decisions`, `2 decisions`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_says_one_in_the_singular() {
        let one = Summary { blocks: 1, questions: 1, model_decisions: 1, code_decisions: 0, gates: 1, options: 1 };
        assert_eq!(
            one.headline(),
            "1 decision, 1 question, 1 answered by the decision model, 0 decided by code, 1 authorisation gate; 1 option in total"
        );
        let two = Summary { blocks: 2, questions: 0, model_decisions: 0, code_decisions: 2, gates: 2, options: 2 };
        assert_eq!(
            two.headline(),
            "2 decisions, 0 questions, 0 answered by the decision model, 2 decided by code, 2 authorisation gates; 2 options in total"
        );
    }
}
