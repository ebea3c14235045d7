//! The action semantics table (seed §3, `vocab::ACTION_SEMANTICS`) checked against the
//! running host: the loop is driven once per action, and what actually happened after the
//! action — whether the tool loop ended, whether another model call followed, whether the
//! decision carried evidence, how many times it retried — is compared with the table's row.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::sync::Arc;

use decision_core::vocab::{ACTIONS, action_semantics};
use host_common::{Options, Outcome, Rules, ScriptedHuman, TempDir, choose, level, noul, run};
use serde_json::Value;

/// What happened after the first decision with `action`.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    ends_tool_loop: bool,
    more_model_calls: bool,
    needs_evidence: bool,
    retries: u8,
}

fn observe(out: &Outcome, action: &str) -> Observed {
    let at = out
        .events
        .iter()
        .position(|e| e["type"] == "decision" && e["action"] == action)
        .unwrap_or_else(|| panic!("no `{action}` decision in {:?}", out.decisions()));
    let after = &out.events[at + 1..];
    // A merged request's partner is recorded right after: it is not a later model call.
    let batch = out.events[at]["batchIds"].clone();
    let later =
        |e: &&Value| !(e["type"] == "decision" && e["batchIds"] == batch && e["step"] == out.events[at]["step"]);
    Observed {
        ends_tool_loop: !after.iter().any(|e| e["type"] == "tool:call"),
        more_model_calls: after.iter().filter(later).any(|e| e["type"] == "decision" || e["type"] == "generate"),
        needs_evidence: out.events[at].get("evidence").is_some(),
        retries: after
            .iter()
            .filter(|e| e["type"] == "generate" && e["kind"].as_str().unwrap().starts_with("generate/revise"))
            .count() as u8,
    }
}

fn expected(action: &str) -> Observed {
    let row = action_semantics(action).unwrap();
    Observed {
        ends_tool_loop: row.ends_tool_loop,
        more_model_calls: row.more_model_calls,
        needs_evidence: row.needs_evidence,
        retries: row.retries,
    }
}

/// Two tool steps (list, read), then finish and deliver. Overrides change one answer.
fn drive(
    tag: &str,
    options: Options,
    over: impl Fn(&str, &decision_protocol::ask::WireQuestion, usize) -> Option<Value> + Send + Sync + 'static,
) -> (TempDir, Outcome) {
    let dir = TempDir::new(tag);
    let ws = dir.workspace(&[("a.txt", "alpha"), ("b.txt", "beta")]);
    let provider = Rules::new(move |id, q, _, n| {
        over(id, q, n).or_else(|| match id {
            "needs_tool" => Some(noul(0.9)),
            "tool" => Some(choose(q, if n == 0 { "list_dir" } else { "read_file" }, 0.9)),
            "file" => Some(choose(q, "a.txt", 0.9)),
            "risk" => Some(level(q, 0)),
            "needs_auth" => Some(noul(0.1)),
            "ok" => Some(noul(0.9)),
            "done" => Some(noul(if n == 0 { 0.1 } else { 0.9 })),
            "deliverable" => Some(noul(0.9)),
            "unsupported" => Some(noul(0.1)),
            _ => None,
        })
    });
    let out = run(&dir, "read a.txt", &ws, Arc::new(provider), options);
    assert!(out.result.is_ok(), "{:?}", out.result.as_ref().err());
    (dir, out)
}

fn scenario(action: &str) -> (TempDir, Outcome) {
    let base = Options::default;
    match action {
        // The default drive: use_tool, call, use, auto, continue, keep_going, finish, deliver.
        "use_tool" | "call" | "use" | "auto" | "continue" | "keep_going" | "finish" | "deliver" => {
            drive(action, base(), |_, _, _| None)
        }
        "answer" => drive(action, base(), |id, _, _| (id == "needs_tool").then(|| noul(0.1))),
        "auto_audit" => drive(action, base(), |id, q, _| (id == "risk").then(|| level(q, 1))),
        "ask_human" => drive(action, base(), |id, q, _| (id == "risk").then(|| level(q, 3))),
        "stop" => drive(action, base(), |id, _, _| (id == "ok").then(|| noul(0.1))),
        "revise" => drive(action, base(), |id, _, _| (id == "deliverable").then(|| noul(0.2))),
        // pick_tool's chosen tool below the 0.6 gate.
        "escalate" => drive(action, base(), |id, q, _| (id == "tool").then(|| choose(q, "list_dir", 0.5))),
        other => panic!("no scenario for {other}"),
    }
}

#[test]
fn every_action_behaves_as_its_row_says() {
    for action in ACTIONS {
        let (_dir, out) = scenario(action);
        assert_eq!(observe(&out, action), expected(action), "action `{action}`: {:?}", out.path());
    }
}

#[test]
fn stop_and_escalate_still_generate_an_honest_report() {
    for (action, halt) in [("stop", "step_failed"), ("escalate", "tool_unclear")] {
        let (_dir, out) = scenario(action);
        let s = out.summary();
        assert_eq!(s.halt.split('+').next(), Some(halt));
        assert_eq!(out.of_type("generate").len(), 1, "{action}: exactly one generation");
        assert!(s.answer.contains(halt), "{action}: the report says why the loop ended: {}", s.answer);
    }
}

#[test]
fn only_deliver_ends_the_run_without_another_model_call() {
    let (_dir, out) = scenario("deliver");
    let last_decision = out.events.iter().rposition(|e| e["type"] == "decision").unwrap();
    assert_eq!(out.events[last_decision]["action"], "deliver");
    let after: Vec<&str> = out.events[last_decision + 1..].iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(after, ["transition", "run:end"]);
    assert!(out.summary().delivered);
}

#[test]
fn revise_retries_exactly_once() {
    let (_dir, out) = scenario("revise");
    let gates: Vec<String> = out.decisions().into_iter().filter(|d| d.starts_with("can_deliver")).collect();
    assert_eq!(gates, ["can_deliver→revise", "can_deliver→revise"]);
    assert_eq!(out.of_type("generate").len(), 2, "one generation and one revision");
    assert_eq!(out.summary().halt, "task_done+revise");
    assert!(!out.summary().delivered);
    // A revision that passes the gate is delivered with the halt unchanged.
    let (_dir, out) = drive("revise-then-deliver", Options::default(), |id, _, n| {
        (id == "deliverable").then(|| noul(if n == 0 { 0.2 } else { 0.9 }))
    });
    assert_eq!(out.summary().halt, "task_done");
    assert!(out.summary().delivered);
    assert!(out.summary().answer.contains("Revision requested by the delivery gate"));
}

#[test]
fn ask_human_refused_ends_the_loop_and_approved_continues_as_auto() {
    let (_dir, refused) = scenario("ask_human");
    assert_eq!(refused.summary().halt.split('+').next(), Some("denied"));
    assert!(refused.of_type("tool:call").is_empty());
    let human = ScriptedHuman { approve: true, ..ScriptedHuman::default() };
    let (_dir, approved) =
        drive("ask-human-approved", Options { human: Box::new(human), ..Options::default() }, |id, q, _| {
            (id == "risk").then(|| level(q, 3))
        });
    assert_eq!(approved.of_type("tool:call").len(), 2, "both calls ran after approval");
    assert_eq!(approved.summary().halt, "task_done");
    let (_dir, audited) = scenario("auto_audit");
    let audit = std::fs::read_to_string(&audited.audit).unwrap();
    assert_eq!(audit.lines().count(), 2, "one audit record per audited call");
}
