//! `decision lsp`: the language server on stdio (see docs/editors.md).

use std::path::PathBuf;
use std::process::ExitCode;

use decision_lsp::{Ending, Settings};

use decision::api::host::Profile;

#[derive(clap::Args)]
pub struct Args {
    /// Check every contract against this host capability report (JSON); the client's
    /// settings can replace it.
    #[arg(long, value_name = "FILE.json", conflicts_with = "profile")]
    capabilities: Option<PathBuf>,
    /// Check every contract against a built-in host profile; the client's settings can
    /// replace it.
    #[arg(long, value_enum)]
    profile: Option<Profile>,
    /// Serve on stdin and stdout (the only transport; accepted because editors pass it).
    #[arg(long)]
    stdio: bool,
}

pub fn run(args: Args) -> ExitCode {
    let settings = Settings { reference_profile: args.profile.is_some(), capabilities: args.capabilities };
    let stdin = std::io::stdin();
    match decision_lsp::serve(stdin.lock(), std::io::stdout().lock(), settings) {
        Ok(Ending::Exit) => ExitCode::SUCCESS,
        Ok(Ending::ExitWithoutShutdown | Ending::EndOfInput) => ExitCode::from(1),
        Err(e) => super::usage_error(&format!("the connection to the editor failed: {e}")),
    }
}
