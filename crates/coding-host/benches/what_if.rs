//! What-if over recorded decisions: every decision of a session log re-evaluated under a
//! changed gate (reading the line, comparing its questions with the contract's, validating
//! the recorded answers, evaluating the policy, accounting). Target: at least 200,000
//! decisions per second on one core.
//!
//! Time is the thread's CPU time (the target is per core; on a shared machine the wall clock
//! also counts time spent waiting for a core), read from `/proc/thread-self/schedstat`.
//!
//! The log is a real one: a deterministic run of the coding host (the `heuristic` provider)
//! over the bundled workspace, its lines repeated to 30,000 decisions. It lives in
//! `decision-bench-what-if-<pid>` under the temp dir, removed when the benchmark ends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decision_coding_host::generate::EvidenceReport;
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::DenyAll;
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, run_task};
use decision_core::policy::parse_gates;
use decision_runtime::log::what_if::{WhatIf, WhatIfReport, what_if_reader};
use decision_runtime::log::{FsyncPolicy, LogHeader, SessionLog};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// This thread's time on a CPU (`/proc/thread-self/schedstat`, first field, in ns): the
/// target is per core, and on a shared machine the wall clock also counts time the thread
/// waited for one. `None` where it cannot be read (then wall time is measured).
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok().map(Duration::from_nanos)
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The decision lines of one recorded run.
fn recorded_lines() -> Vec<String> {
    let scratch = Scratch(std::env::temp_dir().join(format!("decision-bench-what-if-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let workdir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace"));
    let log = scratch.0.join("run.jsonl");
    let header = LogHeader { id: "bench".into(), created_at_ms: 0, cwd: None };
    let sink = Box::new(SessionLog::create(&log, &header, FsyncPolicy::Never).unwrap().with_group_commit());
    let config = RunConfig {
        contract_label: "bench".into(),
        ..RunConfig::new(
            "Which file defines the function `apply_discount`, and what does it return?",
            &workdir,
            scratch.0.join("audit.jsonl"),
        )
    };
    let with = Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator: Box::new(EvidenceReport),
        human: Box::new(DenyAll),
        sink,
    };
    run_task(CODING_CONTRACT.as_bytes(), &config, with, None).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    text.lines().filter(|l| l.contains("\"type\":\"decision\"")).map(str::to_owned).collect()
}

fn what_if_log(c: &mut Criterion) {
    let lines = recorded_lines();
    let per_run = lines.len();
    let runs = 30_000 / per_run;
    let mut log = String::new();
    for _ in 0..runs {
        for line in &lines {
            log.push_str(line);
            log.push('\n');
        }
    }
    let decisions = (runs * per_run) as u64;
    let contract = decision_core::parse(CODING_CONTRACT.as_bytes()).contract;
    let what_if = WhatIf::new(&contract, &parse_gates("grade_risk.needs_auth=0.1").unwrap()).unwrap();
    // For profilers (callgrind): the log re-evaluated `BENCH_PROFILE_WHAT_IF` times, no
    // criterion; the difference between 1 and 0 is one pass over 30,000 decisions.
    if let Some(times) = std::env::var("BENCH_PROFILE_WHAT_IF").ok().and_then(|n| n.parse::<u32>().ok()) {
        for _ in 0..times {
            let mut report = WhatIfReport::default();
            what_if_reader(&what_if, "bench.jsonl", log.as_bytes(), &mut report).unwrap();
            assert_eq!(report.decisions, decisions);
        }
        return;
    }
    let mut group = c.benchmark_group("what_if");
    group.throughput(Throughput::Elements(decisions));
    group.bench_function("coding-host log", |b| {
        b.iter_custom(|iters| {
            let (cpu, wall) = (thread_cpu(), Instant::now());
            for _ in 0..iters {
                let mut report = WhatIfReport::default();
                what_if_reader(&what_if, "bench.jsonl", log.as_bytes(), &mut report).unwrap();
                assert_eq!(report.decisions, decisions);
                black_box(report);
            }
            match (cpu, thread_cpu()) {
                (Some(start), Some(end)) => end.saturating_sub(start),
                _ => wall.elapsed(),
            }
        })
    });
    group.finish();
}

criterion_group!(benches, what_if_log);
criterion_main!(benches);
