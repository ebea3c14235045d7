//! `--heads FILE`: `run` and `mcp` append their log's head to a manifest once the log is
//! sealed; `replay --heads FILE` checks every log against it (see
//! [`decision::log::heads`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use decision::log::heads::{HeadEntry, HeadsManifest, entry_problem, record_head};
use decision::log::{LogReport, ReplayOptions, replay_file};
use decision::terminal::one_line;

/// Appends the head of the finished log at `log` to `manifest`; `code` is the command's exit
/// status so far. A head that cannot be recorded is an error: the log would later be reported
/// as unknown, so the run does not pass as complete.
pub fn record(manifest: &Path, log: &Path, code: ExitCode) -> ExitCode {
    match record_head(manifest, log) {
        Ok(entry) => {
            eprintln!("heads: {} recorded in {}", entry.head, one_line(&manifest.display().to_string()));
            code
        }
        Err(e) => {
            eprintln!("error: cannot record the log's head: {}", one_line(&e.to_string()));
            if code == ExitCode::SUCCESS { ExitCode::from(1) } else { code }
        }
    }
}

/// The manifest given to `replay --heads`, and what the replay of each log is checked against.
pub struct Expected {
    manifest: HeadsManifest,
}

impl Expected {
    /// Reads the manifest, or the message saying why it cannot be.
    pub fn read(path: &Path) -> Result<Self, String> {
        HeadsManifest::read(path)
            .map(|manifest| Expected { manifest })
            .map_err(|e| one_line(&e.to_string()).into_owned())
    }

    /// The latest head recorded for `log`: the one its main replay checks (`ReplayOptions::head`).
    pub fn latest(&self, log: &Path) -> Option<HeadEntry> {
        self.manifest.heads_of(log).first().map(|entry| (*entry).clone())
    }

    /// What is wrong with `log` against the manifest: `report` is its replay with
    /// `ReplayOptions::head` set to [`Expected::latest`]. A log the manifest does not name
    /// fails; earlier heads of the same log (runs it was extended by) are each checked by one
    /// more pass.
    pub fn problems(&self, log: &Path, report: &LogReport, options: &ReplayOptions) -> Vec<String> {
        let heads = self.manifest.heads_of(log);
        let Some((latest, earlier)) = heads.split_first() else {
            return vec![
                "unknown: the heads manifest names no head for this log (added afterwards, or its run did not finish)"
                    .to_owned(),
            ];
        };
        let mut problems: Vec<String> = entry_problem(report, latest).into_iter().collect();
        for entry in earlier {
            let options = ReplayOptions { head: Some(entry.head), threads: 1, policies: None, ..options.clone() };
            match replay_file(log, &options, &mut |_| {}) {
                Ok(report) => problems.extend(entry_problem(&report, entry)),
                Err(e) => problems.push(format!("cannot read the log again: {e}")),
            }
        }
        problems
    }

    /// The logs the manifest names under `inputs` that are not among `found`, with the head
    /// each was expected to have.
    pub fn missing(&self, inputs: &[PathBuf], found: &[PathBuf]) -> Vec<(String, String)> {
        self.manifest
            .missing(inputs, found)
            .into_iter()
            .map(|entry| (entry.log.display().to_string(), entry.head.to_string()))
            .collect()
    }
}
