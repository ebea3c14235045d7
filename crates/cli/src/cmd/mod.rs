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
pub mod otlp;
pub mod outcomes;
pub mod replay;
pub mod resume;
pub mod run;
pub mod test;
pub mod what_if;

use std::process::ExitCode;

use decision::api::Error;

/// Exit status for usage and I/O problems.
pub const EXIT_USAGE: u8 = 2;

/// Report a refusal as `error[CODE]: message` on stderr — the code is the one Python and the
/// npm package raise for the same input — and exit 2: nothing was produced. (Exit 1 is kept
/// for a result that was produced and fails: a check with errors, a replay mismatch, a failed
/// test, a contract violation.) A message often
/// quotes what came from a file, a log or a server (an approval id, a path, a name): none of
/// it reaches the terminal raw.
pub fn fail(error: &Error) -> ExitCode {
    eprintln!("error[{}]: {}", error.code, decision::terminal::lines(&error.message));
    ExitCode::from(EXIT_USAGE)
}

/// Report a file that cannot be read or written (`E_IO`) and exit 2.
pub fn io_error(message: &str) -> ExitCode {
    fail(&Error::new(decision::api::Code::Io, message))
}

/// Report a wrong request (`E_USAGE`) and exit 2.
pub fn usage_error(message: &str) -> ExitCode {
    fail(&Error::usage(message))
}
