//! `decision explain`: the contract as a readable table ([`text`]), and the same content as
//! data ([`document`]).

use std::fmt::Write as _;

use decision_core::check::{self, CheckOptions, Summary};
use decision_core::contract::{Block, Contract};
use decision_core::policy::CompiledPolicy;
use serde::Serialize;
use serde_json::Value;

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
    let document = ExplainDocument {
        title: contract.title.as_deref(),
        schema: contract.schema.as_ref().map(|s| s.value.as_str()),
        headline: summary.headline(),
        summary,
        errors: report.errors(),
        blocks: contract
            .blocks
            .iter()
            .zip(&report.policies)
            .map(|(block, policy)| ExplainBlock::of(block, policy))
            .collect(),
        generator_chars: contract.generator.as_ref().map(|g| g.chars().count()),
        text: cli_output(path, source),
    };
    // Strings, numbers, booleans and lists of them only: serialising cannot fail.
    serde_json::to_value(document).unwrap_or_default()
}

/// The explain table as data, member by member in the order the document prints them.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainDocument<'a> {
    /// The contract's `#` title, if any.
    pub title: Option<&'a str>,
    /// The `schema:` line's value, if any.
    pub schema: Option<&'a str>,
    /// The one-line summary the table starts with.
    pub headline: String,
    /// The headline counts.
    pub summary: Summary,
    /// How many error diagnostics the file has.
    pub errors: usize,
    /// Each block, in order.
    pub blocks: Vec<ExplainBlock<'a>>,
    /// The length of the generator section, in characters, if there is one.
    pub generator_chars: Option<usize>,
    /// Exactly what `decision explain` prints.
    pub text: String,
}

/// One block of the explain table.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainBlock<'a> {
    /// The block id.
    pub id: &'a str,
    /// Its heading's line.
    pub line: u32,
    /// Its kind.
    pub kind: &'static str,
    /// `code` for a rule block, `model` for the others.
    pub decided_by: &'static str,
    /// Whether it authorises something (a gate).
    pub gate: bool,
    /// Its `when:` position.
    pub position: &'a str,
    /// Its `when:` purpose.
    pub purpose: &'a str,
    /// Its `dynamic:` clause, if any.
    pub dynamic: Option<ExplainDynamic<'a>>,
    /// Its questions.
    pub questions: Vec<ExplainQuestion<'a>>,
    /// Its policy rules.
    pub policy: Vec<ExplainRule<'a>>,
    /// Its frame, if any.
    pub frame: Option<ExplainFrame<'a>>,
}

impl<'a> ExplainBlock<'a> {
    fn of(block: &'a Block, policy: &'a CompiledPolicy) -> ExplainBlock<'a> {
        ExplainBlock {
            id: &block.id,
            line: block.span.line,
            kind: block.kind.as_str(),
            decided_by: if block.kind == decision_core::Kind::Rule { "code" } else { "model" },
            gate: block.is_gate(),
            position: &block.position,
            purpose: &block.purpose,
            dynamic: block.dynamic.as_ref().map(|d| ExplainDynamic {
                provider: &d.provider,
                reads: &d.reads,
                output: &d.output,
                why: &d.why,
            }),
            questions: block
                .questions
                .iter()
                .map(|q| ExplainQuestion {
                    id: &q.id,
                    kind: q.primitive.as_str(),
                    ask: &q.ask,
                    options: q
                        .options
                        .iter()
                        .map(|o| ExplainOption { name: &o.name, criterion: &o.criterion })
                        .collect(),
                })
                .collect(),
            policy: policy.rules.iter().map(|r| ExplainRule { rule: &r.text, action: &r.action }).collect(),
            frame: block.frame.as_ref().map(|frame| ExplainFrame {
                fields: frame
                    .fields
                    .iter()
                    .map(|f| ExplainField {
                        key: &f.key,
                        bound: f.bound,
                        projection: f.projection.as_deref(),
                        why: &f.why,
                    })
                    .collect(),
                excluded: frame.excluded.iter().map(|e| ExplainExclusion { field: &e.field, why: &e.why }).collect(),
            }),
        }
    }
}

/// A block's `dynamic:` clause.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainDynamic<'a> {
    /// The provider that offers the candidates.
    pub provider: &'a str,
    /// What it reads.
    pub reads: &'a [String],
    /// What it offers.
    pub output: &'a str,
    /// Why.
    pub why: &'a str,
}

/// A question and its options.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainQuestion<'a> {
    /// Its id.
    pub id: &'a str,
    /// `choice`, `noul` or `score`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// What it asks.
    pub ask: &'a str,
    /// Its options.
    pub options: Vec<ExplainOption<'a>>,
}

/// An option and its criterion.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainOption<'a> {
    /// Its name.
    pub name: &'a str,
    /// When it is the answer.
    pub criterion: &'a str,
}

/// A policy rule and its action.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainRule<'a> {
    /// The rule as written.
    pub rule: &'a str,
    /// Its action.
    pub action: &'a str,
}

/// A block's frame: the fields a model sees and the exclusions.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainFrame<'a> {
    /// The fields, in order.
    pub fields: Vec<ExplainField<'a>>,
    /// The exclusions, in order.
    pub excluded: Vec<ExplainExclusion<'a>>,
}

/// A frame field.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainField<'a> {
    /// The key the model sees.
    pub key: &'a str,
    /// Its budget.
    pub bound: u64,
    /// The projection that fills it, if any.
    pub projection: Option<&'a str>,
    /// Why the model may see it.
    pub why: &'a str,
}

/// A frame exclusion.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainExclusion<'a> {
    /// The cell kept out.
    pub field: &'a str,
    /// Why.
    pub why: &'a str,
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
