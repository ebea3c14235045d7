//! `decision … | head`: when the reader closes the output early, every command exits
//! quietly (status 141, as a tool killed by SIGPIPE), never with a panic message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::process::{Command, Stdio};

use common::TempDir;

/// A contract long enough that its output overflows any pipe buffer.
fn big_contract() -> String {
    let mut out = String::from("# Big\n\nschema: decision-contract/v1\n\n");
    for i in 0..3000 {
        out.push_str(&format!(
            "## block_{i}\nkind: noul\nwhen: after-tool —— check {i}\nask: q\n- true — y\n- false — n\nframe:\n  + task 10 —— r\npolicy:\n  - prob:block_{i} >= 0.6 → continue\n  - else → stop\n\n"
        ));
    }
    out
}

/// Runs `decision args` with its stdout closed by the reader before anything is read.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = TempDir::new("closed-output");
    let file = dir.file("big.md", &big_contract());
    let path = file.to_str().unwrap();
    let many: Vec<&str> = std::iter::once("check").chain(std::iter::repeat_n(path, 40)).collect();
    for args in [vec!["explain", path], many, vec!["check", "--format", "json", path]] {
        let (code, stderr) = with_closed_stdout(&args);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{:?}: {stderr}", args[0]);
        assert_eq!(code, Some(141), "{:?}: {stderr}", args[0]);
    }
}
