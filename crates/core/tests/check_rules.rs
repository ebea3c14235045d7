//! The check layers on small hand-written contracts: schema (§3.2), policy compilation for
//! every predicate form (§2.4, §3.3), the adapter rules (§3.5) and the reference-profile rules
//! (§3.4), each with a failing and a passing example; and reading capability reports.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::BTreeMap;

use decision_core::check::{self, Capabilities, CapabilitiesError, CheckOptions, Report};
use decision_core::diag::codes;
use decision_core::diag::{Diagnostic, Layer, Severity};
use decision_core::policy::{Answer, Answers, Comparison, Predicate, Probe, THRESHOLD_FORMS, ThresholdForm, evaluate};

fn dump(report: &Report) -> String {
    common::dump(&report.diagnostics)
}

fn check_plain(source: &str) -> Report {
    check::check(source.as_bytes(), CheckOptions::default())
}

fn check_with(source: &str, caps: &Capabilities) -> Report {
    check::check(source.as_bytes(), CheckOptions { capabilities: Some(caps) })
}

/// Every diagnostic of a layer with a code.
fn found<'a>(report: &'a Report, layer: Layer, code: &str) -> Vec<&'a Diagnostic> {
    report.layer(layer).filter(|d| d.code == code).collect()
}

/// Exactly one error with `code` in `layer`, at `line`.
fn one<'a>(report: &'a Report, layer: Layer, code: &str, line: u32) -> &'a Diagnostic {
    let all = found(report, layer, code);
    assert_eq!(all.len(), 1, "expected one {code}\n{}", dump(report));
    let d = all[0];
    assert_eq!((d.severity, d.span.line), (Severity::Error, line), "{code}\n{}", dump(report));
    d
}

fn assert_clean(report: &Report) {
    assert!(report.diagnostics.is_empty(), "expected no diagnostics\n{}", dump(report));
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

// ---------------------------------------------------------------------------------------
// Schema layer (§3.2)
// ---------------------------------------------------------------------------------------

const RULE_BLOCK: &str = "## foo\nkind: rule\nwhen: after-tool —— p\n";

#[test]
fn schema_missing() {
    let report = check_plain(RULE_BLOCK);
    let d = one(&report, Layer::Schema, codes::SCHEMA_MISSING, 1);
    assert_eq!((d.span.column, d.span.start, d.span.end), (1, 0, 0));
    assert_eq!(d.help.as_deref(), Some("write `schema: decision-contract/v1` before the first `##` block"));
    assert_eq!(report.diagnostics.len(), 1, "the other layers are clean\n{}", dump(&report));
    assert_clean(&check_plain(&format!("schema: decision-contract/v1\n{RULE_BLOCK}")));
}

#[test]
fn schema_unsupported_at_its_line_with_its_value() {
    let report = check_plain(&format!("# Title\n\nschema: decision-contract/v99\n{RULE_BLOCK}"));
    let d = one(&report, Layer::Schema, codes::SCHEMA_UNSUPPORTED, 3);
    assert!(d.message.contains("`decision-contract/v99`"), "{}", d.message);
    assert!(d.message.contains("decision-contract/v1"), "{}", d.message);
    assert_eq!(d.span.column, 1);
    assert_eq!(report.diagnostics.len(), 1);
    // An empty value is unsupported, not missing.
    let report = check_plain(&format!("schema:\n{RULE_BLOCK}"));
    one(&report, Layer::Schema, codes::SCHEMA_UNSUPPORTED, 1);
    assert!(found(&report, Layer::Schema, codes::SCHEMA_MISSING).is_empty());
    // Exact and case-sensitive.
    one(
        &check_plain(&format!("schema: Decision-Contract/v1\n{RULE_BLOCK}")),
        Layer::Schema,
        codes::SCHEMA_UNSUPPORTED,
        1,
    );
    // The last declaration wins; spacing does not matter.
    assert_clean(&check_plain(&format!("schema: decision-contract/v99\nschema:decision-contract/v1\n{RULE_BLOCK}")));
}

#[test]
fn schema_inside_a_block_is_an_unknown_key_not_a_schema() {
    let report = check_plain(&format!("{RULE_BLOCK}schema: decision-contract/v1\n"));
    assert!(one(&report, Layer::Parse, codes::UNKNOWN_KEY, 4).message.contains("`schema`"));
    one(&report, Layer::Schema, codes::SCHEMA_MISSING, 1);
}

// ---------------------------------------------------------------------------------------
// Policy layer (§2.4, §3.3)
// ---------------------------------------------------------------------------------------

/// A contract with one block of each question type, a mixed block and a rule block; each
/// block's policy is `rules` of that block (rules start on the block's `policy:` line + 1).
struct Blocks<'a> {
    noul: &'a [&'a str],
    score: &'a [&'a str],
    choice: &'a [&'a str],
    mixed: &'a [&'a str],
    rule: &'a [&'a str],
}

fn contract(blocks: &Blocks<'_>) -> String {
    let rules = |items: &[&str]| items.iter().map(|r| format!("  - {r}\n")).collect::<String>();
    format!(
        "schema: decision-contract/v1\n\
         ## done_block\nkind: noul\nwhen: step-start —— p\n### done\nask: q\n- true — y\n- false — n\npolicy:\n{}frame:\n  + task 10 —— r\n\
         ## risk_block\nkind: score\nwhen: step-start —— p\n### risk\nask: q\n- low\n- mid\n- high\npolicy:\n{}frame:\n  + task 10 —— r\n\
         ## tool_block\nkind: choice\nwhen: step-start —— p\n### tool\nask: q\n- read_file — r\n- list_dir — l\npolicy:\n{}frame:\n  + task 10 —— r\n\
         ## mixed_block\nkind: mixed\nwhen: step-start —— p\n### a\nask: q\n- true — y\n- false — n\n### b\nask: q\n- low\n- high\npolicy:\n{}frame:\n  + task 10 —— r\n\
         ## rule_block\nkind: rule\nwhen: step-start —— p\npolicy:\n{}",
        rules(blocks.noul),
        rules(blocks.score),
        rules(blocks.choice),
        rules(blocks.mixed),
        rules(blocks.rule),
    )
}

const NONE: &[&str] = &[];

/// Compile `predicate` (with action `answer`, then a fallback) in the block named `which`
/// and return the policy-layer errors.
fn compile_in(which: &str, predicate: &str) -> (Report, Vec<Diagnostic>) {
    let rule = format!("{predicate} → answer");
    let rules: &[&str] = &[&rule, "else → answer"];
    let mut blocks = Blocks { noul: NONE, score: NONE, choice: NONE, mixed: NONE, rule: NONE };
    match which {
        "noul" => blocks.noul = rules,
        "score" => blocks.score = rules,
        "choice" => blocks.choice = rules,
        "mixed" => blocks.mixed = rules,
        "rule" => blocks.rule = rules,
        _ => unreachable!(),
    }
    let report = check_plain(&contract(&blocks));
    let parse_errors: Vec<_> = report.layer(Layer::Parse).filter(|d| d.is_error()).collect();
    assert!(parse_errors.is_empty(), "{}", dump(&report));
    let errors = report.layer(Layer::Policy).filter(|d| d.is_error()).cloned().collect();
    (report, errors)
}

fn compiles(which: &str, predicate: &str) -> Predicate {
    let (report, errors) = compile_in(which, predicate);
    assert!(errors.is_empty(), "`{predicate}` in {which} should compile\n{}", dump(&report));
    let block = ["noul", "score", "choice", "mixed", "rule"].iter().position(|b| *b == which).unwrap();
    report.policies[block].rules[0].predicate.clone()
}

/// The predicate does not compile; returns the error's help line.
fn fails(which: &str, predicate: &str) -> String {
    let (report, errors) = compile_in(which, predicate);
    assert_eq!(errors.len(), 1, "`{predicate}` in {which} should not compile\n{}", dump(&report));
    let d = &errors[0];
    assert_eq!(d.code, codes::UNCOMPILED);
    assert!(d.message.contains(&format!("`{}`", predicate.trim())), "{}", d.message);
    assert!(d.message.contains("(action answer)"), "{}", d.message);
    d.help.clone().unwrap()
}

/// A threshold predicate the grammar has.
fn compare(probe: Probe, comparison: Comparison, question: &str, threshold: f64) -> Predicate {
    Predicate::compare(probe, comparison, question, threshold).unwrap()
}

const PREDICATE_HELP: &str =
    "predicates are `else`, `top >= n`, `top < n`, `prob:q >= n`, `prob:q < n`, `score:q >= n`, `picked:q = option`";

#[test]
fn fallback_forms() {
    for form in ["else", "_", "否则", "其余"] {
        assert_eq!(compiles("noul", form), Predicate::Fallback, "{form}");
        assert_eq!(compiles("rule", form), Predicate::Fallback, "{form}");
    }
    for form in ["Else", "ELSE", "otherwise", "else else", "__"] {
        assert_eq!(fails("noul", form), PREDICATE_HELP, "{form}");
    }
}

#[test]
fn top_needs_exactly_one_question() {
    let top = |threshold: f64| compare(Probe::Top, Comparison::AtLeast, "done", threshold);
    assert_eq!(compiles("noul", "top >= 0.6"), top(0.6));
    assert_eq!(compiles("noul", "top>=0.6"), top(0.6));
    assert_eq!(compiles("noul", "top < 0.6"), compare(Probe::Top, Comparison::Below, "done", 0.6));
    assert_eq!(compiles("score", "top >= 0.5"), compare(Probe::Top, Comparison::AtLeast, "risk", 0.5), "any type");
    assert_eq!(compiles("choice", "top >= 0.5"), compare(Probe::Top, Comparison::AtLeast, "tool", 0.5));
    // A mixed block (two questions) and a rule block (none) cannot use `top`.
    assert_eq!(fails("mixed", "top >= 0.6"), "name the question: `prob:q`, `score:q` or `picked:q`");
    assert_eq!(fails("rule", "top >= 0.6"), "name the question: `prob:q`, `score:q` or `picked:q`");
    // Only `>=` and `<`.
    for bad in ["top > 0.6", "top <= 0.6", "top == 0.6", "top = 0.6", "Top >= 0.6", "top >= 0.6 and more"] {
        assert_eq!(fails("noul", bad), PREDICATE_HELP, "{bad}");
    }
}

#[test]
fn prob_reads_a_noul_question() {
    assert_eq!(compiles("noul", "prob:done >= 0.6"), compare(Probe::Prob, Comparison::AtLeast, "done", 0.6));
    assert_eq!(compiles("noul", "prob:done<.5"), compare(Probe::Prob, Comparison::Below, "done", 0.5));
    assert_eq!(compiles("mixed", "prob:a >= 0.5"), compare(Probe::Prob, Comparison::AtLeast, "a", 0.5));
    // Wrong types name the form that does read them.
    assert_eq!(fails("choice", "prob:tool >= 0.9"), "`prob:` does not read a choice question; use `picked:`");
    assert_eq!(fails("score", "prob:risk >= 0.9"), "`prob:` does not read a score question; use `score:`");
    assert_eq!(fails("mixed", "prob:b >= 0.9"), "`prob:` does not read a score question; use `score:`");
    // No such question: a suggestion when one is close, else the list.
    assert_eq!(fails("noul", "prob:dne >= 0.6"), "did you mean `done`?");
    assert_eq!(fails("noul", "prob:nothing_like_it >= 0.6"), "this block's questions are `done`");
    assert_eq!(fails("mixed", "prob:zzzzzz >= 0.6"), "this block's questions are `a`, `b`");
    // `prob: x` (space after the colon), other operators and keyword case do not compile.
    for bad in [
        "prob: done >= 0.6",
        "prob:done <= 0.5",
        "prob:done > 0.5",
        "Prob:done >= 0.5",
        "prob:done",
        "prob:1done >= 0.5",
    ] {
        assert_eq!(fails("noul", bad), PREDICATE_HELP, "{bad}");
    }
}

#[test]
fn score_reads_a_score_question() {
    assert_eq!(compiles("score", "score:risk >= 2"), compare(Probe::Score, Comparison::AtLeast, "risk", 2.0));
    assert_eq!(compiles("mixed", "score:b >= 1"), compare(Probe::Score, Comparison::AtLeast, "b", 1.0));
    assert_eq!(fails("noul", "score:done >= 2"), "`score:` does not read a noul question; use `prob:`");
    assert_eq!(fails("choice", "score:tool >= 2"), "`score:` does not read a choice question; use `picked:`");
    // There is no `<` form.
    assert_eq!(fails("score", "score:risk < 2"), PREDICATE_HELP);
}

/// Every threshold form of the grammar's table compiles in a block whose question it reads,
/// and decides by its comparison: one answer that makes it hold, one that does not. A form
/// added to the table without a case here fails the coverage check at the end.
#[test]
fn every_threshold_form_compiles_and_evaluates() {
    let noul = |p: f64| Answers::from([("done".to_string(), Answer::Noul { noul: p })]);
    let score = |s: f64| {
        Answers::from([(
            "risk".to_string(),
            Answer::Score { score: s, probabilities: BTreeMap::new(), confidence: Some(0.5) },
        )])
    };
    // (block, predicate, answers it holds for, answers it does not hold for)
    let cases = [
        ("noul", "top >= 0.6", vec![noul(0.6), noul(0.3)], vec![noul(0.55), noul(0.41)]),
        ("noul", "top < 0.6", vec![noul(0.45), Answers::new()], vec![noul(0.6), noul(0.2)]),
        ("noul", "prob:done >= 0.6", vec![noul(0.6), noul(1.0)], vec![noul(0.59), Answers::new()]),
        ("noul", "prob:done < 0.6", vec![noul(0.59), noul(0.0)], vec![noul(0.6), Answers::new()]),
        ("score", "score:risk >= 2", vec![score(2.0), score(2.4)], vec![score(1.9), Answers::new()]),
    ];
    let mut kinds = Vec::new();
    for (which, text, holds, fails) in &cases {
        let predicate = compiles(which, text);
        let Predicate::Compare { form, .. } = &predicate else { panic!("{text}: {predicate:?}") };
        kinds.push(form.kind());
        let (report, _) = compile_in(which, text);
        let block = ["noul", "score"].iter().position(|b| b == which).unwrap();
        let policy = &report.policies[block];
        for answers in holds {
            assert_eq!(evaluate(policy, answers).rule, Some(0), "{text} should hold for {answers:?}");
        }
        for answers in fails {
            assert_eq!(evaluate(policy, answers).rule, Some(1), "{text} should not hold for {answers:?}");
        }
    }
    assert_eq!(kinds, THRESHOLD_FORMS.map(|form| form.kind()), "a case for every form, in table order");
}

/// A probe with a comparison the table does not pair it with is not a predicate, with the
/// same help as any other text outside the grammar.
#[test]
fn pairs_outside_the_table_do_not_compile() {
    let written =
        [(Probe::Top, "noul", "top"), (Probe::Prob, "noul", "prob:done"), (Probe::Score, "score", "score:risk")];
    let mut refused = 0;
    for (probe, which, head) in written {
        for comparison in [Comparison::AtLeast, Comparison::Below] {
            let text = format!("{head} {} 1", comparison.operator());
            if ThresholdForm::of(probe, comparison).is_some() {
                compiles(which, &text);
            } else {
                assert_eq!(fails(which, &text), PREDICATE_HELP, "{text}");
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 1, "only `score:q < n` is refused");
}

#[test]
fn picked_reads_a_choice_question() {
    let picked = |option: &str| Predicate::Picked { question: "tool".into(), option: option.into() };
    assert_eq!(compiles("choice", "picked:tool = read_file"), picked("read_file"));
    assert_eq!(compiles("choice", "picked:tool=list_dir"), picked("list_dir"));
    // The token is not checked against the options here (that is a lint).
    assert_eq!(compiles("choice", "picked:tool = 读文件"), picked("读文件"));
    assert_eq!(fails("noul", "picked:done = true"), "`picked:` does not read a noul question; use `prob:`");
    assert_eq!(fails("score", "picked:risk = low"), "`picked:` does not read a score question; use `score:`");
    for bad in ["picked:tool = read file", "picked:tool =", "picked:tool read_file", "picked:tool == read_file"] {
        assert_eq!(fails("choice", bad), PREDICATE_HELP, "{bad}");
    }
}

#[test]
fn numbers_follow_the_reference_grammar() {
    for (text, value) in [("0.6", 0.6), (".5", 0.5), ("05", 5.0), ("2", 2.0), ("0", 0.0), ("1.25", 1.25)] {
        assert_eq!(
            compiles("noul", &format!("prob:done >= {text}")),
            compare(Probe::Prob, Comparison::AtLeast, "done", value),
            "{text}"
        );
    }
    for bad in ["1.", "-1", "1e3", "+1", ".", "0x1", "1.2.3", "½", "0.6x", "0. 6"] {
        assert_eq!(fails("noul", &format!("prob:done >= {bad}")), PREDICATE_HELP, "{bad}");
    }
    // There is no range check at compile time.
    compiles("noul", "prob:done >= 5");
    compiles("noul", "top >= 2");
}

#[test]
fn question_ids_may_contain_dots_and_hyphens() {
    let source = "## b\nkind: mixed\nwhen: step-start —— p\n### a.b-c\nask: q\n- true — y\n- false — n\n### 需要\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:a.b-c >= 0.5 → answer\n  - prob:需要 >= 0.5 → answer\n  - else → answer\n";
    let report = check_plain(&format!("schema: decision-contract/v1\n{source}"));
    let errors: Vec<_> = report.layer(Layer::Policy).filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "ids outside the ASCII charset cannot be referenced\n{}", dump(&report));
    assert!(errors[0].message.contains("prob:需要"));
}

#[test]
fn policy_errors_carry_the_rule_line_and_block() {
    // Part 1 item 2: the reference gives no line; we give the rule's.
    let source = "schema: decision-contract/v1\n## done_block\nkind: noul\nwhen: after-tool —— p\n### done\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:dne >= 0.6 → finish\n  - confidence >= 0.9 → finish\n  - prob:done >= 0.6 → finish\n  - else → keep_going\n";
    let report = check_plain(source);
    let errors: Vec<_> = report.layer(Layer::Policy).filter(|d| d.is_error()).collect();
    let at: Vec<_> = errors.iter().map(|d| (d.code, d.span.line, d.span.column, d.block.as_deref())).collect();
    assert_eq!(
        at,
        [(codes::UNCOMPILED, 10, 3, Some("done_block")), (codes::UNCOMPILED, 11, 3, Some("done_block"))],
        "{}",
        dump(&report)
    );
    assert!(errors[0].message.contains("`prob:dne >= 0.6` (action finish)"), "{}", errors[0].message);
    // Failed rules keep their place and never fire, so the policy falls through.
    let rules = &report.policies[0].rules;
    assert_eq!(rules.len(), 4);
    assert_eq!((rules[0].predicate.clone(), rules[1].predicate.clone()), (Predicate::Never, Predicate::Never));
    let answers: Answers = BTreeMap::from([("done".to_string(), Answer::Noul { noul: 0.99 })]);
    let decision = evaluate(&report.policies[0], &answers);
    assert_eq!((decision.action.as_str(), decision.rule), ("finish", Some(2)));
    let answers: Answers = BTreeMap::from([("done".to_string(), Answer::Noul { noul: 0.1 })]);
    assert_eq!(evaluate(&report.policies[0], &answers).action, "keep_going");
}

#[test]
fn blocks_without_rules_produce_no_policy_problems() {
    let report = check_plain(&format!("schema: decision-contract/v1\n{RULE_BLOCK}"));
    assert_clean(&report);
    assert!(report.policies[0].rules.is_empty());
}

// ---------------------------------------------------------------------------------------
// Adapter layer (§3.5)
// ---------------------------------------------------------------------------------------

/// A small host: two core positions and one host position, a few cells, one projection,
/// one provider.
fn host() -> Capabilities {
    Capabilities {
        positions: [
            ("after-tool".to_string(), strings(&["continue", "stop"])),
            ("tool-choice".to_string(), strings(&["call"])),
            ("host:review".to_string(), strings(&["finish"])),
        ]
        .into_iter()
        .collect(),
        actions: strings(&["call", "continue", "escalate", "finish", "stop"]),
        state_cells: Some(strings(&["task", "files", "history"])),
        projections: strings(&["recentSteps"]),
        projection_reads: BTreeMap::from([("recentSteps".to_string(), "history".to_string())]),
        dynamic_providers: strings(&["toolsFor"]),
        dynamic_provider_reads: BTreeMap::from([("toolsFor".to_string(), strings(&["files", "history"]))]),
        ..Capabilities::default()
    }
}

/// Clean for [`host`]. Line numbers: `## ok` 3, `when:` 5, `+ task` 10, `+ steps` 11,
/// `- files` 12, rules 14–15; `## pick` 17, `when:` 19, `dynamic:` 20, rules 25–26, frame
/// 27–30; `## review` 32, `when:` 34, rules 39–40, frame 41–42.
const HOST_CONTRACT: &str = "schema: decision-contract/v1

## ok
kind: noul
when: after-tool —— p
ask: q
- true — y
- false — n
frame:
  + task 100 —— r
  + steps 5 recentSteps —— r
  - files —— r
policy:
  - prob:ok >= 0.6 → continue
  - else → stop

## pick
kind: choice
when: tool-choice —— p
dynamic: toolsFor(ctx: files, history) → candidates —— r
ask: which
- a — x
- b — y
policy:
  - top >= 0.6 → call
  - else → escalate
frame:
  + task 50 —— why
  - files —— why
  - history —— why

## review
kind: noul
when: host:review —— p
ask: q
- true — y
- false — n
policy:
  - prob:review >= 0.6 → finish
  - else → escalate
frame:
  + task 50 —— why
";

fn host_contract(find: &str, to: &str) -> String {
    assert_eq!(HOST_CONTRACT.matches(find).count(), 1, "{find}");
    HOST_CONTRACT.replacen(find, to, 1)
}

#[test]
fn the_small_host_contract_is_clean() {
    assert_clean(&check_with(HOST_CONTRACT, &host()));
}

#[test]
fn adapter_position_not_registered() {
    let report = check_with(&host_contract("when: host:review", "when: host:reveiw"), &host());
    let d = one(&report, Layer::Adapter, codes::A_POSITION, 32);
    assert!(d.message.contains("`host:reveiw`"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("did you mean `host:review`?"));
    assert_eq!(d.block.as_deref(), Some("review"));
    // A core position the host does not register.
    let mut caps = host();
    caps.positions.remove("tool-choice");
    let report = check_with(HOST_CONTRACT, &caps);
    let d = one(&report, Layer::Adapter, codes::A_POSITION, 17);
    assert!(d.help.as_deref().unwrap().starts_with("the host registers positions: "), "{:?}", d.help);
    // An empty or unknown position is a parse error, reported once: not again by the adapter.
    let report = check_with(&host_contract("when: host:review —— p\n", ""), &host());
    assert!(report.diagnostics.iter().any(|d| d.code == codes::WHEN_MISSING), "{}", dump(&report));
    assert!(found(&report, Layer::Adapter, codes::A_POSITION).is_empty(), "{}", dump(&report));
    let report = check_with(&host_contract("when: tool-choice —— p", "when: tool-choise —— p"), &host());
    assert!(report.diagnostics.iter().any(|d| d.code == codes::WHEN_UNKNOWN), "{}", dump(&report));
    assert!(found(&report, Layer::Adapter, codes::A_POSITION).is_empty(), "{}", dump(&report));
}

#[test]
fn adapter_action_without_handler() {
    let mut caps = host();
    caps.actions.retain(|a| a != "stop");
    let report = check_with(HOST_CONTRACT, &caps);
    let d = one(&report, Layer::Adapter, codes::A_ACTION, 3);
    assert!(d.message.contains("`stop`"));
    assert!(found(&report, Layer::Adapter, codes::A_ACTION_AT_POSITION).is_empty(), "the position still lists it");
    // `escalate` needs a handler too, but is legal at every position.
    let mut caps = host();
    caps.actions.retain(|a| a != "escalate");
    let report = check_with(HOST_CONTRACT, &caps);
    assert_eq!(found(&report, Layer::Adapter, codes::A_ACTION).len(), 2, "{}", dump(&report));
    assert!(found(&report, Layer::Adapter, codes::A_ACTION_AT_POSITION).is_empty());
}

#[test]
fn adapter_action_not_handled_at_a_registered_position() {
    let mut caps = host();
    caps.positions.insert("after-tool".into(), strings(&["continue"]));
    let report = check_with(HOST_CONTRACT, &caps);
    let d = one(&report, Layer::Adapter, codes::A_ACTION_AT_POSITION, 3);
    assert!(d.message.contains("position `after-tool` does not handle action `stop`"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("in this host `after-tool` handles continue / escalate"));
    // Host positions are checked the same way.
    let mut caps = host();
    caps.positions.insert("host:review".into(), strings(&["call"]));
    one(&check_with(HOST_CONTRACT, &caps), Layer::Adapter, codes::A_ACTION_AT_POSITION, 32);
}

#[test]
fn adapter_provider_not_registered() {
    let report = check_with(&host_contract("toolsFor(ctx", "toolsFro(ctx"), &host());
    let d = one(&report, Layer::Adapter, codes::A_PROVIDER, 17);
    assert_eq!(d.help.as_deref(), Some("did you mean `toolsFor`?"));
    // An unreadable provider call is a parse error, not an adapter one.
    let report = check_with(&host_contract("toolsFor(ctx: files, history)", "toolsFor[files]"), &host());
    assert!(found(&report, Layer::Adapter, codes::A_PROVIDER).is_empty(), "{}", dump(&report));
    assert!(found(&report, Layer::Adapter, codes::A_PROVIDER_READS_MISSING).is_empty());
}

#[test]
fn adapter_provider_reads_undeclared_by_the_host() {
    let mut caps = host();
    caps.dynamic_provider_reads.clear();
    let report = check_with(HOST_CONTRACT, &caps);
    let d = one(&report, Layer::Adapter, codes::A_PROVIDER_READS_MISSING, 17);
    assert!(d.message.contains("files, history"), "{}", d.message);
}

#[test]
fn adapter_provider_reads_compared_in_both_directions() {
    let report = check_with(&host_contract("files, history)", "files, history, task)"), &host());
    let d = one(&report, Layer::Adapter, codes::A_PROVIDER_READS_LESS, 17);
    assert!(d.message.contains("[task]"), "{}", d.message);
    let report = check_with(&host_contract("files, history)", "files)"), &host());
    let d = one(&report, Layer::Adapter, codes::A_PROVIDER_READS_MORE, 17);
    assert!(d.message.contains("[history]"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("add them to the `dynamic:` line: `toolsFor(ctx: files, history)`"));
    // Order does not matter.
    assert_clean(&check_with(&host_contract("files, history)", "history, files)"), &host()));
}

#[test]
fn adapter_projection_not_registered() {
    let report = check_with(&host_contract("recentSteps", "recentStep"), &host());
    let d = one(&report, Layer::Adapter, codes::A_PROJECTION, 11);
    assert_eq!(d.help.as_deref(), Some("did you mean `recentSteps`?"));
    assert_eq!(d.span.column, 3, "the field line");
}

#[test]
fn adapter_state_cell_not_registered() {
    let report = check_with(&host_contract("+ task 100", "+ tassk 100"), &host());
    let d = one(&report, Layer::Adapter, codes::A_STATE_CELL, 10);
    assert!(d.message.contains("`tassk`"));
    assert_eq!(d.help.as_deref(), Some("did you mean `task`?"));
    // A host that does not list its cells skips the check.
    let caps = Capabilities { state_cells: None, ..host() };
    assert_clean(&check_with(&host_contract("+ task 100", "+ tassk 100"), &caps));
}

#[test]
fn adapter_block_level_problems_are_at_the_block_line() {
    let mut caps = host();
    caps.positions.remove("tool-choice");
    caps.dynamic_providers.clear();
    caps.actions.retain(|a| a != "stop");
    let report = check_with(HOST_CONTRACT, &caps);
    for code in [codes::A_POSITION, codes::A_PROVIDER, codes::A_ACTION] {
        let d = found(&report, Layer::Adapter, code)[0];
        let heading = if d.block.as_deref() == Some("ok") { 3 } else { 17 };
        assert_eq!(d.span.line, heading, "{code}\n{}", dump(&report));
    }
}

// ---------------------------------------------------------------------------------------
// The reference-profile rules (§3.4): required blocks, coverage, reasons, question ids
// ---------------------------------------------------------------------------------------

/// [`host`] plus what the reference profile adds: required blocks and question ids and
/// full frame coverage.
fn profile() -> Capabilities {
    Capabilities {
        required_blocks: strings(&["ok", "pick"]),
        required_questions: BTreeMap::from([
            ("ok".to_string(), strings(&["ok"])),
            ("pick".to_string(), strings(&["pick"])),
        ]),
        require_coverage: true,
        ..host()
    }
}

#[test]
fn profile_clean() {
    assert_clean(&check_with(HOST_CONTRACT, &profile()));
}

#[test]
fn profile_required_block_missing() {
    let report = check_with(&host_contract("## pick\n", "## pick_renamed\n"), &profile());
    let d = one(&report, Layer::Adapter, codes::A_BLOCK_MISSING, 1);
    assert!(d.message.contains("`pick`") && d.message.contains("ok, pick_renamed, review"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("did you mean to name `## pick_renamed` `## pick`?"));
    let mut caps = profile();
    caps.required_blocks.push("grade_risk".into());
    let report = check_with(HOST_CONTRACT, &caps);
    assert_eq!(one(&report, Layer::Adapter, codes::A_BLOCK_MISSING, 1).help.as_deref(), Some("add `## grade_risk`"));
    // The reference profile requires its seven blocks.
    let report = check_with(HOST_CONTRACT, &Capabilities::reference());
    let missing: Vec<_> =
        found(&report, Layer::Adapter, codes::A_BLOCK_MISSING).iter().map(|d| d.message.clone()).collect();
    assert_eq!(missing.len(), 7, "{}", dump(&report));
    assert!(missing[0].contains("`needs_tool`") && missing[6].contains("`can_deliver`"));
}

#[test]
fn profile_exclusion_names_no_cell() {
    let report = check_with(&host_contract("- files —— r", "- filez —— r"), &profile());
    let d = one(&report, Layer::Adapter, codes::A_EXCL_UNKNOWN, 12);
    assert_eq!(d.help.as_deref(), Some("did you mean `files`?"));
    // `files` is then uncovered.
    assert!(found(&report, Layer::Adapter, codes::A_UNCOVERED).iter().any(|d| d.message.contains("`files`")));
}

#[test]
fn profile_exclusion_without_reason() {
    let report = check_with(&host_contract("- files —— r", "- files"), &profile());
    one(&report, Layer::Adapter, codes::A_EXCL_NO_WHY, 12);
    one(&report, Layer::Parse, codes::FRAME_NO_WHY, 12);
    // Without the profile only the parse error remains.
    let report = check_with(&host_contract("- files —— r", "- files"), &host());
    assert!(found(&report, Layer::Adapter, codes::A_EXCL_NO_WHY).is_empty());
}

#[test]
fn profile_cell_both_read_and_excluded() {
    // `steps` reads `history` through its projection.
    let report = check_with(&host_contract("  - files —— r\n", "  - files —— r\n  - history —— r\n"), &profile());
    let d = one(&report, Layer::Adapter, codes::A_CONTRADICTION, 13);
    assert!(d.message.contains("`history`"));
    assert!(found(&report, Layer::Parse, codes::L_READ_AND_EXCLUDED).is_empty(), "an error here, not also a lint");
    let report = check_with(&host_contract("  - files —— r\n", "  - files —— r\n  - task —— r\n"), &profile());
    one(&report, Layer::Adapter, codes::A_CONTRADICTION, 13);
}

#[test]
fn profile_field_without_reason() {
    let report = check_with(&host_contract("+ task 100 —— r", "+ task 100"), &profile());
    let d = one(&report, Layer::Adapter, codes::A_FIELD_NO_WHY, 10);
    assert!(d.message.contains("`task`"));
    one(&report, Layer::Parse, codes::FRAME_NO_WHY, 10);
    let report = check_with(&host_contract("+ task 100 —— r", "+ task 100"), &host());
    assert!(found(&report, Layer::Adapter, codes::A_FIELD_NO_WHY).is_empty());
}

#[test]
fn profile_cell_neither_read_nor_excluded() {
    let report = check_with(&host_contract("  - files —— r\n", ""), &profile());
    let d = one(&report, Layer::Adapter, codes::A_UNCOVERED, 9);
    assert!(d.message.contains("`files`"));
    assert_eq!(d.help.as_deref(), Some("add `- files —— why this decision does not see it`"));
    // A field without a bound is dropped at parse time, so its cell becomes uncovered.
    let report = check_with(&host_contract("+ task 100 —— r", "+ task —— r"), &profile());
    assert!(found(&report, Layer::Adapter, codes::A_UNCOVERED).iter().any(|d| d.message.contains("`task`")));
    // Blocks without a frame are not checked for coverage.
    let report = check_with(HOST_CONTRACT, &profile());
    assert!(found(&report, Layer::Adapter, codes::A_UNCOVERED).is_empty());
}

#[test]
fn profile_question_ids() {
    let mut caps = profile();
    caps.required_questions.insert("pick".into(), strings(&["tool"]));
    let report = check_with(HOST_CONTRACT, &caps);
    let d = one(&report, Layer::Adapter, codes::A_QUESTION_IDS, 17);
    assert!(d.message.contains("[tool]") && d.message.contains("[pick]"), "{}", d.message);
    assert_clean(&check_with(&host_contract("ask: which\n", "### tool\nask: which\n"), &caps));
}

// ---------------------------------------------------------------------------------------
// Capabilities::from_json
// ---------------------------------------------------------------------------------------

#[test]
fn capability_actions_default_to_those_named_in_positions_plus_escalate() {
    let caps = Capabilities::from_json(
        r#"{"positions": {"after-tool": ["stop", "continue"], "tool-choice": ["call"]},
            "hostPositions": {"host:review": ["finish"]},
            "projections": ["recentSteps"], "dynamicProviders": ["toolsFor"],
            "dynamicProviderReads": {"toolsFor": ["files", "history"]}}"#,
    )
    .unwrap();
    assert_eq!(caps.actions, ["call", "continue", "escalate", "finish", "stop"]);
    assert!(caps.positions.contains_key("host:review"), "hostPositions are merged");
    assert_eq!(caps.state_cells, None);
    // Known projections bring their source cell.
    assert_eq!(caps.projection_cell("recentSteps"), Some("history"));
    // Clean on the small contract: host positions work and cells are not checked.
    assert_clean(&check_with(&host_contract("+ task 100", "+ anything 100"), &caps));
    // An action named nowhere has no handler (reported once: not also as not handled at the
    // position).
    let report = check_with(&host_contract("prob:review >= 0.6 → finish", "prob:review >= 0.6 → deliver"), &caps);
    one(&report, Layer::Adapter, codes::A_ACTION, 32);
    assert!(found(&report, Layer::Adapter, codes::A_ACTION_AT_POSITION).is_empty(), "{}", dump(&report));
}

#[test]
fn capability_explicit_actions_and_state_cells() {
    let caps = Capabilities::from_json(
        r#"{"positions": {"after-tool": ["stop", "continue"], "tool-choice": ["call"]},
            "hostPositions": {"host:review": ["finish"]},
            "actions": ["call", "continue", "stop", "finish"],
            "stateCells": ["task", "files", "history"],
            "projections": ["recentSteps"], "dynamicProviders": ["toolsFor"],
            "dynamicProviderReads": {"toolsFor": ["files", "history"]}}"#,
    )
    .unwrap();
    assert_eq!(caps.state_cells, Some(strings(&["task", "files", "history"])));
    let report = check_with(HOST_CONTRACT, &caps);
    assert_eq!(found(&report, Layer::Adapter, codes::A_ACTION).len(), 2, "escalate is not listed\n{}", dump(&report));
    let report = check_with(&host_contract("+ task 100", "+ anything 100"), &caps);
    one(&report, Layer::Adapter, codes::A_STATE_CELL, 10);
}

#[test]
fn one_mistake_gives_one_error() {
    // An unknown action: the parse layer says so, and no later check repeats it.
    let typo = host_contract("else → stop", "else → stpo");
    for report in [check_plain(&typo), check_with(&typo, &host()), check_with(&typo, &profile())] {
        let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
        assert_eq!(errors, [codes::POL_UNKNOWN_ACTION], "{}", dump(&report));
    }
    // With the reference profile, a misspelt position is reported once.
    let bundled = include_str!("../../../examples/coding-agent/DECISION.md");
    let misplaced = bundled.replacen("when: before-call", "when: before-cal", 1);
    let report = check_with(&misplaced, &Capabilities::reference());
    let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
    assert_eq!(errors, [codes::WHEN_UNKNOWN], "{}", dump(&report));
    // An action the format does not allow at a core position: once, by the parse layer.
    let report = check_with(&bundled.replacen("else → auto\n", "else → continue\n", 1), &Capabilities::reference());
    let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
    assert_eq!(errors, [codes::ACTION_NOT_AT_POSITION], "{}", dump(&report));
}

#[test]
fn two_diagnostics_about_one_block_agree_on_what_a_position_handles() {
    // A host whose `after-tool` handles only `continue`: the adapter lists what it handles
    // as the parse layer does, `escalate` included.
    let mut caps = host();
    caps.positions.insert("after-tool".into(), strings(&["continue"]));
    let report = check_with(&host_contract("else → stop", "else → finish"), &caps);
    let d = one(&report, Layer::Adapter, codes::A_ACTION_AT_POSITION, 3);
    assert_eq!(d.help.as_deref(), Some("in this host `after-tool` handles continue / escalate"));
    let parse = check_plain(&host_contract("else → stop", "else → use"));
    let d = parse.diagnostics.iter().find(|d| d.code == codes::ACTION_NOT_AT_POSITION).unwrap();
    assert!(d.message.ends_with("(it handles continue / stop / finish / keep_going / escalate)"), "{}", d.message);
}

#[test]
fn unknown_capability_keys_are_located_errors_with_a_suggestion() {
    let text = "{\n  \"positions\": {},\n  \"projectoins\": [\"recentSteps\"]\n}";
    let err = Capabilities::from_json(text).unwrap_err();
    let CapabilitiesError::UnknownKey { key, line, column, help } = &err else { panic!("{err}") };
    assert_eq!((key.as_str(), *line, *column), ("projectoins", 3, 3));
    assert_eq!(help.as_deref(), Some("did you mean `projections`?"));
    assert_eq!(err.to_string(), "unknown key `projectoins` at line 3, column 3; did you mean `projections`?");
    // A key like nothing known has no suggestion.
    let err = Capabilities::from_json(r#"{"positions": {}, "zzzzzzzz": 1}"#).unwrap_err();
    assert!(matches!(&err, CapabilitiesError::UnknownKey { help: None, column: 19, .. }), "{err:?}");
    // Every key of the report format is accepted, including those the check does not read.
    let full = r#"{"positions": {}, "hostPositions": {}, "projections": [], "dynamicProviders": [],
        "dynamicProviderReads": {}, "actions": ["stop"], "stateCells": ["task"], "adapter": "a",
        "contractSchema": "decision-contract/v1", "level": 2, "description": "d", "customGraphNodes": [],
        "terminalStates": [], "graphFeatures": [], "conformance": {"command": "c"}, "knownLimitations": []}"#;
    assert!(Capabilities::from_json(full).is_ok());
}

#[test]
fn capability_json_errors_are_located() {
    let err = Capabilities::from_json("{\n  \"positions\": {\n    \"after-tool\": [\"stop\",]\n  }\n}").unwrap_err();
    let CapabilitiesError::Json { line, column, .. } = &err else { panic!("{err}") };
    assert_eq!(*line, 3);
    assert!(*column > 0);
    assert!(err.to_string().starts_with("invalid capability JSON at line 3"), "{err}");
    // `positions` is required; wrong types are refused.
    for bad in [
        "{}",
        "[]",
        "",
        r#"{"positions": []}"#,
        r#"{"positions": {"a": "stop"}}"#,
        r#"{"positions": {}, "stateCells": "task"}"#,
    ] {
        assert!(Capabilities::from_json(bad).is_err(), "{bad}");
    }
    // The smallest valid report.
    let caps = Capabilities::from_json(r#"{"positions": {}}"#).unwrap();
    assert_eq!(caps.actions, ["escalate"]);
}

#[test]
fn a_host_that_lists_its_cells_checks_exclusions_too() {
    // Our decision (README): the contract says an exclusion that cannot be mapped to host
    // state must be rejected, so any host that lists its state cells checks exclusions too
    // (the reference's generic adapter does not). A host that lists no cells checks neither.
    let report = check_with(&host_contract("- files —— r", "- nothing_like_a_cell —— r"), &host());
    assert_eq!(found(&report, Layer::Adapter, codes::A_EXCL_UNKNOWN).len(), 1, "{}", dump(&report));
    let caps = Capabilities { state_cells: None, ..host() };
    let report = check_with(&host_contract("- files —— r", "- nothing_like_a_cell —— r"), &caps);
    assert!(found(&report, Layer::Adapter, codes::A_EXCL_UNKNOWN).is_empty(), "{}", dump(&report));
}

#[test]
fn the_reference_profile_checks_coverage_of_its_seven_blocks_only() {
    // §3.4: the frame layer applies the registry to the seven reference blocks; another
    // block's frame is checked by the adapter rules (§3.5), which do not require coverage.
    let bundled = include_str!("../../../examples/coding-agent/DECISION.md");
    let extra = format!(
        "{bundled}\n## extra\nkind: rule\nwhen: after-tool —— p\nframe:\n  + task 10 —— r\npolicy:\n  - else → stop\n"
    );
    let report = check_with(&extra, &Capabilities::reference());
    assert_clean(&report);
}
