//! Lints for what the reference silently accepts (warnings; `--deny warnings` makes them
//! errors). Parse-time lints live in the scanner; these need the whole block.

use super::Capabilities;
use super::problem::CheckProblem;
use crate::contract::{Block, Contract};
use crate::diag::Sink;
use crate::names::NameSet;
use crate::policy::{CompiledPolicy, Predicate, QuestionIndex};
use crate::vocab;

/// Duplicate fields and exclusions, and cells both read and excluded (unless the host
/// profile reports that as an error already).
pub(super) fn frame_lints(contract: &Contract, caps: Option<&Capabilities>, out: &mut dyn Sink) {
    let coverage_is_checked = caps.is_some_and(|c| c.require_coverage);
    for block in &contract.blocks {
        let Some(frame) = &block.frame else { continue };
        let mut seen = NameSet::new();
        for field in &frame.fields {
            if !seen.insert(field.key.as_str()) {
                super::report(out, &CheckProblem::DuplicateField { field: &field.key }, field.span, block);
            }
        }
        let mut seen = NameSet::new();
        for exclusion in &frame.excluded {
            if !seen.insert(exclusion.field.as_str()) {
                let problem = CheckProblem::DuplicateExclusion { cell: &exclusion.field };
                super::report(out, &problem, exclusion.span, block);
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
                let problem = CheckProblem::ReadAndExcluded { cell: &exclusion.field };
                super::report(out, &problem, exclusion.span, block);
            }
        }
    }
}

/// Unreachable rules, missing fallback, thresholds outside their probe's range, `picked`
/// values that name no option.
pub(super) fn policy_lints(block: &Block, policy: &CompiledPolicy, out: &mut dyn Sink) {
    let lint = |out: &mut dyn Sink, problem: CheckProblem<'_>, span| super::report(out, &problem, span, block);
    if let Some(catch_all) = policy.rules.iter().position(|r| r.predicate == Predicate::Fallback) {
        let line = policy.rules.get(catch_all).map_or(0, |r| r.span.line);
        for rule in policy.rules.iter().skip(catch_all + 1) {
            lint(out, CheckProblem::UnreachableRule { rule: &rule.reason(), catch_all_line: line }, rule.span);
        }
    } else if let Some(last) = policy.rules.last() {
        lint(out, CheckProblem::NoFallback, last.span);
    } else if !block.questions.is_empty() {
        lint(out, CheckProblem::NoPolicy { block: &block.id }, block.span);
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
            let problem =
                CheckProblem::ThresholdRange { threshold: *threshold, predicate: &rule.text, low, high, what };
            lint(out, problem, rule.span);
        }
        if let Predicate::Picked { question, option } = &rule.predicate
            && block.dynamic.is_none()
            && let Some(q) = question_named(question)
            && q.option(option).is_none()
        {
            let options = q.options.iter().map(|o| o.name.as_str()).collect::<Vec<_>>();
            lint(out, CheckProblem::PickedNotOption { option, question, options: &options }, rule.span);
        }
    }
}
