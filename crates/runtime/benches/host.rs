//! The reference coding host's own cost.
//!
//! * `host/step_overhead`: runtime time per loop step — frames, candidates, questions, the
//!   decider's merge, validation and policies, dispatch, transitions and the session log —
//!   with the decision provider's, the tools' and generation's time subtracted, and the
//!   per-run start (parse, check) timed separately (`host/start`). Target: at most 100 µs.
//!   Set `BENCH_NO_LOG=1` to keep events in memory instead of the session log on disk.
//! * `host/full_run_200_files`: a whole deterministic run (the `heuristic` provider, the
//!   evidence-report generator, a session log on disk) over a generated 200-file workspace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use decision_runtime::graph::MemorySink;
use decision_runtime::host::generate::EvidenceReport;
use decision_runtime::host::heuristic::HeuristicProvider;
use decision_runtime::host::human::DenyAll;
use decision_runtime::host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task, start_host};
use decision_runtime::log::{FsyncPolicy, LogHeader, SessionLog};
use decision_runtime::provider::{DecisionProvider, ProviderError, Request, Response};

/// As in the `decision` binary, which runs this host.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Times the provider it wraps, so its time can be taken out.
struct Timed {
    inner: HeuristicProvider,
    nanos: Arc<AtomicU64>,
}

impl DecisionProvider for Timed {
    fn name(&self) -> &str {
        "heuristic"
    }
    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        let out = self.inner.decide(request);
        self.nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }
}

fn workspace(files: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("decision-bench-host-{files}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..files {
        let body = format!("# module {i}\n\ndef value_{i}():\n    return {i}\n");
        std::fs::write(dir.join(format!("module_{i:03}.py")), body).unwrap();
    }
    dir
}

fn config(workdir: &Path, task: &str, max_steps: u64) -> RunConfig {
    RunConfig {
        task: task.into(),
        workdir: workdir.to_path_buf(),
        max_steps,
        time_budget: None,
        allow_write: false,
        allow_delete: false,
        earlier: None,
        audit_path: workdir.join(".audit.jsonl"),
        contract_label: "bench".into(),
        outcome_contracts: None,
    }
}

fn run(config: &RunConfig, provider: Arc<dyn DecisionProvider>, log: Option<&Path>) -> RunSummary {
    let sink: Box<dyn decision_runtime::graph::EventSink> = match log {
        Some(path) => {
            let _ = std::fs::remove_file(path);
            let header = LogHeader { id: "bench".into(), created_at_ms: 0, cwd: None };
            Box::new(SessionLog::create(path, &header, FsyncPolicy::Never).unwrap())
        }
        None => Box::new(MemorySink::new()),
    };
    let with = Collaborators { provider, generator: Box::new(EvidenceReport), human: Box::new(DenyAll), sink };
    run_task(CODING_CONTRACT.as_bytes(), config, with, None).unwrap()
}

fn benches(c: &mut Criterion) {
    let small = workspace(6);
    let log = small.join("../decision-bench-host.jsonl");
    // Six steps: list_dir, then a read per step until the named term is found in module_005.
    let step_config = config(&small, "Which module defines `value_5`?", 12);
    // For profilers (callgrind, perf): only the step runs, `BENCH_PROFILE_RUNS` times, no criterion.
    if let Some(runs) = std::env::var("BENCH_PROFILE_RUNS").ok().and_then(|n| n.parse::<u32>().ok()) {
        let on_disk = std::env::var("BENCH_NO_LOG").is_err();
        for _ in 0..runs {
            run(&step_config, Arc::new(HeuristicProvider), on_disk.then_some(log.as_path()));
        }
        return;
    }
    let mut group = c.benchmark_group("host");
    group.bench_function("start", |b| {
        b.iter(|| {
            start_host(CODING_CONTRACT.as_bytes(), Arc::new(HeuristicProvider), Box::new(MemorySink::new())).unwrap()
        })
    });
    group.bench_function("step_overhead", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let nanos = Arc::new(AtomicU64::new(0));
                let provider = Arc::new(Timed { inner: HeuristicProvider, nanos: nanos.clone() });
                // The start (parse, check, capabilities, log file) is per run, not per step:
                // it is timed on its own and taken out.
                let start = Instant::now();
                let _host =
                    start_host(CODING_CONTRACT.as_bytes(), provider.clone(), Box::new(MemorySink::new())).unwrap();
                let startup = start.elapsed();
                let started = Instant::now();
                let summary =
                    run(&step_config, provider, if std::env::var("BENCH_NO_LOG").is_ok() { None } else { Some(&log) });
                let elapsed = started
                    .elapsed()
                    .saturating_sub(Duration::from_nanos(nanos.load(Ordering::Relaxed)))
                    .saturating_sub(startup)
                    .saturating_sub(Duration::from_micros(summary.tool_us + summary.generate_us));
                total += elapsed / u32::try_from(summary.steps.max(1)).unwrap();
            }
            total
        });
    });
    let big = workspace(200);
    let big_log = big.join("../decision-bench-host-200.jsonl");
    let full = config(&big, "Summarize each file", 200);
    let summary = run(&full, Arc::new(HeuristicProvider), Some(&big_log));
    eprintln!(
        "full run over 200 files: halt {}, {} steps, {} decisions in {} requests",
        summary.halt, summary.steps, summary.decisions, summary.requests
    );
    group.sample_size(10);
    group.bench_function("full_run_200_files", |b| b.iter(|| run(&full, Arc::new(HeuristicProvider), Some(&big_log))));
    group.finish();
}

criterion_group!(host, benches);
criterion_main!(host);
