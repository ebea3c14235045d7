//! Parse + every check layer: the reference file with the reference profile, and a generated
//! 2,000-block contract (about 1.2 MB).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
#![allow(clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decision_core::check::{self, Capabilities, CheckOptions};

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The reference file is read from the reference files (`DECISION_REFERENCE_DIR`, else
// `../shared`); without them its benchmark is skipped with a printed line.
#[path = "../tests/reference/mod.rs"]
mod reference;

/// A contract of `blocks` noul blocks, each with `when`, `ask`, two options, a two-line frame
/// and a two-rule policy.
pub fn generated_contract(blocks: usize) -> String {
    let mut out =
        String::from("# Generated\n\nschema: decision-contract/v1\n\nA generated contract for benchmarks.\n\n");
    for i in 0..blocks {
        let _ = write!(
            out,
            "## block_{i}\n\nkind: noul\nwhen: after-tool —— after every tool call, check number {i} of the generated series of decisions\n\n\
ask: The tool call number {i} returned output the step can use without asking anything more of the user or the tools\n\n\
- true — the call ran and returned content: no error, no empty result, and the target it names is the one that was requested\n\
- false — the call failed: an error, an empty result, a missing file, or output that did not come from this tool at all\n\n\
frame:\n  + task          400                   —— the task is what decides whether this call's output is useful for step {i}\n\
  - cwd                                 —— the working directory carries no information about whether the call worked\n\n\
policy:\n  - prob:block_{i} >= 0.6 → continue\n  - else → stop\n\n\
A line of rationale explaining why this decision exists and what went wrong before it did, kept for the people who read it.\n\n"
        );
    }
    out
}

fn bench(c: &mut Criterion) {
    let reference = Capabilities::reference();
    // For profilers (callgrind): the reference file checked `BENCH_PROFILE_CHECK` times, no
    // criterion; the difference between two counts is the cost of the checks between them.
    if let Some(times) = std::env::var("BENCH_PROFILE_CHECK").ok().and_then(|n| n.parse::<u32>().ok()) {
        let source = reference::text("fixtures/jevloop/DECISION.md").unwrap();
        for _ in 0..times {
            black_box(check::check(black_box(source.as_bytes()), CheckOptions { capabilities: Some(&reference) }));
        }
        return;
    }
    let mut group = c.benchmark_group("check");
    if let Some(source) = reference::text("fixtures/jevloop/DECISION.md") {
        group.throughput(Throughput::Bytes(source.len() as u64));
        group.bench_function("reference_file_all_layers", |b| {
            b.iter(|| check::check(black_box(source.as_bytes()), CheckOptions { capabilities: Some(&reference) }))
        });
        // The parse layer alone (the scanner and the block rules): what the reference's own
        // parse does, for the side-by-side comparison of docs/performance.md.
        group.bench_function("reference_file_parse_only", |b| {
            b.iter(|| decision_core::parse(black_box(source.as_bytes())))
        });
    }
    let large = generated_contract(2000);
    assert!(!check::check(large.as_bytes(), CheckOptions::default()).has_errors());
    group.throughput(Throughput::Bytes(large.len() as u64));
    group.sample_size(30);
    group.bench_function("generated_2000_blocks_all_layers", |b| {
        b.iter(|| check::check(black_box(large.as_bytes()), CheckOptions::default()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
