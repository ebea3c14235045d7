//! Inputs built to crash or stall the CLI: each is refused with a located error, or handled,
//! in bounded time; none aborts the process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use common::{TempDir, decision};

/// 30,000 nested brackets in an outcome-contracts file (60 KB): a located error, exit 2 —
/// not a stack overflow (exit 134).
#[test]
fn deeply_nested_outcome_contracts_are_refused() {
    let dir = TempDir::new("attack-deep-outcomes");
    let deep = format!("{{\"tools\":\n{}{}}}\n", "[".repeat(30_000), "]".repeat(30_000));
    let file = dir.file("contracts.json", &deep);
    let out = decision(&["outcomes", "check", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("arrays and objects nest more than 128 deep"), "{stderr}");
    assert!(stderr.contains(":2:128"), "located: {stderr}");

    let work = TempDir::new("attack-deep-outcomes-run");
    let out = decision(&[
        "run",
        "--provider",
        "heuristic",
        "--workdir",
        work.path().to_str().unwrap(),
        "--task",
        "t",
        "--outcome-contracts",
        file.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("arrays and objects nest more than 128 deep"), "{stderr}");
}

/// Escape sequences in a contract (here: recolouring, and retitling the terminal window)
/// are shown escaped by `decision explain`, never sent to the terminal.
#[test]
fn explain_escapes_what_the_contract_says() {
    let dir = TempDir::new("attack-explain-escapes");
    let file = dir.file(
        "DECISION.md",
        "---\nschema: decision-contract/v1\n---\n# T\u{1b}[31mRED\n\n## b\nkind: rule\nwhen: after-tool —— p \u{1b}]0;owned\u{7}\n",
    );
    let out = decision(&["explain", file.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "{stdout:?}");
    assert!(stdout.contains("\\u{1b}[31mRED"), "{stdout}");
}
