//! Checks the reference fixture in a loop, for instruction-count profiling under callgrind:
//! `valgrind --tool=callgrind target/release/examples/check_loop 1000`.
use decision_core::check::{self, Capabilities, CheckOptions};

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REFERENCE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/jevloop/DECISION.md"));

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let caps = Capabilities::reference();
    let mut diagnostics = 0;
    for _ in 0..rounds {
        diagnostics += check::check(REFERENCE.as_bytes(), CheckOptions { capabilities: Some(&caps) }).diagnostics.len();
    }
    println!("{diagnostics}");
}
