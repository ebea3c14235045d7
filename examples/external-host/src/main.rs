//! `cargo run -p decision-external-host [CONTRACT.md TRIAGE.md]`: the conformance probe. By
//! default it runs the bundled coding-agent contract (its four local blocks) and this host's
//! own issue-triage contract, `triage.DECISION.md`; both are part of the repository.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let root = env!("CARGO_MANIFEST_DIR");
    let local = args.next().unwrap_or_else(|| format!("{root}/../coding-agent/DECISION.md"));
    let triage = args.next().unwrap_or_else(|| format!("{root}/triage.DECISION.md"));
    let read = |path: &str| std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"));
    match read(&local)
        .and_then(|r| read(&triage).map(|c| (r, c)))
        .and_then(|(r, c)| decision_external_host::demo(&r, &c))
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
