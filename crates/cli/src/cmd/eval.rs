//! `decision eval CONTRACT --block ID --answers ANSWERS.json [--gate block.question=value]... [--format json]`:
//! validate given answers (the `answers` object of a System One response) and evaluate the
//! block's policy on them. An invalid answer fails closed: `valid: false`, action `escalate`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use decision_core::contract::{Block, Contract, Primitive};
use decision_core::policy::{CompiledPolicy, Decision, apply_gates, compile_block, parse_gates};
use decision_runtime::ask::{Questions, WireQuestion, invalid_reason, validate_answers, wire_question};
use decision_runtime::terminal;
use serde_json::{Value, json};

use super::contract_input::{Format, read_source};

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md contract.
    contract: PathBuf,
    /// The block whose policy to evaluate.
    #[arg(long, value_name = "ID")]
    block: String,
    /// The answers: a JSON object mapping question ids to answers.
    #[arg(long, value_name = "ANSWERS.json")]
    answers: PathBuf,
    /// Threshold override `block.question=value` (or `block.question[i]=value`); repeatable.
    #[arg(long, value_name = "block.question=value")]
    gate: Vec<String>,
    /// The candidates a `dynamic:` block offered: `{"question": {"id": "criterion", …}}` or
    /// `{"question": ["id", …]}`. Without it the file's listed options are the offered set.
    #[arg(long, value_name = "CANDIDATES.json")]
    candidates: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match evaluate(&args) {
        Ok(outcome) => {
            match args.format {
                Format::Json => println!("{}", outcome.to_json()),
                Format::Human => print!("{}", terminal::lines(&outcome.to_text())),
            }
            ExitCode::SUCCESS
        }
        Err(message) => super::usage_error(&message),
    }
}

/// A decision on given answers.
pub struct Outcome {
    pub block: String,
    pub problems: Vec<Value>,
    pub problem_text: Vec<String>,
    pub decision: Decision,
}

impl Outcome {
    fn to_json(&self) -> Value {
        let margin =
            self.decision.margin.as_ref().map(
                |m| json!({"question": m.question, "threshold": m.threshold, "value": m.value, "margin": m.margin}),
            );
        json!({
            "block": self.block,
            "valid": self.problems.is_empty(),
            "problems": self.problems,
            "action": self.decision.action,
            "reason": self.decision.reason,
            "rule": self.decision.rule,
            "margin": margin,
        })
    }

    fn to_text(&self) -> String {
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

fn evaluate(args: &Args) -> Result<Outcome, String> {
    let contract = load_contract(&args.contract)?;
    let block = find_block(&contract, &args.block)?;
    let policy = gated_policy(&contract, block, &args.gate)?;
    let text =
        std::fs::read_to_string(&args.answers).map_err(|e| format!("cannot read {}: {e}", args.answers.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", args.answers.display()))?;
    let Value::Object(answers) = value else {
        return Err(format!("{}: expected a JSON object mapping question ids to answers", args.answers.display()));
    };
    let questions = block_questions(block, args.candidates.as_deref())?;
    let (problems, problem_text, decision) = match validate_answers(&questions, &answers) {
        Ok(typed) => (Vec::new(), Vec::new(), decision_core::policy::evaluate(&policy, &typed)),
        Err(problems) => {
            let decision =
                Decision { action: "escalate".into(), reason: invalid_reason(&problems), rule: None, margin: None };
            let json = problems.iter().map(|p| serde_json::to_value(p).unwrap_or(Value::Null)).collect();
            (json, problems.iter().map(ToString::to_string).collect(), decision)
        }
    };
    Ok(Outcome { block: block.id.clone(), problems, problem_text, decision })
}

/// Parse a contract; a file with parse errors is refused (exit 2).
pub fn load_contract(path: &std::path::Path) -> Result<Contract, String> {
    let source = read_source(path)?;
    let parsed = decision_core::syntax::parse(&source);
    let errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}:{}: {}", path.display(), d.span.line, d.message))
        .collect();
    if !errors.is_empty() {
        return Err(format!("{} does not parse:\n  {}", path.display(), errors.join("\n  ")));
    }
    Ok(parsed.contract)
}

pub fn find_block<'a>(contract: &'a Contract, id: &str) -> Result<&'a Block, String> {
    contract.blocks.iter().find(|b| b.id == id).ok_or_else(|| {
        let ids: Vec<&str> = contract.blocks.iter().map(|b| b.id.as_str()).collect();
        format!("no block `{id}` (blocks: {})", ids.join(", "))
    })
}

/// The block's compiled policy with every `--gate` applied (all or nothing). A policy with a
/// rule that does not compile is refused, as the reference refuses to load it.
pub fn gated_policy(contract: &Contract, block: &Block, gates: &[String]) -> Result<CompiledPolicy, String> {
    let (policy, errors) = compile_block(block);
    if let Some((index, error)) = errors.first() {
        return Err(format!("block `{}`: policy rule {} does not compile: {error}", block.id, index + 1));
    }
    if gates.is_empty() {
        return Ok(policy);
    }
    let gates = parse_gates(&gates.join("\n")).map_err(|e| e.to_string())?;
    let policies: Vec<CompiledPolicy> = contract.blocks.iter().map(|b| compile_block(b).0).collect();
    let gated = apply_gates(&contract.blocks, &policies, &gates).map_err(|e| e.to_string())?;
    gated.into_iter().find(|p| p.block == block.id).ok_or_else(|| format!("no policy for block `{}`", block.id))
}

/// A block's questions as offered. A `dynamic:` block's choice question offers the
/// candidates given in `candidates` (a file), else the options the file lists: eval and ask
/// have no host to compute candidates, and an answer outside the offered set must fail closed.
pub fn block_questions(block: &Block, candidates: Option<&std::path::Path>) -> Result<Questions, String> {
    let given = match candidates {
        Some(path) => load_candidates(path)?,
        None => BTreeMap::new(),
    };
    if let Some(id) = given
        .keys()
        .find(|id| block.dynamic.is_none() || block.question(id).is_none_or(|q| q.primitive != Primitive::Choice))
    {
        return Err(format!("candidates for `{id}`: not a choice question of a dynamic block `{}`", block.id));
    }
    Ok(block
        .questions
        .iter()
        .map(|q| {
            let wire = match given.get(&q.id) {
                Some(criteria) => WireQuestion::Choice { instructions: q.ask.clone(), criteria: criteria.clone() },
                None => wire_question(q),
            };
            (q.id.clone(), wire)
        })
        .collect())
}

type Criteria = Vec<(String, String)>;

fn load_candidates(path: &std::path::Path) -> Result<BTreeMap<String, Criteria>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("{shown} is not JSON: {e}"))?;
    let Value::Object(map) = value else { return Err(format!("{shown}: expected an object of question ids")) };
    let mut out = BTreeMap::new();
    for (id, options) in map {
        let criteria: Criteria = match options {
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
