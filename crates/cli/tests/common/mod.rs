//! Shared helpers for the CLI tests: a scratch directory that is removed when the test ends,
//! and running the `decision` binary as a script would.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A directory under the system temp dir, unique to one test, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("decision-cli-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A file `name` in this directory, holding `contents`.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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
