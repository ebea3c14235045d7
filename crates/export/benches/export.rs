//! Export throughput: decisions a second written to Parquet on one thread, replay's checks and
//! the chain included, for a fleet of small logs (each read once) and for one large log (read
//! twice: once for its verdict, once for its rows).
//!
//! The logs are made from the bundled example's decision records (about 3 KB each), repeated
//! and chained afresh, so every record verifies and every chain is intact.
//!
//! Two floors are measured beside the small logs' export, in the same run: replay alone (the
//! verdict every row carries, with no rows made) and the SHA-256 of every line alone (what
//! checking the chain hashes, and nothing else). An export cannot be faster than its replay.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decision::log::{ReplayOptions, replay_file};
use decision_export::{ExportOptions, Format, export};
use sha2::{Digest, Sha256};

/// As in the `decision` binary, whose `export` this measures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `count` decision records in a chained log at `path`.
fn chained_log(path: &Path, count: usize) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-triage/session.jsonl");
    let text = std::fs::read_to_string(example).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Each line without its chain fields: `{...,"seq":N,"prev":"..."}` → `{...`.
    let body = |line: &str| line[..line.rfind(",\"seq\":").unwrap()].to_owned();
    let header = lines[0].to_owned();
    let decisions: Vec<String> = lines.iter().filter(|l| l.contains(r#""type":"decision""#)).map(|l| body(l)).collect();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut previous = header.clone();
    writeln!(out, "{header}").unwrap();
    for seq in 1..=count {
        let sha: String = Sha256::digest(previous.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let line = format!("{},\"seq\":{seq},\"prev\":\"{sha}\"}}", decisions[(seq - 1) % decisions.len()]);
        writeln!(out, "{line}").unwrap();
        previous = line;
    }
    out.flush().unwrap();
}

fn fleet(dir: &Path, logs: usize, each: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    (0..logs)
        .map(|i| {
            let path = dir.join(format!("run-{i:04}.jsonl"));
            chained_log(&path, each);
            path
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("export");
    group.sample_size(10);
    let cases = [
        ("parquet/200 logs of 100 decisions", fleet(&dir.path().join("small"), 200, 100), 20_000u64),
        ("parquet/one log of 20,000 decisions", fleet(&dir.path().join("large"), 1, 20_000), 20_000u64),
    ];
    for (name, logs, decisions) in &cases {
        group.throughput(Throughput::Elements(*decisions));
        group.bench_function(*name, |b| {
            b.iter(|| {
                let summary =
                    export(logs, Format::Parquet, std::io::sink(), &ExportOptions::default(), &mut |_| {}).unwrap();
                assert_eq!((summary.verified + summary.partial, summary.mismatch), (*decisions, 0));
                black_box(summary)
            })
        });
    }
    let (_, small, decisions) = &cases[0];
    group.throughput(Throughput::Elements(*decisions));
    group.bench_function("floor/replay alone, 200 logs of 100 decisions", |b| {
        let options = ReplayOptions { threads: 1, ..ReplayOptions::default() };
        b.iter(|| {
            let verified: u64 = small
                .iter()
                .map(|log| {
                    let report = replay_file(log, &options, &mut |_| {}).unwrap();
                    assert_eq!(report.mismatch, 0);
                    report.verified + report.partial
                })
                .sum();
            assert_eq!(verified, *decisions);
        })
    });
    group.bench_function("floor/SHA-256 of every line, 200 logs of 100 decisions", |b| {
        b.iter(|| {
            for log in small {
                let text = std::fs::read(log).unwrap();
                for line in text.split(|byte| *byte == b'\n') {
                    black_box(Sha256::digest(line));
                }
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
