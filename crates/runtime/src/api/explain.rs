//! `decision explain`: the contract as a readable table ([`text`]), and the same content as
//! data ([`document`]).

use std::fmt::Write as _;

use decision_core::check::{self, CheckOptions, Summary};
use decision_core::contract::{Block, Contract};
use decision_core::policy::CompiledPolicy;
use serde_json::{Value, json};

/// What `decision explain` prints for a contract's bytes: the table, then, when the file
/// has errors, the line pointing at `decision check` (`path` names the file in it).
pub fn cli_output(path: &str, source: &[u8]) -> String {
    let report = check::check(source, CheckOptions::default());
    let mut out = text(&report.contract, &report.policies);
    let errors = report.errors();
    if errors > 0 {
        let noun = if errors == 1 { "error" } else { "errors" };
        let _ = writeln!(out, "\n{errors} {noun}: run `decision check {path}` for details");
    }
    out
}

/// The table as data: `title`, `schema`, `headline`, `summary`, `errors` (how many error
/// diagnostics the file has), `blocks` (each with its kind, position, questions and options,
/// policy rules, frame fields and exclusions), `generator_chars`, and `text` (exactly what
/// `decision explain` prints).
pub fn document(path: &str, source: &[u8]) -> Value {
    let report = check::check(source, CheckOptions::default());
    let contract = &report.contract;
    let summary = Summary::of_checked(contract, &report.policies);
    let blocks: Vec<Value> =
        contract.blocks.iter().zip(&report.policies).map(|(block, policy)| block_json(block, policy)).collect();
    json!({
        "title": contract.title,
        "schema": contract.schema.as_ref().map(|s| s.value.clone()),
        "headline": summary.headline(),
        "summary": summary,
        "errors": report.errors(),
        "blocks": blocks,
        "generator_chars": contract.generator.as_ref().map(|g| g.chars().count()),
        "text": cli_output(path, source),
    })
}

fn block_json(block: &Block, policy: &CompiledPolicy) -> Value {
    let questions: Vec<Value> = block
        .questions
        .iter()
        .map(|q| {
            json!({
                "id": q.id,
                "type": q.primitive.as_str(),
                "ask": q.ask,
                "options": q.options.iter().map(|o| json!({"name": o.name, "criterion": o.criterion})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let frame = block.frame.as_ref().map(|frame| {
        json!({
            "fields": frame.fields.iter().map(|f| json!({
                "key": f.key, "bound": f.bound, "projection": f.projection, "why": f.why,
            })).collect::<Vec<_>>(),
            "excluded": frame.excluded.iter().map(|e| json!({"field": e.field, "why": e.why})).collect::<Vec<_>>(),
        })
    });
    json!({
        "id": block.id,
        "line": block.span.line,
        "kind": block.kind.as_str(),
        "decided_by": if block.kind == decision_core::Kind::Rule { "code" } else { "model" },
        "gate": block.is_gate(),
        "position": block.position,
        "purpose": block.purpose,
        "dynamic": block.dynamic.as_ref().map(|d| json!({
            "provider": d.provider, "reads": d.reads, "output": d.output, "why": d.why,
        })),
        "questions": questions,
        "policy": policy.rules.iter().map(|r| json!({"rule": r.text, "action": r.action})).collect::<Vec<_>>(),
        "frame": frame,
    })
}

/// Render the contract: headline, then per block its kind, position, questions and options,
/// policy, frame fields and exclusions.
pub fn text(contract: &Contract, policies: &[CompiledPolicy]) -> String {
    let mut out = String::new();
    let summary = Summary::of_checked(contract, policies);
    let title = contract.title.as_deref().unwrap_or("DECISION.md");
    let schema = contract.schema.as_ref().map_or("(none)", |s| s.value.as_str());
    let _ = writeln!(out, "{title}  [schema {schema}]");
    let _ = writeln!(out, "{}\n", summary.headline());
    for (block, policy) in contract.blocks.iter().zip(policies) {
        block_table(&mut out, block, policy);
    }
    if let Some(generator) = &contract.generator {
        let _ = writeln!(out, "generator: {} characters of system prompt", generator.chars().count());
    }
    out
}

fn block_table(out: &mut String, block: &Block, policy: &CompiledPolicy) {
    let gate = if block.is_gate() { "  [authorisation gate]" } else { "" };
    let _ = writeln!(out, "## {} (line {}){gate}", block.id, block.span.line);
    let who =
        if block.kind == decision_core::Kind::Rule { "decided by code" } else { "answered by the decision model" };
    let _ = writeln!(out, "  kind      {} ({who})", block.kind.as_str());
    let _ = writeln!(out, "  when      {} — {}", block.position, block.purpose);
    if let Some(d) = &block.dynamic {
        let _ = writeln!(out, "  dynamic   {}(ctx: {}) → {} — {}", d.provider, d.reads.join(", "), d.output, d.why);
    }
    for q in &block.questions {
        let _ =
            writeln!(out, "  question  {} ({}, {} options): {}", q.id, q.primitive.as_str(), q.options.len(), q.ask);
        for o in &q.options {
            let _ = writeln!(out, "    - {:<18} {}", o.name, o.criterion);
        }
    }
    if !policy.rules.is_empty() {
        let _ = writeln!(out, "  policy");
        for (i, rule) in policy.rules.iter().enumerate() {
            let _ = writeln!(out, "    {}. {:<28} → {}", i + 1, rule.text, rule.action);
        }
    }
    if let Some(frame) = &block.frame {
        let _ = writeln!(out, "  frame     {} fields, {} exclusions", frame.fields.len(), frame.excluded.len());
        for f in &frame.fields {
            let projection = f.projection.as_deref().unwrap_or("-");
            let _ = writeln!(out, "    + {:<14} {:>5}  {:<14} {}", f.key, f.bound, projection, f.why);
        }
        for e in &frame.excluded {
            let _ = writeln!(out, "    - {:<14} {:>5}  {:<14} {}", e.field, "", "", e.why);
        }
    }
    out.push('\n');
}
