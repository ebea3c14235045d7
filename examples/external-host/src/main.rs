//! `cargo run -p decision-external-host [CONTRACT.md TRIAGE.md]`: the conformance probe. By
//! default it runs the bundled coding-agent contract (its four local blocks) and this host's
//! own issue-triage contract, `triage.DECISION.md`; both are part of the repository and built
//! into the binary, so it runs from anywhere.

use std::borrow::Cow;
use std::process::ExitCode;

/// The bundled coding-agent contract.
const LOCAL: &[u8] = include_bytes!("../../coding-agent/DECISION.md");
/// This host's issue-triage contract.
const TRIAGE: &[u8] = include_bytes!("../triage.DECISION.md");

fn read(path: Option<String>, default: &'static [u8]) -> Result<Cow<'static, [u8]>, String> {
    match path {
        None => Ok(Cow::Borrowed(default)),
        Some(path) => std::fs::read(&path).map(Cow::Owned).map_err(|e| format!("cannot read {path}: {e}")),
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (local, triage) = (args.next(), args.next());
    match read(local, LOCAL)
        .and_then(|l| read(triage, TRIAGE).map(|t| (l, t)))
        .and_then(|(l, t)| decision_external_host::demo(&l, &t))
    {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}
