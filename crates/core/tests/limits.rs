//! What the checker keeps of a hostile file: at most `MAX_BLOCKS` blocks and `MAX_ITEMS`
//! items are read (one `DC0137` error past either, first among the diagnostics), and at most
//! `MAX_DIAGNOSTICS` diagnostics are kept, the rest counted per code and severity. Each limit
//! is tested at the limit (nothing refused, nothing left out) and one past it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_core::check::{self, CheckOptions, Report};
use decision_core::diag::{MAX_DIAGNOSTICS, Severity};
use decision_core::parse;
use decision_core::syntax::{MAX_BLOCKS, MAX_ITEMS};

const SCHEMA: &str = "schema: decision-contract/v1\n\n";

/// A clean `rule` block: no diagnostics of its own.
fn clean_block(i: usize) -> String {
    format!("## b{i}\nkind: rule\nwhen: after-tool\n\n")
}

fn check(source: &str) -> Report {
    check::check(source.as_bytes(), CheckOptions::default())
}

fn codes(report: &Report) -> Vec<&'static str> {
    report.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn the_block_limit_reads_every_block_up_to_it() {
    let source: String = SCHEMA.to_string() + &(0..MAX_BLOCKS).map(clean_block).collect::<String>();
    let report = check(&source);
    assert_eq!(codes(&report), Vec::<&str>::new());
    assert_eq!(report.contract.blocks.len(), MAX_BLOCKS);
}

#[test]
fn one_block_past_the_limit_is_one_error_first_and_nothing_after_it_is_read() {
    let mut source: String = SCHEMA.to_string() + &(0..MAX_BLOCKS).map(clean_block).collect::<String>();
    // Generator sections are not blocks: they do not count.
    source.push_str("## generator\nwrite well\n\n");
    let heading_line = source.lines().count() + 1;
    source.push_str(&clean_block(MAX_BLOCKS));
    source.push_str("## late\nkind: nonsense\n");
    let report = check(&source);
    assert_eq!(codes(&report), ["DC0137"]);
    let error = &report.diagnostics[0];
    assert_eq!(error.severity, Severity::Error);
    assert_eq!(error.span.line as usize, heading_line);
    assert!(error.message.contains("more than 10000 blocks"), "{}", error.message);
    assert_eq!(report.contract.blocks.len(), MAX_BLOCKS);
    assert_eq!(report.contract.generator.as_deref(), Some("write well"));
    assert!(report.has_errors());
}

/// One block whose policy has `rules` rules (items); nothing else in it is an item.
fn rules(rules: usize) -> String {
    let mut source = format!("{SCHEMA}## b\nkind: rule\nwhen: after-tool\npolicy:\n");
    for _ in 1..rules {
        source.push_str("  - top >= 0.5 → continue\n");
    }
    source.push_str("  - else → continue\n\n");
    source
}

#[test]
fn the_item_limit_reads_every_item_up_to_it() {
    let report = check(&rules(MAX_ITEMS));
    assert!(!codes(&report).contains(&"DC0137"), "{:?}", &codes(&report)[..3]);
    assert_eq!(report.contract.blocks[0].policy.len(), MAX_ITEMS);
}

#[test]
fn one_item_past_the_limit_is_one_error_first_and_nothing_after_it_is_read() {
    let mut source = rules(MAX_ITEMS);
    // Items of all blocks count together: the second block's first option is one too many.
    source.push_str("## second\nkind: choice\nwhen: after-tool\nask: which\n- a — first\n- b — second\n");
    let item_line = source.lines().count() - 1;
    let report = check(&source);
    assert_eq!(codes(&report).first(), Some(&"DC0137"));
    assert_eq!(report.diagnostics[0].span.line as usize, item_line);
    assert!(report.diagnostics[0].message.contains("more than 100000 items"));
    let second = report.contract.blocks.iter().find(|b| b.id == "second").unwrap();
    // The block is kept as far as it was read: its first option, not the second.
    assert_eq!(second.questions.iter().map(|q| q.options.len()).sum::<usize>(), 1);
}

#[test]
fn a_large_hostile_file_keeps_at_most_the_cap_and_counts_the_rest() {
    // 5,000 blocks with no kind and no position (two errors each), and no schema.
    let source: String = (0..5_000).map(|i| format!("## h{i}\n")).collect();
    let report = check(&source);
    assert_eq!(report.diagnostics.len(), MAX_DIAGNOSTICS);
    assert_eq!(report.omitted.total(), 10_001 - MAX_DIAGNOSTICS);
    assert_eq!((report.errors(), report.warnings()), (10_001, 0));
    let by_code: Vec<(&str, usize)> = report.omitted.most_frequent();
    assert_eq!(by_code, [("DC0112", 4_500), ("DC0113", 4_500), ("DC0201", 1)]);
    // The first ones in report order are kept: the first 500 blocks', two each.
    assert_eq!(report.diagnostics.last().map(|d| d.span.line), Some(500));
}

#[test]
fn below_the_cap_nothing_is_omitted() {
    // Two errors for each block, exactly the cap.
    let source: String =
        SCHEMA.to_string() + &(0..MAX_DIAGNOSTICS / 2).map(|i| format!("## h{i}\n")).collect::<String>();
    let report = check(&source);
    assert_eq!(report.diagnostics.len(), MAX_DIAGNOSTICS);
    assert!(report.omitted.is_empty());
    let parsed = parse(source.as_bytes());
    assert!(parsed.omitted.is_empty());
}

#[test]
fn an_error_after_a_cap_of_warnings_is_still_shown() {
    // 1,200 `dup-kind` warnings, then one error: a caller that filters the kept diagnostics
    // for errors (to refuse the file) must still find one.
    let mut source = format!("{SCHEMA}## b\nkind: rule\nwhen: after-tool\n");
    source.push_str(&"kind: rule\n".repeat(1_200));
    source.push_str("kind: nonsense\n");
    let report = check(&source);
    assert_eq!(report.diagnostics.len(), MAX_DIAGNOSTICS);
    assert!(report.diagnostics.iter().any(|d| d.is_error() && d.code == "DC0109"));
    assert_eq!((report.errors(), report.warnings()), (1, 1_201));
    let parsed = parse(source.as_bytes());
    assert!(parsed.diagnostics.iter().any(|d| d.is_error()));
}

#[test]
fn denying_warnings_counts_the_omitted_ones_as_errors() {
    let mut source = format!("{SCHEMA}## b\nkind: rule\nwhen: after-tool\n");
    source.push_str(&"kind: rule\n".repeat(1_200));
    let mut report = check(&source);
    assert!(!report.has_errors());
    report.deny_warnings();
    assert!(report.has_errors());
    assert_eq!((report.errors(), report.warnings()), (1_200, 0));
    assert!(report.diagnostics.iter().all(|d| d.is_error()));
}
