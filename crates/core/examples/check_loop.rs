//! Checks the reference fixture in a loop, for instruction-count profiling under callgrind:
//! `valgrind --tool=callgrind target/release/examples/check_loop 1000`. The fixture is read
//! from the reference files (`DECISION_REFERENCE_DIR`, else `../shared`); without them the
//! program says so and exits.
use decision_core::check::{self, Capabilities, CheckOptions};

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/reference/mod.rs"]
mod reference;

fn main() {
    let Some(reference) = reference::text("fixtures/jevloop/DECISION.md") else { return };
    let rounds: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let caps = Capabilities::reference();
    let mut diagnostics = 0;
    for _ in 0..rounds {
        diagnostics += check::check(reference.as_bytes(), CheckOptions { capabilities: Some(&caps) }).diagnostics.len();
    }
    println!("{diagnostics}");
}
