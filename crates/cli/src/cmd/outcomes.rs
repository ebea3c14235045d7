//! `decision outcomes check|validate|report`.

use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Lint a contracts file.
    Check {},
}

pub fn run(_command: Command) -> ExitCode {
    super::not_built("outcomes")
}
