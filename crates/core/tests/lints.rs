//! The lints (DC0501–DC0516): what the reference silently accepts becomes a warning
//! (format.md Part 1 items 3 and 5, Part 2 §3.8). Each with a failing example (a warning
//! in the right layer at the right line) and a passing one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::collections::BTreeMap;

use decision_core::check::{self, Capabilities, CheckOptions, Report};
use decision_core::diag::codes;
use decision_core::diag::{Diagnostic, Layer, Severity};

fn dump(report: &Report) -> String {
    common::dump(&report.diagnostics)
}

/// `schema:` on line 1, then `lines` (so `lines[i]` is line `i + 2`).
fn doc(lines: &[&str]) -> String {
    let mut s = String::from("schema: decision-contract/v1\n");
    for line in lines {
        s.push_str(line);
        s.push('\n');
    }
    s
}

fn run(source: &str) -> Report {
    check::check(source.as_bytes(), CheckOptions::default())
}

/// Exactly one diagnostic with `code`: a warning in `layer` at `line`. There are no errors.
fn warns(source: &str, code: &str, layer: Layer, line: u32) -> Diagnostic {
    let report = run(source);
    let all: Vec<_> = report.diagnostics.iter().filter(|d| d.code == code).collect();
    assert_eq!(all.len(), 1, "expected one {code}\n{source}\n{}", dump(&report));
    let d = all[0].clone();
    assert_eq!((d.severity, d.layer, d.span.line), (Severity::Warning, layer, line), "{code}\n{}", dump(&report));
    assert!(d.help.is_some(), "{code} has a help line");
    assert!(!report.has_errors(), "warnings only\n{}", dump(&report));
    d
}

/// [`doc`] with a frame after the last line, for a block asked of a decision model.
fn with_frame(lines: &[&str]) -> String {
    let mut lines = lines.to_vec();
    lines.extend_from_slice(&["frame:", "  + task 10 —— r"]);
    doc(&lines)
}

/// No diagnostic at all.
fn quiet(source: &str) {
    let report = run(source);
    assert!(report.diagnostics.is_empty(), "expected nothing\n{source}\n{}", dump(&report));
}

/// A clean noul block at `after-tool` (`## ok` on line 2, `when:` on line 4); `extra` goes
/// after the `when:` line, starting at line 5.
fn noul(extra: &[&str]) -> String {
    let mut lines = vec!["## ok", "kind: noul", "when: after-tool —— p"];
    lines.extend_from_slice(extra);
    lines.extend_from_slice(&[
        "ask: q",
        "- true — y",
        "- false — n",
        "policy:",
        "  - prob:ok >= 0.6 → continue",
        "  - else → stop",
        "frame:",
        "  + task 10 —— r",
    ]);
    doc(&lines)
}

/// A noul block whose policy items start on line 9 (its frame follows them).
fn noul_policy(items: &[&str]) -> String {
    let mut lines =
        vec!["## ok", "kind: noul", "when: after-tool —— p", "ask: q", "- true — y", "- false — n", "policy:"];
    lines.extend_from_slice(items);
    lines.extend_from_slice(&["frame:", "  + task 10 —— r"]);
    doc(&lines)
}

/// A rule block whose frame lines start on line 6.
fn framed(frame_lines: &[&str]) -> String {
    let mut lines = vec!["## b", "kind: rule", "when: after-tool —— p", "frame:"];
    lines.extend_from_slice(frame_lines);
    lines.extend_from_slice(&["policy:", "  - else → stop"]);
    doc(&lines)
}

#[test]
fn the_examples_without_lints_are_quiet() {
    quiet(&noul(&[]));
    quiet(&framed(&["  + task 10 —— r", "  - cwd —— r"]));
}

#[test]
fn dc0501_kind_written_twice() {
    let d = warns(&noul(&["kind: noul"]), codes::L_DUP_KIND, Layer::Parse, 5);
    assert!(d.message.contains("line 3"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("keep one `kind:` line"));
    assert_eq!(d.block.as_deref(), Some("ok"));
    // The last valid kind wins.
    let report = run(&noul(&["kind: rule"]));
    assert!(report.diagnostics.iter().any(|d| d.code == codes::L_DUP_KIND));
    assert_eq!(report.contract.blocks[0].kind, decision_core::Kind::Rule);
    quiet(&noul(&[]));
}

#[test]
fn dc0502_when_written_twice() {
    let d = warns(&noul(&["when: after-tool —— again"]), codes::L_DUP_WHEN, Layer::Parse, 5);
    assert!(d.message.contains("line 4"), "{}", d.message);
    assert_eq!(d.span.column, 1);
    let report = run(&noul(&["when: after-tool —— again"]));
    assert_eq!(report.contract.blocks[0].purpose, "again", "the last one wins");
    quiet(&noul(&[]));
}

#[test]
fn dc0503_dynamic_written_twice() {
    let source = with_frame(&[
        "## pick",
        "kind: choice",
        "when: tool-choice —— p",
        "dynamic: toolsFor(ctx: files) → candidates —— r",
        "dynamic: fileOptions(ctx: files, readFiles) → candidates —— r",
        "ask: q",
        "- a — x",
        "- b — y",
        "policy:",
        "  - top >= 0.6 → call",
        "  - else → escalate",
    ]);
    let d = warns(&source, codes::L_DUP_DYNAMIC, Layer::Parse, 6);
    assert!(d.message.contains("line 5"), "{}", d.message);
    assert_eq!(run(&source).contract.blocks[0].dynamic.as_ref().unwrap().provider, "fileOptions");
    quiet(&source.replace("dynamic: toolsFor(ctx: files) → candidates —— r\n", ""));
}

#[test]
fn dc0504_ask_written_twice_for_one_question() {
    let d = warns(&noul(&["ask: first"]), codes::L_DUP_ASK, Layer::Parse, 6);
    assert!(d.message.contains("`ok`") && d.message.contains("line 5"), "{}", d.message);
    // One `ask:` per question is fine, in several questions.
    quiet(&with_frame(&[
        "## b",
        "kind: mixed",
        "when: after-tool —— p",
        "### x",
        "ask: q",
        "- true — y",
        "- false — n",
        "### y",
        "ask: q",
        "- true — y",
        "- false — n",
        "policy:",
        "  - prob:x >= 0.5 → stop",
        "  - else → continue",
    ]));
}

#[test]
fn dc0505_second_frame() {
    let source = framed(&["  + task 10 —— r", "", "frame:", "  + cwd 10 —— r"]);
    let d = warns(&source, codes::L_SECOND_FRAME, Layer::Parse, 8);
    assert!(d.message.contains("line 5"), "{}", d.message);
    let frame = run(&source).contract.blocks[0].frame.clone().unwrap();
    assert_eq!(frame.fields.iter().map(|f| f.key.as_str()).collect::<Vec<_>>(), ["cwd"], "the first is discarded");
    quiet(&framed(&["  + task 10 —— r", "  + cwd 10 —— r"]));
}

#[test]
fn dc0506_rule_after_a_catch_all() {
    let d = warns(
        &noul_policy(&["  - else → stop", "  - prob:ok >= 0.6 → continue"]),
        codes::L_UNREACHABLE_RULE,
        Layer::Policy,
        10,
    );
    assert!(d.message.contains("`prob:ok >= 0.6 → continue`") && d.message.contains("line 9"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("move the catch-all to the end"));
    // A second catch-all is unreachable too; every rule after the first is reported.
    let report = run(&noul_policy(&["  - _ → stop", "  - 否则 → continue", "  - 其余 → stop"]));
    let lines: Vec<_> =
        report.diagnostics.iter().filter(|d| d.code == codes::L_UNREACHABLE_RULE).map(|d| d.span.line).collect();
    assert_eq!(lines, [10, 11]);
    quiet(&noul_policy(&["  - prob:ok >= 0.6 → continue", "  - else → stop"]));
}

#[test]
fn dc0507_threshold_outside_its_range() {
    let d = warns(
        &noul_policy(&["  - prob:ok >= 1.5 → continue", "  - else → stop"]),
        codes::L_THRESHOLD_RANGE,
        Layer::Policy,
        9,
    );
    assert!(d.message.contains("[0, 1]"), "{}", d.message);
    warns(&noul_policy(&["  - top >= 2 → continue", "  - else → stop"]), codes::L_THRESHOLD_RANGE, Layer::Policy, 9);
    warns(
        &noul_policy(&["  - prob:ok < 1.01 → continue", "  - else → stop"]),
        codes::L_THRESHOLD_RANGE,
        Layer::Policy,
        9,
    );
    // Score thresholds range over the levels: [0, levels − 1].
    let score = |rule: &str| {
        with_frame(&[
            "## risk",
            "kind: score",
            "when: before-call —— p",
            "ask: q",
            "- low",
            "- mid",
            "- high",
            "policy:",
            rule,
            "  - else → auto",
        ])
    };
    let d = warns(&score("  - score:risk >= 3 → auto_audit"), codes::L_THRESHOLD_RANGE, Layer::Policy, 10);
    assert!(d.message.contains("[0, 2]"), "{}", d.message);
    // `top` on a score question reads the confidence: [0, 1].
    warns(&score("  - top >= 1.5 → auto_audit"), codes::L_THRESHOLD_RANGE, Layer::Policy, 10);
    // On an authorisation gate the same threshold is an error of its own (DC0303), not this lint.
    let report = run(&score("  - score:risk >= 3 → ask_human"));
    assert!(report.diagnostics.iter().all(|d| d.code != codes::L_THRESHOLD_RANGE), "{}", dump(&report));
    assert!(report.diagnostics.iter().any(|d| d.code == codes::GATE_UNREACHABLE && d.is_error()), "{}", dump(&report));
    for inside in [
        "  - score:risk >= 2 → ask_human",
        "  - score:risk >= 0 → ask_human",
        "  - score:risk >= 1.5 → ask_human",
        "  - top >= 1 → ask_human",
    ] {
        quiet(&score(inside));
    }
    quiet(&noul_policy(&["  - prob:ok >= 1 → continue", "  - prob:ok < 0 → stop", "  - else → stop"]));
}

#[test]
fn dc0508_picked_names_no_option() {
    let pick = |dynamic: &str, rule: &str| {
        let mut lines = vec!["## pick", "kind: choice", "when: tool-choice —— p"];
        if !dynamic.is_empty() {
            lines.push(dynamic);
        }
        lines.extend_from_slice(&[
            "ask: q",
            "- read_file — r",
            "- list_dir — l",
            "policy:",
            rule,
            "  - else → escalate",
        ]);
        with_frame(&lines)
    };
    let d = warns(&pick("", "  - picked:pick = read_flie → call"), codes::L_PICKED_NOT_OPTION, Layer::Policy, 9);
    assert!(d.message.contains("`read_flie`") && d.message.contains("`pick`"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("did you mean `read_file`?"));
    let d =
        warns(&pick("", "  - picked:pick = delete_everything → call"), codes::L_PICKED_NOT_OPTION, Layer::Policy, 9);
    assert_eq!(d.help.as_deref(), Some("options are: read_file, list_dir"));
    // With `dynamic:` the options are rebuilt at run time, so any name may appear.
    quiet(&pick("dynamic: toolsFor(ctx: files) → candidates —— r", "  - picked:pick = delete_everything → call"));
    quiet(&pick("", "  - picked:pick = list_dir → call"));
}

#[test]
fn dc0509_option_name_written_twice() {
    let source = with_frame(&[
        "## pick",
        "kind: choice",
        "when: tool-choice —— p",
        "ask: q",
        "- a — first",
        "- b — other",
        "- a — second",
        "policy:",
        "  - picked:pick = a → call",
        "  - else → escalate",
    ]);
    let d = warns(&source, codes::L_DUP_OPTION, Layer::Parse, 8);
    assert!(d.message.contains("`a`") && d.message.contains("`pick`"), "{}", d.message);
    quiet(&source.replace("- a — second", "- c — second"));
    // Unnamed levels are named by position and never collide.
    quiet(&with_frame(&[
        "## risk",
        "kind: score",
        "when: before-call —— p",
        "ask: q",
        "- same",
        "- same",
        "policy:",
        "  - score:risk >= 1 → ask_human",
        "  - else → auto",
    ]));
}

#[test]
fn dc0510_frame_field_written_twice() {
    let d = warns(
        &framed(&["  + task 10 —— r", "  + cwd 10 —— r", "  + task 20 —— again"]),
        codes::L_DUP_FIELD,
        Layer::Parse,
        8,
    );
    assert!(d.message.contains("`task`"), "{}", d.message);
    quiet(&framed(&["  + task 10 —— r", "  + cwd 10 —— r"]));
}

#[test]
fn dc0511_exclusion_written_twice() {
    let d =
        warns(&framed(&["  - cwd —— r", "  - task —— r", "  - cwd —— again"]), codes::L_DUP_EXCLUSION, Layer::Parse, 8);
    assert!(d.message.contains("`cwd`"), "{}", d.message);
    quiet(&framed(&["  - cwd —— r", "  - task —— r"]));
}

#[test]
fn dc0512_cell_both_read_and_excluded() {
    let d = warns(&framed(&["  + task 10 —— r", "  - task —— r"]), codes::L_READ_AND_EXCLUDED, Layer::Parse, 7);
    assert!(d.message.contains("`task`"), "{}", d.message);
    // Read through a standard projection (`recentSteps` reads `history`).
    warns(&framed(&["  + steps 5 recentSteps —— r", "  - history —— r"]), codes::L_READ_AND_EXCLUDED, Layer::Parse, 7);
    quiet(&framed(&["  + steps 5 recentSteps —— r", "  - task —— r"]));
    // A host without a coverage profile gets the lint; one with it gets an adapter error.
    let source = framed(&["  + task 10 —— r", "  - task —— r"]);
    let host = Capabilities::from_json(r#"{"positions": {"after-tool": ["stop"]}}"#).unwrap();
    let report = check::check(source.as_bytes(), CheckOptions { capabilities: Some(&host) });
    assert!(report.diagnostics.iter().any(|d| d.code == codes::L_READ_AND_EXCLUDED && d.severity == Severity::Warning));
    let profile = Capabilities {
        state_cells: Some(vec!["task".into()]),
        require_coverage: true,
        projection_reads: BTreeMap::new(),
        ..host
    };
    let report = check::check(source.as_bytes(), CheckOptions { capabilities: Some(&profile) });
    assert!(!report.diagnostics.iter().any(|d| d.code == codes::L_READ_AND_EXCLUDED), "{}", dump(&report));
    assert!(report.diagnostics.iter().any(|d| d.code == codes::A_CONTRADICTION && d.is_error()));
}

#[test]
fn dc0513_frame_line_falls_out_of_the_frame_region() {
    // `+<tab>field` ends the region (§3.8) and is read as prose.
    let source = framed(&["  + task 10 —— r", "  +\tcwd 10 —— r"]);
    let d = warns(&source, codes::L_FRAME_LINE_DROPPED, Layer::Parse, 7);
    assert!(d.message.contains("ends the frame region"), "{}", d.message);
    assert_eq!(d.help.as_deref(), Some("write `+ ` (plus and one space) before the field"));
    assert_eq!(run(&source).contract.blocks[0].frame.as_ref().unwrap().fields.len(), 1);
    // A field line after a blank line is prose too.
    let d = warns(&framed(&["  + task 10 —— r", "", "  + cwd 10 —— r"]), codes::L_FRAME_LINE_DROPPED, Layer::Parse, 8);
    assert!(d.message.contains("outside the frame region"), "{}", d.message);
    quiet(&framed(&["  + task 10 —— r", "  + cwd 10 —— r"]));
    // In a block without a frame, `+ …` prose is just prose.
    quiet(&noul(&["+ this is a note"]));
}

#[test]
fn dc0514_policy_without_fallback() {
    let d = warns(
        &noul_policy(&["  - prob:ok >= 0.6 → continue", "  - prob:ok < 0.6 → stop"]),
        codes::L_NO_FALLBACK,
        Layer::Policy,
        10,
    );
    assert_eq!(d.help.as_deref(), Some("end the policy with `- else → <action>`"));
    // A block that asks questions but has no policy at all.
    let source = with_frame(&["## ok", "kind: noul", "when: after-tool —— p", "ask: q", "- true — y", "- false — n"]);
    let d = warns(&source, codes::L_NO_FALLBACK, Layer::Policy, 2);
    assert!(d.message.contains("`ok`"), "{}", d.message);
    // A code-decided block with neither questions nor rules, and policies with a fallback.
    quiet(&doc(&["## b", "kind: rule", "when: after-tool —— p"]));
    for fallback in ["else", "_", "否则", "其余"] {
        let rule = format!("  - {fallback} → stop");
        quiet(&noul_policy(&["  - prob:ok >= 0.6 → continue", &rule]));
    }
}

#[test]
fn dc0515_text_after_policy() {
    let source = noul_policy(&["  - else → stop"]).replace("policy:\n", "policy: prob:ok >= 0.6 → continue\n");
    let d = warns(&source, codes::L_POLICY_VALUE, Layer::Parse, 8);
    assert_eq!(d.span.column, 9, "at the ignored text");
    assert_eq!(run(&source).contract.blocks[0].policy.len(), 1, "it is ignored");
    quiet(&noul_policy(&["  - else → stop"]));
}

#[test]
fn dc0516_heading_like_prose() {
    for (line, needle) in
        [("###", "`###` without a question id"), ("#### detail", "`####`"), ("  ## indented", "indented `##`")]
    {
        let d = warns(&noul(&[line]), codes::L_NOT_A_HEADING, Layer::Parse, 5);
        assert!(d.message.contains(needle), "{line}: {}", d.message);
        assert_eq!(d.block.as_deref(), Some("ok"));
    }
    // Before the first block too, where it belongs to no block.
    let source = format!("#### intro heading\n{}", noul(&[]));
    let report = run(&source);
    let d = report.diagnostics.iter().find(|d| d.code == codes::L_NOT_A_HEADING).unwrap();
    assert_eq!((d.span.line, d.block.clone(), d.severity), (1, None, Severity::Warning));
    // Real headings and other `#` prose are not reported.
    quiet(&noul(&["#hashtag", "# a title-like line", "##", "#####"]));
    quiet(&with_frame(&[
        "## b",
        "kind: mixed",
        "when: after-tool —— p",
        "### x",
        "ask: q",
        "- true — y",
        "- false — n",
        "### y",
        "ask: q",
        "- true — y",
        "- false — n",
        "policy:",
        "  - prob:x >= 0.5 → stop",
        "  - else → continue",
    ]));
}

#[test]
fn dc0517_rule_shadowed_by_an_earlier_tier() {
    // Increasing `>=` tiers: the second can never fire, since the first matches first.
    let d = warns(
        &noul_policy(&["  - prob:ok >= 0.5 → continue", "  - prob:ok >= 0.8 → finish", "  - else → stop"]),
        codes::L_SHADOWED_RULE,
        Layer::Policy,
        10,
    );
    assert!(d.message.contains("`prob:ok >= 0.8 → finish`") && d.message.contains("line 9"), "{}", d.message);
    // `<` tiers shadow in the other direction.
    warns(
        &noul_policy(&["  - prob:ok < 0.8 → stop", "  - prob:ok < 0.5 → finish", "  - else → continue"]),
        codes::L_SHADOWED_RULE,
        Layer::Policy,
        10,
    );
    // Decreasing tiers, and tiers on different probes, are fine.
    quiet(&noul_policy(&["  - prob:ok >= 0.8 → finish", "  - prob:ok >= 0.5 → continue", "  - else → stop"]));
    quiet(&noul_policy(&["  - prob:ok >= 0.5 → continue", "  - prob:ok < 0.9 → finish", "  - else → stop"]));
}

#[test]
fn every_lint_code_is_tested_here() {
    // If a lint is added to `codes.rs`, it needs a test above and an entry here.
    let tested = [
        codes::L_DUP_KIND,
        codes::L_DUP_WHEN,
        codes::L_DUP_DYNAMIC,
        codes::L_DUP_ASK,
        codes::L_SECOND_FRAME,
        codes::L_UNREACHABLE_RULE,
        codes::L_THRESHOLD_RANGE,
        codes::L_PICKED_NOT_OPTION,
        codes::L_DUP_OPTION,
        codes::L_DUP_FIELD,
        codes::L_DUP_EXCLUSION,
        codes::L_READ_AND_EXCLUDED,
        codes::L_FRAME_LINE_DROPPED,
        codes::L_NO_FALLBACK,
        codes::L_POLICY_VALUE,
        codes::L_NOT_A_HEADING,
        codes::L_SHADOWED_RULE,
    ];
    let lints: Vec<&str> = codes::CODES.iter().map(|(c, _, _)| *c).filter(|c| c.starts_with("DC05")).collect();
    assert_eq!(lints, tested);
    assert_eq!(lints.first(), Some(&"DC0501"));
    assert_eq!(lints.last(), Some(&"DC0517"));
}

#[test]
fn warnings_do_not_make_a_report_fail() {
    let report = run(&noul(&["kind: noul", "when: after-tool —— again", "###"]));
    assert!(report.diagnostics.len() >= 3, "{}", dump(&report));
    assert!(report.diagnostics.iter().all(|d| d.severity == Severity::Warning));
    assert!(!report.has_errors());
}
