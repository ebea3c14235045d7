//! `decision check` on hostile contracts: output is capped per file with the rest counted,
//! long lines are clipped, every location is shown once; and the human rendering of a small
//! broken contract, as a snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;
use expect_test::expect;

/// The cap of the report (`decision::diag::MAX_DIAGNOSTICS`).
const CAP: usize = 1_000;

fn check(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision"))
        .arg("check")
        .args(args)
        .arg(file)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// `n` headings without kind or position: two errors each, and the missing schema.
fn headings(n: usize) -> String {
    (0..n).map(|i| format!("## h{i}\n")).collect()
}

/// The rendered diagnostics in human output (each has one `×` or `⚠` header line).
fn rendered(stderr: &str) -> usize {
    stderr.lines().filter(|l| l.starts_with("  × ") || l.starts_with("  ⚠ ")).count()
}

#[test]
fn human_output_renders_at_most_the_cap_and_counts_the_rest() {
    let dir = TempDir::new("hostile-human");
    let file = dir.file("many.md", &headings(2_000));
    let out = check(&[], &file);
    assert_eq!(out.status.code(), Some(1));
    // The diagnostics, the count of the rest, then the summary: all on stdout.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(rendered(&stdout), CAP);
    let tail = format!(
        "{}: 3001 diagnostics more not shown (at most 1000 are shown per file): DC0112 ×1500, DC0113 ×1500, DC0201 ×1\n{}: FAILED — 4001 errors, 0 warnings",
        file.display(),
        file.display()
    );
    assert!(stdout.contains(&tail), "{}", &stdout[stdout.len() - 400..]);
}

#[test]
fn json_output_holds_at_most_the_cap_and_says_how_many_were_omitted() {
    let dir = TempDir::new("hostile-json");
    let file = dir.file("many.md", &headings(2_000));
    let doc: serde_json::Value = serde_json::from_slice(&check(&["--format", "json"], &file).stdout).unwrap();
    assert_eq!(doc["files"][0]["diagnostics"].as_array().unwrap().len(), CAP);
    assert_eq!(doc["files"][0]["omitted"], 3001);
    assert_eq!(doc["files"][0]["omitted_by_code"], serde_json::json!({"DC0112": 1500, "DC0113": 1500, "DC0201": 1}));
    assert_eq!(doc["files"][0]["ok"], false);
    // Under the cap nothing is omitted and the document is as before: no `omitted` key.
    let few = dir.file("few.md", &headings(3));
    let doc: serde_json::Value = serde_json::from_slice(&check(&["--format", "json"], &few).stdout).unwrap();
    assert_eq!(doc["files"][0]["diagnostics"].as_array().unwrap().len(), 7);
    assert!(doc["files"][0].get("omitted").is_none(), "{doc}");
    assert!(doc["files"][0].get("omitted_by_code").is_none(), "{doc}");
}

#[test]
fn warnings_past_the_cap_are_counted_and_denied() {
    let dir = TempDir::new("hostile-warnings");
    // 1,500 `dup-kind` warnings: the file is ok, and with `--deny warnings` it fails, the
    // omitted ones counted as errors too.
    let text =
        format!("schema: decision-contract/v1\n\n## b\nkind: rule\nwhen: after-tool\n{}", "kind: rule\n".repeat(1_500));
    let file = dir.file("warnings.md", &text);
    let out = check(&[], &file);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout.clone()).unwrap().contains("ok — 0 errors, 1500 warnings"));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains(": 500 diagnostics more not shown (at most 1000 are shown per file): DC0501 ×500\n")
    );
    let out = check(&["--deny", "warnings"], &file);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout).unwrap().contains("FAILED — 1500 errors, 0 warnings"));
}

#[test]
fn a_file_past_the_block_limit_says_so_first() {
    let dir = TempDir::new("hostile-blocks");
    let file = dir.file("blocks.md", &"## a\n".repeat(20_000));
    let out = check(&["--format", "json"], &file);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &doc["files"][0]["diagnostics"][0];
    assert_eq!(first["code"], "DC0137");
    assert_eq!(first["line"], 10_001);
    assert_eq!(doc["files"][0]["summary"]["blocks"], 10_000);
}

#[test]
fn exactly_the_cap_omits_nothing() {
    let dir = TempDir::new("hostile-exact");
    // 500 headings with no kind and no position, two errors each: 1,000 diagnostics.
    let text = format!("schema: decision-contract/v1\n\n{}", headings(500));
    let file = dir.file("exact.md", &text);
    let out = check(&[], &file);
    let stderr = String::from_utf8(out.stdout).unwrap();
    assert_eq!(rendered(&stderr), CAP);
    assert!(!stderr.contains("more not shown"));
}

#[test]
fn a_long_invalid_utf8_line_is_rendered_clipped() {
    let dir = TempDir::new("hostile-utf8");
    let file = dir.path().join("bad.md");
    std::fs::write(&file, vec![0xFF; 300_000]).unwrap();
    let out = check(&[], &file);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stdout).unwrap();
    // The parser reports the first 100 invalid bytes, each shown with at most 1,000 bytes of
    // its line around it (the whole line is 300,000 bytes).
    assert_eq!(stderr.matches("invalid UTF-8 (byte 0xFF)").count(), 100);
    assert!(stderr.len() < 100 * 5_000 + 1_000, "{}", stderr.len());
    assert!(stderr.contains("│ ���"), "{}", &stderr[..2_000]);
}

/// `(path:line:column)` in the message and `[path:line:column]` in miette's header.
fn locations(stderr: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut message = None;
    for line in stderr.lines() {
        let is_message = line.trim_start().starts_with('×') || line.trim_start().starts_with('⚠');
        if let (true, Some(at)) = (is_message, line.rfind(" (")) {
            message = Some(line[at + 2..line.len() - 1].to_string());
        }
        if let (Some(open), Some(m)) = (line.find("╭─["), &message) {
            found.push((m.clone(), line[open + "╭─[".len()..line.len() - 1].to_string()));
        }
    }
    found
}

#[test]
fn the_message_and_the_header_show_the_same_location() {
    // `ask_humam` follows `é` and `→` (5 bytes, 2 characters): column 21, where miette alone
    // (counting bytes) said 24.
    let dir = TempDir::new("hostile-location");
    let text = "schema: decision-contract/v1\n\n## é\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\npolicy:\n  - prob:é >= 0.6 → ask_humam\n  - else → stop\n";
    let file = dir.file("broken.md", text);
    let out = check(&[], &file);
    let stderr = String::from_utf8(out.stdout).unwrap();
    let found = locations(&stderr);
    assert!(!found.is_empty(), "{stderr}");
    for (message, header) in &found {
        assert_eq!(message, header, "{stderr}");
    }
    assert!(found.iter().any(|(m, _)| m.ends_with("broken.md:10:21")), "{found:?}");
}

#[test]
fn one_error_and_one_warning_are_singular() {
    let dir = TempDir::new("hostile-plural");
    // No `schema:` is the one error.
    let error = dir.file("one.md", "## done\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\nframe:\n  + task 100 —— the task\npolicy:\n  - prob:done >= 0.6 → finish\n  - else → stop\n");
    let stdout = String::from_utf8(check(&[], &error).stdout).unwrap();
    assert!(stdout.contains("FAILED — 1 error, 0 warnings; 1 decision, 1 question,"), "{stdout}");
    let warning = dir.file("warn.md", "schema: decision-contract/v1\n\n## done\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\nframe:\n  + task 100 —— the task\npolicy:\n  - prob:done >= 0.6 → finish\n");
    let stdout = String::from_utf8(check(&[], &warning).stdout).unwrap();
    assert!(stdout.contains("ok — 0 errors, 1 warning;"), "{stdout}");
}

#[test]
fn the_human_rendering_of_a_broken_contract() {
    let dir = TempDir::new("hostile-snapshot");
    let text = "schema: decision-contract/v1\n\n## done\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\npolicy:\n  - prob:done >= 0.6 → finsh\n  - else → stop\n";
    let file = dir.file("broken.md", text);
    let out = Command::new(env!("CARGO_BIN_EXE_decision"))
        .current_dir(dir.path())
        .args(["check", "broken.md"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(file.exists());
    let rendering = format!("{}{}", String::from_utf8(out.stderr).unwrap(), String::from_utf8(out.stdout).unwrap());
    expect![[r#"
        DC0108

          × unknown action `finsh` (broken.md:10:24)
            ╭─[broken.md:10:24]
          9 │ policy:
         10 │   - prob:done >= 0.6 → finsh
            ·                        ──┬──
            ·                          ╰── parse layer, block `done`
         11 │   - else → stop
            ╰────
          help: did you mean `finish`?
        DC0136

          × a `noul` block is asked of a decision model but declares no `frame:`, so it would be sent the whole state, unbounded (broken.md:3:4)
           ╭─[broken.md:3:4]
         2 │ 
         3 │ ## done
           ·    ──┬─
           ·      ╰── parse layer, block `done`
         4 │ kind: noul
           ╰────
          help: add `frame:` with a line `+ key bound —— why` for each cell the decision reads and `- cell —— why` for each it must not see
        broken.md: FAILED — 2 errors, 0 warnings; 1 decision, 1 question, 1 answered by the decision model, 0 decided by code; 2 options in total
    "#]].assert_eq(&rendering);
}
