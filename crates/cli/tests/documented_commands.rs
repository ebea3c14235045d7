//! Every command written in `README.md`, `docs/*.md` and `examples/*/README.md` (the
//! ```` ```console ```` blocks), and the cases in `tests/cmd/`, run from the repository root
//! with the output written under them. Output that differs from run to run (times, session ids) is elided with `[..]` or
//! `...`. After a deliberate change of output, re-bless with
//! `TRYCMD=overwrite cargo test -p decision-cli --test documented_commands`.

#![allow(clippy::expect_used)]

use std::path::Path;

#[test]
fn documented_commands_print_what_the_documents_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // This test is alone in its binary, so changing the directory affects nothing else: the
    // documents' commands are written to be run from the repository root.
    std::env::set_current_dir(&root).expect("the repository root exists");
    trycmd::TestCases::new()
        .register_bin("decision", Path::new(env!("CARGO_BIN_EXE_decision")))
        .env("NO_COLOR", "1")
        .case("README.md")
        .case("docs/*.md")
        .case("examples/*/README.md")
        .case("crates/cli/tests/cmd/*.toml")
        .case("crates/cli/tests/cmd/*.md");
}
