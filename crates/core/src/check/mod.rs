//! The check layers — schema, policy, adapter — and the lints, run over a parsed contract.
//! Every problem is found and counted; nothing stops at the first one. The first
//! [`MAX_DIAGNOSTICS`](crate::diag::MAX_DIAGNOSTICS) are kept, so memory stays bounded whatever the file.

mod adapter;
pub(crate) mod blocks;
mod capabilities;

mod lints;
mod parsing;
pub mod problem;
mod reach;
mod summary;

pub use adapter::adapter;
pub use capabilities::{Capabilities, CapabilitiesError};
pub use parsing::{Parsed, parse, parse_str};
pub use reach::{GATE_ACTIONS, is_gate_action};
pub use summary::Summary;

use crate::contract::{Contract, Kind};
use crate::diag::{Diagnostic, Layer, Omitted, Problem, Severity, Sink, Span};
use crate::policy::{CompiledPolicy, compile_block};
use crate::vocab::SCHEMA_VERSIONS;
use problem::CheckProblem;

/// What to check against.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions<'a> {
    /// The host's capabilities; `None` skips the adapter layer.
    pub capabilities: Option<&'a Capabilities>,
}

/// A checked contract: the contract, its compiled policies, and its diagnostics, ordered by
/// layer (parse, schema, policy, adapter) and, within a layer, as found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The parsed contract, as far as it could be read (present even when there are errors).
    pub contract: Contract,
    /// One compiled policy per block, in block order; a rule that did not compile is kept
    /// with a predicate that never holds.
    pub policies: Vec<CompiledPolicy>,
    /// The first [`MAX_DIAGNOSTICS`](crate::diag::MAX_DIAGNOSTICS) diagnostics. When there are more and any is an error,
    /// at least one of these is an error (the first one left out takes the last place).
    pub diagnostics: Vec<Diagnostic>,
    /// The count of the diagnostics left out of `diagnostics`, per code and severity.
    pub omitted: Omitted,
}

impl Report {
    /// Whether any diagnostic is an error, kept or not.
    pub fn has_errors(&self) -> bool {
        self.omitted.errors > 0 || self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// How many errors there are, kept or not.
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count() + self.omitted.errors
    }

    /// How many warnings there are, kept or not.
    pub fn warnings(&self) -> usize {
        self.diagnostics.iter().filter(|d| !d.is_error()).count() + self.omitted.warnings
    }

    /// Makes every warning an error, kept or not (`--deny warnings`).
    pub fn deny_warnings(&mut self) {
        for d in &mut self.diagnostics {
            d.severity = Severity::Error;
        }
        self.omitted.deny_warnings();
    }

    /// The contract's headline counts (blocks, questions, gates, options); see
    /// [`Summary::of_checked`].
    pub fn summary(&self) -> Summary {
        Summary::of_checked(&self.contract, &self.policies)
    }

    /// The diagnostics of one layer.
    pub fn layer(&self, layer: Layer) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(move |d| d.layer == layer)
    }
}

/// Parse and run every layer. Memory stays bounded by the input's size times a small
/// constant: the parser reads at most [`crate::syntax::MAX_BLOCKS`] blocks and [`crate::syntax::MAX_ITEMS`]
/// items, and the report keeps at most [`MAX_DIAGNOSTICS`](crate::diag::MAX_DIAGNOSTICS) diagnostics.
pub fn check(source: &[u8], options: CheckOptions<'_>) -> Report {
    let (contract, mut diagnostics) = parsing::collecting(source);
    // Each layer adds its diagnostics after the one before, so the first ones kept are the
    // first in report order.
    for d in missing_frames(&contract) {
        diagnostics.push(d);
    }
    lints::frame_lints(&contract, options.capabilities, &mut diagnostics);
    for d in schema(&contract) {
        diagnostics.push(d);
    }
    let policies = policies_into(&contract, &mut diagnostics);
    if let Some(capabilities) = options.capabilities {
        adapter::adapter_into(&contract, capabilities, &mut diagnostics);
    }
    let (mut diagnostics, omitted) = diagnostics.finish();
    // Stable, and already in order: a guard that the layers stay grouped whatever is added.
    diagnostics.sort_by_key(|d| d.layer);
    Report { contract, policies, diagnostics, omitted }
}

/// Every block asked of a decision model (any kind but `rule`) must declare `frame:`: without
/// one, the host would send the whole state, unbounded and unreasoned. A `rule` block is
/// decided by code and sends nothing.
fn missing_frames(contract: &Contract) -> Vec<Diagnostic> {
    contract
        .blocks
        .iter()
        .filter(|b| b.kind != Kind::Rule && b.frame.is_none())
        .map(|b| CheckProblem::NoFrame { kind: b.kind.as_str() }.at(b.span, Some(b.id.clone())))
        .collect()
}

/// The schema layer: a missing or unknown `schema:` is refused, never guessed.
pub fn schema(contract: &Contract) -> Vec<Diagnostic> {
    // Messages are built only when there is a problem: a clean file formats nothing.
    match &contract.schema {
        None => vec![CheckProblem::SchemaMissing.at(Span { line: 1, column: 1, start: 0, end: 0 }, None)],
        Some(schema) if !SCHEMA_VERSIONS.contains(&schema.value.as_str()) => {
            vec![CheckProblem::SchemaUnsupported { schema: &schema.value }.at(schema.span, None)]
        }
        Some(_) => Vec::new(),
    }
}

/// The policy layer: compile every block's rules; one diagnostic per rule that does not
/// compile, at the rule's line; plus the policy lints.
pub fn policies(contract: &Contract) -> (Vec<CompiledPolicy>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let policies = policies_into(contract, &mut diagnostics);
    (policies, diagnostics)
}

/// [`policies`], each diagnostic added to `diagnostics` as it is found.
fn policies_into(contract: &Contract, diagnostics: &mut dyn Sink) -> Vec<CompiledPolicy> {
    let mut policies = Vec::with_capacity(contract.blocks.len());
    for block in &contract.blocks {
        let (policy, errors) = compile_block(block);
        for (index, error) in errors {
            let Some(rule) = policy.rules.get(index) else { continue };
            let problem = CheckProblem::Uncompiled {
                predicate: &rule.text,
                action: &rule.action,
                error: &error,
                questions: &block.questions,
            };
            report(diagnostics, &problem, rule.span, block);
        }
        reach::dead_rules(block, &policy, diagnostics);
        lints::policy_lints(block, &policy, diagnostics);
        policies.push(policy);
    }
    policies
}

/// Adds `problem` of `block` at `span` to `out` (with the block id only when `out` keeps it:
/// see [`Sink::keeps`]).
fn report(out: &mut dyn Sink, problem: &CheckProblem<'_>, span: Span, block: &crate::contract::Block) {
    out.report(problem, span, Some(&block.id));
}
