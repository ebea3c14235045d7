//! `docs/diagnostics.md` is the index of every diagnostic code: each code in
//! `diag::codes::CODES` has a section `### DCxxxx — …` there, and each section's example
//! really produces that code. A code added to `codes.rs` without an entry fails here.
//!
//! A section's example is its first ```` ```markdown ```` block (with ```` ```markdown escaped ````,
//! `\xNN` stands for the byte NN; with ```` ```markdown repeated N ````, the example is the block
//! written N times, for the limits no short file reaches); a ```` ```json ```` block in the section is the capabilities
//! file it is checked against, and a section that says `--profile reference` is checked
//! against the reference host.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::BTreeMap;

use decision_core::check::{self, Capabilities, CheckOptions};
use decision_core::diag::codes;

const INDEX: &str = include_str!("../../../docs/diagnostics.md");

/// One `### DCxxxx` section of the index.
struct Entry {
    heading_line: usize,
    example: Option<Vec<u8>>,
    capabilities: Option<String>,
    reference_profile: bool,
    text: String,
}

/// The fenced blocks of a section: (info string, content).
fn fences(section: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in section.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"\\x") && i + 4 <= bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 2..i + 4]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn entries() -> BTreeMap<String, Entry> {
    let mut entries = BTreeMap::new();
    let mut current: Option<(String, usize, String)> = None;
    let finish = |current: Option<(String, usize, String)>, entries: &mut BTreeMap<String, Entry>| {
        if let Some((code, heading_line, text)) = current {
            let blocks = fences(&text);
            let example = blocks.iter().find(|(info, _)| info.starts_with("markdown")).map(|(info, body)| {
                let words: Vec<&str> = info.split_whitespace().collect();
                let bytes = if words.contains(&"escaped") { unescape(body) } else { body.clone().into_bytes() };
                let times = words.iter().position(|w| *w == "repeated").map(|at| words[at + 1].parse().unwrap());
                bytes.repeat(times.unwrap_or(1))
            });
            let capabilities = blocks.iter().find(|(info, _)| info == "json").map(|(_, body)| body.clone());
            let reference_profile = text.contains("`--profile reference`");
            let entry = Entry { heading_line, example, capabilities, reference_profile, text };
            assert!(entries.insert(code.clone(), entry).is_none(), "{code} has two sections in docs/diagnostics.md");
        }
    };
    let mut in_fence = false;
    for (n, line) in INDEX.lines().enumerate() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || line.starts_with("```") {
            if let Some((_, _, text)) = &mut current {
                text.push_str(line);
                text.push('\n');
            }
        } else if let Some(rest) = line.strip_prefix("### ") {
            finish(current.take(), &mut entries);
            let code = rest.split_whitespace().next().unwrap_or("").to_string();
            if code.starts_with("DC") {
                current = Some((code, n + 1, String::new()));
            }
        } else if line.starts_with("## ") {
            finish(current.take(), &mut entries);
        } else if let Some((_, _, text)) = &mut current {
            text.push_str(line);
            text.push('\n');
        }
    }
    finish(current.take(), &mut entries);
    entries
}

#[test]
fn every_code_has_an_entry_and_every_entry_is_a_code() {
    let entries = entries();
    let missing: Vec<&str> = codes::CODES.iter().map(|(c, _, _)| *c).filter(|c| !entries.contains_key(*c)).collect();
    assert!(missing.is_empty(), "codes with no section in docs/diagnostics.md: {missing:?}");
    let stale: Vec<&String> = entries.keys().filter(|c| !codes::CODES.iter().any(|(k, _, _)| k == c)).collect();
    assert!(stale.is_empty(), "sections in docs/diagnostics.md for codes that do not exist: {stale:?}");
}

#[test]
fn every_entry_explains_its_code_and_its_example_produces_it() {
    let mut failures = Vec::new();
    for (code, entry) in entries() {
        let at = format!("{code} (docs/diagnostics.md:{})", entry.heading_line);
        if !entry.text.contains("**Fix:**") {
            failures.push(format!("{at}: no **Fix:** paragraph"));
        }
        let Some(example) = &entry.example else {
            failures.push(format!("{at}: no ```markdown example"));
            continue;
        };
        let capabilities = match (&entry.capabilities, entry.reference_profile) {
            (Some(json), _) => Some(Capabilities::from_json(json).unwrap_or_else(|e| panic!("{at}: {e}"))),
            (None, true) => Some(Capabilities::reference()),
            (None, false) => None,
        };
        let report = check::check(example, CheckOptions { capabilities: capabilities.as_ref() });
        if !report.diagnostics.iter().any(|d| d.code == code) {
            let found: Vec<String> = report.diagnostics.iter().map(|d| format!("{} {}", d.code, d.message)).collect();
            failures.push(format!("{at}: the example does not produce {code}; it produces {found:#?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every `DCxxxx` the documentation mentions is a code that exists, so a renumbered or removed
/// code cannot leave a stale reference behind.
#[test]
fn the_documents_mention_only_codes_that_exist() {
    let documents = [
        ("README.md", include_str!("../../../README.md")),
        ("docs/format.md", include_str!("../../../docs/format.md")),
        ("docs/policies.md", include_str!("../../../docs/policies.md")),
        ("docs/frames.md", include_str!("../../../docs/frames.md")),
        ("docs/answers.md", include_str!("../../../docs/answers.md")),
        ("docs/capabilities.md", include_str!("../../../docs/capabilities.md")),
        ("docs/session-log.md", include_str!("../../../docs/session-log.md")),
        ("docs/diagnostics.md", INDEX),
    ];
    let mut stale = Vec::new();
    for (name, text) in documents {
        let bytes = text.as_bytes();
        for (at, _) in text.match_indices("DC") {
            let digits = bytes.get(at + 2..at + 6).unwrap_or(&[]);
            if digits.len() == 4 && digits.iter().all(u8::is_ascii_digit) {
                let code = &text[at..at + 6];
                if !codes::CODES.iter().any(|(c, _, _)| *c == code) {
                    stale.push(format!("{name}: {code}"));
                }
            }
        }
    }
    assert!(stale.is_empty(), "codes mentioned in the documentation that do not exist: {stale:?}");
}
