//! Frames and replay:
//! - compile + frame digest + request digest for the seven reference frames (target ≤ 3 µs
//!   per frame);
//! - replay of a generated 100,000-record log of about 2.8 KB records, parsing included
//!   (target ≥ 250,000 records/s on one core), on one thread and on every core.
//!
//! The generated log is written to the temporary directory as
//! `decision-bench-100k.jsonl` and left there for memory measurements with the CLI.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
#![allow(clippy::disallowed_methods)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decision_core::digest::request_digest;
use decision_runtime::ask::wire_question;
use decision_runtime::frame::{
    FrameSpec, HostCells, Mode, Projections, compile_frame, merge_requests, reference_node_id,
};
use decision_runtime::log::{DecisionEvent, FsyncPolicy, LogHeader, ReplayOptions, SessionLog, replay_reader};
use serde_json::{Map, Value, json};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/jevloop/DECISION.md");
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

fn reference() -> Reference {
    let contract = decision_core::syntax::parse(&std::fs::read(FIXTURE).unwrap()).contract;
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
    Reference { specs, cells, projections }
}

fn frames(c: &mut Criterion) {
    let r = reference();
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

/// A merged pickTool decision as the reference loop logs it, padded to about 2.8 KB.
fn sample_event(r: &Reference) -> DecisionEvent {
    let mut ctx = full_ctx();
    ctx.insert("lastResult".into(), json!("export function totalOf(items: Order[]): number {\n  return items.reduce((sum, item) => sum + item.price * item.quantity, 0);\n}\n"));
    let compile = |i: usize| compile_frame(&r.specs[i].0, &ctx, &r.cells, &r.projections, Mode::Reference);
    let (needs, pick) = (compile(0), compile(1));
    let merged = merge_requests(&[(&needs, &r.specs[0].1), (&pick, &r.specs[1].1)]).unwrap();
    DecisionEvent {
        step: 3,
        id: pick.node.clone(),
        state: merged.state.clone(),
        frame: Some(pick.to_value()),
        request_digest: Some(merged.request_digest.clone()),
        sent_frame_digest: Some(merged.sent_frame_digest.clone()),
        sent_questions: Some(Value::Object(merged.questions.clone())),
        batch_ids: Some(merged.batch_ids.clone()),
        questions: r.specs[1].1.clone(),
        answers: json!({"tool": {"type": "choice", "choice": "write_file", "probabilities": {"write_file": 0.91, "done": 0.09}, "confidence": 0.62}}),
        action: "call".into(),
        reason: "top >= 0.6 → call".into(),
        latency_ms: 388,
        provider: "jev".into(),
        model: Some("jev-1.13.0".into()),
        ..DecisionEvent::default()
    }
}

fn generated_log(r: &Reference) -> (PathBuf, Vec<u8>) {
    let path = std::env::temp_dir().join("decision-bench-100k.jsonl");
    let _ = std::fs::remove_file(&path);
    let header = LogHeader { id: "bench".into(), created_at_ms: 1_700_000_000_000, cwd: Some("/w".into()) };
    let mut log = SessionLog::create(&path, &header, FsyncPolicy::Never).unwrap();
    let mut event = sample_event(r);
    for step in 0..RECORDS {
        event.step = step;
        log.append_decision(&event).unwrap();
    }
    drop(log);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

fn replay(c: &mut Criterion) {
    let r = reference();
    let (path, bytes) = generated_log(&r);
    let average = bytes.len() as f64 / RECORDS as f64;
    eprintln!("generated {} ({} bytes, {average:.0} bytes per record)", path.display(), bytes.len());
    let mut group = c.benchmark_group("replay");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(RECORDS));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for threads in [1, cores] {
        let options = ReplayOptions { threads, ..ReplayOptions::default() };
        group.bench_function(format!("100k records, {threads} thread(s)"), |b| {
            b.iter(|| {
                let report = replay_reader(black_box(&bytes[..]), &options, &mut |_| {}).unwrap();
                assert_eq!(report.partial, RECORDS);
                report
            });
        });
    }
    group.finish();
}

criterion_group!(benches, frames, replay);
criterion_main!(benches);
