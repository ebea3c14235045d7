//! An external host built on `decision-core` alone (no runtime crate): its own state, its
//! own projections, a deterministic decision provider, its own issue-triage graph, and its
//! capability report. It checks both contracts against its capabilities before it dispatches
//! anything, runs four reference blocks locally (Level 1), and drives its graph (Level 2).

use std::collections::BTreeMap;

use decision_core::check::{Capabilities, CheckOptions, adapter, check, schema};
use decision_core::contract::{Block, Contract, Primitive};
use decision_core::parse;
use decision_core::policy::{Answer, Answers, compile_block, evaluate};
use decision_core::vocab::{ACTIONS, POSITIONS, PROJECTIONS, REFERENCE_CELLS, REFERENCE_PROVIDERS, SCHEMA_V1};
use serde_json::{Value, json};

/// This host's own state: one value per frame key it can fill.
pub type HostState = BTreeMap<String, Value>;

/// The host's positions beyond the six core ones.
pub const HOST_POSITIONS: [(&str, &[&str]); 3] =
    [("host:issue-triage", &["call"]), ("host:test-failure", &["call"]), ("host:review", &["ask_human", "finish"])];

/// Cells beyond the reference host's, read by the custom-graph contract.
pub const EXTRA_CELLS: [&str; 3] = ["output", "evidence", "answer"];

/// The host-owned graph: node → (outcome → next node).
pub const GRAPH: [(&str, &[(&str, &str)]); 7] = [
    ("classify_issue", &[("inspect", "inspect_repository"), ("escalate", "request_review")]),
    ("inspect_repository", &[("found", "plan_patch"), ("missing", "request_review"), ("retry", "inspect_repository")]),
    ("plan_patch", &[("ready", "run_tests"), ("revise", "plan_patch")]),
    ("run_tests", &[("pass", "prepare_candidate"), ("fail", "interpret_failure"), ("retry", "run_tests")]),
    ("interpret_failure", &[("fixable", "plan_patch"), ("blocked", "request_review")]),
    ("prepare_candidate", &[("deliver", "done"), ("revise", "plan_patch")]),
    ("request_review", &[("approved", "done"), ("rejected", "plan_patch")]),
];

/// States that end the graph.
pub const TERMINAL_STATES: [&str; 1] = ["done"];

/// The blocks of the reference contract this host executes locally.
pub const LOCAL_BLOCKS: [&str; 4] = ["needs_tool", "pick_tool", "step_ok", "is_done"];

/// This host's capabilities, for the adapter check.
pub fn capabilities() -> Capabilities {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let mut positions: BTreeMap<String, Vec<String>> =
        POSITIONS.iter().map(|(p, a)| ((*p).to_owned(), strings(a))).collect();
    positions.extend(HOST_POSITIONS.iter().map(|(p, a)| ((*p).to_owned(), strings(a))));
    let mut cells: Vec<String> = REFERENCE_CELLS.iter().map(|c| c.name.to_owned()).collect();
    cells.extend(strings(&EXTRA_CELLS));
    Capabilities {
        positions,
        actions: strings(&ACTIONS),
        state_cells: Some(cells),
        projections: PROJECTIONS.iter().map(|p| p.name.to_owned()).collect(),
        projection_reads: PROJECTIONS.iter().map(|p| (p.name.to_owned(), p.reads.to_owned())).collect(),
        dynamic_providers: REFERENCE_PROVIDERS.iter().map(|(p, _)| (*p).to_owned()).collect(),
        dynamic_provider_reads: REFERENCE_PROVIDERS.iter().map(|(p, r)| ((*p).to_owned(), strings(r))).collect(),
        ..Capabilities::default()
    }
}

/// The host's own projection bodies: each reads one key of this host's state.
fn project(name: &str, state: &HostState) -> Option<Value> {
    let key = match name {
        "earlierMaybe" => "earlier",
        "describeDone" => "already_done",
        "filesMaybe" => "files_known",
        "readMaybe" | "readCount" => "already_read",
        "lastOrNone" | "resultMaybe" => "last",
        "toolOrEmpty" | "toolOrUnknown" | "localToolRisk" => "tool",
        "lastInput" => "input",
        "recentSteps" => "output",
        "draftMaybe" => "answer",
        "writeEvidence" => "evidence",
        _ => return None,
    };
    state.get(key).cloned()
}

/// A block's frame from this host's state: projected or read directly, cut to its bound.
pub fn frame(block: &Block, state: &HostState) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for field in block.frame.iter().flat_map(|f| &f.fields) {
        let value = match &field.projection {
            Some(p) => project(p, state),
            None => state.get(&field.key).cloned(),
        }
        .ok_or_else(|| format!("block `{}`: no value for field `{}`", block.id, field.key))?;
        let bound = usize::try_from(field.bound).unwrap_or(usize::MAX);
        let value = match value {
            Value::String(s) => Value::String(s.chars().take(bound).collect()),
            Value::Array(items) => Value::Array(items.into_iter().take(bound).collect()),
            other => other,
        };
        out.insert(field.key.clone(), value);
    }
    Ok(out)
}

/// The deterministic decision provider: every noul 0.9, every choice its first option at
/// 0.9, every score its lowest level.
pub fn mock_answers(block: &Block) -> Answers {
    block
        .questions
        .iter()
        .map(|q| {
            let answer = match q.primitive {
                Primitive::Noul => Answer::Noul { noul: 0.9 },
                Primitive::Choice => {
                    let n = q.options.len().max(1) as f64;
                    let probabilities = q
                        .options
                        .iter()
                        .enumerate()
                        .map(|(i, o)| (o.name.clone(), if i == 0 { 0.9 } else { 0.1 / (n - 1.0).max(1.0) }))
                        .collect();
                    let choice = q.options.first().map(|o| o.name.clone()).unwrap_or_default();
                    Answer::Choice { choice, probabilities, confidence: Some(0.9) }
                }
                Primitive::Score => Answer::Score { score: 0.0, probabilities: BTreeMap::new(), confidence: Some(0.9) },
            };
            (q.id.clone(), answer)
        })
        .collect()
}

/// One local decision: frame, questions, policy. Returns `(fields, action, rule index)`.
pub fn run_block(contract: &Contract, id: &str, state: &HostState) -> Result<(usize, String, Option<usize>), String> {
    let block = contract.blocks.iter().find(|b| b.id == id).ok_or_else(|| format!("no block `{id}`"))?;
    let frame = frame(block, state)?;
    let (policy, errors) = compile_block(block);
    if !errors.is_empty() {
        return Err(format!("block `{id}`: {} rule(s) do not compile", errors.len()));
    }
    let decision = evaluate(&policy, &mock_answers(block));
    Ok((frame.len(), decision.action, decision.rule))
}

/// Follow `outcomes` from `start`; a missing transition is an error, never skipped.
pub fn drive(start: &str, outcomes: &[&str]) -> Result<Vec<String>, String> {
    let mut node = start.to_owned();
    let mut trace = vec![node.clone()];
    for outcome in outcomes {
        let edges =
            GRAPH.iter().find(|(n, _)| *n == node).map(|(_, e)| *e).ok_or_else(|| format!("`{node}` is not a node"))?;
        let next = edges
            .iter()
            .find(|(label, _)| label == outcome)
            .map(|(_, to)| *to)
            .ok_or_else(|| format!("`{node}` has no transition for `{outcome}`"))?;
        trace.push(format!("-{outcome}-> {next}"));
        node = next.to_owned();
    }
    if !TERMINAL_STATES.contains(&node.as_str()) {
        return Err(format!("the graph stopped at `{node}`, which is not a terminal state"));
    }
    Ok(trace)
}

/// The demo state.
pub fn demo_state() -> HostState {
    [
        ("task", json!("find where totals are computed")),
        ("earlier", json!("")),
        ("already_done", json!("nothing yet")),
        ("files_known", json!(["alpha.ts", "beta.ts"])),
        ("already_read", json!([])),
        ("last", json!("")),
        ("tool", json!("read_file")),
        ("input", json!("alpha.ts")),
        ("output", json!("export function totalOf() {}")),
        ("target", json!("alpha.ts")),
        ("evidence", json!("read_file(alpha.ts) → export function totalOf() {}")),
        ("answer", json!("")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The whole probe: check, then dispatch. `local` is a contract with the four
/// [`LOCAL_BLOCKS`] (the bundled coding-agent contract, or the reference's), `custom` one
/// with this host's three graph decisions (its own `triage.DECISION.md`, or the reference's
/// custom graph). Output is deterministic.
pub fn demo(local: &[u8], custom: &[u8]) -> Result<String, String> {
    let caps = capabilities();
    // Dispatch only after the capability check: every problem refuses the run.
    let report = check(local, CheckOptions { capabilities: Some(&caps) });
    let problems: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("DECISION.md:{}:{} {}", d.span.line, d.span.column, d.message))
        .collect();
    let custom_contract = parse(custom);
    let mut custom_problems: Vec<String> =
        custom_contract.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.message.clone()).collect();
    custom_problems.extend(schema(&custom_contract.contract).into_iter().map(|d| d.message));
    custom_problems.extend(adapter(&custom_contract.contract, &caps).into_iter().map(|d| d.message));
    if !problems.is_empty() || !custom_problems.is_empty() {
        return Err(format!("refusing to dispatch:\n{}", [problems, custom_problems].concat().join("\n")));
    }
    let mut out = vec![format!("external host · {SCHEMA_V1} · level 2")];
    let state = demo_state();
    for id in LOCAL_BLOCKS {
        let (fields, action, rule) = run_block(&report.contract, id, &state)?;
        let rule = rule.map_or_else(|| "none".to_owned(), |r| r.to_string());
        out.push(format!("  {id}: fields={fields}, action={action}, rule={rule}"));
    }
    for outcomes in [
        &["inspect", "retry", "found", "ready", "fail", "fixable", "ready", "pass", "deliver"][..],
        &["escalate", "approved"][..],
    ] {
        out.push(format!("  graph: {}", drive("classify_issue", outcomes)?.join(" ")));
    }
    out.push("external host: adapter conformance probe passed".into());
    Ok(out.join("\n"))
}

/// This host's capability report, in the reference's report format; `capabilities.json` next
/// to this crate's manifest is this report, written out.
pub fn report() -> Value {
    let caps = capabilities();
    let core: BTreeMap<&String, &Vec<String>> =
        caps.positions.iter().filter(|(p, _)| !p.starts_with("host:")).collect();
    let host: BTreeMap<&String, &Vec<String>> = caps.positions.iter().filter(|(p, _)| p.starts_with("host:")).collect();
    json!({
        "adapter": "examples/external-host/src/lib.rs",
        "contractSchema": SCHEMA_V1,
        "level": 2,
        "description": "An external host on decision-core alone: local decision execution plus a host-owned multi-node graph.",
        "positions": core,
        "hostPositions": host,
        "customGraphNodes": GRAPH.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "terminalStates": TERMINAL_STATES,
        "graphFeatures": ["branch", "retry", "escalation", "terminal-state"],
        "projections": caps.projections,
        "dynamicProviders": caps.dynamic_providers,
        "dynamicProviderReads": caps.dynamic_provider_reads,
        "conformance": {
            "command": "cargo run -p decision-external-host",
            "negativeFixtures": "crates/coding-host/tests/graph_triage.rs",
            "reportCheck": "cargo test -p decision-external-host",
            "dispatchAfterCapabilityCheck": true,
        },
        "knownLimitations": [
            "The host uses a deterministic mock provider.",
            "The graph's host phases are driven by fixed outcome lists.",
            "State-cell names are not listed here; the tests check the report against the code.",
        ],
    })
}
