//! Where the reference conformance suite finds the reference implementation's own files (its
//! `DECISION.md`, its custom graph, its capability report, the digest vectors).
//!
//! The files are never copied into this repository. They are read from the directory named by
//! `DECISION_REFERENCE_DIR`, or, when that variable is not set, from `../shared` next to the
//! workspace when it exists. Without either, every conformance test prints one line saying it
//! was skipped and how to run it, and returns: a fresh clone passes, and says what it did not
//! check. When the variable is set, a missing directory or file fails the test, so a CI that
//! sets it always runs the whole suite.
//!
//! Every test crate of the workspace includes this one file (`#[path]`), so the lookup is the
//! same everywhere.
// Tests and benchmarks read the reference files at run time; the library itself stays pure.
#![allow(dead_code, clippy::panic, clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The variable naming the reference directory.
pub const VAR: &str = "DECISION_REFERENCE_DIR";

/// The workspace root: every crate and example lives two levels below it.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The reference directory, or `None` when it is not configured and `../shared` is absent.
/// A relative `DECISION_REFERENCE_DIR` is read from the workspace root (tests run in their
/// crate's directory, which differs between crates).
///
/// # Panics
/// When `DECISION_REFERENCE_DIR` is set but names no directory: the suite was asked for and
/// cannot run, which must not pass as a skip.
pub fn dir() -> Option<PathBuf> {
    match std::env::var_os(VAR) {
        Some(value) if !value.is_empty() => {
            let dir = workspace_root().join(value);
            if !dir.is_dir() {
                panic!("{VAR} is set to {}, which is not a directory", dir.display());
            }
            Some(dir)
        }
        _ => Some(workspace_root().join("../shared")).filter(|d| d.is_dir()),
    }
}

/// The path of the reference file `relative` (e.g. `fixtures/jevloop/DECISION.md`), or `None`
/// after printing that the calling test was skipped.
///
/// # Panics
/// When the reference directory exists but lacks the file.
pub fn path(relative: &str) -> Option<PathBuf> {
    let Some(dir) = dir() else {
        skipped(relative);
        return None;
    };
    let file = dir.join(relative);
    if !file.exists() {
        panic!("the reference directory {} has no {relative}", dir.display());
    }
    Some(file)
}

/// Whether the reference file or directory `relative` is present; when it is not, prints that
/// the calling test was skipped. A test that returns on `false` is a skip, never a silent pass.
///
/// # Panics
/// When the reference directory exists but lacks `relative`.
pub fn present(relative: &str) -> bool {
    path(relative).is_some()
}

/// The text of the reference file `relative`, read once per test binary, or `None` after
/// printing that the calling test was skipped.
///
/// # Panics
/// When the reference directory exists but the file is missing or unreadable.
pub fn text(relative: &str) -> Option<&'static str> {
    static TEXTS: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let file = path(relative)?;
    let mut texts = TEXTS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(text) = texts.get(relative) {
        return Some(text);
    }
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    let text: &'static str = Box::leak(text.into_boxed_str());
    texts.insert(relative.to_owned(), text);
    Some(text)
}

/// Prints, once per test, that it was skipped and how to run it. The line goes to the
/// process's standard error directly, past the test harness's output capture, so a skip is
/// always visible.
fn skipped(relative: &str) {
    static PRINTED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let test = match std::thread::current().name() {
        Some(name) if name != "main" => name.to_owned(),
        // A benchmark, or a test run on the main thread: name the binary.
        _ => std::env::args()
            .next()
            .map_or_else(|| "this run".to_owned(), |a| a.rsplit('/').next().unwrap_or(&a).to_owned()),
    };
    let mut printed = PRINTED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if printed.insert(test.clone()) {
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: it needs the reference file {relative} (reference conformance suite); \
             set {VAR}=/path/to/reference-files to run it"
        );
    }
}
