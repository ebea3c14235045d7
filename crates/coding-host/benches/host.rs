//! The reference coding host's own cost.
//!
//! * `host/step_overhead`: runtime time per loop step — frames, candidates, questions, the
//!   decider's merge, validation and policies, dispatch, transitions and the session log —
//!   with the decision provider's, the tools' and generation's time subtracted, and the
//!   per-run start (parse, check) timed separately (`host/start`). Target: at most 100 µs.
//!   Set `BENCH_NO_LOG=1` to keep events in memory instead of the session log on disk. The
//!   log is the `decision` binary's: group commit, no fsync; its file is created (and the
//!   previous run's removed) before the run's clock starts, as the per-run start is.
//! * `host/step_overhead_at/{50,200,800}`: the same per-step time in runs of 50, 200 and 800
//!   steps over one 800-file workspace (a file read per step): a step's cost must not grow
//!   with the run's length.
//! * `host/step_marginal`: the host's time for one more step — runs of 10 and 30 steps over a
//!   40-file workspace, the difference over the 20 steps between them — so that a run's fixed
//!   cost (its answer, the delivery decision, the seal) is not spread over its few steps, as
//!   it is in `step_overhead` (whose task now takes 2 steps). Target: at most 100 µs.
//! * `host/full_run_200_files`: a whole deterministic run (the `heuristic` provider, the
//!   evidence-report generator, a session log on disk) over a generated 200-file workspace.
//!
//! The workspaces and logs live in `decision-bench-host-<pid>` under the temp dir, removed
//! when the benchmark ends; ones left by a benchmark that did not end (its process is gone)
//! are removed when the next one starts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use decision_coding_host::generate::EvidenceReport;
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::DenyAll;
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task, start_host};
use decision_runtime::graph::{EventSink, MemorySink};
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

const SCRATCH_PREFIX: &str = "decision-bench-host-";

/// This benchmark's scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    /// Removes the scratch directories of benchmarks whose process is gone, then makes this one's.
    fn new() -> Scratch {
        let temp = std::env::temp_dir();
        for entry in std::fs::read_dir(&temp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Earlier versions named their directories `decision-bench-host-<files>-<pid>`.
            let Some(pid) = name.strip_prefix(SCRATCH_PREFIX).and_then(|rest| rest.rsplit('-').next()) else {
                continue;
            };
            let gone = pid.parse::<u32>().is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
            if gone && entry.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        // Earlier versions also left their logs in the temp dir itself.
        for legacy in ["decision-bench-host.jsonl", "decision-bench-host-200.jsonl"] {
            let _ = std::fs::remove_file(temp.join(legacy));
        }
        let dir = temp.join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn workspace(scratch: &Scratch, files: usize) -> PathBuf {
    workspace_named(scratch, files, "module_")
}

/// A workspace of `files` modules named `{prefix}{index:03}.py`.
fn workspace_named(scratch: &Scratch, files: usize, prefix: &str) -> PathBuf {
    let dir = scratch.0.join(format!("ws-{prefix}{files}"));
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..files {
        let body = format!("# module {i}\n\ndef value_{i}():\n    return {i}\n");
        std::fs::write(dir.join(format!("{prefix}{i:03}.py")), body).unwrap();
    }
    dir
}

fn config(workdir: &Path, task: &str, max_steps: u64) -> RunConfig {
    RunConfig {
        max_steps,
        contract_label: "bench".into(),
        ..RunConfig::new(task, workdir, workdir.join(".audit.jsonl"))
    }
}

/// The run's sink: a new session log at `log` (as `decision run` opens it), or memory.
fn sink(log: Option<&Path>) -> Box<dyn EventSink> {
    match log {
        Some(path) => {
            let _ = std::fs::remove_file(path);
            let header = LogHeader { id: "bench".into(), created_at_ms: 0, cwd: None };
            Box::new(SessionLog::create(path, &header, FsyncPolicy::Never).unwrap().with_group_commit())
        }
        None => Box::new(MemorySink::new()),
    }
}

fn run(config: &RunConfig, provider: Arc<dyn DecisionProvider>, log: Option<&Path>) -> RunSummary {
    run_with(config, provider, sink(log))
}

fn run_with(config: &RunConfig, provider: Arc<dyn DecisionProvider>, sink: Box<dyn EventSink>) -> RunSummary {
    let with = Collaborators { provider, generator: Box::new(EvidenceReport), human: Box::new(DenyAll), sink };
    run_task(CODING_CONTRACT.as_bytes(), config, with, None).unwrap()
}

/// The workspace of the long runs, and their task (a file read per step, to the step limit).
const LONG_RUN_FILES: usize = 800;
const LONG_TASK: &str = "Summarize each file";
/// The workspace of `host/step_marginal`.
const MARGINAL_FILES: usize = 40;

/// The host's own time per step over `iters` runs of `config`: the provider's, the tools' and
/// generation's time and the per-run start taken out.
fn step_time(iters: u64, config: &RunConfig, log: Option<&Path>) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let (elapsed, steps) = host_time(config, log);
        total += elapsed / u32::try_from(steps.max(1)).unwrap();
    }
    total
}

/// The host's own time in one run of `config` (the provider's, the tools' and generation's
/// time and the per-run start taken out), and the run's steps.
fn host_time(config: &RunConfig, log: Option<&Path>) -> (Duration, u64) {
    let nanos = Arc::new(AtomicU64::new(0));
    let provider = Arc::new(Timed { inner: HeuristicProvider, nanos: nanos.clone() });
    // The start (parse, check, capabilities, log file) is per run, not per step: it is timed
    // on its own and taken out.
    let start = Instant::now();
    let _host = start_host(CODING_CONTRACT.as_bytes(), provider.clone(), Box::new(MemorySink::new())).unwrap();
    let startup = start.elapsed();
    let sink = sink(log);
    let started = Instant::now();
    let summary = run_with(config, provider, sink);
    let elapsed = started
        .elapsed()
        .saturating_sub(Duration::from_nanos(nanos.load(Ordering::Relaxed)))
        .saturating_sub(startup)
        .saturating_sub(Duration::from_micros(summary.tool_us + summary.generate_us));
    (elapsed, summary.steps)
}

/// The host's time for one more step: the difference between a run of `long` and a run of
/// `short` (the same task on the same workspace), over the steps between them. A run's fixed
/// cost (its first listing, the answer, the delivery decision, the seal) cancels out.
fn marginal_step_time(iters: u64, short: &RunConfig, long: &RunConfig, log: Option<&Path>) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let (short_time, short_steps) = host_time(short, log);
        let (long_time, long_steps) = host_time(long, log);
        assert!(long_steps > short_steps, "the long run must take more steps ({long_steps} ≤ {short_steps})");
        total += long_time.saturating_sub(short_time) / u32::try_from(long_steps - short_steps).unwrap();
    }
    total
}

fn benches(c: &mut Criterion) {
    let scratch = Scratch::new();
    let small = workspace(&scratch, 6);
    let log = scratch.0.join("host.jsonl");
    let on_disk = std::env::var("BENCH_NO_LOG").is_err();
    // Six steps: list_dir, then a read per step until the named term is found in module_005.
    let step_config = config(&small, "Which module defines `value_5`?", 12);
    // For profilers (callgrind, perf): only the step runs, `BENCH_PROFILE_RUNS` times, no criterion.
    if let Some(runs) = std::env::var("BENCH_PROFILE_RUNS").ok().and_then(|n| n.parse::<u32>().ok()) {
        for _ in 0..runs {
            run(&step_config, Arc::new(HeuristicProvider), on_disk.then_some(log.as_path()));
        }
        return;
    }
    // Short names: the whole listing fits under the tool layer's output cap, so that every
    // file can be read, one a step.
    let wide = workspace_named(&scratch, LONG_RUN_FILES, "m");
    // For profilers: one run of `BENCH_PROFILE_STEPS` steps over the 800-file workspace, or
    // over the 40-file one with `BENCH_PROFILE_SMALL=1` (the difference between two lengths is
    // the cost of the steps between them).
    if let Some(steps) = std::env::var("BENCH_PROFILE_STEPS").ok().and_then(|n| n.parse::<u64>().ok()) {
        let workdir = match std::env::var_os("BENCH_PROFILE_SMALL") {
            Some(_) => workspace_named(&scratch, MARGINAL_FILES, "f"),
            None => wide,
        };
        let summary =
            run(&config(&workdir, LONG_TASK, steps), Arc::new(HeuristicProvider), on_disk.then_some(log.as_path()));
        eprintln!("{} steps, halt {}", summary.steps, summary.halt);
        return;
    }
    let mut group = c.benchmark_group("host");
    group.bench_function("start", |b| {
        b.iter(|| {
            start_host(CODING_CONTRACT.as_bytes(), Arc::new(HeuristicProvider), Box::new(MemorySink::new())).unwrap()
        })
    });
    let on_disk_log = on_disk.then_some(log.as_path());
    group.bench_function("step_overhead", |b| b.iter_custom(|iters| step_time(iters, &step_config, on_disk_log)));
    for steps in [50, 200, 800] {
        let long = config(&wide, LONG_TASK, steps);
        group.sample_size(10);
        group.bench_function(format!("step_overhead_at/{steps}"), |b| {
            b.iter_custom(|iters| step_time(iters, &long, on_disk_log))
        });
    }
    // One more step on a small workspace (40 files, a file read per step): runs of 10 and 30
    // steps.
    let few = workspace_named(&scratch, MARGINAL_FILES, "f");
    let (short, long) = (config(&few, LONG_TASK, 10), config(&few, LONG_TASK, 30));
    group.sample_size(20);
    group.bench_function("step_marginal", |b| {
        b.iter_custom(|iters| marginal_step_time(iters, &short, &long, on_disk_log))
    });
    group.sample_size(100);
    let big = workspace(&scratch, 200);
    let big_log = scratch.0.join("host-200.jsonl");
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
