//! Checking and gate overrides do work linear in the input: a long block heading is not
//! copied into every diagnostic of its block (a 7 MB file took a minute when it was), and a
//! long gate list is neither compared pair by pair nor matched rule by rule against a long
//! policy. Copies are measured by the bytes allocated, which does not depend on the machine's
//! load; time with bounds far from both the linear and the quadratic figures.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
// The core itself has no clock; this test of it times the work it does.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::alloc::System;
use std::time::{Duration, Instant};

use decision_core::check::{self, CheckOptions};
use decision_core::policy::{GateError, apply_gates, compile_block, parse_gates};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes allocated while `f` runs. The test harness allocates a little on other threads
/// meanwhile; the bounds below are far above that.
fn allocated_by<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let region = Region::new(GLOBAL);
    let value = f();
    let change = region.change();
    (value, change.bytes_allocated + change.bytes_reallocated.max(0).unsigned_abs())
}

/// A block whose heading is `id_bytes` long, with `lines` lines that are each a diagnostic.
fn long_heading(id_bytes: usize, lines: usize) -> String {
    let mut source = format!("schema: decision-contract/v1\n\n## {}\n", "a".repeat(id_bytes));
    for i in 0..lines {
        source.push_str(&format!("foo{i}: bar\n"));
    }
    source
}

#[test]
fn a_long_heading_is_not_copied_into_every_diagnostic_of_its_block() {
    let source = long_heading(1 << 20, 5_000);
    let (report, bytes) = allocated_by(|| check::check(source.as_bytes(), CheckOptions::default()));
    let unknown = report.diagnostics.len() + report.omitted.total();
    assert!(unknown >= 5_000, "every line is a diagnostic: {unknown}");
    // The diagnostics kept carry the block id; those only counted do not need it.
    assert!(report.diagnostics.iter().any(|d| d.block.as_deref().is_some_and(|b| b.len() == 1 << 20)));
    assert!(bytes < 40 * source.len(), "{bytes} bytes allocated to check {} bytes", source.len());
}

/// The best of three runs of `work(n)`.
fn best_of_three(n: usize, work: &impl Fn(usize)) -> Duration {
    (0..3)
        .map(|_| {
            let started = Instant::now();
            work(n);
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Four times the input takes about four times as long (less than ten: quadratic work takes
/// sixteen). Timed, not counted, so the best of three runs of each size is compared, which a
/// busy machine slows alike.
fn assert_linear(n: usize, work: impl Fn(usize)) {
    let small = best_of_three(n, &work);
    let large = best_of_three(4 * n, &work);
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
    assert!(ratio < 10.0, "{n}: {small:?}, {}: {large:?} ({ratio:.1} times)", 4 * n);
}

#[test]
fn a_long_gate_list_is_parsed_in_linear_time() {
    let list = |n: usize| -> String { (0..n).map(|i| format!("b{i}.q=0.5\n")).collect() };
    let lists = [list(10_000), list(40_000)];
    assert_linear(10_000, |n| {
        let gates = parse_gates(&lists[usize::from(n > 10_000)]).unwrap();
        assert_eq!(gates.len(), n);
    });
    // The duplicate check still holds at the end of a long list.
    let long = list(40_000) + "b7.q[0]=0.4\n";
    assert_eq!(parse_gates(&long).unwrap_err(), GateError::Duplicate("b7.q".into()));
}

/// A block with `tiers` `>=` rules on one question, decreasing.
fn tiered(tiers: usize) -> String {
    let mut source = String::from(
        "schema: decision-contract/v1\n\n## b\nkind: mixed\nwhen: step-start —— p\n### q\nask: q\n- true — y\n- false — n\npolicy:\n",
    );
    for i in 0..tiers {
        source.push_str(&format!("  - prob:q >= 0.{:06} → a\n", 999_999 - i));
    }
    source.push_str("  - else → b\n");
    source
}

/// A gate on every tier, each lower than the rule's own threshold (the order holds).
fn every_tier(tiers: usize) -> String {
    (0..tiers).map(|i| format!("b.q[{i}]=0.{:06}\n", 899_999 - i)).collect()
}

#[test]
fn gates_on_every_tier_of_a_long_policy_are_applied_in_linear_time() {
    let contracts = [5_000, 20_000].map(|tiers| {
        let report = check::check(tiered(tiers).as_bytes(), CheckOptions::default());
        let (policy, errors) = compile_block(report.contract.blocks.first().unwrap());
        assert!(errors.is_empty());
        (report.contract.blocks, policy, every_tier(tiers))
    });
    assert_linear(5_000, |n| {
        let (blocks, policy, list) = &contracts[usize::from(n > 5_000)];
        let gated = apply_gates(blocks, std::slice::from_ref(policy), &parse_gates(list).unwrap()).unwrap();
        assert_eq!(gated[0].rules[n - 1].predicate.threshold(), Some((900_000 - n) as f64 / 1e6));
    });
    // An override that breaks the order is still found, and named by its gate.
    let (blocks, policy, list) = &contracts[0];
    let list = list.replace("b.q[3]=0.899996", "b.q[3]=0.95");
    let error = apply_gates(blocks, std::slice::from_ref(policy), &parse_gates(&list).unwrap()).unwrap_err();
    // The first gate on the question names it (as a search gate by gate would).
    let GateError::NotDecreasing { key, thresholds, .. } = error else { panic!("not the order") };
    assert_eq!((key.as_str(), thresholds.get(3)), ("b.q", Some(&0.95)));
}
