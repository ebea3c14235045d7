//! Data-driven tests of the parser and the checker: every `tests/data/check/NAME.md` is a small
//! contract, checked with every layer; `NAME.expect` beside it is the same text with each
//! diagnostic written under the line it concerns (code, severity, layer, line:column, message,
//! help). A fixture with a `NAME.capabilities.json` beside it is also checked against that
//! host (the adapter layer); the single word `reference` in that file stands for the
//! reference host's built-in profile.
//!
//! The expectations are `expect-test` files, as in rust-analyzer's parser tests: after a
//! deliberate change, re-bless them all with
//! `UPDATE_EXPECT=1 cargo test -p decision-core --test check_fixtures` and review the diff.
//! Adding a rule means adding a fixture (see `docs/contributing-tests.md`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
// The test (not the core) reads its fixtures from disk.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use decision_core::check::{self, Capabilities, CheckOptions};
use decision_core::diag::{Diagnostic, Omitted, Severity};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/check")
}

/// The fixtures, by name, in a stable order.
fn fixtures() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .expect("tests/data/check exists")
        .map(|entry| entry.expect("a readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    paths
}

fn capabilities_for(fixture: &Path) -> Option<Capabilities> {
    let path = fixture.with_extension("capabilities.json");
    let text = std::fs::read_to_string(&path).ok()?;
    if text.trim() == "reference" {
        return Some(Capabilities::reference());
    }
    Some(Capabilities::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn severity(d: &Diagnostic) -> &'static str {
    match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// How many characters of `line` the span covers from its column (at least one), so that the
/// carets under the line show the span's width.
fn caret_width(source: &str, d: &Diagnostic, line_end: usize) -> usize {
    let end = d.span.end.min(line_end);
    source.get(d.span.start..end).map_or(1, |covered| covered.chars().count().max(1))
}

fn render_diagnostic(out: &mut String, gutter: usize, indent: usize, width: usize, d: &Diagnostic) {
    let (line, column) = (d.span.line, d.span.column);
    let carets = "^".repeat(width);
    let _ = writeln!(
        out,
        "{:gutter$} | {:indent$}{carets} {} {} ({}) {line}:{column}: {}",
        "",
        "",
        d.code,
        severity(d),
        d.layer.as_str(),
        d.message
    );
    if let Some(help) = &d.help {
        let _ = writeln!(out, "{:gutter$} | {:indent$}help: {help}", "", "");
    }
}

/// The source with every diagnostic written under its line, then a count. Diagnostics keep
/// the report's order within a line; one whose line is outside the text goes at the end.
fn annotate(source: &str, diagnostics: &[Diagnostic]) -> String {
    annotate_report(source, diagnostics, &Omitted::default())
}

/// [`annotate`], and after the count, when the report left diagnostics out, how many of
/// each code (most frequent first).
fn annotate_report(source: &str, diagnostics: &[Diagnostic], omitted: &Omitted) -> String {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let gutter = lines.len().max(1).to_string().len();
    let mut out = String::new();
    let mut placed = vec![false; diagnostics.len()];
    let mut offset = 0;
    for (index, line) in lines.iter().enumerate() {
        let number = index + 1;
        let text = line.trim_end_matches(['\n', '\r']);
        let _ = writeln!(out, "{number:>gutter$} | {text}");
        let line_end = offset + text.len();
        for (d, placed) in diagnostics.iter().zip(placed.iter_mut()) {
            if d.span.line as usize == number {
                let indent = (d.span.column as usize).saturating_sub(1);
                render_diagnostic(&mut out, gutter, indent, caret_width(source, d, line_end), d);
                *placed = true;
            }
        }
        offset += line.len();
    }
    for (d, _) in diagnostics.iter().zip(&placed).filter(|(_, placed)| !**placed) {
        render_diagnostic(&mut out, gutter, 0, 1, d);
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let _ = writeln!(out, "-- errors: {errors}, warnings: {}", diagnostics.len() - errors);
    if !omitted.is_empty() {
        let codes: Vec<String> = omitted.most_frequent().iter().map(|(code, n)| format!("{code} ×{n}")).collect();
        let _ =
            writeln!(out, "-- omitted: {} errors, {} warnings: {}", omitted.errors, omitted.warnings, codes.join(", "));
    }
    out
}

fn check_fixture(path: &Path) -> Vec<Diagnostic> {
    let bytes = std::fs::read(path).expect("a readable fixture");
    let capabilities = capabilities_for(path);
    let report = check::check(&bytes, CheckOptions { capabilities: capabilities.as_ref() });
    let source = String::from_utf8_lossy(&bytes);
    expect_test::expect_file![path.with_extension("expect")].assert_eq(&annotate_report(
        &source,
        &report.diagnostics,
        &report.omitted,
    ));
    report.diagnostics
}

#[test]
fn every_fixture_reports_what_its_expect_file_says() {
    let paths = fixtures();
    assert!(!paths.is_empty(), "no fixtures in {}", fixture_dir().display());
    let mut codes = BTreeSet::new();
    let mut clean = 0;
    for path in &paths {
        let diagnostics = check_fixture(path);
        clean += usize::from(diagnostics.is_empty());
        codes.extend(diagnostics.iter().map(|d| d.code));
    }
    // The fixtures are the checker's test suite: every code has one that reports it, and
    // rules have their passing side too.
    let uncovered: Vec<&str> = decision_core::diag::codes::CODES
        .iter()
        .map(|(code, _, _)| *code)
        .filter(|code| !codes.contains(code))
        .collect();
    assert!(uncovered.is_empty(), "codes no fixture in tests/data/check reports: {uncovered:?}");
    assert!(clean >= 5, "only {clean} fixtures are clean");
}

#[test]
fn every_expect_file_has_its_fixture() {
    for entry in std::fs::read_dir(fixture_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let fixture = if let Some(stem) = name.strip_suffix(".capabilities.json") {
            fixture_dir().join(format!("{stem}.md"))
        } else if let Some(stem) = name.strip_suffix(".expect") {
            fixture_dir().join(format!("{stem}.md"))
        } else {
            assert!(name.ends_with(".md"), "unexpected file in tests/data/check: {name}");
            continue;
        };
        assert!(fixture.exists(), "{name} has no fixture {}", fixture.display());
    }
}

/// The annotation itself, on a made-up report, so that a broken renderer cannot make every
/// fixture agree with an empty expectation.
#[test]
fn annotations_go_under_their_line_with_the_span_width() {
    let source = "schema: decision-contract/v1\n## foo\nkind: choise\nwhen: after-tool\n";
    let report = check::check(source.as_bytes(), CheckOptions::default());
    let expected = "\
1 | schema: decision-contract/v1
2 | ## foo
3 | kind: choise
  |       ^^^^^^ DC0109 error (parse) 3:7: `choise` is not a kind (choice / noul / score / mixed / rule)
  |       help: did you mean `choice`?
4 | when: after-tool
-- errors: 1, warnings: 0
";
    assert_eq!(annotate(source, &report.diagnostics), expected);
    assert_eq!(annotate("a\n", &[]), "1 | a\n-- errors: 0, warnings: 0\n");
    // A diagnostic past the last line is kept, at the end.
    let mut late = report.diagnostics[0].clone();
    late.span.line = 9;
    assert!(annotate("a\n", &[late]).contains("1 | a\n  | ^ DC0109 error (parse) 9:7: "));
}
