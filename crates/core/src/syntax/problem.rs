//! The parse layer's problems, typed: one variant per kind of mistake, holding the names and
//! values that matter (the offending text, the line of a first occurrence, a suggestion).
//! Each one's code, severity, message and help are written here, in one place; the reader
//! only says what it found and where.

pub use super::clauses::DynamicProblem;
use super::text::js_trim;
use crate::diag::{Layer, Problem, codes};
use crate::vocab::{ACTIONS, POSITIONS};

/// The help for `--` written where the reason separator `——` belongs, as `->` gets one for `→`.
const DASHES_HELP: &str = "use `——` (two U+2014 em dashes) before the reason; `--` is not a separator here";

/// Ends the help of a key that may have been prose.
const PROSE_HINT: &str = "do not start the line with `word:` (e.g. wrap the word in `**…**`)";

/// The help of a `dynamic:` clause that is not written as one.
const DYNAMIC_SHAPE: &str = "write `provider(ctx: cells…) → candidates —— why`";

/// A heading-like line that is read as prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadingLike {
    /// `###` without a question id.
    BareQuestion,
    /// `#### x`.
    FourHashes,
    /// `  ## x`, indented.
    IndentedBlock,
}

/// A problem the parse layer finds in one block or line of a contract.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseProblem<'a> {
    /// The file is not UTF-8 at `byte`.
    InvalidUtf8 {
        /// The first byte that is not.
        byte: u8,
    },
    /// Block number `max` + 1 ([`crate::syntax::MAX_BLOCKS`]).
    TooManyBlocks {
        /// How many are read.
        max: usize,
    },
    /// Item number `max` + 1 ([`crate::syntax::MAX_ITEMS`]).
    TooManyItems {
        /// How many are read.
        max: usize,
    },
    /// A block id used twice.
    DuplicateBlock {
        /// The id.
        id: &'a str,
        /// The line of its first heading.
        first_line: u32,
    },
    /// A block without `kind:`.
    KindMissing {
        /// The block id.
        block: &'a str,
    },
    /// `kind:` with a value that is not a kind.
    KindInvalid {
        /// The value written.
        value: &'a str,
        /// The kind it is closest to.
        suggestion: Option<&'a str>,
    },
    /// `when:` without a position.
    WhenMissing,
    /// Text after the position not introduced by `——`.
    WhenLeftover {
        /// The position.
        position: &'a str,
        /// The text after it.
        leftover: &'a str,
    },
    /// `when:` names no position.
    WhenUnknown {
        /// What it names.
        position: &'a str,
        /// The position it is closest to.
        suggestion: Option<&'a str>,
    },
    /// A rule's action that the block's position does not carry out.
    ActionNotAtPosition {
        /// The position.
        position: &'a str,
        /// The action.
        action: &'a str,
        /// The actions the position handles.
        handled: &'a [&'a str],
    },
    /// A `dynamic:` clause's mistake.
    Dynamic {
        /// What is wrong with it.
        problem: &'a DynamicProblem,
        /// `--` is written in it (where `——` belongs, when the reason is missing).
        ascii_dashes: bool,
    },
    /// A frame line without `—— reason`.
    FrameNoWhy {
        /// The line's first 40 UTF-16 units.
        line: &'a str,
        /// A field (`+`), not an exclusion (`-`).
        field: bool,
        /// `--` was written where `——` belongs.
        ascii_dashes: bool,
    },
    /// A frame line that names no cell.
    FrameEmpty {
        /// The line's first 40 UTF-16 units.
        line: &'a str,
    },
    /// An exclusion with more than the cell's name.
    FrameExclusionExtra {
        /// The cell.
        cell: &'a str,
        /// The first word after it.
        extra: &'a str,
    },
    /// A frame field without a bound.
    FrameBoundMissing {
        /// The field.
        field: &'a str,
    },
    /// A frame field whose bound is not a positive decimal integer.
    FrameBoundInvalid {
        /// The field.
        field: &'a str,
        /// The bound written.
        bound: &'a str,
        /// The bound read as a JavaScript number, when it is a whole number ≥ 1 written
        /// otherwise (`2e2`, `0x10`).
        plain: Option<f64>,
    },
    /// A frame field with more than three columns.
    FrameColumns {
        /// The field.
        field: &'a str,
        /// The extra columns.
        extra: &'a str,
    },
    /// `frame:` with a value.
    FrameValue,
    /// A policy rule without `→`.
    RuleNoArrow {
        /// The rule.
        rule: &'a str,
        /// `->` was written for `→`.
        ascii_arrow: bool,
    },
    /// A policy rule with an empty side.
    RuleEmpty {
        /// The rule.
        rule: &'a str,
    },
    /// An action that is neither the format's nor `host:<name>`.
    UnknownAction {
        /// The action.
        action: &'a str,
        /// The action it is closest to.
        suggestion: Option<&'a str>,
    },
    /// A key that is not one of the block's.
    UnknownKey {
        /// The key, lowercased.
        key: &'a str,
        /// The key it is closest to.
        suggestion: Option<&'a str>,
    },
    /// A question without options.
    QuestionNoOptions {
        /// The question id.
        question: &'a str,
    },
    /// A question with named and unnamed options.
    QuestionMixedStyle {
        /// The question id.
        question: &'a str,
        /// How many are named.
        named: usize,
        /// How many are not.
        unnamed: usize,
    },
    /// A question without `ask:`.
    QuestionNoAsk {
        /// The question id.
        question: &'a str,
    },
    /// A question id used twice in a block.
    QuestionDuplicate {
        /// The question id.
        question: &'a str,
    },
    /// A `kind: rule` block that asks questions.
    RuleHasQuestions,
    /// A `kind: mixed` block with fewer than two questions.
    MixedTooFew {
        /// How many it has.
        count: usize,
    },
    /// A single-question kind with another number of questions.
    SingleCount {
        /// The kind.
        kind: &'a str,
        /// How many it has.
        count: usize,
    },
    /// The kind does not match how the options are written.
    KindMismatch {
        /// The kind declared.
        kind: &'a str,
        /// The kind of question the options make.
        made: &'a str,
        /// For a noul with one of `true` / `false`, the other.
        missing_noul: Option<&'a str>,
    },
    /// A choice with fewer than two options and no `dynamic:`.
    ChoiceFew {
        /// The question id.
        question: &'a str,
        /// How many options it has.
        count: usize,
        /// For an option `true` or `false` alone, the other.
        missing_noul: Option<&'a str>,
    },
    /// Lint: a second `kind:`.
    DuplicateKind {
        /// The line of the first.
        first_line: u32,
    },
    /// Lint: a second `when:`.
    DuplicateWhen {
        /// The line of the first.
        first_line: u32,
    },
    /// Lint: a second `dynamic:`.
    DuplicateDynamic {
        /// The line of the first.
        first_line: u32,
    },
    /// Lint: a second `ask:` for one question.
    DuplicateAsk {
        /// The question id.
        question: &'a str,
        /// The line of the first.
        first_line: u32,
    },
    /// Lint: a second `frame:`.
    SecondFrame {
        /// The line of the first.
        first_line: u32,
    },
    /// Lint: an option name written twice.
    DuplicateOption {
        /// The option.
        option: &'a str,
        /// The question id.
        question: &'a str,
    },
    /// Lint: a field line without its `+ ` ends the frame region.
    FrameRegionEnded,
    /// Lint: a frame line outside the frame region.
    FrameLineOutside,
    /// Lint: text after `policy:`.
    PolicyValue,
    /// Lint: a heading-like line read as prose.
    NotAHeading(HeadingLike),
}

impl Problem for ParseProblem<'_> {
    fn code(&self) -> &'static str {
        use ParseProblem as P;
        match self {
            P::InvalidUtf8 { .. } => codes::INVALID_UTF8,
            P::TooManyBlocks { .. } | P::TooManyItems { .. } => codes::TOO_LARGE,
            P::DuplicateBlock { .. } => codes::BLOCK_DUP_ID,
            P::KindMissing { .. } => codes::KIND_MISSING,
            P::KindInvalid { .. } => codes::KIND_INVALID,
            P::WhenMissing => codes::WHEN_MISSING,
            P::WhenLeftover { .. } => codes::WHEN_LEFTOVER,
            P::WhenUnknown { .. } => codes::WHEN_UNKNOWN,
            P::ActionNotAtPosition { .. } => codes::ACTION_NOT_AT_POSITION,
            P::Dynamic { problem, .. } => match problem {
                DynamicProblem::NoWhy => codes::DYN_NO_WHY,
                DynamicProblem::NoArrow => codes::DYN_NO_ARROW,
                DynamicProblem::MultiArrow(_) => codes::DYN_MULTI_ARROW,
                DynamicProblem::Output(_) => codes::DYN_OUTPUT,
                DynamicProblem::Call(_) => codes::DYN_CALL,
                DynamicProblem::NoCells => codes::DYN_NO_CELLS,
                DynamicProblem::BadCell(_) => codes::DYN_BAD_CELL,
                DynamicProblem::DupCells(_) => codes::DYN_DUP_CELLS,
            },
            P::FrameNoWhy { .. } => codes::FRAME_NO_WHY,
            P::FrameEmpty { .. } => codes::FRAME_EMPTY,
            P::FrameExclusionExtra { .. } => codes::FRAME_EXCL_EXTRA,
            P::FrameBoundMissing { .. } | P::FrameBoundInvalid { .. } => codes::FRAME_BOUND,
            P::FrameColumns { .. } => codes::FRAME_COLUMNS,
            P::FrameValue => codes::FRAME_VALUE,
            P::RuleNoArrow { .. } => codes::POL_NO_ARROW,
            P::RuleEmpty { .. } => codes::POL_EMPTY,
            P::UnknownAction { .. } => codes::POL_UNKNOWN_ACTION,
            P::UnknownKey { .. } => codes::UNKNOWN_KEY,
            P::QuestionNoOptions { .. } => codes::Q_NO_OPTIONS,
            P::QuestionMixedStyle { .. } => codes::Q_MIXED_STYLE,
            P::QuestionNoAsk { .. } => codes::Q_NO_ASK,
            P::QuestionDuplicate { .. } => codes::Q_DUP_ID,
            P::RuleHasQuestions => codes::RULE_HAS_QUESTIONS,
            P::MixedTooFew { .. } => codes::MIXED_TOO_FEW,
            P::SingleCount { .. } => codes::SINGLE_COUNT,
            P::KindMismatch { .. } => codes::KIND_MISMATCH,
            P::ChoiceFew { .. } => codes::CHOICE_FEW,
            P::DuplicateKind { .. } => codes::L_DUP_KIND,
            P::DuplicateWhen { .. } => codes::L_DUP_WHEN,
            P::DuplicateDynamic { .. } => codes::L_DUP_DYNAMIC,
            P::DuplicateAsk { .. } => codes::L_DUP_ASK,
            P::SecondFrame { .. } => codes::L_SECOND_FRAME,
            P::DuplicateOption { .. } => codes::L_DUP_OPTION,
            P::FrameRegionEnded | P::FrameLineOutside => codes::L_FRAME_LINE_DROPPED,
            P::PolicyValue => codes::L_POLICY_VALUE,
            P::NotAHeading(_) => codes::L_NOT_A_HEADING,
        }
    }

    fn layer(&self) -> Layer {
        Layer::Parse
    }

    fn message(&self) -> String {
        use ParseProblem as P;
        match self {
            P::InvalidUtf8 { byte } => format!("invalid UTF-8 (byte 0x{byte:02X})"),
            P::TooManyBlocks { max } => {
                format!("the file has more than {max} blocks; this block and everything after it are not read")
            }
            P::TooManyItems { max } => format!(
                "the file has more than {max} items (questions, options, frame lines and policy rules); nothing after this line is read"
            ),
            P::DuplicateBlock { id, .. } => format!("block id `{id}` is used twice"),
            P::KindMissing { block } => format!("block `{block}` declares no kind"),
            P::KindInvalid { value, .. } => format!("`{value}` is not a kind (choice / noul / score / mixed / rule)"),
            P::WhenMissing => {
                "`when:` names no position; the position decides which code carries out this decision's actions".into()
            }
            P::WhenLeftover { position, leftover } => {
                format!("text `{leftover}` after position `{position}` is not introduced by `——`, so nothing reads it")
            }
            P::WhenUnknown { position, .. } => format!("`{position}` is not a position"),
            P::ActionNotAtPosition { position, action, handled } => format!(
                "position `{position}` does not handle action `{action}` (it handles {} / escalate)",
                handled.join(" / ")
            ),
            P::Dynamic { problem, .. } => match problem {
                DynamicProblem::NoWhy => "`dynamic:` gives no reason why the candidates are rebuilt every step".into(),
                DynamicProblem::NoArrow => "`dynamic:` lacks `→ <output>`".into(),
                DynamicProblem::MultiArrow(n) => format!("`dynamic:` has {n} arrows; only one is allowed"),
                DynamicProblem::Output(output) => format!("unknown dynamic output `{output}`"),
                DynamicProblem::Call(call) => {
                    format!("dynamic provider `{call}` is not written `<name>(ctx: <cell>, …)`")
                }
                DynamicProblem::NoCells => "`dynamic:` does not say which cells the provider reads".into(),
                DynamicProblem::BadCell(cell) => format!("dynamic cell name `{cell}` is not an identifier"),
                DynamicProblem::DupCells(cells) => format!("dynamic cell names repeated: {}", cells.join(", ")),
            },
            P::FrameNoWhy { line, field, .. } => {
                let what = match field {
                    true => "every field must say why it is in this decision",
                    false => "every deliberate exclusion must say why",
                };
                format!("frame line `{line}` gives no reason; {what}")
            }
            P::FrameEmpty { line } => format!("frame line `{line}` is empty"),
            P::FrameExclusionExtra { cell, extra } => {
                format!("an exclusion names only the cell `{cell}`; got extra `{extra}`")
            }
            P::FrameBoundMissing { field } => format!("frame field `{field}` lacks a positive bound in column 2"),
            P::FrameBoundInvalid { field, bound, .. } => {
                format!("frame field `{field}` has bound `{bound}`, which is not a positive decimal integer")
            }
            P::FrameColumns { field, extra } => format!(
                "frame field `{field}` has at most three columns (name / bound / projection); got extra `{extra}`"
            ),
            P::FrameValue => "`frame:` takes no value".into(),
            P::RuleNoArrow { rule, .. } => format!("policy rule `{rule}` lacks `→ action`"),
            P::RuleEmpty { rule } => format!("policy rule `{rule}` has an empty predicate or action"),
            P::UnknownAction { action, .. } => format!("unknown action `{action}`"),
            P::UnknownKey { key, .. } => format!("unknown key `{key}`"),
            P::QuestionNoOptions { question } => format!("question `{question}` has no options"),
            P::QuestionMixedStyle { question, named, unnamed } => format!(
                "question `{question}` mixes option styles: {named} named (`name — criterion`), {unnamed} unnamed"
            ),
            P::QuestionNoAsk { question } => format!("question `{question}` lacks `ask:`"),
            P::QuestionDuplicate { question } => format!("question id `{question}` is used twice in this block"),
            P::RuleHasQuestions => "a `kind: rule` block must not ask questions: code answers it, not the model".into(),
            P::MixedTooFew { count } => format!("`kind: mixed` needs at least 2 questions (got {count})"),
            P::SingleCount { kind, count } => format!("`kind: {kind}` needs exactly 1 question (got {count})"),
            P::KindMismatch { kind, made, .. } => {
                format!("`kind: {kind}` does not match how the options are written: they make a {made} question")
            }
            P::ChoiceFew { question, count, .. } => {
                format!("question `{question}` has {count} option; a choice needs at least 2")
            }
            P::DuplicateKind { first_line } => {
                format!("second `kind:` in this block (the first is on line {first_line}); the last valid one wins")
            }
            P::DuplicateWhen { first_line } => {
                format!("second `when:` in this block (the first is on line {first_line}); the last one wins")
            }
            P::DuplicateDynamic { first_line } => {
                format!("second `dynamic:` in this block (the first is on line {first_line}); the last one wins")
            }
            P::DuplicateAsk { question, first_line } => format!(
                "second `ask:` for question `{question}` (the first is on line {first_line}); the last one wins"
            ),
            P::SecondFrame { first_line } => format!("a second `frame:` discards the frame on line {first_line}"),
            P::DuplicateOption { option, question } => format!(
                "option `{option}` of question `{question}` is written twice; the later one replaces the earlier"
            ),
            P::FrameRegionEnded => "this line ends the frame region and is read as prose, not as a frame field".into(),
            P::FrameLineOutside => "a frame line outside the frame region is read as prose".into(),
            P::PolicyValue => "text after `policy:` is ignored".into(),
            P::NotAHeading(what) => match what {
                HeadingLike::BareQuestion => "`###` without a question id is read as prose",
                HeadingLike::FourHashes => "a `####` heading is read as prose; questions use `###`",
                HeadingLike::IndentedBlock => "an indented `##` does not start a block; it is read as prose",
            }
            .into(),
        }
    }

    fn help(&self) -> String {
        use ParseProblem as P;
        let did_you_mean = |suggestion: &Option<&str>, otherwise: String| match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => otherwise,
        };
        match self {
            P::InvalidUtf8 { .. } => "save the file as UTF-8".into(),
            P::TooManyBlocks { .. } | P::TooManyItems { .. } => {
                "split the contract into several files; no real contract comes near this size".into()
            }
            P::DuplicateBlock { id, first_line } => {
                format!("the first `## {id}` is on line {first_line}; rename one of them")
            }
            P::KindMissing { .. } => {
                "add `kind: choice | noul | score | mixed | rule` — every block must say who answers it".into()
            }
            P::KindInvalid { suggestion, .. } => {
                did_you_mean(suggestion, "kind is one of choice / noul / score / mixed / rule".into())
            }
            P::WhenMissing => {
                format!("add `when: <position> —— <purpose>`; positions are {} or host:<name>", position_names())
            }
            P::WhenLeftover { position, leftover } => match leftover.strip_prefix("--") {
                Some(purpose) => format!("{DASHES_HELP}: `when: {position} —— {}`", js_trim(purpose)),
                None => format!("write `when: {position} —— {leftover}`"),
            },
            P::WhenUnknown { suggestion, .. } => {
                did_you_mean(suggestion, format!("positions are {} or host:<name>", position_names()))
            }
            P::ActionNotAtPosition { .. } => {
                "use an action this position handles, or move the block to a position that handles it".into()
            }
            P::Dynamic { problem, ascii_dashes } => match problem {
                DynamicProblem::NoWhy if *ascii_dashes => DASHES_HELP.into(),
                DynamicProblem::NoWhy => "add `—— reason` at the end".into(),
                DynamicProblem::NoArrow | DynamicProblem::MultiArrow(_) => DYNAMIC_SHAPE.into(),
                DynamicProblem::Output(_) => "the only output is `candidates`".into(),
                DynamicProblem::Call(_) => {
                    "name the provider and the cells it reads: `toolsFor(ctx: history, files)`".into()
                }
                DynamicProblem::NoCells => {
                    "list the cells: `name(ctx: cell, …)` — a cell left out silently removes a class of candidates"
                        .into()
                }
                DynamicProblem::BadCell(_) => "cell names are ASCII identifiers".into(),
                DynamicProblem::DupCells(_) => "name each cell once".into(),
            },
            P::FrameNoWhy { ascii_dashes: true, .. } => DASHES_HELP.into(),
            P::FrameNoWhy { ascii_dashes: false, .. } => "add `—— reason` at the end of the line".into(),
            P::FrameEmpty { .. } => "name a cell before `——`".into(),
            P::FrameExclusionExtra { cell, .. } => format!("write `- {cell} —— reason`"),
            P::FrameBoundMissing { field } => {
                format!("write `+ {field} 200 —— reason`: bounds are mandatory (characters for text, items for lists)")
            }
            P::FrameBoundInvalid { field, plain, .. } => match plain {
                Some(n) => format!("write the bound as a plain decimal integer: `{n}`"),
                None => format!("write a whole number ≥ 1, e.g. `+ {field} 200 —— reason`"),
            },
            P::FrameColumns { .. } => "move the extra text after `——`".into(),
            P::FrameValue => {
                "write the frame on the following lines: `+ field bound [projection] —— why` and `- cell —— why`".into()
            }
            P::RuleNoArrow { ascii_arrow: true, .. } => "use `→` (U+2192); `->` is not an arrow here".into(),
            P::RuleNoArrow { ascii_arrow: false, .. } | P::RuleEmpty { .. } => "write `- predicate → action`".into(),
            P::UnknownAction { suggestion, .. } => did_you_mean(
                suggestion,
                format!("actions are {}; host actions are written `host:<name>`", ACTIONS.join(" / ")),
            ),
            P::UnknownKey { suggestion, .. } => match suggestion {
                Some(key) => format!("did you mean `{key}:`? If this is prose, {PROSE_HINT}"),
                None => {
                    format!("the keys are kind / when / dynamic / frame / ask / policy; if this is prose, {PROSE_HINT}")
                }
            },
            P::QuestionNoOptions { .. } => "add options as `- name — criterion` lines".into(),
            P::QuestionMixedStyle { .. } => "name every option (choice) or none (score levels, lowest first)".into(),
            P::QuestionNoAsk { .. } => "add `ask: <the question>`".into(),
            P::QuestionDuplicate { .. } => "give each `###` question its own id".into(),
            P::RuleHasQuestions => "remove the questions, or change the kind to choice / noul / score / mixed".into(),
            P::MixedTooFew { .. } => "with one question use choice / noul / score".into(),
            P::SingleCount { .. } => "for several questions use `kind: mixed`".into(),
            P::KindMismatch { kind, made, missing_noul } => match (*made, *kind) {
                ("choice", "noul") if missing_noul.is_some() => add_the_other(*missing_noul),
                ("score", _) => {
                    "the options have no names; if you meant choice, write each as `name — criterion`".into()
                }
                ("choice", "noul") => "the options are named; a noul's two options must be `true` and `false`".into(),
                ("noul", _) => "the options are `true` and `false`".into(),
                _ => "the options are named".into(),
            },
            P::ChoiceFew { missing_noul, .. } => match missing_noul {
                Some(_) => add_the_other(*missing_noul),
                None => {
                    "add options, or declare runtime candidates: `dynamic: provider(ctx: cells…) → candidates —— why`"
                        .into()
                }
            },
            P::DuplicateKind { .. } => "keep one `kind:` line".into(),
            P::DuplicateWhen { .. } => "keep one `when:` line".into(),
            P::DuplicateDynamic { .. } => "keep one `dynamic:` line".into(),
            P::DuplicateAsk { .. } => "keep one `ask:` per question".into(),
            P::SecondFrame { .. } => "merge the two frames into one".into(),
            P::DuplicateOption { .. } => "give each option its own name".into(),
            P::FrameRegionEnded => "write `+ ` (plus and one space) before the field".into(),
            P::FrameLineOutside => {
                "frame lines must follow `frame:` (or another frame line) with no blank line between".into()
            }
            P::PolicyValue => "put rules on the following lines as `- predicate → action`".into(),
            P::NotAHeading(_) => "write `## id` for a block or `### id` for a question at the start of the line".into(),
        }
    }
}

/// The help for a noul written with one option: add the other.
fn add_the_other(missing: Option<&str>) -> String {
    match missing {
        Some(other) => format!("a noul has two options, `true` and `false`: add `- {other} — <when it is {other}>`"),
        None => "a noul's two options must be `true` and `false`".into(),
    }
}

fn position_names() -> String {
    POSITIONS.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Severity, Span};

    /// One of every variant (and of every branch of a help).
    fn samples() -> Vec<ParseProblem<'static>> {
        use ParseProblem as P;
        let mut all = vec![
            P::InvalidUtf8 { byte: 0xFF },
            P::TooManyBlocks { max: 3 },
            P::TooManyItems { max: 3 },
            P::DuplicateBlock { id: "b", first_line: 2 },
            P::KindMissing { block: "b" },
            P::KindInvalid { value: "chioce", suggestion: Some("choice") },
            P::KindInvalid { value: "x", suggestion: None },
            P::WhenMissing,
            P::WhenLeftover { position: "after-tool", leftover: "-- check it" },
            P::WhenLeftover { position: "after-tool", leftover: "check it" },
            P::WhenUnknown { position: "x", suggestion: None },
            P::ActionNotAtPosition { position: "after-tool", action: "deliver", handled: &["continue"] },
            P::FrameNoWhy { line: "+ task 40", field: true, ascii_dashes: false },
            P::FrameNoWhy { line: "- task -- x", field: false, ascii_dashes: true },
            P::FrameEmpty { line: "+ —— why" },
            P::FrameExclusionExtra { cell: "a", extra: "b" },
            P::FrameBoundMissing { field: "a" },
            P::FrameBoundInvalid { field: "a", bound: "2e2", plain: Some(200.0) },
            P::FrameBoundInvalid { field: "a", bound: "-1", plain: None },
            P::FrameColumns { field: "a", extra: "b c" },
            P::FrameValue,
            P::RuleNoArrow { rule: "a -> b", ascii_arrow: true },
            P::RuleNoArrow { rule: "a b", ascii_arrow: false },
            P::RuleEmpty { rule: "→ b" },
            P::UnknownAction { action: "delivr", suggestion: Some("deliver") },
            P::UnknownKey { key: "knid", suggestion: Some("kind") },
            P::UnknownKey { key: "note", suggestion: None },
            P::QuestionNoOptions { question: "q" },
            P::QuestionMixedStyle { question: "q", named: 1, unnamed: 2 },
            P::QuestionNoAsk { question: "q" },
            P::QuestionDuplicate { question: "q" },
            P::RuleHasQuestions,
            P::MixedTooFew { count: 1 },
            P::SingleCount { kind: "choice", count: 2 },
            P::KindMismatch { kind: "noul", made: "choice", missing_noul: Some("false") },
            P::KindMismatch { kind: "noul", made: "choice", missing_noul: None },
            P::KindMismatch { kind: "choice", made: "score", missing_noul: None },
            P::KindMismatch { kind: "choice", made: "noul", missing_noul: None },
            P::KindMismatch { kind: "score", made: "choice", missing_noul: None },
            P::ChoiceFew { question: "q", count: 1, missing_noul: Some("true") },
            P::ChoiceFew { question: "q", count: 1, missing_noul: None },
            P::DuplicateKind { first_line: 3 },
            P::DuplicateWhen { first_line: 3 },
            P::DuplicateDynamic { first_line: 3 },
            P::DuplicateAsk { question: "q", first_line: 3 },
            P::SecondFrame { first_line: 3 },
            P::DuplicateOption { option: "a", question: "q" },
            P::FrameRegionEnded,
            P::FrameLineOutside,
            P::PolicyValue,
            P::NotAHeading(HeadingLike::BareQuestion),
            P::NotAHeading(HeadingLike::FourHashes),
            P::NotAHeading(HeadingLike::IndentedBlock),
        ];
        // Leaked: a sample borrows its problem for the whole test.
        let dynamic: &'static [DynamicProblem] = Box::leak(Box::new([
            DynamicProblem::NoWhy,
            DynamicProblem::NoArrow,
            DynamicProblem::MultiArrow(2),
            DynamicProblem::Output("x".into()),
            DynamicProblem::Call("x".into()),
            DynamicProblem::NoCells,
            DynamicProblem::BadCell("1x".into()),
            DynamicProblem::DupCells(Vec::new()),
        ]));
        all.extend(dynamic.iter().map(|problem| P::Dynamic { problem, ascii_dashes: false }));
        all.extend(dynamic.first().map(|problem| P::Dynamic { problem, ascii_dashes: true }));
        all
    }

    #[test]
    fn lints_are_warnings_and_every_other_problem_an_error() {
        for problem in samples() {
            let lint = problem.code().starts_with("DC05");
            let expected = if lint { Severity::Warning } else { Severity::Error };
            assert_eq!(problem.severity(), expected, "{problem:?}");
            assert!(problem.code().starts_with("DC01") || lint, "{problem:?}: a parse-layer code");
            assert!(!problem.message().is_empty() && !problem.help().is_empty(), "{problem:?}");
        }
    }

    #[test]
    fn helps_that_no_fixture_reaches_say_what_they_said() {
        let dashes = ParseProblem::WhenLeftover { position: "after-tool", leftover: "--  check it" };
        assert_eq!(
            dashes.help(),
            "use `——` (two U+2014 em dashes) before the reason; `--` is not a separator here: \
             `when: after-tool —— check it`"
        );
        let plain = ParseProblem::WhenLeftover { position: "after-tool", leftover: "check it" };
        assert_eq!(plain.help(), "write `when: after-tool —— check it`");
        let named = ParseProblem::KindMismatch { kind: "score", made: "choice", missing_noul: None };
        assert_eq!(named.help(), "the options are named");
        let bound = ParseProblem::FrameBoundInvalid { field: "a", bound: "2e2", plain: Some(200.0) };
        assert_eq!(bound.help(), "write the bound as a plain decimal integer: `200`");
    }

    #[test]
    fn a_diagnostic_carries_the_problem_its_span_and_its_block() {
        let span = Span { line: 4, column: 1, start: 30, end: 34 };
        let d = ParseProblem::SecondFrame { first_line: 2 }.at(span, Some("b".into()));
        assert_eq!(
            (d.code, d.severity, d.layer, d.span),
            (codes::L_SECOND_FRAME, Severity::Warning, Layer::Parse, span)
        );
        assert_eq!(d.message, "a second `frame:` discards the frame on line 2");
        assert_eq!((d.block.as_deref(), d.help.as_deref()), (Some("b"), Some("merge the two frames into one")));
    }
}
