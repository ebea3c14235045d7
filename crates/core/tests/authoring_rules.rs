//! Mistakes a new author makes that the reference accepts silently and that would change what
//! the host does: a block asked of a model with no frame (the whole state sent, unbounded);
//! an authorisation gate that can never fire, shadowed by an earlier tier or behind a
//! threshold no answer reaches. Each is an error, with a failing and a passing example.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use decision_core::check::{self, Capabilities, CheckOptions, Report};
use decision_core::diag::codes;
use decision_core::diag::{Diagnostic, Layer, Severity};

fn run(source: &str) -> Report {
    check::check(source.as_bytes(), CheckOptions::default())
}

/// The diagnostics with `code`.
fn with_code<'a>(report: &'a Report, code: &str) -> Vec<&'a Diagnostic> {
    report.diagnostics.iter().filter(|d| d.code == code).collect()
}

/// Exactly one error, with `code`, in `layer` at `line`; nothing else is an error.
fn the_error<'a>(report: &'a Report, code: &str, layer: Layer, line: u32) -> &'a Diagnostic {
    let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).collect();
    let dump = common::dump(&report.diagnostics);
    assert_eq!(errors.len(), 1, "{dump}");
    let d = errors[0];
    assert_eq!((d.code, d.layer, d.span.line, d.severity), (code, layer, line, Severity::Error), "{dump}");
    assert!(d.help.is_some(), "{dump}");
    d
}

fn clean(report: &Report) {
    assert!(report.diagnostics.is_empty(), "{}", common::dump(&report.diagnostics));
}

/// A score gate before a call; `rules` start on line 12.
fn risk(rules: &[&str]) -> String {
    format!(
        "schema: decision-contract/v1\n## grade\nkind: score\nwhen: before-call —— p\n### risk\nask: q\n- low\n- mid\n- high\n- worst\npolicy:\n{}frame:\n  + task 10 —— r\n",
        rules.iter().map(|r| format!("  - {r}\n")).collect::<String>()
    )
}

#[test]
fn a_block_asked_of_a_model_without_a_frame_is_an_error() {
    let frameless = "schema: decision-contract/v1\n## ok\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:ok >= 0.6 → continue\n  - else → stop\n";
    let report = run(frameless);
    let d = the_error(&report, codes::NO_FRAME, Layer::Parse, 2);
    assert_eq!(d.block.as_deref(), Some("ok"));
    assert!(d.message.contains("no `frame:`") && d.message.contains("unbounded"), "{}", d.message);
    assert!(!d.message.contains("block `ok`"), "the block is named by the diagnostic, not the message");
    // With a frame it is clean.
    clean(&run(&format!("{frameless}frame:\n  + task 10 —— r\n")));
    // A block decided by code sends nothing to a model and needs no frame.
    clean(&run("schema: decision-contract/v1\n## b\nkind: rule\nwhen: after-tool —— p\npolicy:\n  - else → stop\n"));
}

#[test]
fn the_bundled_contracts_still_check_clean() {
    let caps = Capabilities::reference();
    let bundled = include_str!("../../../examples/coding-agent/DECISION.md");
    clean(&check::check(bundled.as_bytes(), CheckOptions { capabilities: Some(&caps) }));
    clean(&run(include_str!("../../../examples/external-host/triage.DECISION.md")));
}

#[test]
fn a_gate_shadowed_by_an_earlier_tier_is_an_error() {
    // Increasing tiers: `>= 3 → ask_human` never fires, since `>= 2` matched first.
    let report = run(&risk(&["score:risk >= 2 → auto_audit", "score:risk >= 3 → ask_human", "else → auto"]));
    let d = the_error(&report, codes::DEAD_GATE, Layer::Policy, 13);
    assert!(d.message.contains("`score:risk >= 3 → ask_human`") && d.message.contains("line 12"), "{}", d.message);
    assert!(d.message.contains("never fires"), "{}", d.message);
    assert!(with_code(&report, codes::L_SHADOWED_RULE).is_empty(), "one mistake, one report");
    // `escalate` is a gate too.
    let report = run(&risk(&["score:risk >= 1 → auto_audit", "score:risk >= 1 → escalate", "else → auto"]));
    the_error(&report, codes::DEAD_GATE, Layer::Policy, 13);
    // Highest tier first: both fire.
    clean(&run(&risk(&["score:risk >= 3 → ask_human", "score:risk >= 2 → auto_audit", "else → auto"])));
}

#[test]
fn a_gate_threshold_no_answer_reaches_is_an_error() {
    // Four levels: scores run 0..=3.
    let report = run(&risk(&["score:risk >= 7 → ask_human", "else → auto"]));
    let d = the_error(&report, codes::GATE_UNREACHABLE, Layer::Policy, 12);
    assert!(d.message.contains("[0, 3]"), "{}", d.message);
    assert!(with_code(&report, codes::L_THRESHOLD_RANGE).is_empty(), "one mistake, one report");
    // A probability gate above 1.
    let noul = "schema: decision-contract/v1\n## auth\nkind: noul\nwhen: before-call —— p\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:auth >= 7 → ask_human\n  - else → auto\nframe:\n  + task 10 —— r\n";
    the_error(&run(noul), codes::GATE_UNREACHABLE, Layer::Policy, 9);
    clean(&run(&noul.replace(">= 7", ">= 0.7")));
    // The top of the range is reachable.
    clean(&run(&risk(&["score:risk >= 3 → ask_human", "else → auto"])));
    // Not a gate: the range lint only.
    let report = run(&risk(&["score:risk >= 7 → auto_audit", "else → auto"]));
    assert!(!report.has_errors(), "{}", common::dump(&report.diagnostics));
    assert_eq!(with_code(&report, codes::L_THRESHOLD_RANGE).len(), 1);
}

#[test]
fn the_reference_contract_still_checks_clean() {
    #[path = "reference/mod.rs"]
    mod reference;
    let Some(source) = reference::text("fixtures/jevloop/DECISION.md") else { return };
    let caps = Capabilities::reference();
    clean(&check::check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) }));
}

/// The parse-layer diagnostics of `source`, as (code, help).
fn helps(source: &str) -> Vec<(&'static str, String)> {
    decision_core::parse(source.as_bytes())
        .diagnostics
        .into_iter()
        .map(|d| (d.code, d.help.unwrap_or_default()))
        .collect()
}

#[test]
fn ascii_dashes_for_the_reason_separator_get_a_help_line() {
    const DASHES: &str = "use `——` (two U+2014 em dashes) before the reason; `--` is not a separator here";
    let block = |frame: &str, when: &str| {
        format!(
            "schema: decision-contract/v1\n## ok\nkind: noul\nwhen: {when}\nask: q\n- true — y\n- false — n\npolicy:\n  - prob:ok >= 0.6 → continue\n  - else → stop\nframe:\n{frame}\n"
        )
    };
    // A field and an exclusion: one error each, with the help, and no extra-column errors.
    let found = helps(&block("  + task 10 -- the task decides\n  - cwd -- not needed", "after-tool —— p"));
    assert_eq!(
        found,
        [(codes::FRAME_NO_WHY, DASHES.to_string()), (codes::FRAME_NO_WHY, DASHES.to_string())],
        "{found:?}"
    );
    // `when:` with `--` before the purpose.
    let found = helps(&block("  + task 10 —— r", "after-tool -- after every call"));
    assert_eq!(found, [(codes::WHEN_LEFTOVER, format!("{DASHES}: `when: after-tool —— after every call`"))]);
    // Without `--` the usual help stays.
    let found = helps(&block("  + task 10", "after-tool —— p"));
    assert_eq!(found, [(codes::FRAME_NO_WHY, "add `—— reason` at the end of the line".to_string())]);
    assert!(helps(&block("  + task 10 —— r", "after-tool —— p")).is_empty());
}

#[test]
fn a_noul_with_one_option_says_to_add_the_other() {
    let noul = |options: &str| {
        format!(
            "schema: decision-contract/v1\n## ok\nkind: noul\nwhen: after-tool —— p\nask: q\n{options}\npolicy:\n  - prob:ok >= 0.6 → continue\n  - else → stop\nframe:\n  + task 10 —— r\n"
        )
    };
    let found = helps(&noul("- true — it worked"));
    assert!(!found.is_empty());
    for (code, help) in &found {
        assert_eq!(help, "a noul has two options, `true` and `false`: add `- false — <when it is false>`", "{code}");
    }
    let found = helps(&noul("- false — it failed"));
    assert!(found.iter().all(|(_, h)| h.contains("add `- true — <when it is true>`")), "{found:?}");
    assert!(helps(&noul("- true — it worked\n- false — it failed")).is_empty());
}

#[test]
fn a_gate_that_never_fires_is_not_counted_as_a_gate() {
    let gates = |rules: &[&str]| run(&risk(rules)).summary().gates;
    // Live: the highest tier first, or the catch-all itself asking a person.
    assert_eq!(gates(&["score:risk >= 3 → ask_human", "score:risk >= 2 → auto_audit", "else → auto"]), 1);
    assert_eq!(gates(&["score:risk >= 3 → auto", "else → ask_human"]), 1);
    // Dead: shadowed by an earlier tier, a threshold no answer reaches, after a catch-all, or a
    // predicate that does not compile.
    assert_eq!(gates(&["score:risk >= 2 → auto_audit", "score:risk >= 3 → ask_human", "else → auto"]), 0);
    assert_eq!(gates(&["score:risk >= 7 → ask_human", "else → auto"]), 0);
    assert_eq!(gates(&["else → auto", "score:risk >= 3 → ask_human"]), 0);
    assert_eq!(gates(&["risk is very high → ask_human", "else → auto"]), 0);
    // One live rule among dead ones keeps the block a gate.
    assert_eq!(gates(&["score:risk >= 7 → ask_human", "score:risk >= 3 → ask_human", "else → auto"]), 1);
    // The headline says so.
    let headline = run(&risk(&["score:risk >= 7 → ask_human", "else → auto"])).summary().headline();
    assert!(!headline.contains("authorisation gate"), "{headline}");
}
