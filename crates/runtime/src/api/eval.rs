//! `decision eval --format json`: validate given answers and evaluate a block's policy on
//! them. An invalid answer fails closed: `valid: false`, action `escalate`. Also the
//! contract, block, gate and candidate handling `decision ask` shares.

use std::collections::BTreeMap;

use decision_core::contract::{Block, Contract, Primitive};
use decision_core::policy::{CompiledPolicy, Decision, Margin, apply_gates, compile_block, gate_note, parse_gates};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::error::{Code, Error};

/// What `eval` is asked, by the names every entrance takes (the command line's `--block` and
/// `--gate`, Python's keywords, the JavaScript options). The inputs — the contract, the
/// answers and the candidates a `dynamic:` block offered — each entrance reads its own way.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct EvalRequest {
    /// The block whose policy to evaluate.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID", required = true))]
    pub block: Option<String>,
    /// Threshold overrides, all or nothing: `block.question=value` (or
    /// `block.question[i]=value`), each given to `--gate` on the command line, or as a list
    /// of those or an object of `block.question` → value in Python and JavaScript.
    #[cfg_attr(feature = "cli", arg(long = "gate", value_name = "block.question=value"))]
    #[serde(deserialize_with = "gate_list")]
    pub gates: Vec<String>,
}

impl EvalRequest {
    /// The block asked for; without one, a usage error.
    pub fn block(&self) -> Result<&str, Error> {
        self.block.as_deref().ok_or_else(|| Error::usage("evaluate: `block` is required"))
    }
}

/// Gates as a list of `block.question=value`, or as an object of `block.question` → value (a
/// number, or its text): how every request that takes gates reads them.
pub(super) fn gate_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        List(Vec<String>),
        Object(Map<String, Value>),
    }
    let object = match Given::deserialize(deserializer)? {
        Given::List(list) => return Ok(list),
        Given::Object(object) => object,
    };
    let mut gates = Vec::with_capacity(object.len());
    for (key, value) in object {
        let value = match value {
            Value::String(text) => text,
            Value::Number(n) => n.to_string(),
            _ => return Err(serde::de::Error::custom(format!("gate `{key}`: the threshold must be a number"))),
        };
        gates.push(format!("{key}={value}"));
    }
    Ok(gates)
}
use decision_protocol::ask::{Questions, WireQuestion, invalid_reason, validate_answers, wire_question};

/// A block's policy evaluated on given answers (what `decision eval` reports), invalid
/// answers included: they escalate.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// The block evaluated.
    pub block: String,
    /// Each validation problem as JSON; empty when every answer is valid.
    pub problems: Vec<Value>,
    /// Each validation problem as a sentence.
    pub problem_text: Vec<String>,
    /// The action, reason, fired rule and margin; `escalate` when an answer is invalid.
    pub decision: Decision,
}

impl Evaluation {
    /// The document `decision eval --format json` prints.
    pub fn document(&self) -> EvalDocument<'_> {
        EvalDocument {
            block: &self.block,
            valid: self.problems.is_empty(),
            problems: &self.problems,
            action: &self.decision.action,
            reason: &self.decision.reason,
            rule: self.decision.rule,
            margin: self.decision.margin.as_ref().map(MarginDocument::of),
        }
    }

    /// [`Evaluation::document`] as JSON: `block`, `valid`, `problems`, `action`, `reason`,
    /// `rule`, `margin`.
    pub fn to_json(&self) -> Value {
        // Strings, numbers and JSON values only: serialising cannot fail.
        serde_json::to_value(self.document()).unwrap_or_default()
    }

    /// What `decision eval` prints without `--format json`.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}: {}\n  reason: {}\n", self.block, self.decision.action, self.decision.reason);
        if let Some(m) = &self.decision.margin {
            out.push_str(&format!(
                "  margin: {:.4} ({} = {} against threshold {})\n",
                m.margin, m.question, m.value, m.threshold
            ));
        }
        for problem in &self.problem_text {
            out.push_str(&format!("  invalid: {problem}\n"));
        }
        out
    }
}

/// `{"question", "threshold", "value", "margin"}`, or `null`.
pub fn margin_json(margin: Option<&Margin>) -> Value {
    // Strings and numbers only: serialising cannot fail.
    serde_json::to_value(margin.map(MarginDocument::of)).unwrap_or_default()
}

/// The document `decision eval --format json` prints, member by member in that order.
#[derive(Debug, Clone, Serialize)]
pub struct EvalDocument<'a> {
    /// The block evaluated.
    pub block: &'a str,
    /// Whether every answer was valid.
    pub valid: bool,
    /// Each validation problem (empty when valid).
    pub problems: &'a [Value],
    /// The policy's action (`escalate` when an answer was invalid).
    pub action: &'a str,
    /// Why: the rule that fired, or why the answers were refused.
    pub reason: &'a str,
    /// The index of the rule that fired, if one did.
    pub rule: Option<usize>,
    /// How far the deciding value was from its threshold (`null` without a threshold).
    pub margin: Option<MarginDocument<'a>>,
}

/// A decision's margin as documents show it: `{question, threshold, value, margin}`.
#[derive(Debug, Clone, Serialize)]
pub struct MarginDocument<'a> {
    /// The question whose value met a threshold.
    pub question: &'a str,
    /// The threshold.
    pub threshold: f64,
    /// The value.
    pub value: f64,
    /// Value less threshold, as the policy measures it.
    pub margin: f64,
}

impl MarginDocument<'_> {
    /// The document of `margin`.
    pub fn of(margin: &Margin) -> MarginDocument<'_> {
        MarginDocument {
            question: &margin.question,
            threshold: margin.threshold,
            value: margin.value,
            margin: margin.margin,
        }
    }
}

/// Validates `answers` (question id → answer) against the offered `questions` and evaluates
/// `policy` on them; any invalid answer escalates with its problems.
pub fn evaluate(block: &Block, gated: &Gated, questions: &Questions, answers: &Map<String, Value>) -> Evaluation {
    let (problems, problem_text, decision) = match validate_answers(questions, answers) {
        Ok(typed) => {
            let mut decision = decision_core::policy::evaluate(&gated.policy, &typed);
            decision.reason = gated.reason(&decision.reason, decision.rule);
            (Vec::new(), Vec::new(), decision)
        }
        Err(problems) => {
            let decision =
                Decision { action: "escalate".into(), reason: invalid_reason(&problems), rule: None, margin: None };
            let json = problems.iter().map(|p| serde_json::to_value(p).unwrap_or(Value::Null)).collect();
            (json, problems.iter().map(ToString::to_string).collect(), decision)
        }
    };
    Evaluation { block: block.id.clone(), problems, problem_text, decision }
}

/// Reads the answers document (a JSON object of question ids); `shown` names it in messages.
pub fn parse_answers(shown: &str, text: &str) -> Result<Map<String, Value>, Error> {
    let value: Value = serde_json::from_str(text).map_err(|e| Error::usage(format!("{shown} is not JSON: {e}")))?;
    let Value::Object(answers) = value else {
        return Err(Error::usage(format!("{shown}: expected a JSON object mapping question ids to answers")));
    };
    Ok(answers)
}

/// A block's policy with the `--gate` overrides applied, and the policy as written.
#[derive(Clone, Debug)]
pub struct Gated {
    /// The policy that is evaluated (the overrides applied).
    pub policy: CompiledPolicy,
    /// The policy as the file writes it.
    pub original: CompiledPolicy,
    /// The overrides as a decision record keeps them (`block.question` → threshold), so that
    /// replay evaluates the policy the decision was made by; `None` without overrides.
    pub overrides: Option<Map<String, Value>>,
}

impl Gated {
    /// `reason`, with what the overrides changed in rules other than `fired` appended, so a
    /// raised gate shows even when another rule decides.
    pub fn reason(&self, reason: &str, fired: Option<usize>) -> String {
        match gate_note(&self.original, &self.policy, fired) {
            Some(note) => format!("{reason} ({note})"),
            None => reason.to_owned(),
        }
    }
}

/// The block's compiled policy with every `--gate` applied (all or nothing). A policy with a
/// rule that does not compile is refused, as the reference refuses to load it.
pub fn gated_policy(contract: &Contract, block: &Block, gates: &[String]) -> Result<Gated, Error> {
    let (policy, errors) = compile_block(block);
    if let Some((index, error)) = errors.first() {
        let message = format!("block `{}`: policy rule {} does not compile: {error}", block.id, index + 1);
        return Err(Error::new(Code::Policy, message));
    }
    if gates.is_empty() {
        return Ok(Gated { original: policy.clone(), policy, overrides: None });
    }
    // A gate is an argument of the request: one that does not parse or does not apply to
    // this contract is the caller's mistake, not the contract's.
    let gates = parse_gates(&gates.join("\n")).map_err(|e| Error::usage(e.to_string()))?;
    let policies: Vec<CompiledPolicy> = contract.blocks.iter().map(|b| compile_block(b).0).collect();
    let gated = apply_gates(&contract.blocks, &policies, &gates).map_err(|e| Error::usage(e.to_string()))?;
    let gated = gated
        .into_iter()
        .find(|p| p.block == block.id)
        .ok_or_else(|| Error::usage(format!("no policy for block `{}`", block.id)))?;
    let overrides = gates.iter().map(|g| (g.key(), Value::from(g.value))).collect();
    Ok(Gated { policy: gated, original: policy, overrides: Some(overrides) })
}

/// Offered options per choice question: `(id, criterion)` in order.
pub type Candidates = BTreeMap<String, Vec<(String, String)>>;

/// A block's questions as offered. A `dynamic:` block's choice question offers the given
/// `candidates`, else the options the file lists: eval and ask have no host to compute
/// candidates, and an answer outside the offered set must fail closed.
pub fn block_questions(block: &Block, candidates: &Candidates) -> Result<Questions, Error> {
    if let Some(id) = candidates
        .keys()
        .find(|id| block.dynamic.is_none() || block.question(id).is_none_or(|q| q.primitive != Primitive::Choice))
    {
        let message = format!("candidates for `{id}`: not a choice question of a dynamic block `{}`", block.id);
        return Err(Error::usage(message));
    }
    Ok(block
        .questions
        .iter()
        .map(|q| {
            let wire = match candidates.get(&q.id) {
                Some(criteria) => WireQuestion::Choice { instructions: q.ask.clone(), criteria: criteria.clone() },
                None => wire_question(q),
            };
            (q.id.clone(), wire)
        })
        .collect())
}

/// Reads a candidates document, `{"question": {"id": "criterion", …}}` or
/// `{"question": ["id", …]}`, from its text; `shown` names it in messages.
pub fn parse_candidates(shown: &str, text: &str) -> Result<Candidates, Error> {
    let value: Value = serde_json::from_str(text).map_err(|e| Error::usage(format!("{shown} is not JSON: {e}")))?;
    candidates_from_value(shown, value)
}

/// Reads a candidates document from a value (see [`parse_candidates`]).
pub fn candidates_from_value(shown: &str, value: Value) -> Result<Candidates, Error> {
    candidates_of(shown, value).map_err(Error::usage)
}

fn candidates_of(shown: &str, value: Value) -> Result<Candidates, String> {
    let Value::Object(map) = value else { return Err(format!("{shown}: expected an object of question ids")) };
    let mut out = BTreeMap::new();
    for (id, options) in map {
        let criteria: Vec<(String, String)> = match options {
            Value::Object(o) => o
                .into_iter()
                .map(|(k, v)| v.as_str().map(|c| (k.clone(), c.to_string())).ok_or(k))
                .collect::<Result<_, _>>()
                .map_err(|k| format!("{shown}: `{id}.{k}` must be a string criterion"))?,
            Value::Array(list) => list
                .into_iter()
                .map(|v| v.as_str().map(|k| (k.to_string(), String::new())).ok_or(()))
                .collect::<Result<_, _>>()
                .map_err(|()| format!("{shown}: `{id}` must list option ids as strings"))?,
            _ => return Err(format!("{shown}: `{id}` must be an object or an array")),
        };
        if criteria.is_empty() {
            return Err(format!("{shown}: `{id}` offers nothing"));
        }
        out.insert(id, criteria);
    }
    Ok(out)
}

#[cfg(test)]
mod request_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gates_are_a_list_or_an_object_and_nothing_else() {
        let list: EvalRequest =
            super::super::request("evaluate", json!({"block": "b", "gates": ["b.q=0.5", "b.r[1]=0.2"]})).unwrap();
        assert_eq!(list.block().unwrap(), "b");
        assert_eq!(list.gates, ["b.q=0.5", "b.r[1]=0.2"]);
        let object: EvalRequest =
            super::super::request("evaluate", json!({"gates": {"b.q": 0.5, "b.r": "0.25"}})).unwrap();
        assert_eq!(object.gates, ["b.q=0.5", "b.r=0.25"]);
        let bad = super::super::request::<EvalRequest>("evaluate", json!({"gates": {"b.q": true}})).unwrap_err();
        assert!(bad.message.contains("gate `b.q`: the threshold must be a number"), "{bad:?}");
        assert!(super::super::request::<EvalRequest>("evaluate", json!({"gates": 3})).is_err());
        let none: EvalRequest = super::super::request("evaluate", Value::Null).unwrap();
        assert!(none.gates.is_empty());
        assert_eq!(none.block().unwrap_err().message, "evaluate: `block` is required");
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_command_line_gives_each_gate_to_its_own_option() {
        let parse = super::super::command_line::<EvalRequest>;
        let parsed = parse(&["eval", "--block", "b", "--gate", "b.q=0.5", "--gate", "b.r=0.1"]).unwrap();
        assert_eq!(parsed.gates, ["b.q=0.5", "b.r=0.1"]);
        assert!(parse(&["eval", "--gate", "b.q=0.5"]).is_err(), "--block is required");
    }
}
