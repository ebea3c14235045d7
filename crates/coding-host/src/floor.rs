//! The code floor under the authorisation gate (`grade_risk`): what the model answers can
//! make a call more cautious, never less than the tool itself is.
//!
//! Two rules, applied in code after the policy has decided on the model's answers:
//!
//! 1. **The tool's risk baseline is a floor on the risk the policy sees.** When the model's
//!    `risk` score is below the tool's [`ToolSpec::base_risk`], the gate's policy is evaluated
//!    again with the score raised to the baseline, and that action is taken.
//! 2. **A tool that changes files is never `auto` on the model's word alone.** When the action
//!    is still `auto` for such a tool ([`ToolSpec::changes_files`]), a person is asked
//!    (`ask_human`), whatever the contract's policy or its gates say.
//!
//! The decision record keeps what the policy said on the model's answers (so that it replays
//! as recorded); the floor is recorded beside it as a [`FLOOR_EVENT`] event.

use decision_core::policy::{Answer, CompiledPolicy, evaluate};

use super::tools::ToolSpec;
use decision_runtime::decide::NodeDecision;

/// The event that records a gate's action raised by the floor.
pub(crate) const FLOOR_EVENT: &str = "gate:floor";

/// The question of the gate whose score the baseline floors.
pub(crate) const RISK_QUESTION: &str = "risk";

/// The actions of the gate that run a call without asking a person.
const WITHOUT_A_PERSON: [&str; 2] = ["auto", "auto_audit"];

/// A gate's action raised by the floor.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GateFloor {
    /// What the policy decided on the model's answers.
    pub(crate) decided: String,
    /// What is done instead.
    pub(crate) action: String,
    /// The risk score the model gave, when it gave one.
    pub(crate) model_risk: Option<f64>,
    /// The risk the action was decided on (the baseline, when it was higher).
    pub(crate) risk: f64,
    /// Why, for the record and for the person who is asked.
    pub(crate) reason: String,
}

/// The floor under `decided`, the action the gate's `policy` took on `decision`'s answers for
/// a call of `tool`; `None` when the decided action stands.
pub(crate) fn floor_gate(
    policy: Option<&CompiledPolicy>,
    tool: &ToolSpec,
    decision: &NodeDecision,
    decided: &str,
) -> Option<GateFloor> {
    // An action that asks a person (or escalates) is already as cautious as the gate gets.
    if !WITHOUT_A_PERSON.contains(&decided) {
        return None;
    }
    let base = tool.base_risk as f64;
    let model_risk = match decision.answers.get(RISK_QUESTION) {
        Some(Answer::Score { score, .. }) => Some(*score),
        _ => None,
    };
    let mut action = decided.to_owned();
    let mut reason = String::new();
    let risk = model_risk.map_or(base, |risk| risk.max(base));
    if model_risk.is_some_and(|risk| risk < base)
        && let Some(policy) = policy
    {
        let mut floored = decision.answers.clone();
        if let Some(Answer::Score { score, .. }) = floored.get_mut(RISK_QUESTION) {
            *score = base;
        }
        let again = evaluate(policy, &floored);
        // Only ever more cautious: a floored action that runs without a person where the
        // decided one did not is not taken (a policy need not be monotone).
        if again.action != decided && !(decided == "auto_audit" && again.action == "auto") {
            reason = format!(
                "{} has a risk baseline of {}, above the model's {}: on the baseline, {}",
                tool.name,
                tool.base_risk,
                model_risk.map_or_else(String::new, |r| r.to_string()),
                again.reason
            );
            action = again.action;
        }
    }
    if action == "auto" && tool.changes_files() {
        reason =
            format!("{} changes files, so it is never run on the model's word alone: a person is asked", tool.name);
        action = "ask_human".into();
    }
    (action != decided).then(|| GateFloor { decided: decided.to_owned(), action, model_risk, risk, reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::tool;
    use decision_core::policy::compile_block;
    use std::collections::BTreeMap;

    fn gate_policy() -> CompiledPolicy {
        let contract = decision_core::parse(crate::CODING_CONTRACT.as_bytes()).contract;
        let block = contract.blocks.iter().find(|b| b.id == "grade_risk").unwrap();
        compile_block(block).0
    }

    fn decided(risk: f64, needs_auth: f64) -> (NodeDecision, String) {
        let mut d = NodeDecision::by_code("grade_risk", 1, "", "");
        d.answers = BTreeMap::from([
            (RISK_QUESTION.to_owned(), Answer::Score { score: risk, probabilities: BTreeMap::new(), confidence: None }),
            ("needs_auth".to_owned(), Answer::Noul { noul: needs_auth }),
        ]);
        let action = evaluate(&gate_policy(), &d.answers).action;
        (d, action)
    }

    fn floored(name: &str, risk: f64, needs_auth: f64) -> String {
        let (d, action) = decided(risk, needs_auth);
        let policy = gate_policy();
        floor_gate(Some(&policy), tool(name).unwrap(), &d, &action).map_or(action, |f| f.action)
    }

    #[test]
    fn the_baseline_floors_the_risk_the_policy_sees() {
        // The attack: a model (or a server) answering risk 0, needs_auth 0.01.
        assert_eq!(decided(0.0, 0.01).1, "auto", "the policy alone lets the call run");
        assert_eq!(floored("delete_file", 0.0, 0.01), "ask_human");
        assert_eq!(floored("move_file", 0.0, 0.01), "ask_human");
        assert_eq!(floored("write_file", 0.0, 0.01), "auto_audit", "a write is audited at least");
        // Read-only tools are left to the model and the policy.
        assert_eq!(floored("read_file", 0.0, 0.01), "auto");
        assert_eq!(floored("list_dir", 0.0, 0.01), "auto");
        // A model that says more than the baseline is not lowered.
        assert_eq!(floored("read_file", 2.0, 0.01), "ask_human");
        assert_eq!(floored("write_file", 3.0, 0.01), "ask_human");
    }

    #[test]
    fn the_floor_records_what_it_changed() {
        let (d, action) = decided(0.0, 0.01);
        let policy = gate_policy();
        let floor = floor_gate(Some(&policy), tool("delete_file").unwrap(), &d, &action).unwrap();
        assert_eq!((floor.decided.as_str(), floor.action.as_str()), ("auto", "ask_human"));
        assert_eq!((floor.model_risk, floor.risk), (Some(0.0), 3.0));
        assert!(
            floor.reason.starts_with("delete_file has a risk baseline of 3, above the model's 0"),
            "{}",
            floor.reason
        );
        // Nothing to record when the decided action stands.
        assert_eq!(floor_gate(Some(&policy), tool("read_file").unwrap(), &d, &action), None);
        let (asked, asking) = decided(3.0, 0.9);
        assert_eq!(floor_gate(Some(&policy), tool("delete_file").unwrap(), &asked, &asking), None);
    }

    #[test]
    fn a_tool_that_changes_files_is_never_auto_whatever_the_policy() {
        // No policy to evaluate (or one whose gates were loosened): the second rule still holds.
        let (d, _) = decided(0.0, 0.01);
        for name in ["write_file", "move_file", "delete_file"] {
            let floor = floor_gate(None, tool(name).unwrap(), &d, "auto").unwrap();
            assert_eq!(floor.action, "ask_human", "{name}");
            assert!(floor.reason.contains("never run on the model's word alone"));
        }
        // No risk answer at all (a contract without the question).
        let bare = NodeDecision::by_code("grade_risk", 1, "auto", "");
        assert_eq!(floor_gate(None, tool("delete_file").unwrap(), &bare, "auto").unwrap().action, "ask_human");
        assert_eq!(floor_gate(None, tool("read_file").unwrap(), &bare, "auto"), None);
    }
}
