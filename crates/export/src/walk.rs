//! The logs named on the command line: files as given, directories walked.

use std::path::PathBuf;

use walkdir::WalkDir;

use crate::error::ExportError;

/// Files under a directory are taken as logs when their name ends with this.
pub const LOG_EXTENSION: &str = "jsonl";

/// The logs `inputs` name: a file as given, a directory walked (symbolic links not followed)
/// for every `*.jsonl` file under it, in name order. A path that does not exist is an error.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ExportError> {
    let mut logs = Vec::new();
    for input in inputs {
        let metadata = std::fs::metadata(input).map_err(|source| ExportError::Io { path: input.clone(), source })?;
        if !metadata.is_dir() {
            logs.push(input.clone());
            continue;
        }
        for entry in WalkDir::new(input).sort_by_file_name() {
            let entry = entry.map_err(|e| {
                let path = e.path().map_or_else(|| input.clone(), |p| p.to_path_buf());
                ExportError::Io { path, source: e.into() }
            })?;
            let is_log = entry.path().extension().is_some_and(|ext| ext == LOG_EXTENSION);
            if entry.file_type().is_file() && is_log {
                logs.push(entry.into_path());
            }
        }
    }
    Ok(logs)
}
