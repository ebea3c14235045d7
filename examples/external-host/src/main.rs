//! `cargo run -p decision-external-host [REFERENCE.md CUSTOM.md]`: the conformance probe.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let shared = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/jevloop/");
    let reference = args.next().unwrap_or_else(|| format!("{shared}DECISION.md"));
    let custom = args.next().unwrap_or_else(|| format!("{shared}custom-graph.DECISION.md"));
    let read = |path: &str| std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"));
    match read(&reference)
        .and_then(|r| read(&custom).map(|c| (r, c)))
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
