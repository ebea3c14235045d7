//! Parse + every check layer on generated hostile contracts, each at two sizes: the time per
//! byte (criterion's throughput) stays the same from one size to the next, i.e. the work is
//! linear in the input. The CLI's rendering of the diagnostics is measured by
//! `scripts/bench-hostile.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use decision_core::check::{self, CheckOptions};

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `n` distinct headings and nothing else: two errors each (no kind, no position).
fn headings(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| format!("## h{i}\n").into_bytes()).collect()
}

/// `n` times the same heading: a duplicate-id error more for each.
fn duplicate_headings(n: usize) -> Vec<u8> {
    b"## a\n".repeat(n)
}

/// One block whose policy has `n` rules naming a question it does not have.
fn unknown_question_rules(n: usize) -> Vec<u8> {
    let mut out = "schema: decision-contract/v1\n\n## b\nkind: noul\nwhen: after-tool —— p\nask: q\n- true — a\n- false — b\npolicy:\n"
        .as_bytes()
        .to_vec();
    for i in 0..n {
        out.extend_from_slice(format!("  - prob:nope{i} >= 0.6 → continue\n").as_bytes());
    }
    out.extend_from_slice("  - else → stop\n".as_bytes());
    out
}

/// `n` bytes that are not UTF-8 at all.
fn invalid_utf8(n: usize) -> Vec<u8> {
    vec![0xFF; n]
}

type Generator = fn(usize) -> Vec<u8>;

fn bench(c: &mut Criterion) {
    let inputs: [(&str, Generator, [usize; 2]); 4] = [
        // Up to `syntax::MAX_BLOCKS` (10,000): past it the rest of the file is not read.
        ("headings", headings, [5_000, 10_000]),
        ("duplicate_headings", duplicate_headings, [5_000, 10_000]),
        ("unknown_question_rules", unknown_question_rules, [25_000, 50_000]),
        ("invalid_utf8_bytes", invalid_utf8, [6_000_000, 12_000_000]),
    ];
    for (name, generate, sizes) in inputs {
        let mut group = c.benchmark_group(format!("hostile/{name}"));
        group.sample_size(10);
        for size in sizes {
            let input = generate(size);
            assert!(check::check(&input, CheckOptions::default()).has_errors());
            group.throughput(Throughput::Bytes(input.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(size), &input, |b, input| {
                b.iter(|| check::check(black_box(input), CheckOptions::default()))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
