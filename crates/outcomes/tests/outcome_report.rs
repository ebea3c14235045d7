//! The out-of-band report: the fixture log gives the documented recommendations; every log
//! form is read; telemetry never alters an outcome; malformed input is a located error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_outcomes::report::{OutcomesReportBuilder, Thresholds};
use decision_outcomes::{
    EventContext, Outcome, OutcomesReport, OutcomesReportError, RecommendationKind, load_contracts, observe,
    outcome_event, report,
};
use serde_json::{Value, json};

const FIXTURE: &str = include_str!("../../../examples/outcomes/outcome-log.jsonl");

fn run(log: &str) -> OutcomesReport {
    report(log.as_bytes()).unwrap()
}

fn kinds(report: &OutcomesReport, tool: &str, method: &str) -> Vec<RecommendationKind> {
    let entry = report.tools.iter().find(|t| t.tool == tool && t.method == method).unwrap();
    entry.recommendations.iter().map(|r| r.kind).collect()
}

#[test]
fn the_fixture_log_gives_the_documented_recommendations() {
    let report = run(FIXTURE);
    assert_eq!((report.lines, report.outcome_events, report.other_lines), (19, 14, 5));
    let order: Vec<(&str, &str)> = report.tools.iter().map(|t| (t.tool.as_str(), t.method.as_str())).collect();
    assert_eq!(order, [("catalog", "find_movies"), ("news", "headlines"), ("rss", "parse"), ("web", "research")]);
    assert_eq!(kinds(&report, "catalog", "find_movies"), [RecommendationKind::ReforgeImplementation]);
    assert_eq!(kinds(&report, "news", "headlines"), [RecommendationKind::StrengthenConstraints]);
    assert_eq!(kinds(&report, "rss", "parse"), [], "the healthy control gets no recommendation");
    assert_eq!(kinds(&report, "web", "research"), [RecommendationKind::SplitBoundary]);

    let json = report.to_json();
    let tools = json["tools"].as_array().unwrap();
    let news = &tools[1];
    assert_eq!(news["calls"], 4);
    assert_eq!(news["weak_success"], 2);
    assert_eq!(news["weak_success_rate"], 0.5);
    assert_eq!(news["weak_success_flags"], json!({"empty_array_success": 1, "weak_status": 1}));
    assert_eq!(news["correction_linked_weak_success"], 1);
    assert_eq!(news["corrections"], 1);
    let evidence = &news["recommendations"][0]["evidence"];
    assert_eq!(news["recommendations"][0]["advisory"], true);
    assert_eq!(evidence["empty_arrays"], json!({"/headlines": 1}));
    assert_eq!(evidence["weak_statuses"], json!({"success_no_parse": 1}));
    assert_eq!(evidence["lines"], json!([{"line": 3, "call_id": "n1"}, {"line": 5, "call_id": "n3"}]));
    assert!(evidence["suggested_constraints"][0].as_str().unwrap().contains("`properties.headlines`"));

    let catalog = &tools[0];
    assert_eq!(catalog["contract"], json!({"held": 1, "violated": 3, "pass_rate": 0.25}));
    let evidence = &catalog["recommendations"][0]["evidence"];
    assert_eq!(evidence["mismatches"], json!({"min_items_violation": 2, "missing_required_key": 1}));
    assert_eq!(evidence["violation_paths"], json!({"/movies": 2, "/movies/0": 1}));
    assert_eq!(evidence["violations"].as_array().unwrap().len(), 3);

    let web = &tools[3];
    assert_eq!(web["wrong_tool_boundary"], 2);
    let evidence = &web["recommendations"][0]["evidence"];
    assert_eq!(evidence["boundary_axes"], json!({"fetch": 2, "summarize": 2}));
    assert_eq!(evidence["suggested_splits"], json!({"web.fetch + text.summarize": 2}));

    let rss = &tools[2];
    assert_eq!((rss["low_utility"].as_u64(), rss["errors"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn the_report_is_deterministic() {
    assert_eq!(run(FIXTURE).to_json().to_string(), run(FIXTURE).to_json().to_string());
    assert_eq!(run(FIXTURE).to_text(), run(FIXTURE).to_text());
}

fn ok_event(extra: Value, value: Value) -> String {
    let mut event = json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "value": value}});
    for (key, member) in extra.as_object().unwrap() {
        event[key] = member.clone();
    }
    event.to_string()
}

#[test]
fn all_three_line_forms_are_read_and_extra_fields_tolerated() {
    let inner = json!({"type": "tool:outcome", "tool": "t", "method": "m", "extra": {"anything": 1},
        "outcome": {"status": "ok", "value": [1]}});
    let log = [
        json!({"kind": "header", "v": 2, "id": "x", "createdAt": 0}).to_string(),
        json!({"kind": "event", "run": 0, "at": 5, "hash": "abc", "e": inner}).to_string(),
        json!({"kind": "tool:outcome", "tool": "t", "method": "m", "seq": 9, "outcome": {"status": "ok", "value": [2]}})
            .to_string(),
        json!({"type": "tool:outcome", "tool": "t", "method": "m", "outcome": {"status": "ok", "value": [3]}}).to_string(),
        json!({"outcome": {"status": "ok", "tool": "t", "method": "m", "value": [4]}}).to_string(),
        json!({"kind": "event", "run": 0, "at": 6, "e": {"type": "tool:call", "step": 1, "tool": "t"}}).to_string(),
        json!({"kind": "turn", "task": "x", "answer": "y", "at": 1}).to_string(),
        String::new(),
    ]
    .join("\n");
    let report = run(&log);
    assert_eq!((report.outcome_events, report.other_lines, report.lines), (4, 3, 7));
    assert_eq!(report.tools[0].stats.calls, 4);
}

#[test]
fn corrections_link_the_same_tool_and_method_in_the_same_trace_within_the_window() {
    let weak = json!({"status": "success", "items": []});
    let good = json!({"status": "success", "items": [1]});
    let log = [
        ok_event(json!({"trace_id": "a", "call_id": "1", "at": 0}), weak.clone()),
        ok_event(json!({"trace_id": "a", "call_id": "2", "at": 180_000}), weak.clone()),
        ok_event(json!({"trace_id": "a", "call_id": "3", "at": 200_000}), good.clone()),
        ok_event(json!({"trace_id": "b", "call_id": "4", "at": 200_001}), good.clone()),
        ok_event(json!({"trace_id": "a", "call_id": "5", "at": 500_000}), good),
    ]
    .join("\n");
    let report = run(&log);
    let stats = &report.tools[0].stats;
    assert_eq!(stats.corrections, 2, "2 re-asks 1 (at the window's edge), 3 re-asks 2");
    assert_eq!(stats.correction_linked_weak_success, 2);
    assert_eq!(stats.weak_success, 2);
    let pairs: Vec<(usize, usize)> = stats.correction_evidence.iter().map(|(w, c)| (w.line, c.line)).collect();
    assert_eq!(pairs, [(1, 2), (2, 3)]);
    assert_eq!(
        kinds(&report, "t", "m"),
        [RecommendationKind::StrengthenConstraints, RecommendationKind::ReforgeImplementation]
    );
}

#[test]
fn thresholds_decide_each_recommendation() {
    let weak = json!({"items": []});
    let good = json!({"items": [1]});
    // One weak success in five: below the count threshold.
    let mut lines: Vec<String> = (0..4).map(|_| ok_event(json!({}), good.clone())).collect();
    lines.push(ok_event(json!({}), weak.clone()));
    assert_eq!(kinds(&run(&lines.join("\n")), "t", "m"), []);
    // Two of five: 40% ≥ 20% and 2 ≥ 2.
    lines.push(ok_event(json!({}), weak.clone()));
    assert_eq!(kinds(&run(&lines.join("\n")), "t", "m"), [RecommendationKind::StrengthenConstraints]);
    // Two of twenty: 10% < 20%.
    let mut many: Vec<String> = (0..18).map(|_| ok_event(json!({}), good.clone())).collect();
    many.push(ok_event(json!({}), weak.clone()));
    many.push(ok_event(json!({}), weak));
    assert_eq!(kinds(&run(&many.join("\n")), "t", "m"), []);
    // Contract pass rate: 2 of 3 = 66.7% < 80% → re-forge; 4 of 5 = 80% → not.
    let held = ok_event(json!({"contract": "held"}), good.clone());
    let violated = ok_event(json!({"contract": "violated"}), good);
    let log = [held.clone(), held.clone(), violated.clone()].join("\n");
    assert_eq!(kinds(&run(&log), "t", "m"), [RecommendationKind::ReforgeImplementation]);
    let log = [held.clone(), held.clone(), held.clone(), held, violated].join("\n");
    assert_eq!(kinds(&run(&log), "t", "m"), []);
    // One boundary referral is not enough; two are.
    let boundary =
        json!({"tool": "t", "method": "m", "outcome": {"status": "error", "error_type": "wrong_tool_boundary"}})
            .to_string();
    assert_eq!(kinds(&run(&boundary), "t", "m"), []);
    let log = [boundary.clone(), boundary].join("\n");
    assert_eq!(kinds(&run(&log), "t", "m"), [RecommendationKind::SplitBoundary]);
    // Custom thresholds are honoured.
    let mut builder =
        OutcomesReportBuilder::new(Thresholds { boundary_referrals_min: 3, ..Thresholds::default() }, 1_000);
    builder.read(log.as_bytes()).unwrap();
    assert!(builder.finish().tools[0].recommendations.is_empty());
}

#[test]
fn a_contract_violation_outcome_counts_as_violated_without_the_field() {
    let log = json!({"tool": "t", "method": "m", "outcome": {"status": "error", "error_type": "contract_violation",
        "metadata": {"mismatch": "empty_value", "path": "/title"}}})
    .to_string();
    let report = run(&log);
    let stats = &report.tools[0].stats;
    assert_eq!((stats.contract_held, stats.contract_violated), (0, 1));
    assert_eq!(stats.mismatches.get("empty_value"), Some(&1));
}

#[test]
fn malformed_lines_are_located_errors_but_a_torn_tail_is_tolerated() {
    let good = ok_event(json!({}), json!([1]));
    let cases = [
        (format!("{good}\nnot json\n{good}"), 2, "not JSON"),
        (format!("{good}\n{}", json!({"kind": "tool:outcome", "tool": "t", "method": "m"})), 2, "needs `outcome`"),
        (format!("{}", json!({"outcome": {"status": "ok", "value": 1}})), 1, "needs `tool`"),
        (
            format!("{}", json!({"tool": "t", "method": "m", "outcome": {"status": "ok", "items": []}})),
            1,
            "`outcome/items`",
        ),
        (
            format!("{}", json!({"tool": "t", "method": "m", "at": -1, "outcome": {"status": "ok", "value": 1}})),
            1,
            "`at`",
        ),
        (
            format!(
                "{}",
                json!({"tool": "t", "method": "m", "contract": "maybe", "outcome": {"status": "ok", "value": 1}})
            ),
            1,
            "`contract`",
        ),
        (
            format!(
                "{}",
                json!({"tool": "t", "method": "m", "weak_success": ["odd"], "outcome": {"status": "ok", "value": 1}})
            ),
            1,
            "unknown weak-success flag",
        ),
    ];
    for (log, line, message) in cases {
        match report(log.as_bytes()) {
            Err(OutcomesReportError::Line { line: at, message: text }) => {
                assert_eq!(at, line, "{log}");
                assert!(text.contains(message), "{text} should mention {message}");
            }
            other => panic!("{log}: expected a line error, got {other:?}"),
        }
    }
    let torn = format!("{good}\n{good}\n{{\"tool\":\"t\",\"meth");
    let report = run(&torn);
    assert!(report.torn_tail);
    assert_eq!(report.outcome_events, 2);
}

#[test]
fn telemetry_never_alters_an_outcome_and_the_recorded_event_round_trips() {
    let set = load_contracts(include_str!("../../../examples/outcomes/contracts.json")).unwrap();
    let outcome = Outcome::ok(json!({"status": "success_no_parse", "headlines": []}));
    let validated = set.validate("news", "headlines", outcome.clone());
    let observed = observe(&validated.outcome);
    assert_eq!(validated.outcome, outcome, "weak success stays ok");
    assert_eq!(observed.flags.iter().map(|f| f.as_str()).collect::<Vec<_>>(), ["weak_status"]);
    let context = EventContext { trace_id: Some("t"), call_id: Some("c"), at_ms: Some(10), depth: Some(0) };
    let event = outcome_event("news", "headlines", &validated, &context);
    assert_eq!(
        event,
        json!({"type": "tool:outcome", "tool": "news", "method": "headlines", "trace_id": "t", "call_id": "c",
               "at": 10, "depth": 0, "contract": "held", "weak_success": ["weak_status"],
               "outcome": {"status": "ok", "value": {"status": "success_no_parse", "headlines": []}}})
    );
    // A violation is recorded as the deterministic step result it is.
    let empty = Outcome::ok(json!({"status": "success", "movies": []}));
    let violated = set.validate("catalog", "find_movies", empty);
    let event = outcome_event("catalog", "find_movies", &violated, &EventContext::default());
    assert_eq!(event["contract"], "violated");
    assert_eq!(event["outcome"]["error_type"], "contract_violation");
    // Both, wrapped as session-log events, read back into the report.
    let log = [
        json!({"kind": "event", "run": 0, "at": 1, "e": outcome_event("news", "headlines", &validated, &context)}),
        json!({"kind": "event", "run": 0, "at": 2, "e": event}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let report = run(&log);
    assert_eq!(report.outcome_events, 2);
    assert_eq!(report.tools[0].stats.contract_violated, 1);
    assert_eq!(report.tools[1].stats.weak_success, 1);
}
