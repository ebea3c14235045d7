//! `decision explain`: the contract as a readable table.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use decision_core::check::{self, CheckOptions};
use decision_core::contract::{Block, Contract};
use decision_core::policy::CompiledPolicy;

use super::contract_input::read_source;

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md to explain.
    file: PathBuf,
}

pub fn run(args: Args) -> ExitCode {
    let source = match read_source(&args.file) {
        Ok(s) => s,
        Err(message) => return super::usage_error(&message),
    };
    let report = check::check(&source, CheckOptions::default());
    print!("{}", explain(&report.contract, &report.policies));
    let errors = report.diagnostics.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        println!(
            "\n{}: run `decision check {}` for details",
            crate::render::count(errors, "error"),
            args.file.display()
        );
    }
    ExitCode::SUCCESS
}

/// Render the contract: headline, then per block its kind, position, questions and options,
/// policy, frame fields and exclusions.
pub fn explain(contract: &Contract, policies: &[CompiledPolicy]) -> String {
    let mut out = String::new();
    let summary = decision_core::check::Summary::of(contract);
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
