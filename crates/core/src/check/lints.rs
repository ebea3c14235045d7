//! Lints for what the reference silently accepts (warnings; `--deny warnings` makes them
//! errors). Parse-time lints live in the scanner; these need the whole block.

use super::Capabilities;
use crate::contract::{Block, Contract};
use crate::diag::codes;
use crate::diag::{Diagnostic, Layer, Severity, Sink, Span};
use crate::names::NameSet;
use crate::policy::{CompiledPolicy, Predicate, QuestionIndex};
use crate::vocab;

/// Adds a warning of `block` to `out` (with the block id only when `out` keeps it).
fn warn(out: &mut dyn Sink, code: &'static str, layer: Layer, span: Span, block: &Block, message: String, help: &str) {
    let block = out.keeps(Severity::Warning).then(|| block.id.clone());
    out.push(Diagnostic { code, severity: Severity::Warning, layer, message, span, block, help: Some(help.into()) });
}

/// Duplicate fields and exclusions, and cells both read and excluded (unless the host
/// profile reports that as an error already).
pub(super) fn frame_lints(contract: &Contract, caps: Option<&Capabilities>, out: &mut dyn Sink) {
    let coverage_is_checked = caps.is_some_and(|c| c.require_coverage);
    for block in &contract.blocks {
        let Some(frame) = &block.frame else { continue };
        let mut seen = NameSet::new();
        for field in &frame.fields {
            if !seen.insert(field.key.as_str()) {
                warn(
                    out,
                    codes::L_DUP_FIELD,
                    Layer::Parse,
                    field.span,
                    block,
                    format!("frame field `{}` is declared twice", field.key),
                    "keep one declaration per field",
                );
            }
        }
        let mut seen = NameSet::new();
        for exclusion in &frame.excluded {
            if !seen.insert(exclusion.field.as_str()) {
                warn(
                    out,
                    codes::L_DUP_EXCLUSION,
                    Layer::Parse,
                    exclusion.span,
                    block,
                    format!("`{}` is excluded twice", exclusion.field),
                    "keep one exclusion per cell",
                );
            }
        }
        if coverage_is_checked {
            continue;
        }
        let projection_cell = |p: &str| match caps {
            Some(c) => c.projection_cell(p),
            None => vocab::projection(p).map(|d| d.reads),
        };
        let sources: NameSet<'_> = frame.fields.iter().map(|f| f.source_cell(projection_cell)).collect();
        for exclusion in &frame.excluded {
            if sources.contains(exclusion.field.as_str()) {
                warn(
                    out,
                    codes::L_READ_AND_EXCLUDED,
                    Layer::Parse,
                    exclusion.span,
                    block,
                    format!("`{}` is both read by a field and excluded", exclusion.field),
                    "remove the exclusion or the field that reads it",
                );
            }
        }
    }
}

/// Unreachable rules, missing fallback, thresholds outside their probe's range, `picked`
/// values that name no option.
pub(super) fn policy_lints(block: &Block, policy: &CompiledPolicy, out: &mut dyn Sink) {
    let lint = |out: &mut dyn Sink, code, span, message: String, help: &str| {
        warn(out, code, Layer::Policy, span, block, message, help);
    };
    if let Some(catch_all) = policy.rules.iter().position(|r| r.predicate == Predicate::Fallback) {
        let line = policy.rules.get(catch_all).map_or(0, |r| r.span.line);
        for rule in policy.rules.iter().skip(catch_all + 1) {
            lint(
                out,
                codes::L_UNREACHABLE_RULE,
                rule.span,
                format!("rule `{}` comes after the catch-all on line {line} and can never fire", rule.reason()),
                "move the catch-all to the end",
            );
        }
    } else if let Some(last) = policy.rules.last() {
        lint(
            out,
            codes::L_NO_FALLBACK,
            last.span,
            "the policy has no catch-all rule; answers that match no rule escalate".into(),
            "end the policy with `- else → <action>`",
        );
    } else if !block.questions.is_empty() {
        lint(
            out,
            codes::L_NO_FALLBACK,
            block.span,
            format!("block `{}` asks questions but has no policy; every decision escalates", block.id),
            "add `policy:` with rules and `- else → <action>`",
        );
    }
    // A map only for pathological blocks, so the lints stay linear in the file's size.
    let questions = QuestionIndex::new(&block.questions);
    let question_named = |id: &str| questions.get(id);
    for rule in &policy.rules {
        // A gate no answer reaches is an error of the policy layer instead (one mistake, one report).
        let gate_never_fires = super::is_gate_action(&rule.action)
            && super::reach::threshold_unreachable(rule.predicate.question().and_then(question_named), rule).is_some();
        if let Predicate::Compare { form, question, threshold } = &rule.predicate
            && let Some(q) = question_named(question)
            && let (low, high, what) = form.probe().range(q)
            && !(low..=high).contains(threshold)
            && !gate_never_fires
        {
            lint(
                out,
                codes::L_THRESHOLD_RANGE,
                rule.span,
                format!(
                    "threshold {threshold} in `{}` is outside [{low}, {high}] ({what}), so the rule's outcome never depends on the answer",
                    rule.text
                ),
                "use a threshold inside the range",
            );
        }
        if let Predicate::Picked { question, option } = &rule.predicate
            && block.dynamic.is_none()
            && let Some(q) = question_named(question)
            && q.option(option).is_none()
        {
            let names = q.options.iter().map(|o| o.name.as_str()).collect::<Vec<_>>();
            let help = match crate::suggest::did_you_mean(option, names.iter().copied()) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("options are: {}", names.join(", ")),
            };
            lint(
                out,
                codes::L_PICKED_NOT_OPTION,
                rule.span,
                format!("`{option}` is not an option of question `{question}`, so this rule never fires"),
                &help,
            );
        }
    }
}
