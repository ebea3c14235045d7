//! One small module per command.

pub mod adapter_report;
pub mod approvals;
pub mod ask;
pub mod check;
pub mod contract_input;
pub mod eval;
pub mod explain;
pub mod export;
pub mod frame;
pub mod heads;
pub mod log_inputs;
pub mod lsp;
pub mod mcp;
pub mod outcomes;
pub mod replay;
pub mod resume;
pub mod run;
pub mod test;
pub mod what_if;

use std::process::ExitCode;

/// Exit status for usage and I/O problems.
pub const EXIT_USAGE: u8 = 2;

/// Report a usage or I/O problem and exit 2. A message often quotes what came from a file,
/// a log or a server (an approval id, a path, a name): none of it reaches the terminal raw.
pub fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {}", decision_runtime::terminal::lines(message));
    ExitCode::from(EXIT_USAGE)
}
