//! The guide (GUIDE.md, the crate's documentation) shows the contract its examples run: the
//! text shown is the file they load.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

const GUIDE: &str = include_str!("../GUIDE.md");
const CONTRACT: &str = include_str!("../guide/triage.md");

/// The first ```` ```markdown ```` block of a document.
fn shown_contract(guide: &str) -> Option<&str> {
    let start = guide.find("```markdown\n")? + "```markdown\n".len();
    let end = guide[start..].find("\n```\n")? + start + 1;
    Some(&guide[start..end])
}

#[test]
fn the_contract_shown_is_the_contract_run() {
    assert_eq!(shown_contract(GUIDE), Some(CONTRACT));
}

#[test]
fn a_changed_contract_is_told_apart() {
    let edited = GUIDE.replacen("prob:is_actionable >= 0.6", "prob:is_actionable >= 0.7", 1);
    assert_ne!(shown_contract(&edited), Some(CONTRACT));
    assert_eq!(shown_contract("no block here"), None);
}
