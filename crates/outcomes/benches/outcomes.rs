//! Tool outcomes: validations per second for a typical deliverable (an object with a required
//! array of objects), and the report over 1,000,000 generated outcome events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::io::BufReader;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decision_outcomes::{Outcome, load_contracts, report};
use serde_json::json;

const CONTRACTS: &str = r#"{"contracts": [{"tool": "catalog", "method": "find_movies", "deliverable": {
  "type": "object", "required": ["status", "movies"],
  "properties": {
    "status": {"type": "string", "non_empty": true},
    "movies": {"type": "array", "min_items": 1, "items": {
      "type": "object", "required": ["title", "showtimes"],
      "properties": {
        "title": {"type": "string", "non_empty": true},
        "showtimes": {"type": "array", "items": {"type": "string"}},
        "rating": {"type": "string", "enum": ["G", "PG", "PG-13", "R"]}}}}}}}]}"#;

fn movies(count: usize) -> serde_json::Value {
    let movies: Vec<_> = (0..count)
        .map(|index| json!({"title": format!("Movie {index}"), "showtimes": ["19:10", "21:40"], "rating": "PG"}))
        .collect();
    json!({"status": "success", "movies": movies})
}

fn validation(c: &mut Criterion) {
    let set = load_contracts(CONTRACTS).unwrap();
    let contract = set.get("catalog", "find_movies").unwrap().clone();
    let deliverable = contract.deliverable.clone().unwrap();
    let mut group = c.benchmark_group("outcomes/validate");
    group.throughput(Throughput::Elements(1));
    for count in [3, 10] {
        let value = movies(count);
        group.bench_function(format!("deliverable check, {count} movies"), |b| {
            b.iter(|| black_box(deliverable.check(black_box(&value)).is_ok()));
        });
        let outcome = Outcome::ok(value.clone());
        group.bench_function(format!("validate outcome (moved through), {count} movies"), |b| {
            b.iter_batched(
                || outcome.clone(),
                |outcome| black_box(contract.validate(outcome)),
                criterion::BatchSize::SmallInput,
            );
        });
    }
    let empty = movies(0);
    group.bench_function("deliverable check, violation (empty movies)", |b| {
        b.iter(|| black_box(deliverable.check(black_box(&empty)).is_err()));
    });
    group.finish();
}

/// A realistic mix: mostly healthy calls, weak successes, re-asks, violations and referrals,
/// in session-log envelopes and flat events.
fn event_log(events: usize) -> String {
    let mut log = String::with_capacity(events * 230);
    let tools = [("catalog", "find_movies"), ("news", "headlines"), ("web", "research"), ("rss", "parse")];
    for index in 0..events {
        let (tool, method) = tools[index % tools.len()];
        let trace = index / 16;
        let at = 1_767_225_600_000u64 + index as u64 * 250;
        let outcome = match index % 10 {
            0 => json!({"status": "ok", "value": {"status": "success", "movies": []}}),
            1 => json!({"status": "ok", "value": {"status": "success_no_parse", "movies": []}}),
            2 => json!({"status": "error", "error_type": "wrong_tool_boundary", "error_message": "split",
                        "metadata": {"boundary_axes": ["fetch", "summarize"]}}),
            3 => json!({"status": "error", "error_type": "contract_violation", "error_message": "min items",
                        "metadata": {"mismatch": "min_items_violation", "path": "/movies"}}),
            _ => {
                json!({"status": "ok", "value": {"status": "success", "movies": [{"title": "A", "showtimes": ["19:10"]}]}})
            }
        };
        let event = json!({"type": "tool:outcome", "tool": tool, "method": method, "trace_id": format!("t{trace}"),
            "call_id": format!("c{index}"), "at": at, "contract": if index % 10 == 3 { "violated" } else { "held" },
            "outcome": outcome});
        let line = if index % 2 == 0 { json!({"kind": "event", "run": 0, "at": at, "e": event}) } else { event };
        log.push_str(&line.to_string());
        log.push('\n');
    }
    log
}

fn reporting(c: &mut Criterion) {
    let log = event_log(1_000_000);
    let mut group = c.benchmark_group("outcomes/report");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(1_000_000));
    group.bench_function("1,000,000 events", |b| {
        b.iter(|| black_box(report(black_box(log.as_bytes())).unwrap().tools.len()));
    });
    // As `decision outcomes report` reads a file: through a buffered reader, so that some
    // lines straddle two fills of its buffer.
    group.bench_function("1,000,000 events, 8 KiB buffered reader", |b| {
        b.iter(|| black_box(report(BufReader::new(black_box(log.as_bytes()))).unwrap().tools.len()));
    });
    group.finish();
}

criterion_group!(benches, validation, reporting);
criterion_main!(benches);
