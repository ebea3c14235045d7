//! Shared helpers for the CLI tests: a scratch directory that is removed when the test ends,
//! and running the `decision` binary as a script would.
#![allow(dead_code)]

pub mod collector;
pub mod mcp_http;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A directory under the system temp dir, unique to one test, removed when dropped
/// (`tempfile`'s, named after the test's tag so that a leftover one says whose it is).
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        TempDir(tempfile::Builder::new().prefix(&format!("decision-cli-{tag}-")).tempdir().unwrap())
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// A file `name` in this directory, holding `contents`.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// Runs the `decision` binary with `args`: no terminal (standard input closed) and no
/// generator endpoint from the environment.
pub fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(args)
        .env_remove("DECISION_GENERATOR_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}
