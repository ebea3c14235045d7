//! Properties of the parser and checker on any input (format.md Part 1 item 8: bad input
//! gives located diagnostics, never a panic, in time linear in its size): arbitrary bytes
//! and soups of real syntax never panic, every span lies inside the input and agrees with
//! its line and column, parsing is deterministic, and line endings do not change the
//! contract. Plus large inputs that must finish quickly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
// The library has no clock; these tests time it.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use decision_core::check::{self, Capabilities, CheckOptions};
use decision_core::diag::Diagnostic;
use decision_core::syntax::MAX_BLOCKS;
use decision_core::{Parsed, parse};
use proptest::prelude::*;

#[path = "reference/mod.rs"]
mod reference;

/// The bundled example contract, always present.
const BUNDLED: &str = include_str!("../../../examples/coding-agent/DECISION.md");

/// Real contracts to mutate: the bundled one, and the reference's when its files are present.
fn real_contracts() -> Vec<&'static str> {
    [Some(BUNDLED), reference::text("fixtures/jevloop/DECISION.md")].into_iter().flatten().collect()
}

/// Lines of real syntax, valid and broken, to build line soups from.
const FRAGMENTS: &[&str] = &[
    "",
    "   ",
    "# title",
    "schema: decision-contract/v1",
    "schema: decision-contract/v99",
    "## id",
    "## other",
    "## generator",
    "### q",
    "### r",
    "###",
    "#### deep",
    "  ## indented",
    "kind: noul",
    "kind: choice",
    "kind: score",
    "kind: mixed",
    "kind: rule",
    "kind: noul",
    "kind: choise",
    "when: after-tool —— p",
    "when: step-start",
    "when: host:x —— p",
    "when: toString",
    "when: after-tool leftover",
    "ask: question?",
    "dynamic: toolsFor(ctx: files, history) → candidates —— r",
    "dynamic: f(ctx) → x → y",
    "dynamic: nonsense",
    "- a — b",
    "- true — yes",
    "- false — no",
    "- a —— b",
    "- level",
    "* star — item",
    "-",
    "frame:",
    "frame: value",
    "+ f 10 —— w",
    "+ task 400 recentSteps —— w",
    "+ task 0x10 —— w",
    "+ task",
    "+\ttask 10 —— w",
    "- cwd —— w",
    "- cwd extra",
    "+  —— w",
    "policy:",
    "policy: extra",
    "- else → stop",
    "- prob:q >= 0.6 → continue",
    "- top >= 2 → ask_humam",
    "- score:q >= 1 → auto",
    "- picked:q = a → call",
    "- → ",
    "- no arrow here",
    "Note: prose",
    "**prose**",
    "——",
    "→",
    "\u{FEFF}",
    "\u{2028}",
    "é — ü",
    "## 判定",
    "- 否则 → stop",
];

/// Where the span of `d` should be, recomputed from the source text.
fn span_agrees(source: &str, d: &Diagnostic) -> Result<(), TestCaseError> {
    let s = d.span;
    prop_assert!(s.line >= 1 && s.column >= 1, "{} {:?}", d.code, s);
    prop_assert!(s.start <= s.end && s.end <= source.len(), "{} {:?} len {}", d.code, s, source.len());
    prop_assert!(source.is_char_boundary(s.start) && source.is_char_boundary(s.end), "{} {:?}", d.code, s);
    let before = &source[..s.start];
    let line = before.matches('\n').count() + 1;
    prop_assert_eq!(s.line as usize, line, "{} {:?}", d.code, s);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // A byte-order mark at the start of the file is not a column.
    let prefix = &source[line_start..s.start];
    let prefix = if line_start == 0 { prefix.strip_prefix('\u{FEFF}').unwrap_or(prefix) } else { prefix };
    prop_assert_eq!(s.column as usize, prefix.chars().count() + 1, "{} {:?}", d.code, s);
    Ok(())
}

fn all_layers(source: &[u8]) -> Vec<Vec<Diagnostic>> {
    let reference = Capabilities::reference();
    vec![
        parse(source).diagnostics,
        check::check(source, CheckOptions::default()).diagnostics,
        check::check(source, CheckOptions { capabilities: Some(&reference) }).diagnostics,
    ]
}

fn soup() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..80)
}

/// The contract with spans, intro and generator removed (those keep raw `\r`).
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

fn located(parsed: &Parsed) -> Vec<(&'static str, u32, u32)> {
    parsed.diagnostics.iter().map(|d| (d.code, d.span.line, d.span.column)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        for diagnostics in all_layers(&bytes) {
            for d in diagnostics {
                prop_assert!(d.span.line >= 1 && d.span.column >= 1, "{} {:?}", d.code, d.span);
                prop_assert!(d.span.start <= d.span.end && d.span.end <= bytes.len(), "{} {:?} len {}", d.code, d.span, bytes.len());
                let line = bytes[..d.span.start].iter().filter(|b| **b == b'\n').count() + 1;
                prop_assert_eq!(d.span.line as usize, line, "{} {:?}", d.code, d.span);
            }
        }
    }

    #[test]
    fn syntax_soups_with_invalid_bytes_keep_byte_exact_spans(lines in soup(), bad in prop::collection::vec((any::<prop::sample::Index>(), 0x80u8..=0xFF), 0..8)) {
        let mut bytes = lines.join("\n").into_bytes();
        for (at, byte) in bad {
            if !bytes.is_empty() {
                let at = at.index(bytes.len());
                bytes.insert(at, byte);
            }
        }
        for diagnostics in all_layers(&bytes) {
            for d in diagnostics {
                prop_assert!(d.span.start <= d.span.end && d.span.end <= bytes.len(), "{} {:?} len {}", d.code, d.span, bytes.len());
                let line = bytes[..d.span.start].iter().filter(|b| **b == b'\n').count() + 1;
                prop_assert_eq!(d.span.line as usize, line, "{} {:?}", d.code, d.span);
            }
        }
    }

    #[test]
    fn arbitrary_text_gives_spans_inside_the_input(text in any::<String>()) {
        for diagnostics in all_layers(text.as_bytes()) {
            for d in &diagnostics {
                span_agrees(&text, d)?;
            }
        }
    }

    #[test]
    fn line_soups_never_panic_and_locate_every_problem(lines in soup(), crlf in any::<bool>()) {
        let source = lines.join(if crlf { "\r\n" } else { "\n" });
        for diagnostics in all_layers(source.as_bytes()) {
            for d in &diagnostics {
                span_agrees(&source, d)?;
            }
        }
    }

    #[test]
    fn parsing_is_deterministic(lines in soup()) {
        let source = lines.join("\n");
        prop_assert_eq!(parse(source.as_bytes()), parse(source.as_bytes()));
        let caps = Capabilities::reference();
        let options = CheckOptions { capabilities: Some(&caps) };
        let (a, b) = (check::check(source.as_bytes(), options), check::check(source.as_bytes(), options));
        prop_assert_eq!(a.diagnostics, b.diagnostics);
        prop_assert_eq!(a.contract, b.contract);
    }

    #[test]
    fn line_endings_do_not_change_the_contract(lines in soup()) {
        let (lf, crlf) = (lines.join("\n"), lines.join("\r\n"));
        let (lf, crlf) = (parse(lf.as_bytes()), parse(crlf.as_bytes()));
        prop_assert_eq!(structure(&lf), structure(&crlf));
        prop_assert_eq!(located(&lf), located(&crlf));
    }

    #[test]
    fn real_contracts_with_any_mix_of_line_endings(crlf in prop::collection::vec(any::<bool>(), 364)) {
        for contract in real_contracts() {
            let mut mixed = String::new();
            for (line, cr) in contract.split('\n').zip(crlf.iter().chain(std::iter::repeat(&false))) {
                if !mixed.is_empty() {
                    mixed.push('\n');
                }
                mixed.push_str(line);
                if *cr && !line.is_empty() {
                    mixed.push('\r');
                }
            }
            let (lf, mixed) = (parse(contract.as_bytes()), parse(mixed.as_bytes()));
            prop_assert!(mixed.diagnostics.is_empty(), "{:?}", mixed.diagnostics);
            prop_assert_eq!(structure(&lf), structure(&mixed));
        }
    }

    #[test]
    fn lines_inserted_into_real_contracts_never_panic(at in 0usize..364, lines in soup()) {
        for contract in real_contracts() {
            let mut all: Vec<&str> = contract.split('\n').collect();
            let at = at.min(all.len());
            for (i, line) in lines.iter().enumerate() {
                all.insert(at + i, line);
            }
            let source = all.join("\n");
            for diagnostics in all_layers(source.as_bytes()) {
                for d in &diagnostics {
                    span_agrees(&source, d)?;
                }
            }
        }
    }
}

#[test]
fn real_contracts_with_crlf_have_the_same_structure() {
    for contract in real_contracts() {
        let crlf = contract.replace('\n', "\r\n");
        let (lf, crlf) = (parse(contract.as_bytes()), parse(crlf.as_bytes()));
        assert_eq!(structure(&lf), structure(&crlf));
        assert!(crlf.diagnostics.is_empty());
    }
}

#[test]
fn spans_stay_inside_any_byte_input() {
    // Invalid bytes must not shift later spans (a lossy decoding would grow each to three
    // bytes); `foo` starts at byte 14 of the input.
    let mut bytes = vec![0xFF; 10];
    bytes.extend_from_slice(b"\n## foo\nkind: bogus\n");
    for diagnostics in all_layers(&bytes) {
        for d in diagnostics {
            assert!(d.span.end <= bytes.len(), "{} {:?} len {}", d.code, d.span, bytes.len());
        }
    }
    let parsed = parse(&bytes);
    let kind = parsed.diagnostics.iter().find(|d| d.code == "DC0109").unwrap();
    assert_eq!(&bytes[kind.span.start..kind.span.end], b"bogus");
}

// ---------------------------------------------------------------------------------------
// Large inputs. Each must finish; the bound is generous (a loaded 2-core machine) but
// catches quadratic work. A debug build runs smaller sizes to stay near a second each;
// `cargo test --release` runs the full sizes (10 MB, 100,000 headings, 1,000,000 breaks).
// ---------------------------------------------------------------------------------------

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    eprintln!("{what}: {took:?}");
    assert!(took < Duration::from_secs(10), "{what} took {took:?}");
    out
}

const TEN_MB: usize = 10 * 1024 * 1024;

/// The full size in a release build, `debug` in a debug build.
fn size(full: usize, debug: usize) -> usize {
    if cfg!(debug_assertions) { debug } else { full }
}

#[test]
fn a_ten_megabyte_single_line() {
    let line = "x".repeat(size(TEN_MB, 4 * 1024 * 1024));
    let parsed = timed("one long line (parse)", || parse(line.as_bytes()));
    assert!(parsed.contract.blocks.is_empty());
    assert_eq!(parsed.contract.intro.len(), line.len());
    // Inside a block: as prose, as an option, as a frame field.
    for (what, source) in [
        ("long prose in a block", format!("## b\nkind: rule\n{line}\n")),
        ("long option", format!("## b\nkind: score\nask: q\n- {line}\n")),
        ("long frame field", format!("## b\nkind: rule\nframe:\n+ {line} 10 —— w\n")),
        ("long policy predicate", format!("## b\nkind: rule\npolicy:\n- prob:{line} >= 0.5 → stop\n")),
    ] {
        let report = timed(what, || check::check(source.as_bytes(), CheckOptions::default()));
        assert!(report.has_errors(), "{what}");
    }
}

/// Words that get a "did you mean" are compared with every candidate, which costs about
/// a hundred steps per byte: sized to 50 KB here (a few seconds per 1 MB in a debug build).
fn long_words(size: usize) -> Vec<(&'static str, String)> {
    let word = "x".repeat(size);
    vec![
        ("long position", format!("## b\nkind: noul\nwhen: {word}\n")),
        ("long key", format!("## b\nkind: noul\n{word}: v\n")),
        ("long kind", format!("## b\nkind: {word}\n")),
        ("long action", format!("## b\nkind: rule\nwhen: after-tool\npolicy:\n- else → {word}\n")),
        (
            "long question id",
            format!("## b\nkind: noul\nask: q\n- true — y\n- false — n\npolicy:\n- prob:{word} >= 0.5 → stop\n"),
        ),
        ("long field key", format!("## b\nkind: rule\nframe:\n+ {word} 10 —— w\n")),
        ("long dynamic provider", format!("## b\nkind: rule\ndynamic: {word}(ctx: a) → candidates —— w\n")),
    ]
}

#[test]
fn long_words_with_suggestions() {
    let caps = Capabilities::reference();
    for (what, source) in long_words(50 * 1024) {
        let report = timed(what, || check::check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) }));
        assert!(report.has_errors(), "{what}");
    }
}

#[test]
#[ignore = "slow: run with `cargo test --release -p decision-core --test properties -- --ignored`"]
fn ten_megabyte_words_with_suggestions() {
    let caps = Capabilities::reference();
    for (what, source) in long_words(TEN_MB) {
        timed(what, || check::check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) }));
    }
}

fn headings(n: usize) -> String {
    (0..n).map(|i| format!("## block_{i}\n")).collect()
}

#[test]
fn many_distinct_headings() {
    let n = size(100_000, 50_000);
    let source = headings(n);
    let parsed = timed("distinct headings (parse)", || parse(source.as_bytes()));
    // Past the limit nothing is read, and that is said first.
    assert_eq!(parsed.contract.blocks.len(), n.min(MAX_BLOCKS));
    assert_eq!(parsed.diagnostics.first().map(|d| d.code), Some("DC0137"));
    // The reference profile suggests a name for each missing block among all block ids.
    let source = headings(size(100_000, 5_000));
    let caps = Capabilities::reference();
    let report = timed("distinct headings (check, reference profile)", || {
        check::check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) })
    });
    assert!(report.has_errors());
}

#[test]
fn many_identical_headings() {
    let n = size(100_000, 50_000);
    let source = "## same\n".repeat(n);
    let parsed = timed("identical headings (parse)", || parse(source.as_bytes()));
    // Every duplicate among the blocks read is counted, shown or not.
    let shown = parsed.diagnostics.iter().filter(|d| d.code == "DC0135").count();
    assert_eq!(shown + parsed.omitted.by_code.get("DC0135").copied().unwrap_or(0), n.min(MAX_BLOCKS) - 1);
}

#[test]
fn many_questions_options_fields_and_rules_in_one_block() {
    let n = 20_000;
    let cases = [
        (
            "20,000 questions",
            format!(
                "## b\nkind: mixed\n{}",
                (0..n).map(|i| format!("### q{i}\nask: q\n- true — y\n- false — n\n")).collect::<String>()
            ),
        ),
        (
            "20,000 duplicate questions",
            format!("## b\nkind: mixed\n{}", "### q\nask: q\n- true — y\n- false — n\n".repeat(n)),
        ),
        (
            "20,000 options",
            format!("## b\nkind: choice\nask: q\n{}", (0..n).map(|i| format!("- o{i} — c\n")).collect::<String>()),
        ),
        (
            "20,000 fields",
            format!("## b\nkind: rule\nframe:\n{}", (0..n).map(|i| format!("+ f{i} 10 —— w\n")).collect::<String>()),
        ),
        (
            "20,000 exclusions",
            format!("## b\nkind: rule\nframe:\n{}", (0..n).map(|i| format!("- f{i} —— w\n")).collect::<String>()),
        ),
        (
            "20,000 rules",
            format!(
                "## b\nkind: noul\nwhen: after-tool\nask: q\n- true — y\n- false — n\npolicy:\n{}",
                "- prob:b >= 0.5 → deliver\n".repeat(n)
            ),
        ),
    ];
    for (what, source) in cases {
        let report = timed(what, || check::check(source.as_bytes(), CheckOptions::default()));
        assert!(!report.diagnostics.is_empty(), "{what}");
    }
}

#[test]
fn a_file_of_only_line_breaks() {
    let source = "\r\n".repeat(size(1_000_000, 500_000));
    let parsed = timed("CRLF line breaks (parse)", || parse(source.as_bytes()));
    assert!(parsed.diagnostics.is_empty());
    assert!(parsed.contract.blocks.is_empty());
    let report = timed("CRLF line breaks (check)", || check::check(source.as_bytes(), CheckOptions::default()));
    assert_eq!(report.diagnostics.len(), 1, "only the missing schema");
}
