//! The external host runs, deterministically, after its capability check, on the contracts
//! the repository ships; its report (and the `capabilities.json` written from it) checks
//! against its own code with the runtime's checker; it refuses a contract it cannot carry
//! before dispatching anything. With the reference files present, the same probe and report
//! check run on the reference's contracts and capability report too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

#[path = "../../../crates/core/tests/reference/mod.rs"]
mod reference;

use decision_external_host::{GRAPH, TERMINAL_STATES, capabilities, demo, drive, report};
use decision_runtime::graph::report::{HostDescription, check};
use decision_runtime::graph::{GraphShape, NodeKind, NodeShape};

/// The bundled coding-agent contract: the four local blocks.
const LOCAL: &str = include_str!("../../coding-agent/DECISION.md");
/// This host's own issue-triage contract.
const TRIAGE: &str = include_str!("../triage.DECISION.md");
/// This host's capability report, as shipped.
const CAPABILITIES: &str = include_str!("../capabilities.json");

/// A reference fixture, or `None` (after a printed skip line) without the reference files.
fn fixture(name: &str) -> Option<&'static str> {
    reference::text(&format!("fixtures/jevloop/{name}"))
}

fn assert_probe_output(text: &str) {
    assert!(text.contains("  needs_tool: fields=6, action=use_tool, rule=0"), "{text}");
    assert!(text.contains("  pick_tool: fields=6, action=call, rule=0"), "{text}");
    assert!(text.contains("  step_ok: fields=4, action=continue, rule=0"), "{text}");
    assert!(text.contains("  is_done: fields=3, action=finish, rule=0"), "{text}");
    assert!(text.contains("-retry-> inspect_repository"));
    assert!(text.contains("classify_issue -escalate-> request_review -approved-> done"));
    assert!(text.ends_with("external host: adapter conformance probe passed"));
}

#[test]
fn the_probe_runs_on_the_shipped_contracts_and_is_deterministic() {
    let first = demo(LOCAL.as_bytes(), TRIAGE.as_bytes()).unwrap();
    assert_eq!(first, demo(LOCAL.as_bytes(), TRIAGE.as_bytes()).unwrap());
    assert_probe_output(&first);
}

#[test]
fn the_probe_runs_on_the_reference_contracts() {
    let (Some(local), Some(custom)) = (fixture("DECISION.md"), fixture("custom-graph.DECISION.md")) else { return };
    let text = demo(local.as_bytes(), custom.as_bytes()).unwrap();
    assert_probe_output(&text);
    // The reference's local contract with this host's own triage contract, and the reverse.
    assert_probe_output(&demo(local.as_bytes(), TRIAGE.as_bytes()).unwrap());
    assert_probe_output(&demo(LOCAL.as_bytes(), custom.as_bytes()).unwrap());
}

#[test]
fn the_default_command_runs_from_the_repository_alone() {
    // Run from another directory: the shipped contracts are built into the binary.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_decision-external-host"))
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_probe_output(String::from_utf8(out.stdout).unwrap().trim_end());
    // Contracts given on the command line are read from there; a missing one is an error.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_decision-external-host"))
        .args(["/nonexistent/DECISION.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/DECISION.md"));
}

#[test]
fn a_missing_transition_is_an_error() {
    assert!(drive("classify_issue", &["inspect", "deploy"]).unwrap_err().contains("no transition for `deploy`"));
    assert!(drive("classify_issue", &["inspect"]).unwrap_err().contains("not a terminal state"));
}

#[test]
fn an_unsupported_contract_is_refused_before_dispatch() {
    let local = LOCAL.replace("after-tool", "host:after-tool");
    let err = demo(local.as_bytes(), TRIAGE.as_bytes()).unwrap_err();
    assert!(err.starts_with("refusing to dispatch"), "{err}");
    assert!(err.contains("host:after-tool"), "{err}");
    let triage = TRIAGE.replace("host:review", "host:audit");
    let err = demo(LOCAL.as_bytes(), triage.as_bytes()).unwrap_err();
    assert!(err.contains("host:audit"), "{err}");
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
fn the_shipped_capabilities_file_is_the_report_and_checks_against_the_code() {
    let shipped: serde_json::Value = serde_json::from_str(CAPABILITIES).unwrap();
    assert_eq!(shipped, report(), "capabilities.json is stale: write out `report()` again");
    let contracts = vec![("DECISION.md".into(), LOCAL.into()), ("triage".into(), TRIAGE.into())];
    assert_eq!(check("shipped", CAPABILITIES, &description(), &contracts), Vec::<String>::new());
}

#[test]
fn its_report_and_the_reference_report_check_against_its_code() {
    let (Some(local), Some(custom), Some(fixture_report)) =
        (fixture("DECISION.md"), fixture("custom-graph.DECISION.md"), fixture("external-host.capabilities.json"))
    else {
        return;
    };
    let contracts = vec![("DECISION.md".into(), local.into()), ("custom-graph".into(), custom.into())];
    let own = report().to_string();
    assert_eq!(check("own", &own, &description(), &contracts), Vec::<String>::new());
    assert_eq!(check("fixture", fixture_report, &description(), &contracts), Vec::<String>::new());
}
