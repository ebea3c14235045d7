//! The parse layer, rule by rule (format.md Part 2 §1 and §3.1, with the Part 1 decisions):
//! the reference fixtures with their exact problems and lines, then one failing and one
//! passing example for every parse rule, then sectioning, questions, kinds, frames,
//! policies and the text-level edge cases (CRLF, BOM, invalid UTF-8, U+2028, inherited names).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use decision_core::check::{self, Capabilities, CheckOptions};
use decision_core::diag::codes;
use decision_core::diag::{Diagnostic, Layer, Severity};
use decision_core::{Kind, Primitive};
use decision_core::{Parsed, parse};

use common::dump;

#[path = "reference/mod.rs"]
mod reference;

/// The bundled example contract, always present.
const BUNDLED: &str = include_str!("../../../examples/coding-agent/DECISION.md");

/// The reference `DECISION.md`, or `None` (after a printed skip line) without the reference files.
fn reference_fixture() -> Option<&'static str> {
    reference::text("fixtures/jevloop/DECISION.md")
}

/// Real contracts: the bundled one, and the reference's when its files are present.
fn real_contracts() -> Vec<&'static str> {
    [Some(BUNDLED), reference_fixture()].into_iter().flatten().collect()
}

/// Join lines with `\n` (and end with one), so that line N of the source is `lines[N - 1]`.
fn src(lines: &[&str]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

fn p(source: &str) -> Parsed {
    parse(source.as_bytes())
}

fn errors(parsed: &Parsed) -> Vec<&Diagnostic> {
    parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect()
}

/// The (code, line) of every error, in emission order.
fn error_codes(parsed: &Parsed) -> Vec<(&'static str, u32)> {
    errors(parsed).iter().map(|d| (d.code, d.span.line)).collect()
}

/// Exactly one diagnostic with `code`; it is a parse-layer error at `line`.
fn one(source: &str, code: &str, line: u32) -> Diagnostic {
    let parsed = p(source);
    let found: Vec<&Diagnostic> = parsed.diagnostics.iter().filter(|d| d.code == code).collect();
    assert_eq!(found.len(), 1, "expected one {code}\n{source}\n{}", dump(&parsed.diagnostics));
    let d = found[0].clone();
    assert_eq!(
        (d.layer, d.severity, d.span.line),
        (Layer::Parse, Severity::Error, line),
        "{code}\n{}",
        dump(&parsed.diagnostics)
    );
    d
}

/// No diagnostic with `code`.
fn none(source: &str, code: &str) -> Parsed {
    let parsed = p(source);
    assert!(
        !parsed.diagnostics.iter().any(|d| d.code == code),
        "unexpected {code}\n{source}\n{}",
        dump(&parsed.diagnostics)
    );
    parsed
}

/// No parse diagnostic at all.
fn clean(source: &str) -> Parsed {
    let parsed = p(source);
    assert!(parsed.diagnostics.is_empty(), "expected no diagnostics\n{source}\n{}", dump(&parsed.diagnostics));
    parsed
}

/// A clean `after-tool` noul block; `extra` lines go after line 3 (`when:`), so the first
/// extra line is line 4.
fn noul_with(extra: &[&str]) -> String {
    let mut lines = vec!["## ok", "kind: noul", "when: after-tool —— after each tool"];
    lines.extend_from_slice(extra);
    lines.extend_from_slice(&[
        "ask: did it work",
        "- true — yes",
        "- false — no",
        "policy:",
        "  - prob:ok >= 0.6 → continue",
        "  - else → stop",
    ]);
    src(&lines)
}

/// A clean `rule` block whose frame lines start at line 5.
fn framed(frame_lines: &[&str]) -> String {
    let mut lines = vec!["## b", "kind: rule", "when: after-tool —— p", "frame:"];
    lines.extend_from_slice(frame_lines);
    lines.extend_from_slice(&["policy:", "  - else → stop"]);
    src(&lines)
}

/// A clean choice block at `tool-choice` with the given `dynamic:` value on line 4.
fn dynamic_block(value: &str) -> String {
    let line = format!("dynamic: {value}");
    src(&[
        "## pick",
        "kind: choice",
        "when: tool-choice —— p",
        &line,
        "ask: which",
        "- a — x",
        "- b — y",
        "policy:",
        "  - top >= 0.6 → call",
        "  - else → escalate",
    ])
}

/// A block at `after-tool` with the given policy items starting on line 8.
fn policy_block(items: &[&str]) -> String {
    let mut lines =
        vec!["## ok", "kind: noul", "when: after-tool —— p", "ask: q", "- true — y", "- false — n", "policy:"];
    lines.extend_from_slice(items);
    src(&lines)
}

// ---------------------------------------------------------------------------------------
// §3.1 reference fixtures (exact expectations from the reference tests)
// ---------------------------------------------------------------------------------------

#[test]
fn fixture_missing_kind() {
    let parsed = p("## foo\nwhen: after-tool\nask: 问点什么\n- a — 甲\n- b — 乙\n");
    assert_eq!(error_codes(&parsed), [(codes::KIND_MISSING, 1)], "{}", dump(&parsed.diagnostics));
}

#[test]
fn fixture_choice_written_as_score() {
    let parsed = p("## foo\nkind: choice\nwhen: after-tool\nask: 问\n- 甲\n- 乙\n");
    assert_eq!(error_codes(&parsed), [(codes::KIND_MISMATCH, 5)], "{}", dump(&parsed.diagnostics));
    // The reference hint names the missing separator; ours says how to write it.
    let help = errors(&parsed)[0].help.clone().unwrap();
    assert!(help.contains("`name — criterion`"), "{help}");
}

#[test]
fn fixture_unknown_key() {
    let parsed = p("## foo\nkind: rule\nwhen: after-tool\ntypo_key: 1\n");
    assert_eq!(error_codes(&parsed), [(codes::UNKNOWN_KEY, 4)], "{}", dump(&parsed.diagnostics));
    assert!(errors(&parsed)[0].message.contains("`typo_key`"));
}

#[test]
fn fixture_invalid_kind() {
    let parsed = p("## foo\nkind: choise\nwhen: after-tool\nask: 问\n- a — 甲\n- b — 乙\n");
    assert_eq!(error_codes(&parsed), [(codes::KIND_INVALID, 2)], "{}", dump(&parsed.diagnostics));
}

#[test]
fn fixture_lines_count_from_the_top_of_the_file() {
    let parsed = p("# t\n\n## foo\nkind: choice\nwhen: after-tool\nask: 问\n- 甲\n- 乙\n");
    assert_eq!(error_codes(&parsed), [(codes::KIND_MISMATCH, 7)], "{}", dump(&parsed.diagnostics));
}

#[test]
fn fixture_unknown_action_in_a_gate_is_not_a_gate() {
    let parsed = p(
        "## g\nkind: noul\n### risk_auth\nask: 问\n- true — 是\n- false — 否\npolicy:\n  - top >= 2 → ask_humam\n  - else → auto\n",
    );
    let mut found = error_codes(&parsed);
    found.sort();
    let mut expected = vec![(codes::POL_UNKNOWN_ACTION, 8), (codes::WHEN_MISSING, 1)];
    expected.sort();
    assert_eq!(found, expected, "{}", dump(&parsed.diagnostics));
    assert!(!parsed.contract.blocks[0].is_gate());
}

#[test]
fn fixture_dynamic_lifts_the_two_option_rule() {
    clean(
        "## foo\nkind: choice\nwhen: tool-choice\nask: 问\ndynamic: toolsFor(ctx: files, readFiles) → candidates —— 运行时算\n- x — 甲\n",
    );
}

#[test]
fn fixture_rule_block_without_schema() {
    let source = "## foo\nkind: rule\nwhen: after-tool\n";
    clean(source);
    let report = check::check(source.as_bytes(), CheckOptions::default());
    let schema: Vec<_> = report.layer(Layer::Schema).collect();
    assert_eq!(schema.len(), 1);
    assert_eq!((schema[0].code, schema[0].span.line), (codes::SCHEMA_MISSING, 1));
}

#[test]
fn fixture_unsupported_schema_is_reported_at_its_line() {
    let source = "schema: decision-contract/v99\n\n## foo\nkind: rule\n";
    let report = check::check(source.as_bytes(), CheckOptions::default());
    let schema: Vec<_> = report.layer(Layer::Schema).collect();
    assert_eq!(schema.len(), 1);
    assert_eq!((schema[0].code, schema[0].span.line), (codes::SCHEMA_UNSUPPORTED, 1));
    assert!(schema[0].message.contains("v99"));
}

#[test]
fn fixture_when_missing() {
    let parsed = p("## foo\nkind: noul\nask: 问\n- true — 是\n- false — 否\npolicy:\n  - else → deliver\n");
    assert_eq!(error_codes(&parsed), [(codes::WHEN_MISSING, 1)], "{}", dump(&parsed.diagnostics));
}

#[test]
fn fixture_when_leftover_action_not_at_position_and_unknown_position() {
    let base = |when: &str| {
        format!("## foo\nkind: noul\n{when}\nask: 问\n- true — 是\n- false — 否\npolicy:\n  - else → stop\n")
    };
    let parsed = p(&base("when: after-tool 每次工具执行之后"));
    assert_eq!(error_codes(&parsed), [(codes::WHEN_LEFTOVER, 3)], "{}", dump(&parsed.diagnostics));
    let parsed = p(&base("when: after-tool").replace("else → stop", "else → deliver"));
    assert_eq!(error_codes(&parsed), [(codes::ACTION_NOT_AT_POSITION, 3)], "{}", dump(&parsed.diagnostics));
    assert!(errors(&parsed)[0].message.contains("`deliver`"));
    let parsed = p(&base("when: 每次工具执行之后"));
    assert_eq!(error_codes(&parsed), [(codes::WHEN_UNKNOWN, 3)], "{}", dump(&parsed.diagnostics));
}

#[test]
fn fixture_kind_rules_and_structure_problems() {
    let noul_named = "## foo\nkind: noul\nwhen: after-tool\nask: 问\n- yes — 是\n- no — 否\n";
    assert_eq!(error_codes(&p(noul_named)), [(codes::KIND_MISMATCH, 5)]);
    let mixed_one = "## foo\nkind: mixed\nwhen: after-tool\nask: 问\n- true — 是\n- false — 否\n";
    assert_eq!(error_codes(&p(mixed_one)), [(codes::MIXED_TOO_FEW, 1)]);
    let noul_two = "## foo\nkind: noul\nwhen: after-tool\n### a\nask: 问\n- true — 是\n- false — 否\n### b\nask: 问\n- true — 是\n- false — 否\n";
    assert_eq!(error_codes(&p(noul_two)), [(codes::SINGLE_COUNT, 1)]);
    let choice_one = "## foo\nkind: choice\nwhen: tool-choice\nask: 问\n- x — 甲\n";
    assert_eq!(error_codes(&p(choice_one)), [(codes::CHOICE_FEW, 5)]);
    let rule_asks = "## foo\nkind: rule\nwhen: after-tool\nask: 问\n- true — 是\n- false — 否\n";
    assert_eq!(error_codes(&p(rule_asks)), [(codes::RULE_HAS_QUESTIONS, 1)]);
    let no_arrow = "## foo\nkind: rule\nwhen: after-tool\npolicy:\n  - 这行没有箭头\n";
    assert_eq!(error_codes(&p(no_arrow)), [(codes::POL_NO_ARROW, 5)]);
    let dup_q = "## foo\nkind: mixed\nwhen: after-tool\n### a\nask: 问\n- true — 是\n- false — 否\n### a\nask: 问\n- true — 是\n- false — 否\n";
    assert_eq!(error_codes(&p(dup_q)), [(codes::Q_DUP_ID, 6)]);
    let dup_block = "## foo\nkind: rule\nwhen: after-tool\n## foo\nkind: rule\nwhen: after-tool\n";
    assert_eq!(error_codes(&p(dup_block)), [(codes::BLOCK_DUP_ID, 4)]);
    let mixed_style = "## foo\nkind: choice\nwhen: tool-choice\nask: 问\n- x — 甲\n- 乙\n";
    assert_eq!(error_codes(&p(mixed_style)), [(codes::Q_MIXED_STYLE, 5)]);
}

// ---------------------------------------------------------------------------------------
// §3.1 one failing and one passing example per rule (rows 1–35, except the unreachable 28)
// ---------------------------------------------------------------------------------------

#[test]
fn row01_frame_line_without_a_reason() {
    let d = one(&framed(&["  + task 400"]), codes::FRAME_NO_WHY, 5);
    assert!(d.message.contains("every field must say why"), "{}", d.message);
    assert_eq!(d.span.column, 3);
    assert_eq!(d.help.as_deref(), Some("add `—— reason` at the end of the line"));
    // The line is still processed.
    let parsed = p(&framed(&["  + task 400"]));
    let field = &parsed.contract.blocks[0].frame.as_ref().unwrap().fields[0];
    assert_eq!((field.key.as_str(), field.bound, field.why.as_str()), ("task", 400, ""));

    let d = one(&framed(&["  - cwd"]), codes::FRAME_NO_WHY, 5);
    assert!(d.message.contains("every deliberate exclusion must say why"), "{}", d.message);
    one(&framed(&["  + task 400 ——   "]), codes::FRAME_NO_WHY, 5);
    one(&framed(&["  + task 400 —— r", "  - cwd ——"]), codes::FRAME_NO_WHY, 6);

    // The message quotes at most 40 UTF-16 units of the trimmed line.
    let long = format!("  + {} 400", "x".repeat(60));
    let d = one(&framed(&[&long]), codes::FRAME_NO_WHY, 5);
    assert!(d.message.contains(&format!("`+ {}`", "x".repeat(38))), "{}", d.message);

    clean(&framed(&["  + task 400 —— why", "  - cwd —— why not"]));
    clean(&framed(&["  + task 400——why", "  - cwd——why not"]));
}

#[test]
fn row02_empty_frame_line() {
    let d = one(&framed(&["  +  —— r"]), codes::FRAME_EMPTY, 5);
    assert_eq!(d.help.as_deref(), Some("name a cell before `——`"));
    let parsed = p(&framed(&["  +  —— r"]));
    assert!(parsed.contract.blocks[0].frame.as_ref().unwrap().fields.is_empty(), "the line is dropped");
    one(&framed(&["  - —— r"]), codes::FRAME_EMPTY, 5);
    none(&framed(&["  + task 400 —— r"]), codes::FRAME_EMPTY);
}

#[test]
fn row03_exclusion_with_extra_tokens() {
    let d = one(&framed(&["  - cwd and more —— r"]), codes::FRAME_EXCL_EXTRA, 5);
    assert!(d.message.contains("`and more`"), "{}", d.message);
    assert_eq!(d.span.column, 9, "at the first extra token");
    assert_eq!(d.help.as_deref(), Some("write `- cwd —— reason`"));
    let parsed = p(&framed(&["  - cwd and more —— r"]));
    let frame = parsed.contract.blocks[0].frame.as_ref().unwrap();
    assert_eq!(frame.excluded[0].field, "cwd", "the exclusion is still recorded");
    assert_eq!(frame.excluded[0].why, "r");
    clean(&framed(&["  - cwd —— r"]));
}

#[test]
fn row04_frame_bound_missing() {
    let d = one(&framed(&["  + task —— r"]), codes::FRAME_BOUND, 5);
    assert_eq!(d.span.column, 5, "at the field name");
    assert!(d.help.as_deref().unwrap().contains("`+ task 200 —— reason`"));
    let parsed = p(&framed(&["  + task —— r"]));
    assert!(parsed.contract.blocks[0].frame.as_ref().unwrap().fields.is_empty(), "the field is dropped");
}

#[test]
fn row04_frame_bounds_are_decimal_integers_of_at_least_one() {
    // Part 1 item 6: JavaScript `Number()` forms are errors with a help line naming the
    // decimal spelling when there is one.
    let cases = [
        ("0x10", "write the bound as a plain decimal integer: `16`"),
        ("4e2", "write the bound as a plain decimal integer: `400`"),
        ("400.0", "write the bound as a plain decimal integer: `400`"),
        ("+400", "write the bound as a plain decimal integer: `400`"),
        ("0b101", "write the bound as a plain decimal integer: `5`"),
        ("0", "write a whole number ≥ 1, e.g. `+ task 200 —— reason`"),
        ("-5", "write a whole number ≥ 1, e.g. `+ task 200 —— reason`"),
        ("1.5", "write a whole number ≥ 1, e.g. `+ task 200 —— reason`"),
        ("NaN", "write a whole number ≥ 1, e.g. `+ task 200 —— reason`"),
        ("１０", "write a whole number ≥ 1, e.g. `+ task 200 —— reason`"),
    ];
    for (bound, help) in cases {
        let line = format!("  + task {bound} —— r");
        let d = one(&framed(&[&line]), codes::FRAME_BOUND, 5);
        assert_eq!(d.help.as_deref(), Some(help), "{bound}");
        assert!(d.message.contains(&format!("`{bound}`")), "{bound}: {}", d.message);
        assert_eq!(d.span.column, 10, "{bound}: at the bound");
        let parsed = p(&framed(&[&line]));
        assert!(parsed.contract.blocks[0].frame.as_ref().unwrap().fields.is_empty(), "{bound}: dropped");
    }
    for (bound, value) in [("1", 1), ("400", 400), ("12000", 12000)] {
        let line = format!("  + task {bound} —— r");
        let parsed = clean(&framed(&[&line]));
        assert_eq!(parsed.contract.blocks[0].frame.as_ref().unwrap().fields[0].bound, value);
    }
}

#[test]
fn row05_frame_field_with_more_than_three_columns() {
    let d = one(&framed(&["  + history 5 recentSteps extra words —— r"]), codes::FRAME_COLUMNS, 5);
    assert!(d.message.contains("`extra words`"), "{}", d.message);
    assert_eq!(d.span.column, 27, "at the first extra column");
    let parsed = p(&framed(&["  + history 5 recentSteps extra words —— r"]));
    let field = &parsed.contract.blocks[0].frame.as_ref().unwrap().fields[0];
    assert_eq!(field.projection.as_deref(), Some("recentSteps"), "the field is kept");
    clean(&framed(&["  + history 5 recentSteps —— r"]));
}

#[test]
fn row06_policy_rule_without_arrow() {
    let d = one(&policy_block(&["  - 这行没有箭头", "  - else → stop"]), codes::POL_NO_ARROW, 8);
    assert_eq!(d.help.as_deref(), Some("write `- predicate → action`"));
    let parsed = p(&policy_block(&["  - 这行没有箭头", "  - else → stop"]));
    assert_eq!(parsed.contract.blocks[0].policy.len(), 1, "the rule is not recorded");
    // ASCII `->` is not an arrow; the help says so.
    let d = one(&policy_block(&["  - else -> stop"]), codes::POL_NO_ARROW, 8);
    assert_eq!(d.help.as_deref(), Some("use `→` (U+2192); `->` is not an arrow here"));
    clean(&policy_block(&["  - prob:ok >= 0.6 → continue", "  - else → stop"]));
}

#[test]
fn row07_policy_rule_with_empty_side() {
    one(&policy_block(&["  - → stop"]), codes::POL_EMPTY, 8);
    one(&policy_block(&["  - else → stop", "  - else →"]), codes::POL_EMPTY, 9);
    let parsed = p(&policy_block(&["  - → stop", "  - else → stop"]));
    assert_eq!(parsed.contract.blocks[0].policy.len(), 1, "the rule is not recorded");
    none(&policy_block(&["  - else→stop"]), codes::POL_EMPTY);
}

#[test]
fn row08_unknown_action() {
    let source = policy_block(&["  - prob:ok >= 0.6 → ask_humam", "  - else → stop"]);
    let d = one(&source, codes::POL_UNKNOWN_ACTION, 8);
    assert_eq!(d.help.as_deref(), Some("did you mean `ask_human`?"));
    assert!(d.message.contains("`ask_humam`"));
    assert_eq!(d.span.column, 22, "at the action");
    let parsed = p(&source);
    assert_eq!(parsed.contract.blocks[0].policy.len(), 2, "the rule stays");
    let d = one(&policy_block(&["  - else → frobnicate"]), codes::POL_UNKNOWN_ACTION, 8);
    assert!(d.help.as_deref().unwrap().contains("answer / ask_human / auto"), "{:?}", d.help);
    // Every one of the 14 actions is known (escalate is legal everywhere).
    for action in decision_core::vocab::ACTIONS {
        let item = format!("  - else → {action}");
        none(&policy_block(&[&item]), codes::POL_UNKNOWN_ACTION);
    }
    // Part 1 item 4: `host:` actions are accepted at parse time (at a host position).
    let host = "## r\nkind: noul\nwhen: host:review —— p\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:r >= 0.6 → host:request_review\n  - else → finish\n";
    clean(host);
}

#[test]
fn row09_invalid_kind() {
    let source = "## foo\nkind: choise\nwhen: tool-choice —— p\nask: q\n- a — x\n";
    let d = one(source, codes::KIND_INVALID, 2);
    assert_eq!(d.help.as_deref(), Some("did you mean `choice`?"));
    assert_eq!(d.span.column, 7, "at the value");
    let parsed = p(source);
    let block = &parsed.contract.blocks[0];
    assert_eq!((block.kind, block.kind_declared), (Kind::Rule, false), "behaves as `rule`");
    // §1.6 is skipped: no CHOICE_FEW and no RULE_HAS_QUESTIONS for the one-option question.
    assert_eq!(error_codes(&parsed), [(codes::KIND_INVALID, 2)]);
    // Case-sensitive; an empty value is invalid too.
    one("## foo\nkind: Noul\nwhen: after-tool\n", codes::KIND_INVALID, 2);
    let d = one("## foo\nkind:\nwhen: after-tool\n", codes::KIND_INVALID, 2);
    assert_eq!(d.span.column, 1);
    assert_eq!(
        one("## foo\nkind: noull\nwhen: after-tool\n", codes::KIND_INVALID, 2).help.as_deref(),
        Some("did you mean `noul`?")
    );
    // Too far from any kind: the help lists them.
    let d = one("## foo\nkind: bool\nwhen: after-tool\n", codes::KIND_INVALID, 2);
    assert_eq!(d.help.as_deref(), Some("kind is one of choice / noul / score / mixed / rule"));
    // A later valid `kind:` wins over an invalid one, but the error stays.
    let parsed = p("## foo\nkind: bogus\nkind: rule\nwhen: after-tool —— p\n");
    assert_eq!(parsed.contract.blocks[0].kind, Kind::Rule);
    assert!(parsed.contract.blocks[0].kind_declared);
    for kind in ["choice", "noul", "score", "mixed", "rule"] {
        none(&format!("## foo\nkind: {kind}\nwhen: after-tool\n"), codes::KIND_INVALID);
    }
}

#[test]
fn row10_frame_with_a_value() {
    let source = src(&[
        "## b",
        "kind: rule",
        "when: after-tool —— p",
        "frame: task",
        "  + task 400 —— r",
        "policy:",
        "  - else → stop",
    ]);
    let d = one(&source, codes::FRAME_VALUE, 4);
    assert_eq!(d.span.column, 8, "at the value");
    let parsed = p(&source);
    assert_eq!(parsed.contract.blocks[0].frame.as_ref().unwrap().fields.len(), 1, "the region still starts");
    clean(&framed(&["  + task 400 —— r"]));
}

#[test]
fn row11_unknown_key() {
    let d = one(&noul_with(&["typo_key: 1"]), codes::UNKNOWN_KEY, 4);
    assert!(d.message.contains("`typo_key`"));
    assert_eq!(d.span.column, 1);
    assert!(d.help.as_deref().unwrap().contains("kind / when / dynamic / frame / ask / policy"), "{:?}", d.help);
    // Keys are shown lower-cased; a near miss gets a suggestion.
    assert!(one(&noul_with(&["Note: this is prose"]), codes::UNKNOWN_KEY, 4).message.contains("`note`"));
    let d = one(&noul_with(&["Fram:"]), codes::UNKNOWN_KEY, 4);
    assert!(d.help.as_deref().unwrap().starts_with("did you mean `frame:`?"), "{:?}", d.help);
    // Prose that starts with `word:` is a key line (Part 1 item 7), e.g. a URL.
    assert!(one(&noul_with(&["http://example.com is the host"]), codes::UNKNOWN_KEY, 4).message.contains("`http`"));
    // Prose that does not start with an ASCII word and a colon is harmless.
    clean(&noul_with(&["**Note**: this is prose", "注意：这是说明", "`code`: x", "1: x", "> quoted: x"]));
}

#[test]
fn row12_block_without_kind() {
    let d = one("# t\n## needs_tool\nwhen: after-tool —— p\n", codes::KIND_MISSING, 2);
    assert_eq!(d.span.column, 4, "at the heading text");
    assert_eq!(d.block.as_deref(), Some("needs_tool"));
    none("## foo\nkind: rule\nwhen: after-tool —— p\n", codes::KIND_MISSING);
}

#[test]
fn row13_when_names_no_position() {
    one("## foo\nkind: rule\n", codes::WHEN_MISSING, 1);
    for when in ["when:", "when: —— only a purpose", "when: (after-tool) —— p", "when: （after-tool）", "when:    "]
    {
        let source = format!("## foo\nkind: rule\n{when}\n");
        one(&source, codes::WHEN_MISSING, 3);
    }
    let d = one("## foo\nkind: rule\n", codes::WHEN_MISSING, 1);
    assert!(d.help.as_deref().unwrap().contains("step-start / tool-choice"), "{:?}", d.help);
    clean("## foo\nkind: rule\nwhen: after-tool —— p\n");
    clean("## foo\nkind: rule\nwhen: after-tool\n");
    clean("## foo\nkind: rule\nwhen: after-tool——p\n");
}

#[test]
fn row14_text_after_the_position() {
    let d = one("## foo\nkind: rule\nwhen: after-tool 每次工具执行之后\n", codes::WHEN_LEFTOVER, 3);
    assert_eq!(d.help.as_deref(), Some("write `when: after-tool —— 每次工具执行之后`"));
    one("## foo\nkind: rule\nwhen: after-tool（每次）—— p\n", codes::WHEN_LEFTOVER, 3);
    // The position check still runs after a leftover error.
    let parsed = p("## foo\nkind: rule\nwhen: nowhere at all\n");
    assert_eq!(error_codes(&parsed), [(codes::WHEN_LEFTOVER, 3), (codes::WHEN_UNKNOWN, 3)]);
    let parsed = none("## foo\nkind: rule\nwhen: after-tool —— 每次工具执行之后\n", codes::WHEN_LEFTOVER);
    assert_eq!(parsed.contract.blocks[0].purpose, "每次工具执行之后");
}

#[test]
fn row15_not_a_position() {
    let d = one("## foo\nkind: rule\nwhen: loop-start —— p\n", codes::WHEN_UNKNOWN, 3);
    assert_eq!(d.help.as_deref(), Some("did you mean `step-start`?"));
    assert!(d.message.contains("`loop-start`"));
    assert_eq!(
        one("## foo\nkind: rule\nwhen: after-tools —— p\n", codes::WHEN_UNKNOWN, 3).help.as_deref(),
        Some("did you mean `after-tool`?")
    );
    // Case-sensitive `host:` prefix.
    one("## foo\nkind: rule\nwhen: Host:review —— p\n", codes::WHEN_UNKNOWN, 3);
    for position in [
        "step-start",
        "tool-choice",
        "input-choice",
        "before-call",
        "after-tool",
        "after-generate",
        "host:review",
        "host:",
    ] {
        let parsed = clean(&format!("## foo\nkind: rule\nwhen: {position} —— p\n"));
        assert_eq!(parsed.contract.blocks[0].position, position);
    }
}

#[test]
fn inherited_object_names_are_not_positions() {
    // Part 1 item 6 / §7.3.4: the reference treats these as positions (and crashes with rules).
    for name in ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"] {
        let source = format!(
            "## foo\nkind: noul\nwhen: {name} —— p\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:foo >= 0.5 → stop\n  - else → escalate\n"
        );
        let parsed = p(&source);
        assert_eq!(error_codes(&parsed), [(codes::WHEN_UNKNOWN, 3)], "{name}\n{}", dump(&parsed.diagnostics));
    }
}

#[test]
fn row16_action_not_handled_at_the_position() {
    let source = policy_block(&["  - prob:ok >= 0.6 → deliver", "  - else → revise"]);
    let parsed = p(&source);
    assert_eq!(
        error_codes(&parsed),
        [(codes::ACTION_NOT_AT_POSITION, 3), (codes::ACTION_NOT_AT_POSITION, 3)],
        "one per rule, at the when line"
    );
    let d = errors(&parsed)[0];
    assert!(d.message.contains("`after-tool` does not handle action `deliver`"), "{}", d.message);
    assert!(d.message.contains("continue / stop / finish / keep_going / escalate"), "{}", d.message);
    // A rule whose action is itself unknown is reported once, as unknown (the reference also
    // reports it as not handled at the position; one mistake gives one error here).
    let parsed = p(&policy_block(&["  - else → ask_humam"]));
    assert_eq!(error_codes(&parsed), [(codes::POL_UNKNOWN_ACTION, 8)]);
    // `escalate` is legal everywhere; host positions are not cross-checked at parse time.
    clean(&policy_block(&["  - prob:ok >= 0.6 → escalate", "  - else → stop"]));
    clean(
        "## r\nkind: noul\nwhen: host:x —— p\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:r >= 0.6 → deliver\n  - else → use_tool\n",
    );
}

#[test]
fn row17_dynamic_without_reason() {
    let d = one(&dynamic_block("toolsFor(ctx: files) → candidates"), codes::DYN_NO_WHY, 4);
    assert_eq!(d.help.as_deref(), Some("add `—— reason` at the end"));
    one(&dynamic_block("toolsFor(ctx: files) → candidates ——"), codes::DYN_NO_WHY, 4);
    clean(&dynamic_block("toolsFor(ctx: files) → candidates —— rebuilt each step"));
}

#[test]
fn row18_dynamic_without_arrow() {
    one(&dynamic_block("toolsFor(ctx: files) candidates —— r"), codes::DYN_NO_ARROW, 4);
    one(&dynamic_block("toolsFor(ctx: files) -> candidates —— r"), codes::DYN_NO_ARROW, 4);
    clean(&dynamic_block("toolsFor(ctx: files)→candidates —— r"));
}

#[test]
fn row19_dynamic_with_several_arrows() {
    let d = one(&dynamic_block("toolsFor(ctx: files) → a → candidates —— r"), codes::DYN_MULTI_ARROW, 4);
    assert!(d.message.contains("2 arrows"), "{}", d.message);
    none(&dynamic_block("toolsFor(ctx: files) → candidates —— r → not an arrow here"), codes::DYN_MULTI_ARROW);
}

#[test]
fn row20_unknown_dynamic_output() {
    assert!(
        one(&dynamic_block("toolsFor(ctx: files) → everything —— r"), codes::DYN_OUTPUT, 4)
            .message
            .contains("`everything`")
    );
    one(&dynamic_block("toolsFor(ctx: files) → —— r"), codes::DYN_OUTPUT, 4);
    one(&dynamic_block("toolsFor(ctx: files) → Candidates —— r"), codes::DYN_OUTPUT, 4);
    none(&dynamic_block("toolsFor(ctx: files) → candidates —— r"), codes::DYN_OUTPUT);
}

#[test]
fn row21_dynamic_call_shape() {
    for call in [
        "tools For(ctx: files)",
        "toolsFor(state: files)",
        "toolsFor",
        "toolsFor(ctx: files",
        "1tools(ctx: a)",
        "toolsFor(ctx: (files))",
        "toolsFor(CTX: files)",
    ] {
        let source = dynamic_block(&format!("{call} → candidates —— r"));
        let d = one(&source, codes::DYN_CALL, 4);
        assert!(d.message.contains(call), "{call}: {}", d.message);
        let parsed = p(&source);
        let dynamic = parsed.contract.blocks[0].dynamic.as_ref().expect("attached even with problems");
        assert_eq!(dynamic.provider, "", "{call}");
    }
    let parsed = clean(&dynamic_block("toolsFor ( ctx : files ) → candidates —— r"));
    assert_eq!(parsed.contract.blocks[0].dynamic.as_ref().unwrap().provider, "toolsFor");
}

#[test]
fn row22_dynamic_names_no_cells() {
    one(&dynamic_block("toolsFor(ctx) → candidates —— r"), codes::DYN_NO_CELLS, 4);
    one(&dynamic_block("toolsFor(ctx:) → candidates —— r"), codes::DYN_NO_CELLS, 4);
    one(&dynamic_block("toolsFor(ctx: , ,) → candidates —— r"), codes::DYN_NO_CELLS, 4);
    let parsed = clean(&dynamic_block("toolsFor(ctx: files, history) → candidates —— r"));
    assert_eq!(parsed.contract.blocks[0].dynamic.as_ref().unwrap().reads, ["files", "history"], "order kept");
}

#[test]
fn row23_dynamic_cell_is_not_an_identifier() {
    let parsed = p(&dynamic_block("toolsFor(ctx: files, 1bad, re-ad) → candidates —— r"));
    let bad: Vec<_> = parsed.diagnostics.iter().filter(|d| d.code == codes::DYN_BAD_CELL).collect();
    assert_eq!(bad.len(), 2, "one per bad cell\n{}", dump(&parsed.diagnostics));
    assert!(bad[0].message.contains("`1bad`") && bad[1].message.contains("`re-ad`"));
    assert!(bad.iter().all(|d| d.span.line == 4 && d.severity == Severity::Error));
    // Non-ASCII letters are not identifier characters.
    one(&dynamic_block("toolsFor(ctx: café) → candidates —— r"), codes::DYN_BAD_CELL, 4);
    clean(&dynamic_block("toolsFor(ctx: _files, read_Files2) → candidates —— r"));
}

#[test]
fn row24_dynamic_cells_repeated() {
    let d = one(&dynamic_block("toolsFor(ctx: a, b, a, a, b) → candidates —— r"), codes::DYN_DUP_CELLS, 4);
    assert!(d.message.ends_with("a, b"), "each duplicate once: {}", d.message);
    clean(&dynamic_block("toolsFor(ctx: a b,c) → candidates —— r"));
}

#[test]
fn dynamic_problems_are_all_collected_in_order() {
    let parsed = p(&dynamic_block("(ctx: 1x, 1x) → a → b"));
    let found: Vec<_> = parsed.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(found, [codes::DYN_NO_WHY, codes::DYN_MULTI_ARROW, codes::DYN_CALL], "{}", dump(&parsed.diagnostics));
    let parsed = p(&dynamic_block("f(ctx: 1x, 1x) → nope"));
    let found: Vec<_> = parsed.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        found,
        [codes::DYN_NO_WHY, codes::DYN_OUTPUT, codes::DYN_BAD_CELL, codes::DYN_BAD_CELL, codes::DYN_DUP_CELLS]
    );
    // A blank `dynamic:` is not parsed at all.
    let parsed = p("## foo\nkind: rule\nwhen: after-tool —— p\ndynamic:   \n");
    assert!(parsed.diagnostics.is_empty(), "{}", dump(&parsed.diagnostics));
    assert!(parsed.contract.blocks[0].dynamic.is_none());
}

#[test]
fn row25_question_without_options() {
    let source = "## foo\nkind: mixed\nwhen: after-tool\n### a\nask: q\n### b\nask: q\n- true — y\n- false — n\n### c\nask: q\n- true — y\n- false — n\n";
    let d = one(source, codes::Q_NO_OPTIONS, 4);
    assert!(d.message.contains("`a`"));
    let parsed = p(source);
    let ids: Vec<_> = parsed.contract.blocks[0].questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["b", "c"], "the question is dropped");
    // The implicit question is reported at the heading line.
    one("## foo\nkind: rule\nwhen: after-tool\nask: q\n", codes::Q_NO_OPTIONS, 1);
    none(&noul_with(&[]), codes::Q_NO_OPTIONS);
    // A `###` with neither ask nor options is not kept, so it is not reported.
    none("## foo\nkind: rule\nwhen: after-tool\n### nothing\n", codes::Q_NO_OPTIONS);
}

#[test]
fn row26_options_mixing_named_and_unnamed() {
    let source = "## foo\nkind: choice\nwhen: tool-choice\nask: q\n- x — 甲\n- 乙\n- 丙\n";
    let d = one(source, codes::Q_MIXED_STYLE, 5);
    assert!(d.message.contains("1 named") && d.message.contains("2 unnamed"), "{}", d.message);
    assert_eq!(p(source).contract.blocks[0].questions[0].primitive, Primitive::Choice, "forced to choice");
    none("## foo\nkind: choice\nwhen: tool-choice\nask: q\n- x — 甲\n- y — 乙\n", codes::Q_MIXED_STYLE);
    none("## foo\nkind: score\nwhen: tool-choice\nask: q\n- 甲\n- 乙\n", codes::Q_MIXED_STYLE);
}

#[test]
fn row27_question_without_ask() {
    let source = "## foo\nkind: noul\nwhen: after-tool\n\n- true — y\n- false — n\n";
    let d = one(source, codes::Q_NO_ASK, 5);
    assert!(d.message.contains("`foo`"));
    assert_eq!(p(source).contract.blocks[0].questions.len(), 1, "the question is kept");
    none("## foo\nkind: noul\nwhen: after-tool\nask: q\n- true — y\n- false — n\n", codes::Q_NO_ASK);
}

#[test]
fn row29_duplicate_question_id() {
    let source = src(&[
        "## foo",
        "kind: mixed",
        "when: after-tool",
        "### a",
        "ask: q",
        "- true — y",
        "- false — n",
        "### a",
        "ask: q",
        "- true — y",
        "- false — n",
        "### a",
        "ask: q",
        "- true — y",
        "- false — n",
    ]);
    let d = one(&source, codes::Q_DUP_ID, 6);
    assert!(d.message.contains("`a`"));
    assert_eq!(p(&source).contract.blocks[0].questions.len(), 3);
    // The block id is the implicit question's id: a `### foo` after content before the first
    // `###` duplicates it.
    let source = src(&[
        "## foo",
        "kind: mixed",
        "when: after-tool",
        "ask: q",
        "- true — y",
        "- false — n",
        "### foo",
        "ask: q",
        "- true — y",
        "- false — n",
    ]);
    one(&source, codes::Q_DUP_ID, 5);
    none(&source.replace("### foo", "### bar"), codes::Q_DUP_ID);
}

#[test]
fn row30_rule_block_with_questions() {
    let d =
        one("## foo\nkind: rule\nwhen: after-tool\n### q\nask: q\n- a — x\n- b — y\n", codes::RULE_HAS_QUESTIONS, 1);
    assert_eq!(d.span.column, 4);
    clean("## foo\nkind: rule\nwhen: after-tool\npolicy:\n  - else → stop\n");
}

#[test]
fn row31_mixed_with_fewer_than_two_questions() {
    let d = one("## foo\nkind: mixed\nwhen: after-tool\nask: q\n- true — y\n- false — n\n", codes::MIXED_TOO_FEW, 1);
    assert!(d.message.contains("got 1"), "{}", d.message);
    assert!(one("## foo\nkind: mixed\nwhen: after-tool\n", codes::MIXED_TOO_FEW, 1).message.contains("got 0"));
    // Question types inside a mixed block are unconstrained.
    clean(
        "## foo\nkind: mixed\nwhen: after-tool\n### a\nask: q\n- true — y\n- false — n\n### b\nask: q\n- low\n- high\n### c\nask: q\n- x — 1\n- y — 2\n",
    );
}

#[test]
fn row32_single_question_kinds_need_exactly_one() {
    let two = "## foo\nkind: noul\nwhen: after-tool\n### a\nask: q\n- true — y\n- false — n\n### b\nask: q\n- true — y\n- false — n\n";
    assert!(one(two, codes::SINGLE_COUNT, 1).message.contains("got 2"));
    assert!(one("## foo\nkind: score\nwhen: after-tool\n", codes::SINGLE_COUNT, 1).message.contains("got 0"));
    // Stop after the count error: no mismatch or few-options errors follow.
    let parsed =
        p("## foo\nkind: choice\nwhen: after-tool\n### a\nask: q\n- true — y\n- false — n\n### b\nask: q\n- x\n");
    assert_eq!(error_codes(&parsed), [(codes::SINGLE_COUNT, 1)]);
    clean(&noul_with(&[]));
}

#[test]
fn row33_kind_does_not_match_the_option_style() {
    let cases = [
        ("choice", "- 甲\n- 乙", "the options have no names; if you meant choice, write each as `name — criterion`"),
        ("noul", "- yes — y\n- no — n", "the options are named; a noul's two options must be `true` and `false`"),
        ("choice", "- true — y\n- false — n", "the options are `true` and `false`"),
        ("score", "- a — x\n- b — y", "the options are named"),
        ("noul", "- 甲\n- 乙", "the options have no names; if you meant choice, write each as `name — criterion`"),
    ];
    for (kind, options, hint) in cases {
        let source = format!("## foo\nkind: {kind}\nwhen: after-tool\nask: q\n\n{options}\n");
        let d = one(&source, codes::KIND_MISMATCH, 6);
        assert_eq!(d.help.as_deref(), Some(hint), "{kind}");
        assert!(d.message.contains(&format!("`kind: {kind}`")), "{}", d.message);
    }
    clean("## foo\nkind: score\nwhen: after-tool\nask: q\n- 甲\n- 乙\n");
    clean("## foo\nkind: choice\nwhen: tool-choice\nask: q\n- a — x\n- b — y\n");
}

#[test]
fn row34_choice_with_fewer_than_two_options() {
    let d = one("## foo\nkind: choice\nwhen: tool-choice\nask: q\n- only — x\n", codes::CHOICE_FEW, 5);
    assert!(d.help.as_deref().unwrap().contains("dynamic: provider(ctx: cells…) → candidates —— why"), "{:?}", d.help);
    // In a mixed block too.
    one(
        "## foo\nkind: mixed\nwhen: tool-choice\n### a\nask: q\n- only — x\n### b\nask: q\n- true — y\n- false — n\n",
        codes::CHOICE_FEW,
        6,
    );
    // Any non-blank `dynamic:` lifts it, even a malformed one.
    let parsed = p("## foo\nkind: choice\nwhen: tool-choice\ndynamic: nonsense\nask: q\n- only — x\n");
    assert!(!parsed.diagnostics.iter().any(|d| d.code == codes::CHOICE_FEW));
    assert!(parsed.diagnostics.iter().any(|d| d.code == codes::DYN_CALL));
    // Score questions may have a single level.
    clean("## foo\nkind: score\nwhen: after-tool\nask: q\n- only level\n");
}

#[test]
fn row35_duplicate_block_id() {
    let source = "## foo\nkind: rule\nwhen: after-tool\n\n## bar\nkind: rule\nwhen: after-tool\n\n## foo\nkind: rule\nwhen: after-tool\n";
    let d = one(source, codes::BLOCK_DUP_ID, 9);
    assert_eq!(d.help.as_deref(), Some("the first `## foo` is on line 1; rename one of them"));
    assert_eq!(p(source).contract.blocks.len(), 3, "both blocks are kept");
    none(&source.replace("\n## foo\nkind", "\n## baz\nkind"), codes::BLOCK_DUP_ID);
    // Generator sections are excluded from the duplicate check.
    clean("## foo\nkind: rule\nwhen: after-tool\n## generator\nA\n## generator\nB\n");
}

#[test]
fn problems_within_a_block_follow_the_reference_emission_order() {
    // Line-loop problems first, then missing kind, then `when:`, then questions.
    let source = src(&["## b", "typo: x", "frame: v", "  + task —— r", "ask: q", "- a — x", "- 乙"]);
    let parsed = p(&source);
    assert_eq!(
        error_codes(&parsed),
        [
            (codes::UNKNOWN_KEY, 2),
            (codes::FRAME_VALUE, 3),
            (codes::FRAME_BOUND, 4),
            (codes::KIND_MISSING, 1),
            (codes::WHEN_MISSING, 1),
            (codes::Q_MIXED_STYLE, 6)
        ],
        "{}",
        dump(&parsed.diagnostics)
    );
    // Then P-BLOCK-DUP-ID for the document; problems are not sorted by line.
    let parsed = p("## a\nkind: rule\nwhen: after-tool\n## a\nkind: rule\n");
    assert_eq!(error_codes(&parsed), [(codes::WHEN_MISSING, 4), (codes::BLOCK_DUP_ID, 4)]);
}

// ---------------------------------------------------------------------------------------
// §1.2 sectioning
// ---------------------------------------------------------------------------------------

#[test]
fn title_schema_and_intro_come_before_the_first_block() {
    let source = "# First\nintro one\n# Second\nschema: decision-contract/v0\n\n  intro two  \nschema:decision-contract/v1\n## foo\nkind: rule\nwhen: after-tool\n";
    let parsed = p(source);
    let c = &parsed.contract;
    assert_eq!(c.title.as_deref(), Some("Second"), "last title wins");
    let schema = c.schema.as_ref().unwrap();
    assert_eq!(
        (schema.value.as_str(), schema.span.line),
        ("decision-contract/v1", 7),
        "last schema wins; no space needed"
    );
    assert_eq!(c.intro, "intro one\n\n  intro two", "raw lines joined, trimmed; title and schema not included");
    assert_eq!(c.blocks.len(), 1);
}

#[test]
fn capitalised_schema_is_not_a_schema() {
    let parsed = p("Schema: decision-contract/v1\n## foo\nkind: rule\nwhen: after-tool\n");
    assert!(parsed.contract.schema.is_none());
    assert_eq!(parsed.contract.intro, "Schema: decision-contract/v1");
    let report =
        check::check(b"Schema: decision-contract/v1\n## foo\nkind: rule\nwhen: after-tool\n", CheckOptions::default());
    assert!(report.layer(Layer::Schema).any(|d| d.code == codes::SCHEMA_MISSING));
}

#[test]
fn schema_inside_a_block_is_an_unknown_key() {
    let source = "## foo\nkind: rule\nwhen: after-tool\nschema: decision-contract/v1\n";
    assert!(one(source, codes::UNKNOWN_KEY, 4).message.contains("`schema`"));
    assert!(p(source).contract.schema.is_none());
}

#[test]
fn only_two_hashes_and_whitespace_at_the_start_of_a_line_open_a_block() {
    let source = src(&[
        "### not a block",
        "#### nor this",
        "  ## nor this",
        "##nor-this",
        "## first block  ",
        "kind: rule",
        "when: after-tool",
        "#### prose",
        "  ## still first",
        "##\tsecond block with  spaces",
        "kind: rule",
        "when: after-tool",
    ]);
    let parsed = p(&source);
    let ids: Vec<_> = parsed.contract.blocks.iter().map(|b| (b.id.as_str(), b.span.line)).collect();
    assert_eq!(ids, [("first block", 5), ("second block with  spaces", 10)], "heading text keeps interior spaces");
    assert!(parsed.contract.intro.starts_with("### not a block\n#### nor this"));
    assert!(parsed.contract.blocks[0].rationale.contains("#### prose"));
    assert!(parsed.contract.blocks[0].rationale.contains("## still first"));
    assert!(errors(&parsed).is_empty(), "{}", dump(&parsed.diagnostics));
}

#[test]
fn generator_sections_are_raw_text() {
    for heading in ["generator", "Generator", "给生成模型", "生成模型", "System Prompt", "SYSTEM PROMPT"] {
        let source = format!("## {heading}\n\nkind: bogus\n- not an option\n### not a question\n\n");
        let parsed = p(&source);
        assert!(parsed.diagnostics.is_empty(), "{heading}: {}", dump(&parsed.diagnostics));
        assert!(parsed.contract.blocks.is_empty(), "{heading}");
        assert_eq!(
            parsed.contract.generator.as_deref(),
            Some("kind: bogus\n- not an option\n### not a question"),
            "{heading}"
        );
    }
    // Several generator sections are appended in document order; a block in between is a block.
    let parsed = p("## generator\none\n## foo\nkind: rule\nwhen: after-tool\n## system prompt\ntwo\n");
    assert_eq!(parsed.contract.generator.as_deref(), Some("one\ntwo"));
    assert_eq!(parsed.contract.blocks.len(), 1);
    // Without one there is no generator text; a look-alike heading is a block.
    let parsed = p("## generators\nkind: rule\nwhen: after-tool\n");
    assert_eq!(parsed.contract.generator, None);
    assert_eq!(parsed.contract.blocks[0].id, "generators");
}

#[test]
fn the_reference_structure() {
    let Some(reference) = reference_fixture() else { return };
    let parsed = p(reference);
    assert!(parsed.diagnostics.is_empty(), "{}", dump(&parsed.diagnostics));
    let c = &parsed.contract;
    assert!(c.intro.starts_with("这个 agent 在 loop 里"));
    assert!(c.intro.ends_with("判定 id 旁边的括号是 `src/decisions.ts` 里对应的实现。\n\n---"));
    let kinds: Vec<_> = c.blocks.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, [Kind::Noul, Kind::Choice, Kind::Choice, Kind::Mixed, Kind::Noul, Kind::Noul, Kind::Mixed]);
    let questions: Vec<Vec<(&str, Primitive, usize)>> = c
        .blocks
        .iter()
        .map(|b| b.questions.iter().map(|q| (q.id.as_str(), q.primitive, q.options.len())).collect())
        .collect();
    assert_eq!(
        questions,
        [
            vec![("needs_tool", Primitive::Noul, 2)],
            vec![("tool", Primitive::Choice, 5)],
            vec![("file", Primitive::Choice, 1)],
            vec![("risk", Primitive::Score, 4), ("needs_auth", Primitive::Noul, 2)],
            vec![("ok", Primitive::Noul, 2)],
            vec![("done", Primitive::Noul, 2)],
            vec![("deliverable", Primitive::Noul, 2), ("unsupported", Primitive::Noul, 2)],
        ]
    );
    let policies: Vec<Vec<(&str, &str)>> =
        c.blocks.iter().map(|b| b.policy.iter().map(|r| (r.predicate.as_str(), r.action.as_str())).collect()).collect();
    assert_eq!(
        policies[3],
        [
            ("score:risk >= 2", "ask_human"),
            ("prob:needs_auth >= 0.5", "ask_human"),
            ("score:risk >= 1", "auto_audit"),
            ("else", "auto")
        ]
    );
    assert_eq!(
        policies[6],
        [("prob:unsupported >= 0.5", "revise"), ("prob:deliverable >= 0.6", "deliver"), ("else", "revise")]
    );
    let fileoptions = c.blocks[2].dynamic.as_ref().unwrap();
    assert_eq!(
        (fileoptions.provider.as_str(), fileoptions.span.line, fileoptions.reads.clone()),
        ("fileOptions", 106, vec!["files".to_string(), "readFiles".to_string()])
    );
    assert_eq!(
        c.blocks[3].questions[0].options.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
        ["0", "1", "2", "3"]
    );
    assert!(c.generator.as_ref().unwrap().len() > 100);
}

// ---------------------------------------------------------------------------------------
// §1.4 / §1.5 questions and option styles
// ---------------------------------------------------------------------------------------

#[test]
fn the_implicit_question_takes_the_block_id_and_the_first_option_line() {
    let source =
        src(&["## needs_tool", "kind: noul", "when: step-start —— p", "", "ask: q", "", "- true — y", "- false — n"]);
    let parsed = clean(&source);
    let q = &parsed.contract.blocks[0].questions[0];
    assert_eq!((q.id.as_str(), q.span.line, q.ask.as_str()), ("needs_tool", 7, "q"));
    // A `###` question starts at its subheading and moves to its first option's line.
    let source = src(&[
        "## pick_tool",
        "kind: choice",
        "when: tool-choice —— p",
        "### tool",
        "ask: which",
        "",
        "- a — x",
        "- b — y",
    ]);
    let q = &clean(&source).contract.blocks[0].questions[0];
    assert_eq!((q.id.as_str(), q.span.line), ("tool", 7));
    // Content before the first `###` is an extra question with the block's id.
    let source = src(&[
        "## b",
        "kind: mixed",
        "when: after-tool",
        "ask: first",
        "- true — y",
        "- false — n",
        "### second",
        "ask: q",
        "- true — y",
        "- false — n",
    ]);
    let ids: Vec<_> = clean(&source).contract.blocks[0].questions.iter().map(|q| q.id.clone()).collect();
    assert_eq!(ids, ["b", "second"]);
    // `ask:` applies to the current question; the last one wins.
    let source = src(&["## b", "kind: noul", "when: after-tool", "ask: one", "ask: two", "- true — y", "- false — n"]);
    assert_eq!(p(&source).contract.blocks[0].questions[0].ask, "two");
}

#[test]
fn options_split_at_the_first_spaced_separator() {
    let source = src(&[
        "## b",
        "kind: choice",
        "when: tool-choice",
        "ask: q",
        "- true — a — b",
        "- reversible write — x",
        "- dash -- ascii",
        "* star — item",
        "-\ttab — item",
        "- a——b — c",
    ]);
    let parsed = clean(&source);
    let options: Vec<(String, String)> =
        parsed.contract.blocks[0].questions[0].options.iter().map(|o| (o.name.clone(), o.criterion.clone())).collect();
    let expected = [
        ("true", "a — b"),
        ("reversible write", "x"),
        ("dash", "ascii"),
        ("star", "item"),
        ("tab", "item"),
        ("a——b", "c"),
    ];
    assert_eq!(options, expected.map(|(a, b)| (a.to_string(), b.to_string())));
}

#[test]
fn unnamed_options_are_named_by_index() {
    let source = src(&[
        "## b",
        "kind: score",
        "when: after-tool",
        "ask: q",
        "- a —— b",
        "- x—y",
        "- — leading",
        "- trailing —",
        "- a -- ",
    ]);
    let parsed = clean(&source);
    let q = &parsed.contract.blocks[0].questions[0];
    assert_eq!(q.primitive, Primitive::Score);
    let options: Vec<(&str, bool, &str)> =
        q.options.iter().map(|o| (o.name.as_str(), o.named, o.criterion.as_str())).collect();
    assert_eq!(
        options,
        [
            ("0", false, "a —— b"),
            ("1", false, "x—y"),
            ("2", false, "— leading"),
            ("3", false, "trailing —"),
            ("4", false, "a --")
        ]
    );
}

#[test]
fn question_types_are_inferred_from_the_option_style() {
    let question = |options: &str| {
        let source = format!(
            "## b\nkind: mixed\nwhen: after-tool\n### q\nask: q\n{options}\n### other\nask: q\n- true — y\n- false — n\n"
        );
        p(&source).contract.blocks[0].questions[0].primitive
    };
    assert_eq!(question("- true — y\n- false — n"), Primitive::Noul);
    assert_eq!(question("- false — n\n- true — y"), Primitive::Noul, "either order");
    assert_eq!(question("- true — y\n- false — n\n- maybe — m"), Primitive::Choice, "exactly two");
    assert_eq!(question("- true — y\n- true — n"), Primitive::Choice);
    assert_eq!(question("- True — y\n- False — n"), Primitive::Choice, "case-sensitive");
    assert_eq!(question("- true\n- false"), Primitive::Score, "unnamed true/false are levels");
    assert_eq!(question("- a — y\n- b — n"), Primitive::Choice);
    assert_eq!(question("- low\n- high"), Primitive::Score);
}

// ---------------------------------------------------------------------------------------
// §1.9 frames
// ---------------------------------------------------------------------------------------

#[test]
fn frame_fields_and_exclusions() {
    let parsed =
        clean(&framed(&["  + task 400 —— a", "  + history 5 recentSteps —— b", "  - cwd —— c", "+ draft 10——d"]));
    let frame = parsed.contract.blocks[0].frame.clone().unwrap();
    assert_eq!(frame.span.line, 4);
    let fields: Vec<_> = frame
        .fields
        .iter()
        .map(|f| (f.key.as_str(), f.bound, f.projection.as_deref(), f.why.as_str(), f.span.line))
        .collect();
    assert_eq!(
        fields,
        [("task", 400, None, "a", 5), ("history", 5, Some("recentSteps"), "b", 6), ("draft", 10, None, "d", 8)]
    );
    let excluded: Vec<_> = frame.excluded.iter().map(|e| (e.field.as_str(), e.why.as_str(), e.span.line)).collect();
    assert_eq!(excluded, [("cwd", "c", 7)]);
    // Keys, projections and excluded names are not validated at parse time.
    clean(&framed(&["  + anything 3 noSuchProjection —— a", "  - noSuchCell —— b"]));
}

#[test]
fn the_frame_region_ends_at_a_blank_or_any_other_line() {
    // After a blank line, a `- cell —— r` line is an option of the current question.
    let source =
        src(&["## b", "kind: score", "when: after-tool", "ask: q", "frame:", "  + task 400 —— r", "", "- cwd —— r"]);
    let parsed = p(&source);
    let block = &parsed.contract.blocks[0];
    assert_eq!(block.frame.as_ref().unwrap().excluded.len(), 0);
    assert_eq!(block.questions[0].options[0].criterion, "cwd —— r");
    // Any other line ends it too and is classified normally.
    let source = src(&[
        "## b",
        "kind: score",
        "when: after-tool",
        "ask: q",
        "frame:",
        "  + task 400 —— r",
        "prose",
        "- cwd —— r",
        "* x — y",
    ]);
    let parsed = p(&source);
    let block = &parsed.contract.blocks[0];
    assert_eq!(block.frame.as_ref().unwrap().fields.len(), 1);
    assert!(block.rationale.contains("prose"));
    assert_eq!(block.questions[0].options.len(), 2);
    // `* x` ends the region and becomes an option.
    let source = src(&[
        "## b",
        "kind: choice",
        "when: tool-choice",
        "ask: q",
        "frame:",
        "  + task 400 —— r",
        "* x — y",
        "- z — w",
    ]);
    let parsed = clean(&source);
    let names: Vec<_> = parsed.contract.blocks[0].questions[0].options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["x", "z"]);
}

#[test]
fn a_subheading_does_not_end_the_frame_region() {
    // §3.8: option lines right under a `###` that follows frame lines are read as exclusions.
    let source = src(&[
        "## b",
        "kind: mixed",
        "when: after-tool",
        "frame:",
        "  + task 400 —— r",
        "### q",
        "- x — y",
        "- z — w",
        "ask: which",
    ]);
    let parsed = p(&source);
    let block = &parsed.contract.blocks[0];
    let excluded: Vec<_> = block.frame.as_ref().unwrap().excluded.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(excluded, ["x", "z"]);
    assert!(parsed.diagnostics.iter().any(|d| d.code == codes::FRAME_NO_WHY && d.span.line == 7));
    assert!(parsed.diagnostics.iter().any(|d| d.code == codes::FRAME_EXCL_EXTRA && d.span.line == 8));
    // The question got the ask but no options.
    assert!(parsed.diagnostics.iter().any(|d| d.code == codes::Q_NO_OPTIONS && d.span.line == 6));
    // A key line does end the region: then the items are options.
    let source = src(&[
        "## b",
        "kind: choice",
        "when: tool-choice",
        "frame:",
        "  + task 400 —— r",
        "### q",
        "ask: which",
        "- x — y",
        "- z — w",
    ]);
    let parsed = clean(&source);
    assert_eq!(parsed.contract.blocks[0].questions[0].options.len(), 2);
}

#[test]
fn frame_lines_outside_a_frame_are_not_fields() {
    // Before any `frame:`, `- x —— r` is an option and `+ x` is prose.
    let source = src(&["## b", "kind: score", "when: after-tool", "ask: q", "- cwd —— r", "+ task 400 —— r"]);
    let parsed = clean(&source);
    let block = &parsed.contract.blocks[0];
    assert!(block.frame.is_none());
    assert_eq!(block.questions[0].options.len(), 1);
    assert!(block.rationale.contains("+ task 400 —— r"));
}

// ---------------------------------------------------------------------------------------
// §1.10 policies
// ---------------------------------------------------------------------------------------

#[test]
fn the_policy_region_ends_at_a_blank_or_non_item_line() {
    let source =
        src(&["## b", "kind: score", "when: after-tool", "ask: q", "policy:", "  - else → stop", "", "- level one"]);
    let block = p(&source).contract.blocks[0].clone();
    assert_eq!(block.policy.len(), 1);
    assert_eq!(block.questions[0].options[0].criterion, "level one");
    let source = src(&[
        "## b",
        "kind: score",
        "when: after-tool",
        "ask: q",
        "policy:",
        "  - else → stop",
        "prose ends it",
        "- level one",
    ]);
    let block = p(&source).contract.blocks[0].clone();
    assert_eq!(block.policy.len(), 1);
    assert_eq!(block.questions[0].options.len(), 1);
    // A `###` ends it too.
    let source = src(&[
        "## b",
        "kind: mixed",
        "when: after-tool",
        "policy:",
        "  - else → stop",
        "### q",
        "ask: q",
        "- low",
        "### r",
        "ask: q",
        "- low",
    ]);
    let block = p(&source).contract.blocks[0].clone();
    assert_eq!(block.policy.len(), 1);
    assert_eq!(block.questions.len(), 2);
}

#[test]
fn several_policy_regions_append() {
    let source = src(&[
        "## ok",
        "kind: noul",
        "when: after-tool —— p",
        "policy:",
        "  - prob:ok >= 0.9 → finish",
        "",
        "ask: q",
        "- true — y",
        "- false — n",
        "POLICY:",
        "  * prob:ok >= 0.6 → continue",
        "  - else → stop",
    ]);
    let parsed = clean(&source);
    let rules: Vec<_> = parsed.contract.blocks[0]
        .policy
        .iter()
        .map(|r| (r.predicate.as_str(), r.action.as_str(), r.span.line))
        .collect();
    assert_eq!(rules, [("prob:ok >= 0.9", "finish", 5), ("prob:ok >= 0.6", "continue", 11), ("else", "stop", 12)]);
}

#[test]
fn rules_are_split_at_the_first_arrow() {
    let parsed = p(&policy_block(&["  - else → stop → now"]));
    let rule = &parsed.contract.blocks[0].policy[0];
    assert_eq!((rule.predicate.as_str(), rule.action.as_str()), ("else", "stop → now"));
    assert!(parsed.diagnostics.iter().any(|d| d.code == codes::POL_UNKNOWN_ACTION));
}

// ---------------------------------------------------------------------------------------
// Text-level edge cases: CRLF, BOM, invalid UTF-8, U+2028
// ---------------------------------------------------------------------------------------

/// The contract as JSON with spans, intro and generator removed (those keep raw `\r`).
fn structure(parsed: &Parsed) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.retain(|k, _| !matches!(k.as_str(), "span" | "when_span" | "intro" | "generator"));
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(&parsed.contract).unwrap();
    strip(&mut value);
    value
}

fn lines_and_codes(parsed: &Parsed) -> Vec<(&'static str, u32, u32)> {
    parsed.diagnostics.iter().map(|d| (d.code, d.span.line, d.span.column)).collect()
}

#[test]
fn crlf_files_parse_like_lf_files() {
    for contract in real_contracts() {
        let crlf = contract.replace('\n', "\r\n");
        let (lf, cr) = (p(contract), p(&crlf));
        assert_eq!(structure(&lf), structure(&cr));
        assert_eq!(lines_and_codes(&cr), lines_and_codes(&lf));
        assert_eq!(cr.contract.intro.replace('\r', ""), lf.contract.intro);
        assert_eq!(cr.contract.generator.as_ref().unwrap().replace('\r', ""), *lf.contract.generator.as_ref().unwrap());
    }
    // Broken files too: the same problems at the same lines and columns.
    let broken = "## foo\nkind: choise\nwhen: loop-start 每次\nfrokm: x\nframe:\n  + task 0x10\n  - cwd extra —— r\nask: q\n- a — x\n- 乙\npolicy:\n  - top >= 2 → ask_humam\n";
    let (lf, cr) = (p(broken), p(&broken.replace('\n', "\r\n")));
    assert!(!lf.diagnostics.is_empty());
    assert_eq!(lines_and_codes(&cr), lines_and_codes(&lf));
    assert_eq!(structure(&cr), structure(&lf));
    // Spans still point into the CRLF source: the trimmed line, without the `\r`.
    let crlf_broken = broken.replace('\n', "\r\n");
    for d in &p(&crlf_broken).diagnostics {
        let text = &crlf_broken[d.span.start..d.span.end];
        assert!(!text.contains('\r'), "{} {text:?}", d.code);
    }
}

#[test]
fn a_leading_bom_is_harmless() {
    for contract in real_contracts() {
        let with_bom = format!("\u{FEFF}{contract}");
        let (plain, bom) = (p(contract), p(&with_bom));
        assert_eq!(structure(&bom), structure(&plain));
        assert!(bom.diagnostics.is_empty(), "{}", dump(&bom.diagnostics));
        assert_eq!(bom.contract.title, plain.contract.title);
        assert!(bom.contract.title.is_some());
        // Valid UTF-8 gives no such error.
        assert!(!plain.diagnostics.iter().any(|d| d.code == codes::INVALID_UTF8));
        let caps = Capabilities::reference();
        let report = check::check(with_bom.as_bytes(), CheckOptions { capabilities: Some(&caps) });
        assert!(report.diagnostics.is_empty());
    }
    // Also when the first line is the schema or a block heading.
    let parsed = p("\u{FEFF}schema: decision-contract/v1\n## foo\nkind: rule\nwhen: after-tool\n");
    assert_eq!(parsed.contract.schema.as_ref().unwrap().value, "decision-contract/v1");
    let parsed = p("\u{FEFF}## foo\nkind: rule\nwhen: after-tool\n");
    assert_eq!(parsed.contract.blocks[0].id, "foo");
    assert!(parsed.diagnostics.is_empty());
}

#[test]
fn invalid_utf8_is_a_located_error_and_the_rest_still_parses() {
    let mut bytes = b"## foo\nkind: noul\nask: ab".to_vec();
    bytes.push(0xFF);
    bytes.extend_from_slice(b"cd\nwhen: after-tool \xC3\x28\n- true \xE2\x80\x94 y\n- false \xE2\x80\x94 n\n");
    let parsed = parse(&bytes);
    let utf8: Vec<_> = parsed.diagnostics.iter().filter(|d| d.code == codes::INVALID_UTF8).collect();
    assert_eq!(utf8.len(), 2, "{}", dump(&parsed.diagnostics));
    let first = utf8[0];
    assert_eq!((first.layer, first.severity), (Layer::Parse, Severity::Error));
    assert_eq!((first.span.line, first.span.column, first.span.start, first.span.end), (3, 8, 25, 26));
    assert!(first.message.contains("0xFF"), "{}", first.message);
    assert_eq!(first.help.as_deref(), Some("save the file as UTF-8"));
    assert_eq!((utf8[1].span.line, utf8[1].span.column), (4, 18));
    // The rest is read.
    let block = &parsed.contract.blocks[0];
    assert_eq!((block.id.as_str(), block.kind), ("foo", Kind::Noul));
    assert_eq!(block.questions[0].primitive, Primitive::Noul);
    // The bad byte is read as one replacement character.
    let ask = &block.questions[0].ask;
    assert!(ask.starts_with("ab") && ask.ends_with("cd") && ask.chars().count() == 5, "{ask:?}");
    // A file that is only invalid bytes gives located errors and no panic.
    let parsed = parse(&[0xFF, 0xFE, 0x80]);
    assert!(parsed.diagnostics.iter().all(|d| d.code == codes::INVALID_UTF8 && d.span.line == 1));
    assert!(!parsed.diagnostics.is_empty());
}

#[test]
fn spans_after_invalid_utf8_point_into_the_original_bytes() {
    // Each invalid byte becomes a 3-byte U+FFFD in the text that is parsed, so every later
    // span is shifted and may lie beyond the end of the input.
    let mut bytes = vec![0xFF; 10];
    bytes.extend_from_slice(b"\n## foo\n");
    let parsed = parse(&bytes);
    let kind_missing = parsed.diagnostics.iter().find(|d| d.code == codes::KIND_MISSING).unwrap();
    assert_eq!(kind_missing.span.start, 14, "`foo` starts at byte 14 of the input");
    assert!(kind_missing.span.end <= bytes.len());
}

#[test]
fn a_line_separator_inside_a_line_makes_it_prose() {
    // JavaScript's `.` does not match U+2028/U+2029 (§7.3.5).
    let source = "## foo\nkind:\u{2028}noul\nwhen: after-tool\n";
    let parsed = p(source);
    assert_eq!(error_codes(&parsed), [(codes::KIND_MISSING, 1)], "{}", dump(&parsed.diagnostics));
    assert!(parsed.contract.blocks[0].rationale.contains("kind:\u{2028}noul"));
    let source = "## foo\nkind: score\nwhen: after-tool\nask: q\n- low\n- mid\u{2029}dle\n";
    let parsed = p(source);
    assert_eq!(parsed.contract.blocks[0].questions[0].options.len(), 1);
    // At the ends of a line they are trimmed like any whitespace.
    clean("## foo\nkind: rule\u{2028}\nwhen: after-tool\n");
}

#[test]
fn unicode_columns_count_scalar_values() {
    let d = one("## 判定\nkind: 布尔\nwhen: after-tool\n", codes::KIND_INVALID, 2);
    assert_eq!(d.span.column, 7);
    let source = "## 判定\nkind: 布尔\nwhen: after-tool\n";
    assert_eq!(&source[d.span.start..d.span.end], "布尔");
    assert_eq!(d.block.as_deref(), Some("判定"));
}

#[test]
fn keys_are_case_insensitive() {
    let parsed = clean(
        "## ok\nKIND: noul\nWhen: after-tool —— p\nASK: q\n- true — y\n- false — n\nPolicy:\n  - prob:ok >= 0.6 → continue\n  - else → stop\n",
    );
    let block = &parsed.contract.blocks[0];
    assert_eq!(
        (block.kind, block.position.as_str(), block.questions[0].ask.as_str(), block.policy.len()),
        (Kind::Noul, "after-tool", "q", 2)
    );
    // Values are not: `kind: Noul` is an error (row 9).
}

#[test]
fn a_kind_mismatch_is_followed_by_the_min_options_check() {
    let parsed = p("## foo\nkind: noul\nwhen: after-tool\nask: q\n- a — x\n");
    assert_eq!(
        error_codes(&parsed),
        [(codes::KIND_MISMATCH, 5), (codes::CHOICE_FEW, 5)],
        "{}",
        dump(&parsed.diagnostics)
    );
}

#[test]
fn duplicate_block_ids_are_reported_after_all_blocks() {
    // §3.1: "Then 35 for the whole document."
    let parsed = p("## a\nkind: rule\nwhen: after-tool\n## a\nkind: rule\nwhen: after-tool\n## b\n");
    assert_eq!(
        error_codes(&parsed),
        [(codes::KIND_MISSING, 7), (codes::WHEN_MISSING, 7), (codes::BLOCK_DUP_ID, 4)],
        "{}",
        dump(&parsed.diagnostics)
    );
}

#[test]
fn whitespace_follows_javascript() {
    // JS `\s` includes U+00A0, U+3000 and U+FEFF (trimmed anywhere, not only at the start
    // of the file); it does not include U+0085.
    let source = "## ok\n\u{FEFF}kind:\u{00A0}noul\u{3000}\nwhen: after-tool\u{00A0}—— p\nask: q\n-\u{00A0}true\u{00A0}—\u{2003}y\n- false — n\npolicy:\n  - else → stop\n";
    let parsed = clean(source);
    let block = &parsed.contract.blocks[0];
    assert_eq!((block.kind, block.position.as_str()), (Kind::Noul, "after-tool"));
    assert_eq!(block.questions[0].primitive, Primitive::Noul);
    one("## ok\nkind: noul\u{0085}\nwhen: after-tool\n", codes::KIND_INVALID, 2);
}
