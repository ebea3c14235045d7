//! The package's functions natively, on the inputs `js/bench/bench.js` gives them in Node,
//! so the two figures are the same work: `check` of the reference file (reference profile),
//! `frame` of one block (parse + frame + both digests), the two digests alone, `evaluate` of
//! the support-triage example's `refund_risk` answers (parse included) and `verifyLog` of its
//! session log.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decision_wasm::surface;

/// As in the `decision` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REFERENCE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/jevloop/DECISION.md"));
const STATE: &str = include_str!("../../../js/test/fixtures/coding-state.json");
const TRIAGE: &str = include_str!("../../../examples/support-triage/DECISION.md");
const REFUND_ANSWERS: &str = include_str!("../../../examples/support-triage/answers-refund_risk.json");
const SESSION: &str = include_str!("../../../examples/support-triage/session.jsonl");

fn bench(c: &mut Criterion) {
    let check_options = r#"{"profile":"reference"}"#;
    let frame_options = format!(r#"{{"block":"pick_tool","profile":"reference","state":{STATE}}}"#);
    assert!(surface::check(REFERENCE.as_bytes(), check_options).unwrap()["ok"] == true);
    let doc = surface::frame(REFERENCE.as_bytes(), &frame_options).unwrap();
    let node = doc["frame"]["node"].as_str().unwrap().to_owned();
    let state = doc["frame"]["state"].to_string();
    let questions = doc["questions"].to_string();

    c.bench_function("surface/check reference", |b| {
        b.iter(|| surface::check(black_box(REFERENCE.as_bytes()), check_options).unwrap())
    });
    c.bench_function("surface/frame pick_tool", |b| {
        b.iter(|| surface::frame(black_box(REFERENCE.as_bytes()), &frame_options).unwrap())
    });
    let evaluate_options = format!(r#"{{"block":"refund_risk","answers":{REFUND_ANSWERS}}}"#);
    assert!(surface::evaluate(TRIAGE.as_bytes(), &evaluate_options).unwrap()["valid"] == true);
    c.bench_function("surface/evaluate refund_risk", |b| {
        b.iter(|| surface::evaluate(black_box(TRIAGE.as_bytes()), &evaluate_options).unwrap())
    });
    assert!(surface::verify_log(SESSION.as_bytes(), "{}").unwrap()["mismatch"] == 0);
    c.bench_function("surface/verifyLog support-triage session", |b| {
        b.iter(|| surface::verify_log(black_box(SESSION.as_bytes()), "{}").unwrap())
    });
    c.bench_function("surface/digests pick_tool", |b| {
        b.iter(|| {
            let frame = surface::digest_frame(&node, black_box(state.as_bytes())).unwrap();
            surface::digest_request(frame.as_str().unwrap(), black_box(questions.as_bytes())).unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
