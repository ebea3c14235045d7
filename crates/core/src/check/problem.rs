//! The checker's problems, typed: the schema, the policy and the adapter layers, and the
//! lints that need a whole block. One variant per kind of problem, holding the names and
//! values that matter; each one's code, severity, layer, message and help are written here,
//! in one place (the parse layer's are in [`crate::syntax::problem`]).

use super::super::contract::Question;
use crate::diag::{Layer, Problem, codes};
use crate::policy::{CompileError, THRESHOLD_FORMS};
use crate::suggest::did_you_mean;
use crate::vocab::{ANY_POSITION_ACTION, SCHEMA_V1, SCHEMA_VERSIONS};

/// The help of a field or an exclusion without its reason.
const ADD_REASON: &str = "add `—— reason`";

/// The help of a cell both read and excluded.
const READ_OR_EXCLUDE: &str = "remove the exclusion or the field that reads it";

/// A problem the checker finds in a parsed contract.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckProblem<'a> {
    /// The file declares no `schema:`.
    SchemaMissing,
    /// A `schema:` this implementation does not read.
    SchemaUnsupported {
        /// The schema declared.
        schema: &'a str,
    },
    /// A block asked of a decision model without `frame:`.
    NoFrame {
        /// The block's kind.
        kind: &'a str,
    },
    /// A predicate that does not compile.
    Uncompiled {
        /// The predicate.
        predicate: &'a str,
        /// The rule's action.
        action: &'a str,
        /// Why it does not compile.
        error: &'a CompileError,
        /// The block's questions, for the help.
        questions: &'a [Question],
    },
    /// A rule that an earlier rule on the same probe shadows: a dead gate (an error) when
    /// `gate` names its action, else a lint.
    Shadowed {
        /// The rule, as `predicate → action`.
        rule: &'a str,
        /// The earlier rule, as `predicate → action`.
        earlier: &'a str,
        /// The earlier rule's line.
        earlier_line: u32,
        /// The gate's action (`ask_human`, `escalate`), when the rule is a gate.
        gate: Option<&'a str>,
    },
    /// A gate whose threshold no answer reaches.
    GateUnreachable {
        /// The predicate.
        predicate: &'a str,
        /// The gate's action.
        action: &'a str,
        /// The probe's range.
        low: f64,
        /// The probe's range.
        high: f64,
        /// What the range is of.
        what: &'a str,
    },
    /// Lint: a frame field declared twice.
    DuplicateField {
        /// The field.
        field: &'a str,
    },
    /// Lint: a cell excluded twice.
    DuplicateExclusion {
        /// The cell.
        cell: &'a str,
    },
    /// Lint: a cell read by a field and excluded.
    ReadAndExcluded {
        /// The cell.
        cell: &'a str,
    },
    /// Lint: a rule after the catch-all.
    UnreachableRule {
        /// The rule, as `predicate → action`.
        rule: &'a str,
        /// The catch-all's line.
        catch_all_line: u32,
    },
    /// Lint: a policy without a catch-all.
    NoFallback,
    /// Lint: a block that asks questions and has no policy.
    NoPolicy {
        /// The block id.
        block: &'a str,
    },
    /// Lint: a threshold outside its probe's range.
    ThresholdRange {
        /// The threshold.
        threshold: f64,
        /// The predicate.
        predicate: &'a str,
        /// The probe's range.
        low: f64,
        /// The probe's range.
        high: f64,
        /// What the range is of.
        what: &'a str,
    },
    /// Lint: `picked:` names no option of its question.
    PickedNotOption {
        /// The option named.
        option: &'a str,
        /// The question.
        question: &'a str,
        /// The question's options.
        options: &'a [&'a str],
    },
    /// A block the host requires is missing.
    BlockMissing {
        /// The block the host requires.
        required: &'a str,
        /// The file's block ids.
        blocks: &'a [&'a str],
    },
    /// A position the host has not registered.
    Position {
        /// The position.
        position: &'a str,
        /// The line of `when:`.
        when_line: u32,
        /// The positions the host registers.
        registered: &'a [String],
    },
    /// An action the host has no handler for.
    Action {
        /// The action.
        action: &'a str,
        /// The rule's line.
        rule_line: u32,
        /// The actions the host handles.
        registered: &'a [String],
    },
    /// A registered position that does not handle the action in this host.
    ActionAtPosition {
        /// The position.
        position: &'a str,
        /// The action.
        action: &'a str,
        /// The rule's line.
        rule_line: u32,
        /// The actions the position handles in this host.
        handled: &'a [String],
    },
    /// A dynamic provider the host has not registered.
    Provider {
        /// The provider.
        provider: &'a str,
        /// The line of `dynamic:`.
        dynamic_line: u32,
        /// The providers the host registers.
        registered: &'a [String],
    },
    /// The host declares no reads for the provider.
    ProviderReadsMissing {
        /// The provider.
        provider: &'a str,
        /// The cells the file says it reads.
        reads: &'a [String],
        /// The line of `dynamic:`.
        dynamic_line: u32,
    },
    /// The file names cells the host's provider does not read.
    ProviderReadsLess {
        /// The provider.
        provider: &'a str,
        /// The cells it does not read.
        less: &'a [&'a str],
        /// The cells it reads.
        host_reads: &'a [String],
    },
    /// The host's provider reads cells the file does not name.
    ProviderReadsMore {
        /// The provider.
        provider: &'a str,
        /// The cells the file does not name.
        more: &'a [&'a str],
        /// The cells it reads.
        host_reads: &'a [String],
    },
    /// A projection the host has not registered.
    Projection {
        /// The projection.
        projection: &'a str,
        /// The projections the host registers.
        registered: &'a [String],
    },
    /// A field that is neither a state cell nor given a projection.
    StateCell {
        /// The field.
        field: &'a str,
        /// The host's state cells.
        cells: &'a [String],
    },
    /// A field without its reason, where the host requires one.
    FieldNoWhy {
        /// The field.
        field: &'a str,
    },
    /// An excluded name that is not a state cell.
    ExclusionUnknown {
        /// The name.
        cell: &'a str,
        /// The host's state cells.
        cells: &'a [String],
    },
    /// An exclusion without its reason, where the host requires one.
    ExclusionNoWhy {
        /// The cell.
        cell: &'a str,
    },
    /// A cell read by a field and excluded, where the host requires full coverage.
    Contradiction {
        /// The cell.
        cell: &'a str,
    },
    /// A state cell neither read nor excluded, where the host requires full coverage.
    Uncovered {
        /// The cell.
        cell: &'a str,
    },
    /// The host reads other question ids from the block.
    QuestionIds {
        /// The block id.
        block: &'a str,
        /// The ids the host reads.
        expected: &'a [String],
        /// The ids the block asks.
        actual: &'a [&'a str],
    },
}

impl Problem for CheckProblem<'_> {
    fn code(&self) -> &'static str {
        use CheckProblem as C;
        match self {
            C::SchemaMissing => codes::SCHEMA_MISSING,
            C::SchemaUnsupported { .. } => codes::SCHEMA_UNSUPPORTED,
            C::NoFrame { .. } => codes::NO_FRAME,
            C::Uncompiled { .. } => codes::UNCOMPILED,
            C::Shadowed { gate: Some(_), .. } => codes::DEAD_GATE,
            C::Shadowed { gate: None, .. } => codes::L_SHADOWED_RULE,
            C::GateUnreachable { .. } => codes::GATE_UNREACHABLE,
            C::DuplicateField { .. } => codes::L_DUP_FIELD,
            C::DuplicateExclusion { .. } => codes::L_DUP_EXCLUSION,
            C::ReadAndExcluded { .. } => codes::L_READ_AND_EXCLUDED,
            C::UnreachableRule { .. } => codes::L_UNREACHABLE_RULE,
            C::NoFallback | C::NoPolicy { .. } => codes::L_NO_FALLBACK,
            C::ThresholdRange { .. } => codes::L_THRESHOLD_RANGE,
            C::PickedNotOption { .. } => codes::L_PICKED_NOT_OPTION,
            C::BlockMissing { .. } => codes::A_BLOCK_MISSING,
            C::Position { .. } => codes::A_POSITION,
            C::Action { .. } => codes::A_ACTION,
            C::ActionAtPosition { .. } => codes::A_ACTION_AT_POSITION,
            C::Provider { .. } => codes::A_PROVIDER,
            C::ProviderReadsMissing { .. } => codes::A_PROVIDER_READS_MISSING,
            C::ProviderReadsLess { .. } => codes::A_PROVIDER_READS_LESS,
            C::ProviderReadsMore { .. } => codes::A_PROVIDER_READS_MORE,
            C::Projection { .. } => codes::A_PROJECTION,
            C::StateCell { .. } => codes::A_STATE_CELL,
            C::FieldNoWhy { .. } => codes::A_FIELD_NO_WHY,
            C::ExclusionUnknown { .. } => codes::A_EXCL_UNKNOWN,
            C::ExclusionNoWhy { .. } => codes::A_EXCL_NO_WHY,
            C::Contradiction { .. } => codes::A_CONTRADICTION,
            C::Uncovered { .. } => codes::A_UNCOVERED,
            C::QuestionIds { .. } => codes::A_QUESTION_IDS,
        }
    }

    fn layer(&self) -> Layer {
        use CheckProblem as C;
        match self {
            C::SchemaMissing | C::SchemaUnsupported { .. } => Layer::Schema,
            C::NoFrame { .. } | C::DuplicateField { .. } | C::DuplicateExclusion { .. } | C::ReadAndExcluded { .. } => {
                Layer::Parse
            }
            C::Uncompiled { .. }
            | C::Shadowed { .. }
            | C::GateUnreachable { .. }
            | C::UnreachableRule { .. }
            | C::NoFallback
            | C::NoPolicy { .. }
            | C::ThresholdRange { .. }
            | C::PickedNotOption { .. } => Layer::Policy,
            _ => Layer::Adapter,
        }
    }

    fn message(&self) -> String {
        use CheckProblem as C;
        match self {
            C::SchemaMissing => {
                "the file declares no `schema:`; a consumer cannot tell which semantics to read it with".into()
            }
            C::SchemaUnsupported { schema } => {
                format!("unsupported schema `{schema}`; this implementation reads {}", SCHEMA_VERSIONS.join(", "))
            }
            C::NoFrame { kind } => format!(
                "a `{kind}` block is asked of a decision model but declares no `frame:`, so it would be sent the whole state, unbounded"
            ),
            C::Uncompiled { predicate, action, error, .. } => {
                format!("predicate `{predicate}` (action {action}) does not compile: {error}")
            }
            C::Shadowed { rule, earlier, earlier_line, gate } => {
                let consequence =
                    gate.map(|action| format!(", so this `{action}` gate never fires")).unwrap_or_default();
                format!(
                    "rule `{rule}` can never fire: the earlier rule `{earlier}` on line {earlier_line} matches every answer it matches{consequence}"
                )
            }
            C::GateUnreachable { predicate, action, low, high, what } => format!(
                "no answer reaches the threshold of `{predicate}`: it is outside [{low}, {high}] ({what}), so this `{action}` gate never fires"
            ),
            C::DuplicateField { field } => format!("frame field `{field}` is declared twice"),
            C::DuplicateExclusion { cell } => format!("`{cell}` is excluded twice"),
            C::ReadAndExcluded { cell } | C::Contradiction { cell } => {
                format!("`{cell}` is both read by a field and excluded")
            }
            C::UnreachableRule { rule, catch_all_line } => {
                format!("rule `{rule}` comes after the catch-all on line {catch_all_line} and can never fire")
            }
            C::NoFallback => "the policy has no catch-all rule; answers that match no rule escalate".into(),
            C::NoPolicy { block } => {
                format!("block `{block}` asks questions but has no policy; every decision escalates")
            }
            C::ThresholdRange { threshold, predicate, low, high, what } => format!(
                "threshold {threshold} in `{predicate}` is outside [{low}, {high}] ({what}), so the rule's outcome never depends on the answer"
            ),
            C::PickedNotOption { option, question, .. } => {
                format!("`{option}` is not an option of question `{question}`, so this rule never fires")
            }
            C::BlockMissing { required, blocks } => {
                format!("the host requires a block `{required}`, and the file has none (it has: {})", blocks.join(", "))
            }
            C::Position { position, when_line, .. } => {
                format!("the host has not registered position `{position}` (`when:` on line {when_line})")
            }
            C::Action { action, rule_line, .. } => {
                format!("the host has no handler for action `{action}` (rule on line {rule_line})")
            }
            C::ActionAtPosition { position, action, rule_line, .. } => format!(
                "position `{position}` does not handle action `{action}` in this host (rule on line {rule_line})"
            ),
            C::Provider { provider, dynamic_line, .. } => {
                format!("the host has not registered dynamic provider `{provider}` (`dynamic:` on line {dynamic_line})")
            }
            C::ProviderReadsMissing { provider, reads, dynamic_line } => format!(
                "the host does not declare which cells provider `{provider}` reads (the file says {}; `dynamic:` on line {dynamic_line})",
                reads.join(", ")
            ),
            C::ProviderReadsLess { provider, less, .. } => format!(
                "the file says provider `{provider}` reads [{}], which the host's provider does not read; candidates would silently lose a class",
                less.join(", ")
            ),
            C::ProviderReadsMore { provider, more, .. } => format!(
                "the host's provider `{provider}` also reads [{}], which the file does not name; candidates would change for an undeclared reason",
                more.join(", ")
            ),
            C::Projection { projection, .. } => format!("the host has not registered projection `{projection}`"),
            C::StateCell { field, .. } => {
                format!("`{field}` is neither a state cell of the host nor given a projection")
            }
            C::FieldNoWhy { field } => format!("field `{field}` does not say why it is in this decision"),
            C::ExclusionUnknown { cell, .. } => format!("excluded name `{cell}` is not a state cell of the host"),
            C::ExclusionNoWhy { cell } => {
                format!("exclusion of `{cell}` gives no reason, which is the same as not declaring it")
            }
            C::Uncovered { cell } => format!("state cell `{cell}` is neither read nor deliberately excluded"),
            C::QuestionIds { block, expected, actual } => format!(
                "the host reads questions [{}] from `{block}`, the file asks [{}]",
                expected.join(", "),
                actual.join(", ")
            ),
        }
    }

    fn help(&self) -> String {
        use CheckProblem as C;
        match self {
            C::SchemaMissing => format!("write `schema: {SCHEMA_V1}` before the first `##` block"),
            C::SchemaUnsupported { .. } => format!("write `schema: {SCHEMA_V1}`"),
            C::NoFrame { .. } => {
                "add `frame:` with a line `+ key bound —— why` for each cell the decision reads and `- cell —— why` for each it must not see".into()
            }
            C::Uncompiled { error, questions, .. } => compile_help(error, questions),
            C::Shadowed { .. } => {
                "first match wins: write `>=` tiers from the highest threshold down (and `<` tiers from the lowest up)"
                    .into()
            }
            C::GateUnreachable { low, high, .. } => format!("use a threshold inside [{low}, {high}]"),
            C::DuplicateField { .. } => "keep one declaration per field".into(),
            C::DuplicateExclusion { .. } => "keep one exclusion per cell".into(),
            C::ReadAndExcluded { .. } | C::Contradiction { .. } => READ_OR_EXCLUDE.into(),
            C::UnreachableRule { .. } => "move the catch-all to the end".into(),
            C::NoFallback => "end the policy with `- else → <action>`".into(),
            C::NoPolicy { .. } => "add `policy:` with rules and `- else → <action>`".into(),
            C::ThresholdRange { .. } => "use a threshold inside the range".into(),
            C::PickedNotOption { option, options, .. } => match did_you_mean(option, options.iter().copied()) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("options are: {}", options.join(", ")),
            },
            C::BlockMissing { required, blocks } => did_you_mean(required, blocks.iter().copied())
                .or_else(|| blocks.iter().copied().find(|id| id.contains(*required)))
                .map(|b| format!("did you mean to name `## {b}` `## {required}`?"))
                .unwrap_or_else(|| format!("add `## {required}`")),
            C::Position { position, registered, .. } => suggest_in(position, registered, "positions"),
            C::Action { action, registered, .. } => suggest_in(action, registered, "actions"),
            C::ActionAtPosition { position, handled, .. } => format!(
                "in this host `{position}` handles {} / {ANY_POSITION_ACTION}",
                handled.iter().filter(|a| *a != ANY_POSITION_ACTION).cloned().collect::<Vec<_>>().join(" / ")
            ),
            C::Provider { provider, registered, .. } => suggest_in(provider, registered, "providers"),
            C::ProviderReadsMissing { .. } => "declare the provider's reads in the host's capabilities".into(),
            C::ProviderReadsLess { provider, host_reads, .. } => {
                format!("the host's `{provider}` reads: {}", host_reads.join(", "))
            }
            C::ProviderReadsMore { provider, host_reads, .. } => {
                format!("add them to the `dynamic:` line: `{provider}(ctx: {})`", host_reads.join(", "))
            }
            C::Projection { projection, registered } => suggest_in(projection, registered, "projections"),
            C::StateCell { field, cells } => suggest_in(field, cells, "state cells"),
            C::FieldNoWhy { .. } | C::ExclusionNoWhy { .. } => ADD_REASON.into(),
            C::ExclusionUnknown { cell, cells } => suggest_in(cell, cells, "state cells"),
            C::Uncovered { cell } => format!("add `- {cell} —— why this decision does not see it`"),
            C::QuestionIds { .. } => "name the questions as the host reads them (`### id`)".into(),
        }
    }
}

/// A name the host does not register: the closest one it does, or the ones it does.
fn suggest_in(word: &str, names: &[String], what: &str) -> String {
    if names.is_empty() {
        return format!("the host registers no {what}");
    }
    match did_you_mean(word, names.iter().map(String::as_str)) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("the host registers {what}: {}", names.join(", ")),
    }
}

/// How to write a predicate that compiles.
fn compile_help(error: &CompileError, questions: &[Question]) -> String {
    match error {
        CompileError::NotAPredicate(_) => {
            // The threshold forms come from the grammar's table, so a new form is listed here too.
            let forms: String = THRESHOLD_FORMS.iter().map(|form| format!("`{form}`, ")).collect();
            format!("predicates are `else`, {forms}`picked:q = option`")
        }
        CompileError::TopNeedsOneQuestion(_) => "name the question: `prob:q`, `score:q` or `picked:q`".into(),
        CompileError::NoSuchQuestion(id) => match did_you_mean(id, questions.iter().take(64).map(|q| q.id.as_str())) {
            Some(q) => format!("did you mean `{q}`?"),
            None if questions.len() <= 64 => {
                let ids = questions.iter().map(|q| format!("`{}`", q.id)).collect::<Vec<_>>().join(", ");
                format!("this block's questions are {ids}")
            }
            None => format!("this block has {} questions and none is `{id}`", questions.len()),
        },
        CompileError::WrongType { form, actual, .. } => {
            let use_form = match *actual {
                "noul" => "prob:",
                "score" => "score:",
                _ => "picked:",
            };
            format!("`{form}:` does not read a {actual} question; use `{use_form}`")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Severity;

    #[test]
    fn code_severity_and_layer_agree() {
        use CheckProblem as C;
        let none: &[String] = &[];
        let error = CompileError::NotAPredicate("x".into());
        let samples = [
            C::SchemaMissing,
            C::SchemaUnsupported { schema: "v9" },
            C::NoFrame { kind: "choice" },
            C::Uncompiled { predicate: "x", action: "stop", error: &error, questions: &[] },
            C::Shadowed { rule: "a", earlier: "b", earlier_line: 1, gate: Some("ask_human") },
            C::Shadowed { rule: "a", earlier: "b", earlier_line: 1, gate: None },
            C::GateUnreachable { predicate: "x", action: "ask_human", low: 0.0, high: 1.0, what: "p" },
            C::DuplicateField { field: "a" },
            C::DuplicateExclusion { cell: "a" },
            C::ReadAndExcluded { cell: "a" },
            C::UnreachableRule { rule: "a", catch_all_line: 3 },
            C::NoFallback,
            C::NoPolicy { block: "b" },
            C::ThresholdRange { threshold: 2.0, predicate: "x", low: 0.0, high: 1.0, what: "p" },
            C::PickedNotOption { option: "a", question: "q", options: &["b"] },
            C::BlockMissing { required: "b", blocks: &[] },
            C::Position { position: "p", when_line: 1, registered: none },
            C::Action { action: "a", rule_line: 1, registered: none },
            C::ActionAtPosition { position: "p", action: "a", rule_line: 1, handled: none },
            C::Provider { provider: "p", dynamic_line: 1, registered: none },
            C::ProviderReadsMissing { provider: "p", reads: none, dynamic_line: 1 },
            C::ProviderReadsLess { provider: "p", less: &["a"], host_reads: none },
            C::ProviderReadsMore { provider: "p", more: &["a"], host_reads: none },
            C::Projection { projection: "p", registered: none },
            C::StateCell { field: "a", cells: none },
            C::FieldNoWhy { field: "a" },
            C::ExclusionUnknown { cell: "a", cells: none },
            C::ExclusionNoWhy { cell: "a" },
            C::Contradiction { cell: "a" },
            C::Uncovered { cell: "a" },
            C::QuestionIds { block: "b", expected: none, actual: &[] },
        ];
        for problem in &samples {
            let code = problem.code();
            let expected_layer = match &code[..4] {
                "DC01" => Layer::Parse,
                "DC02" => Layer::Schema,
                "DC03" => Layer::Policy,
                "DC04" => Layer::Adapter,
                _ => problem.layer(),
            };
            assert_eq!(problem.layer(), expected_layer, "{problem:?}");
            assert!(matches!(problem.layer(), Layer::Parse | Layer::Policy) || !code.starts_with("DC05"));
            let lint = code.starts_with("DC05");
            assert_eq!(problem.severity() == Severity::Warning, lint, "{problem:?}");
            assert!(!problem.message().is_empty() && !problem.help().is_empty(), "{problem:?}");
        }
        // A host that registers nothing says so, rather than listing nothing.
        assert_eq!(samples[16].help(), "the host registers no positions");
        assert_eq!(
            samples[4].message(),
            "rule `a` can never fire: the earlier rule `b` on line 1 matches every answer it matches, so this `ask_human` gate never fires"
        );
    }
}
