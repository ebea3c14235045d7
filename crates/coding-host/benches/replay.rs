//! Frames and replay:
//! - compile + frame digest + request digest for the seven reference frames (target ≤ 3 µs
//!   per frame);
//! - replay of a generated 100,000-record log, parsing included (target ≥ 250,000
//!   records/s on one core), on one thread and on every core, as `decision replay` reads a
//!   log: records, chain, seals and approvals in one pass. The log holds the decisions
//!   of reference runs in the order the loop writes them (merged needsTool + pickTool,
//!   pickInput, gradeRisk, stepOk, isDone, canDeliver): about 2.8 K characters (JavaScript
//!   string length) a record, 3.4 KB as UTF-8, since the contract's text is largely Chinese.
//!   The same decisions are replayed twice:
//!   - `reference-written`: lines as the reference writes them (`{"kind":"event","run",
//!     "at","e"}`, no chain), so replay verifies the records and nothing else;
//!   - `chained`: lines as `decision` writes them, with `seq` and `prev`, so replay also
//!     hashes every byte of every line for the chain (SHA-256, about 2.5 µs a line here).
//! - a third log repeats the largest record the loop writes (a merged pickTool, about
//!   4.5 KB), chained.
//!
//! The generated logs are written to the temporary directory as
//! `decision-bench-100k.jsonl` (chained), `decision-bench-100k-reference.jsonl` and
//! `decision-bench-100k-large.jsonl` and left there for measurements with the CLI;
//! `DECISION_BENCH_RECORDS=n` changes the size of the first two.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
#![allow(clippy::disallowed_methods)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decision_coding_host::candidates::{FileOptions, ToolsFor};
use decision_protocol::ask::{CandidateProvider, ReadCells, wire_question};
use decision_protocol::digest::request_digest;
use decision_protocol::frame::{
    FrameSpec, HostCells, Mode, Projections, compile_frame, merge_requests, reference_node_id,
};
use decision_runtime::log::approval::replay_with_ledger;
use decision_runtime::log::{ChainStatus, DecisionEvent, FsyncPolicy, LogHeader, ReplayOptions, SessionLog};
use serde_json::{Map, Value, json};

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The seven frames are the reference `DECISION.md`'s, read from the reference files
// (`DECISION_REFERENCE_DIR`, else `../shared`); without them these benchmarks are skipped
// with a printed line.
#[path = "../../core/tests/reference/mod.rs"]
mod reference;
const RECORDS: u64 = 100_000;

fn full_ctx() -> Map<String, Value> {
    json!({
        "task": "把 alpha.ts 里的 totalOf 抄到新文件 summary.ts 里", "cwd": "/w",
        "files": ["alpha.ts", "beta.ts", "notes.md"], "readFiles": ["alpha.ts"],
        "history": [{"step": 1, "tool": "list_dir", "input": ".", "result": "alpha.ts\nbeta.ts\nnotes.md"},
                    {"step": 2, "tool": "read_file", "input": "alpha.ts", "result": "export function totalOf() {}"}],
        "lastTool": "read_file", "lastResult": "export function totalOf() {}", "canWrite": true,
        "earlier": "上一轮问的是这些文件各导出了什么", "draft": "我把 totalOf 抄过去了。"
    })
    .as_object()
    .unwrap()
    .clone()
}

struct Reference {
    specs: Vec<(FrameSpec, Value)>,
    cells: HostCells,
    projections: Projections,
}

/// The reference contract's seven frames, or `None` (after a printed skip line).
fn reference() -> Option<Reference> {
    let contract = decision_core::parse(reference::text("fixtures/jevloop/DECISION.md")?.as_bytes()).contract;
    let cells = HostCells::reference();
    let projections = Projections::standard();
    let specs = contract
        .blocks
        .iter()
        .filter_map(|block| {
            let node = reference_node_id(&block.id)?;
            let spec = FrameSpec::from_block(node, block, &cells, &projections).unwrap();
            let questions: Map<String, Value> =
                block.questions.iter().map(|q| (q.id.clone(), wire_question(q).to_json())).collect();
            Some((spec, Value::Object(questions)))
        })
        .collect::<Vec<_>>();
    assert_eq!(specs.len(), 7);
    Some(Reference { specs, cells, projections })
}

/// `BENCH_PROFILE_REPLAY` is set: only the replay is measured, by a profiler.
fn profiling_replay() -> bool {
    std::env::var_os("BENCH_PROFILE_REPLAY").is_some()
}

fn frames(c: &mut Criterion) {
    if profiling_replay() {
        return;
    }
    let Some(r) = reference() else { return };
    let ctx = full_ctx();
    let mut group = c.benchmark_group("frames");
    group.throughput(Throughput::Elements(7));
    for (name, mode) in [
        ("seven reference frames, reference marking", Mode::Reference),
        ("seven reference frames, provenance marking", Mode::Provenance),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                for (spec, questions) in &r.specs {
                    let frame = compile_frame(spec, black_box(&ctx), &r.cells, &r.projections, mode);
                    black_box(request_digest(&frame.digest, questions));
                }
            });
        });
    }
    group.finish();
}

/// The reference loop's context at the start of step `step` (1-based) of run `run`: the
/// V7 task (list the files and explain what they do), which lists the directory and reads
/// two files.
fn loop_ctx(run: u64, step: u64) -> Map<String, Value> {
    let tools: [(&str, &str, String); 3] = [
        ("list_dir", ".", "alpha.ts\nbeta.ts\nnotes.md".to_owned()),
        (
            "read_file",
            "alpha.ts",
            format!("export const totalOf = (xs: number[]) => xs.reduce((a, b) => a + b, {run});"),
        ),
        ("read_file", "notes.md", "# notes\nbeta.ts re-exports totalOf.".to_owned()),
    ];
    let done = usize::try_from(step - 1).unwrap().min(tools.len());
    let history: Vec<Value> = tools[..done]
        .iter()
        .enumerate()
        .map(|(i, (tool, input, result))| json!({"step": i + 1, "tool": tool, "input": input, "result": result}))
        .collect();
    let mut ctx = json!({"task": format!("list the files and explain what they do (run {run})"), "cwd": "/w",
        "canWrite": true, "canDelete": false})
    .as_object()
    .unwrap()
    .clone();
    if done >= 1 {
        ctx.insert("files".into(), json!(["alpha.ts", "beta.ts", "notes.md"]));
    }
    let read: Vec<&str> = tools[1..done.max(1)].iter().map(|(_, input, _)| *input).collect();
    if !read.is_empty() {
        ctx.insert("readFiles".into(), json!(read));
    }
    if let Some((tool, _, result)) = tools[..done].last() {
        ctx.insert("lastTool".into(), json!(tool));
        ctx.insert("lastResult".into(), json!(result));
    }
    ctx.insert("history".into(), Value::Array(history));
    ctx
}

/// Answers in the shape a provider returns them, for a node's wire questions.
fn answers_for(questions: &Value) -> Value {
    let mut answers = Map::new();
    for (id, q) in questions.as_object().unwrap() {
        let options: Vec<&String> =
            q.get("criteria").and_then(Value::as_object).map(|c| c.keys().collect()).unwrap_or_default();
        let answer = match q["type"].as_str() {
            Some("noul") => json!({"type": "noul", "noul": 0.18}),
            Some("score") => {
                json!({"type": "score", "score": 0.4, "legend": q.get("legend").cloned().unwrap_or(json!({})),
                "probabilities": {"0": 0.7, "1": 0.2, "2": 0.1}, "confidence": 0.41})
            }
            _ => {
                let probabilities: Map<String, Value> = options
                    .iter()
                    .enumerate()
                    .map(|(i, o)| {
                        (
                            (*o).clone(),
                            json!(if i == 0 { 0.86 } else { 0.14 / options.len().saturating_sub(1).max(1) as f64 }),
                        )
                    })
                    .collect();
                json!({"type": "choice", "choice": options.first(), "probabilities": probabilities, "confidence": 0.58})
            }
        };
        answers.insert(id.clone(), answer);
    }
    Value::Object(answers)
}

/// A node's questions in wire form for this step: the dynamic candidates (`toolsFor` for
/// pickTool, `fileOptions` for pickInput) replace the file's default option lists, as the
/// reference rebuilds them every step.
fn questions_for(r: &Reference, node: usize, ctx: &Map<String, Value>) -> Value {
    let mut questions = r.specs[node].1.clone();
    let provider: &dyn CandidateProvider = match node {
        1 => &ToolsFor,
        2 => &FileOptions,
        _ => return questions,
    };
    let candidates = provider.candidates(ReadCells::all(ctx));
    for question in questions.as_object_mut().unwrap().values_mut() {
        if question["type"] == "choice" {
            let criteria: Map<String, Value> =
                candidates.options.iter().map(|(id, text)| (id.clone(), Value::from(text.as_str()))).collect();
            question["criteria"] = Value::Object(criteria);
            if let Some(instructions) = &candidates.instructions {
                question["instructions"] = Value::from(instructions.as_str());
            }
        }
    }
    questions
}

/// One decision event per node of a request, as the reference loop logs them.
fn request_events(
    r: &Reference,
    ctx: &Map<String, Value>,
    nodes: &[usize],
    step: u64,
    action: &str,
) -> Vec<DecisionEvent> {
    let frames: Vec<_> =
        nodes.iter().map(|&i| compile_frame(&r.specs[i].0, ctx, &r.cells, &r.projections, Mode::Reference)).collect();
    let questions: Vec<Value> = nodes.iter().map(|&i| questions_for(r, i, ctx)).collect();
    let parts: Vec<_> = frames.iter().zip(&questions).collect();
    let merged = merge_requests(&parts).unwrap();
    frames
        .iter()
        .zip(questions)
        .map(|(frame, questions)| {
            let first = questions.as_object().unwrap().keys().next().unwrap().clone();
            DecisionEvent {
                step,
                id: frame.node.clone(),
                state: merged.state.clone(),
                frame: Some(frame.to_value()),
                request_digest: Some(merged.request_digest.clone()),
                sent_frame_digest: Some(merged.sent_frame_digest.clone()),
                sent_questions: Some(Value::Object(merged.questions.clone())),
                batch_ids: Some(merged.batch_ids.clone()),
                margin: Some(json!({"id": first, "kind": "top", "threshold": 0.6, "value": 0.86, "margin": 0.26})),
                answers: answers_for(&questions),
                questions,
                action: action.into(),
                reason: format!("top >= 0.6 → {action}"),
                latency_ms: 300 + step * 7,
                provider: "jev".into(),
                model: Some("jev-1.13.0".into()),
                ..DecisionEvent::default()
            }
        })
        .collect()
}

/// The decisions of one reference run, in the order the loop logs them: three steps
/// (list_dir, read_file ×2), each asking needsTool + pickTool in one request, pickInput
/// for reads, then gradeRisk, stepOk and isDone; a fourth needsTool + pickTool that picks
/// `done`; canDeliver on the draft.
fn reference_run(r: &Reference, run: u64) -> Vec<DecisionEvent> {
    let (needs, pick, input, risk, ok, done, deliver) = (0, 1, 2, 3, 4, 5, 6);
    let tools = ["list_dir", "read_file", "read_file"];
    let mut events = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let step = index as u64 + 1;
        let mut ctx = loop_ctx(run, step);
        events.extend(request_events(r, &ctx, &[needs, pick], step, "call"));
        if *tool == "read_file" {
            events.extend(request_events(r, &ctx, &[input], step, "use"));
        }
        ctx.insert("lastTool".into(), json!(tool));
        events.extend(request_events(r, &ctx, &[risk], step, "auto"));
        let after = loop_ctx(run, step + 1);
        events.extend(request_events(r, &after, &[ok], step, "continue"));
        events.extend(request_events(r, &after, &[done], step, "keep_going"));
    }
    let mut last = loop_ctx(run, tools.len() as u64 + 1);
    events.extend(request_events(r, &last, &[needs, pick], tools.len() as u64 + 1, "call"));
    last.insert("draft".into(), json!("alpha.ts defines totalOf, beta.ts re-exports it, notes.md explains both."));
    events.extend(request_events(r, &last, &[deliver], tools.len() as u64 + 1, "deliver"));
    events
}

/// A merged pickTool decision with a long tool result: the largest record the loop writes.
fn large_event(r: &Reference) -> DecisionEvent {
    let mut ctx = full_ctx();
    ctx.insert("lastResult".into(), json!("export function totalOf(items: Order[]): number {\n  return items.reduce((sum, item) => sum + item.price * item.quantity, 0);\n}\n"));
    request_events(r, &ctx, &[0, 1], 3, "call").remove(1)
}

/// A generated log: where it was written, and its bytes.
struct Generated {
    path: PathBuf,
    bytes: Vec<u8>,
}

/// Writes `records` decision events to a fresh chained log in the temporary directory, and
/// the same events as the reference writes them (no `seq`, no `prev`) to `reference`.
fn write_logs(
    name: &str,
    reference: Option<&str>,
    records: u64,
    mut next: impl FnMut(u64) -> DecisionEvent,
) -> (Generated, Option<Generated>) {
    let path = std::env::temp_dir().join(name);
    let _ = std::fs::remove_file(&path);
    let header = LogHeader { id: "bench".into(), created_at_ms: 1_700_000_000_000, cwd: Some("/w".into()) };
    let mut log = SessionLog::create(&path, &header, FsyncPolicy::Never).unwrap();
    let mut unchained =
        String::from("{\"kind\":\"header\",\"v\":2,\"id\":\"bench\",\"createdAt\":1700000000000,\"cwd\":\"/w\"}\n");
    for index in 0..records {
        let event = next(index);
        log.append_decision(&event).unwrap();
        if reference.is_some() {
            unchained.push_str(&format!("{{\"kind\":\"event\",\"run\":0,\"at\":{},\"e\":", 1_700_000_000_000 + index));
            event.write_to(&mut unchained);
            unchained.push_str("}\n");
        }
    }
    drop(log);
    let bytes = std::fs::read(&path).unwrap();
    let reference = reference.map(|name| {
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, &unchained).unwrap();
        Generated { path, bytes: unchained.into_bytes() }
    });
    (Generated { path, bytes }, reference)
}

/// The number of records to generate (`DECISION_BENCH_RECORDS`, for memory measurements on
/// larger logs with the CLI).
fn record_count() -> u64 {
    std::env::var("DECISION_BENCH_RECORDS").ok().and_then(|n| n.parse().ok()).unwrap_or(RECORDS)
}

fn replay(c: &mut Criterion) {
    let Some(r) = reference() else { return };
    let records = record_count();
    let mut pending = Vec::new().into_iter();
    let mut run = 0;
    let (mix, reference) =
        write_logs("decision-bench-100k.jsonl", Some("decision-bench-100k-reference.jsonl"), records, |_| {
            loop {
                if let Some(event) = pending.next() {
                    return event;
                }
                pending = reference_run(&r, run).into_iter();
                run += 1;
            }
        });
    let reference = reference.unwrap();
    let large_event = large_event(&r);
    let (large, _) = write_logs("decision-bench-100k-large.jsonl", None, RECORDS.min(records), |index| DecisionEvent {
        step: index,
        ..large_event.clone()
    });
    // For instruction counts (`.ci/bench-smoke.sh`): the reference-written log replayed
    // `BENCH_PROFILE_REPLAY` times on one thread, no criterion; the difference between 1 and 0
    // is one replay.
    if profiling_replay() {
        let times = std::env::var("BENCH_PROFILE_REPLAY").ok().and_then(|n| n.parse::<u32>().ok()).unwrap_or(1);
        let options = ReplayOptions { threads: 1, ..ReplayOptions::default() };
        for _ in 0..times {
            let (report, _) = replay_with_ledger(black_box(&reference.bytes[..]), &options, &mut |_| {}).unwrap();
            assert_eq!((report.records, report.mismatch), (records, 0));
        }
        return;
    }
    let mut group = c.benchmark_group("replay");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let logs = [
        ("reference-written mix", &reference, ChainStatus::Absent),
        ("chained mix", &mix, ChainStatus::Intact),
        ("chained large records", &large, ChainStatus::Intact),
    ];
    for (label, Generated { path, bytes }, chain) in logs {
        let count = bytes.iter().filter(|&&b| b == b'\n').count() as u64 - 1;
        let average = bytes.len() as f64 / count as f64;
        eprintln!(
            "generated {} ({} bytes, {count} records, {average:.0} bytes per record)",
            path.display(),
            bytes.len()
        );
        group.throughput(Throughput::Elements(count));
        for threads in [1, cores] {
            let options = ReplayOptions { threads, ..ReplayOptions::default() };
            group.bench_function(format!("{label}, {}k records, {threads} thread(s)", count / 1000), |b| {
                // As `decision replay` reads a log: its records, chain and seals, and its approvals.
                b.iter(|| {
                    let (report, _) = replay_with_ledger(black_box(&bytes[..]), &options, &mut |_| {}).unwrap();
                    assert_eq!((report.records, report.mismatch, report.unverifiable), (count, 0, 0));
                    assert_eq!(report.chain_status(), chain);
                    report
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, frames, replay);
criterion_main!(benches);
