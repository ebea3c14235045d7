//! The policy check of replay: does each recorded action follow from the recorded answers
//! under the contract's policy?
//!
//! The four digest checks prove what was *asked*; nothing in them covers the answers or the
//! action, so an editor of the log (who recomputes the chain) could record `continue` where
//! the policy gives `stop`. Given the contract, replay validates each record's answers
//! against the questions the record says were asked (its `questions`, which the digests
//! cover), evaluates the block's policy on them — with the record's threshold overrides, if
//! it carries any (`gates`: `{"block.question": value}`) — and compares the action: an answer
//! that does not validate must have escalated, as the decider fails closed.

use std::borrow::Cow;
use std::collections::HashMap;

use decision_core::contract::Contract;
use decision_core::policy::{CompiledPolicy, Gate, apply_gates, compile_block, evaluate, parse_gate};
use decision_protocol::record::{Check, CheckName, CheckStatus};
use serde_json::{Map, Value};

use decision_protocol::ask::{Questions, WireQuestion, invalid_reason, validate_answers};
use decision_protocol::frame::reference_node_id;

/// A contract's compiled policies, by block id, and how records name their blocks.
#[derive(Debug, Clone)]
pub struct PolicyBook {
    contract: Contract,
    policies: Vec<CompiledPolicy>,
    /// Block ids by the node ids the reference's records use (`loop.stepOk` → `step_ok`).
    by_node: HashMap<&'static str, String>,
}

impl PolicyBook {
    /// The contract's policies. A rule that does not compile is refused, as a host refuses to
    /// start with it: replay cannot say what such a policy decides.
    pub fn new(contract: Contract) -> Result<Self, String> {
        let mut policies = Vec::with_capacity(contract.blocks.len());
        let mut by_node = HashMap::new();
        for block in &contract.blocks {
            let (policy, errors) = compile_block(block);
            if let Some((index, error)) = errors.first() {
                return Err(format!("block `{}`: policy rule {} does not compile: {error}", block.id, index + 1));
            }
            policies.push(policy);
            if let Some(node) = reference_node_id(&block.id) {
                by_node.insert(node, block.id.clone());
            }
        }
        Ok(PolicyBook { contract, policies, by_node })
    }

    /// The policy check of one decision event line (`None` when the line holds no decision
    /// event).
    pub fn check_line(&self, line: &[u8]) -> Option<Check> {
        let value: Value = serde_json::from_slice(line).ok()?;
        let event = value.get("e")?.as_object()?;
        (event.get("type").and_then(Value::as_str) == Some("decision")).then(|| self.check(event))
    }

    /// The policy check of one `decision` event.
    pub fn check(&self, event: &Map<String, Value>) -> Check {
        let text = |key: &str| event.get(key).and_then(Value::as_str);
        let block = match (text("block"), text("id")) {
            (Some(block), _) => block.to_owned(),
            (None, Some(id)) => self.by_node.get(id).cloned().unwrap_or_else(|| id.to_owned()),
            (None, None) => return skip("the record names no block"),
        };
        let Some(policy) = self.policy(&block, event.get("gates")) else {
            return skip_owned(format!("block `{block}` is not in the contract, or its recorded gates do not apply"));
        };
        let Some(questions) = event.get("questions").and_then(questions_of) else {
            return skip("the record's questions cannot be read");
        };
        let Some(recorded) = text("action") else { return fail("the record has no action".into()) };
        let empty = Map::new();
        let answers = event.get("answers").and_then(Value::as_object).unwrap_or(&empty);
        let (expected, why) = match validate_answers(&questions, answers) {
            Ok(answers) => {
                let decision = evaluate(&policy, &answers);
                (decision.action, decision.reason)
            }
            Err(problems) => ("escalate".to_owned(), invalid_reason(&problems)),
        };
        if expected == recorded {
            Check {
                name: CheckName::Policy,
                status: CheckStatus::Pass,
                detail: Cow::Owned(format!("`{recorded}` follows from the recorded answers ({why})")),
            }
        } else {
            fail(format!(
                "the record says `{recorded}`, and block `{block}`'s policy gives `{expected}` on the recorded answers ({why})"
            ))
        }
    }

    /// The block's policy with the record's gates applied; `None` for an unknown block or
    /// gates that do not apply to it.
    fn policy(&self, block: &str, gates: Option<&Value>) -> Option<CompiledPolicy> {
        let policy = self.policies.iter().find(|p| p.block == block)?;
        let Some(gates) = gates.and_then(Value::as_object).filter(|g| !g.is_empty()) else {
            return Some(policy.clone());
        };
        let gates: Vec<Gate> = gates
            .iter()
            .map(|(key, value)| parse_gate(&format!("{key}={}", value.as_f64()?)).ok())
            .collect::<Option<_>>()?;
        let gated = apply_gates(&self.contract.blocks, &self.policies, &gates).ok()?;
        gated.into_iter().find(|p| p.block == block)
    }
}

fn skip(detail: &'static str) -> Check {
    Check { name: CheckName::Policy, status: CheckStatus::Skip, detail: Cow::Borrowed(detail) }
}

fn skip_owned(detail: String) -> Check {
    Check { name: CheckName::Policy, status: CheckStatus::Skip, detail: Cow::Owned(detail) }
}

fn fail(detail: String) -> Check {
    Check { name: CheckName::Policy, status: CheckStatus::Fail, detail: Cow::Owned(detail) }
}

/// The questions a record says were asked, as the validator reads them (`None` when a
/// question is not one of the three wire shapes).
fn questions_of(value: &Value) -> Option<Questions> {
    let mut questions = Questions::new();
    for (id, question) in value.as_object()? {
        let instructions = question.get("instructions").and_then(Value::as_str).unwrap_or_default().to_owned();
        let criteria = question.get("criteria");
        let wire = match question.get("type").and_then(Value::as_str)? {
            "noul" => {
                let side = |key: &str| criteria.and_then(|c| c.get(key)).and_then(Value::as_str).map(str::to_owned);
                WireQuestion::Noul { instructions, criteria: side("true").zip(side("false")) }
            }
            "choice" => WireQuestion::Choice {
                instructions,
                criteria: criteria?
                    .as_object()?
                    .iter()
                    .map(|(id, text)| (id.clone(), text.as_str().unwrap_or_default().to_owned()))
                    .collect(),
            },
            "score" => WireQuestion::Score {
                instructions,
                criteria: criteria?.as_array()?.iter().map(|l| l.as_str().map(str::to_owned)).collect::<Option<_>>()?,
            },
            _ => return None,
        };
        if !questions.insert(id.clone(), wire) {
            return None;
        }
    }
    Some(questions)
}
