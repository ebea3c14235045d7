//! Runs the checker in a loop over a file, for profiling: `cargo run --release --example profile_check -- FILE N`.
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_default();
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(100);
    let bytes = std::fs::read(&path).unwrap_or_default();
    let caps = decision_core::check::Capabilities::reference();
    let mut errors = 0;
    for _ in 0..rounds {
        let report =
            decision_core::check::check(&bytes, decision_core::check::CheckOptions { capabilities: Some(&caps) });
        errors += report.diagnostics.len();
    }
    println!("{errors}");
}
