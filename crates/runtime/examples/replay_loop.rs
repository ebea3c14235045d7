//! Replays a log on one thread `REPEAT` times (default 1), for profiling with `perf` or
//! callgrind: `cargo run --release -p decision-runtime --example replay_loop -- LOG [REPEAT]`.
//! The replay benchmark writes suitable logs to the temporary directory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use decision_runtime::log::{ReplayOptions, replay_reader};

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: replay_loop LOG [REPEAT]");
    let repeat: u32 = args.next().map_or(1, |n| n.parse().expect("REPEAT is a number"));
    let bytes = std::fs::read(&path).expect("the log is readable");
    let options = ReplayOptions::default();
    let started = std::time::Instant::now();
    let mut records = 0;
    for _ in 0..repeat {
        let report = replay_reader(&bytes[..], &options, &mut |_| {}).expect("replay runs");
        assert_eq!(report.mismatch, 0);
        records += report.records;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("{records} records in {seconds:.3} s = {:.0} records/s", records as f64 / seconds);
}
