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
