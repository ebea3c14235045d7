//! The external host runs, deterministically, after its capability check; its report
//! checks against its own code with the runtime's checker; and it refuses a contract it
//! cannot carry before dispatching anything.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_external_host::{GRAPH, TERMINAL_STATES, capabilities, demo, drive, report};
use decision_runtime::graph::report::{HostDescription, check};
use decision_runtime::graph::{GraphShape, NodeKind, NodeShape};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/jevloop/");

fn shared(name: &str) -> Vec<u8> {
    std::fs::read(format!("{SHARED}{name}")).unwrap()
}

#[test]
fn the_probe_runs_and_is_deterministic() {
    let first = demo(&shared("DECISION.md"), &shared("custom-graph.DECISION.md")).unwrap();
    let second = demo(&shared("DECISION.md"), &shared("custom-graph.DECISION.md")).unwrap();
    assert_eq!(first, second);
    assert!(first.contains("  needs_tool: fields=6, action=use_tool, rule=0"), "{first}");
    assert!(first.contains("  pick_tool: fields=6, action=call, rule=0"), "{first}");
    assert!(first.contains("  step_ok: fields=4, action=continue, rule=0"), "{first}");
    assert!(first.contains("  is_done: fields=3, action=finish, rule=0"), "{first}");
    assert!(first.contains("-retry-> inspect_repository"));
    assert!(first.contains("classify_issue -escalate-> request_review -approved-> done"));
    assert!(first.ends_with("external host: adapter conformance probe passed"));
}

#[test]
fn a_missing_transition_is_an_error() {
    assert!(drive("classify_issue", &["inspect", "deploy"]).unwrap_err().contains("no transition for `deploy`"));
    assert!(drive("classify_issue", &["inspect"]).unwrap_err().contains("not a terminal state"));
}

#[test]
fn an_unsupported_contract_is_refused_before_dispatch() {
    let reference = String::from_utf8(shared("DECISION.md")).unwrap().replace("after-tool", "host:after-tool");
    let err = demo(reference.as_bytes(), &shared("custom-graph.DECISION.md")).unwrap_err();
    assert!(err.starts_with("refusing to dispatch"), "{err}");
    assert!(err.contains("host:after-tool"), "{err}");
}

fn description() -> HostDescription {
    let caps = capabilities();
    let mut d = HostDescription::from_capabilities(
        "examples/external-host/src/lib.rs",
        &caps,
        GraphShape {
            start: "classify_issue".into(),
            nodes: GRAPH
                .iter()
                .map(|(id, edges)| NodeShape {
                    id: (*id).into(),
                    kind: NodeKind::Host,
                    edges: edges.iter().map(|(l, t)| ((*l).into(), (*t).into())).collect(),
                    starts_step: false,
                    evidence: None,
                })
                .collect(),
            terminals: TERMINAL_STATES.iter().map(|t| (*t).into()).collect(),
        },
    );
    d.dispatch_after_capability_check = true;
    d
}

#[test]
fn its_report_and_the_fixture_report_check_against_its_code() {
    let contracts = vec![
        ("DECISION.md".into(), shared("DECISION.md")),
        ("custom-graph".into(), shared("custom-graph.DECISION.md")),
    ];
    let own = report().to_string();
    assert_eq!(check("own", &own, &description(), &contracts), Vec::<String>::new());
    let fixture = String::from_utf8(shared("external-host.capabilities.json")).unwrap();
    assert_eq!(check("fixture", &fixture, &description(), &contracts), Vec::<String>::new());
}
