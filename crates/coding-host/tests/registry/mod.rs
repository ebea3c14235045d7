//! Where the cargo registry keeps the sources of a crate: the real trees the code index is
//! tested and measured on. Shared by the `real_trees` test and the `codeindex` benchmark.

use std::path::PathBuf;

/// The newest `NAME-<version>` source directory of the cargo registry.
pub fn registry_crate(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = Vec::new();
    for index in std::fs::read_dir(home.join("registry/src")).ok()?.flatten() {
        for entry in std::fs::read_dir(index.path()).into_iter().flatten().flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let version = file_name.strip_prefix(&format!("{name}-"));
            if version.is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found.pop()
}
