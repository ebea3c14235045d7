//! `decision`: check, explain and run `DECISION.md` decision contracts.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod cmd;
mod progress;

/// The parser and the runtime allocate many small strings; mimalloc makes that markedly
/// cheaper than the system allocator (about a third faster on `decision check`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
mod render;

/// Declarative decision contracts for AI agent hosts.
#[derive(Parser)]
#[command(name = "decision", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check DECISION.md files: parse, schema, policy and adapter layers, and lints.
    Check(cmd::check::Args),
    /// Print a contract as a readable table.
    Explain(cmd::explain::Args),
    /// Show the frame and questions a block would send, with their digests.
    Frame(cmd::frame::Args),
    /// Verify decision records in session logs.
    Replay(cmd::replay::Args),
    /// Evaluate a block's policy on given answers.
    Eval(cmd::eval::Args),
    /// Export session logs as one Parquet, CSV or JSON Lines file: a row per decision.
    Export(cmd::export::Args),
    /// Ask a decision provider one block's questions and evaluate its policy.
    Ask(cmd::ask::Args),
    /// Run the reference coding host on a task.
    Run(cmd::run::Args),
    /// Continue an unfinished run from its session log.
    Resume(cmd::resume::Args),
    /// Generate or check a host capability report.
    AdapterReport(cmd::adapter_report::Args),
    /// Tool outcome contracts: lint, validate, report.
    #[command(subcommand)]
    Outcomes(cmd::outcomes::Command),
    /// Re-evaluate recorded decisions under another contract or thresholds (no model asked).
    WhatIf(cmd::what_if::Args),
    /// Run a contract's test cases: expected actions for given answers, and rule coverage.
    Test(cmd::test::Args),
    /// List the pending approvals of a session log.
    Approvals(cmd::approvals::ListArgs),
    /// Answer a pending approval (approve, deny, or approve a modified input).
    Approve(cmd::approvals::ApproveArgs),
    /// A decision gateway in front of an MCP server: every tools/call decided and recorded.
    Mcp(cmd::mcp::Args),
    /// Serve the language server on stdio: diagnostics, hover and more in an editor.
    Lsp(cmd::lsp::Args),
    /// Print a shell's completion script (e.g. `decision completions bash > ~/.local/share/bash-completion/completions/decision`).
    Completions(CompletionsArgs),
}

/// `decision completions`.
#[derive(clap::Args)]
struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// The exit status of a command whose output was closed before it finished (`decision … |
/// head`): 128 + SIGPIPE, what a Unix tool killed by the signal reports.
const CLOSED_OUTPUT: i32 = 141;

/// Whether a panic is the standard library reporting a write to a closed stdout or stderr.
fn is_closed_output(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let message = match (info.payload().downcast_ref::<String>(), info.payload().downcast_ref::<&str>()) {
        (Some(s), _) => s.as_str(),
        (None, Some(s)) => s,
        (None, None) => return false,
    };
    message.starts_with("failed printing to std")
        && (message.contains("Broken pipe") || message.contains("os error 32"))
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so a write to a closed pipe fails and `println!` panics. The
    // reader has gone: exit quietly, as a tool killed by SIGPIPE would, for every command.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_output(info) {
            std::process::exit(CLOSED_OUTPUT);
        }
        default_hook(info);
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return refuse_arguments(&error),
    };
    match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Frame(args) => cmd::frame::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Eval(args) => cmd::eval::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Ask(args) => cmd::ask::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Resume(args) => cmd::resume::run(args),
        Command::AdapterReport(args) => cmd::adapter_report::run(args),
        Command::Outcomes(command) => cmd::outcomes::run(command),
        Command::WhatIf(args) => cmd::what_if::run(args),
        Command::Test(args) => cmd::test::run(args),
        Command::Approvals(args) => cmd::approvals::list(args),
        Command::Approve(args) => cmd::approvals::approve(args),
        Command::Mcp(args) => cmd::mcp::run(args),
        Command::Lsp(args) => cmd::lsp::run(args),
        Command::Completions(args) => {
            clap_complete::generate(args.shell, &mut Cli::command(), "decision", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
    }
}

/// Arguments clap refuses: help and the version are printed as clap prints them; anything
/// else is a refusal like every other (docs/cli-conventions.md), its usage and hint first and
/// then one last line `error[E_USAGE]: message`, exit 2.
fn refuse_arguments(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        error.exit();
    }
    let text = error.render().to_string();
    let (what, usage) = text.split_once("\n\n").unwrap_or((&text, ""));
    let what = what.strip_prefix("error: ").unwrap_or(what);
    let message: Vec<&str> = what.split_whitespace().collect();
    eprint!("{usage}");
    if !usage.is_empty() && !usage.ends_with('\n') {
        eprintln!();
    }
    eprintln!("error[E_USAGE]: {}", decision::terminal::one_line(&message.join(" ")));
    ExitCode::from(cmd::EXIT_USAGE)
}
