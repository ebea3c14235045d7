//! The capability report (format.md §6): generated from a registered host and its graph,
//! and checked against them. The check refuses any drift — positions and their actions,
//! projections, providers and their reads, graph nodes, terminal states, graph features
//! (each proved from the graph), level, schema and `dispatchAfterCapabilityCheck` — and then
//! checks that the reported capabilities are sufficient for the host's contracts.

use std::collections::{BTreeMap, BTreeSet};

use decision_core::check::{Capabilities, adapter, schema};
use decision_core::diag::Severity;
use decision_core::parse;
use decision_core::vocab::{self, SCHEMA_V1};
use serde_json::{Map, Value, json};

use super::model::{FEATURES, GraphShape};

/// The level this runtime executes: graphs with loops, branches, retries, escalation and
/// terminal states.
pub const LEVEL: u64 = 2;

/// Everything about a host that its report states, taken from the code.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostDescription {
    /// Where the host is implemented (the report's `adapter`).
    pub adapter: String,
    /// A sentence on what the host is (`description`).
    pub description: String,
    /// Core positions and the actions each handles.
    pub positions: BTreeMap<String, Vec<String>>,
    /// `host:` positions and the actions each handles.
    pub host_positions: BTreeMap<String, Vec<String>>,
    /// Every action the host has a handler for.
    pub actions: Vec<String>,
    /// Host-internal: used by the sufficiency check, never listed in the report.
    pub state_cells: Vec<String>,
    /// The registered projection names (`projections`).
    pub projections: Vec<String>,
    /// The state cell each projection reads, by projection (used by the sufficiency check).
    pub projection_reads: BTreeMap<String, String>,
    /// The registered dynamic-candidate providers (`dynamicProviders`).
    pub dynamic_providers: Vec<String>,
    /// The state cells each dynamic provider reads (`dynamicProviderReads`).
    pub dynamic_provider_reads: BTreeMap<String, Vec<String>>,
    /// The graph: its nodes, terminal states and features are reported from it.
    pub graph: GraphShape,
    /// Whether dispatch waits for the capability check (always true for a `GraphHost`).
    pub dispatch_after_capability_check: bool,
    /// The command that runs the host's conformance suite (`conformance.command`).
    pub conformance_command: String,
    /// Where the host's negative fixtures are (`conformance.negativeFixtures`).
    pub negative_fixtures: String,
    /// The command that checks this report against the host (`conformance.reportCheck`).
    pub report_check: String,
    /// What the host does not do, in sentences (`knownLimitations`).
    pub known_limitations: Vec<String>,
}

impl HostDescription {
    /// Split a capability set into core and `host:` positions.
    pub fn from_capabilities(adapter: &str, caps: &Capabilities, graph: GraphShape) -> HostDescription {
        let (host_positions, positions): (BTreeMap<_, _>, BTreeMap<_, _>) =
            caps.positions.clone().into_iter().partition(|(p, _)| vocab::is_host_name(p));
        HostDescription {
            adapter: adapter.to_owned(),
            positions,
            host_positions,
            actions: caps.actions.clone(),
            state_cells: caps.state_cells.clone().unwrap_or_default(),
            projections: caps.projections.clone(),
            projection_reads: caps.projection_reads.clone(),
            dynamic_providers: caps.dynamic_providers.clone(),
            dynamic_provider_reads: caps.dynamic_provider_reads.clone(),
            graph,
            dispatch_after_capability_check: true,
            ..HostDescription::default()
        }
    }

    /// The capabilities the sufficiency check uses: the report's positions, projections,
    /// providers and reads, with the code's state cells and actions.
    fn capabilities_from_report(&self, report: &Map<String, Value>) -> Capabilities {
        let mut positions = string_lists(report.get("positions"));
        positions.extend(string_lists(report.get("hostPositions")));
        let projections = strings(report.get("projections"));
        let projection_reads = projections
            .iter()
            .filter_map(|p| {
                let cell = self
                    .projection_reads
                    .get(p)
                    .cloned()
                    .or_else(|| vocab::projection(p).map(|d| d.reads.to_owned()))?;
                Some((p.clone(), cell))
            })
            .collect();
        Capabilities {
            positions,
            actions: self.actions.clone(),
            state_cells: Some(self.state_cells.clone()),
            projections,
            projection_reads,
            dynamic_providers: strings(report.get("dynamicProviders")),
            dynamic_provider_reads: string_lists(report.get("dynamicProviderReads")),
            ..Capabilities::default()
        }
    }
}

/// The report, keys in the fixture's order.
pub fn generate(host: &HostDescription) -> Value {
    json!({
        "adapter": host.adapter,
        "contractSchema": SCHEMA_V1,
        "level": LEVEL,
        "description": host.description,
        "positions": host.positions,
        "hostPositions": host.host_positions,
        "customGraphNodes": host.graph.node_ids(),
        "terminalStates": host.graph.sinks(),
        "graphFeatures": host.graph.features(),
        "projections": host.projections,
        "dynamicProviders": host.dynamic_providers,
        "dynamicProviderReads": host.dynamic_provider_reads,
        "conformance": {
            "command": host.conformance_command,
            "negativeFixtures": host.negative_fixtures,
            "reportCheck": host.report_check,
            "dispatchAfterCapabilityCheck": host.dispatch_after_capability_check,
        },
        "knownLimitations": host.known_limitations,
    })
}

/// Fields a report must have.
pub const REQUIRED_FIELDS: [&str; 6] =
    ["positions", "projections", "dynamicProviders", "dynamicProviderReads", "customGraphNodes", "level"];

/// Check a report (JSON text) against the host. `contracts` are `(name, source)` pairs the
/// reported capabilities must be sufficient for (schema and adapter layers). Every drift is
/// one message; an empty result means the report is trustworthy.
pub fn check(file: &str, text: &str, host: &HostDescription, contracts: &[(String, Vec<u8>)]) -> Vec<String> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return vec![format!("{file} is not valid JSON (line {}, column {}): {e}", e.line(), e.column())],
    };
    let Some(report) = value.as_object() else { return vec![format!("{file} is not a JSON object")] };
    let missing: Vec<&str> = REQUIRED_FIELDS.into_iter().filter(|f| !report.contains_key(*f)).collect();
    if !missing.is_empty() {
        return vec![format!("{file} is missing fields: {}", missing.join(" / "))];
    }
    let mut out = Vec::new();
    // 1. Core positions, both directions, same action sets.
    match report.get("positions").and_then(Value::as_object) {
        None => return vec!["the report's `positions` is not an object; nothing else can be compared".into()],
        Some(_) => compare_positions("positions", &string_lists(report.get("positions")), &host.positions, &mut out),
    }
    // 2. Projections and providers.
    compare_sets("projections", &strings(report.get("projections")), &host.projections, &mut out);
    compare_sets("dynamicProviders", &strings(report.get("dynamicProviders")), &host.dynamic_providers, &mut out);
    // 3. Provider reads.
    let reads = string_lists(report.get("dynamicProviderReads"));
    for (provider, cells) in &host.dynamic_provider_reads {
        match reads.get(provider) {
            None => out.push(format!(
                "dynamicProviderReads lacks provider `{provider}` (the code reads {})",
                cells.join(", ")
            )),
            Some(reported) if set(reported) != set(cells) => out.push(format!(
                "dynamicProviderReads[{provider}] is [{}], the code reads [{}]",
                reported.join(", "),
                cells.join(", ")
            )),
            Some(_) => {}
        }
    }
    for provider in reads.keys().filter(|p| !host.dynamic_provider_reads.contains_key(*p)) {
        out.push(format!("dynamicProviderReads names provider `{provider}`, which the code does not have"));
    }
    // 4. Graph nodes: exactly the graph's source nodes; every target consumed.
    let nodes = strings(report.get("customGraphNodes"));
    let code_nodes = host.graph.node_ids();
    for node in &nodes {
        if host.graph.node(node).is_none() {
            out.push(format!("customGraphNodes lists `{node}`, which is not a source node of the graph"));
        }
    }
    for node in code_nodes.iter().filter(|n| !nodes.contains(n)) {
        out.push(format!("customGraphNodes lacks `{node}`, a node of the graph"));
    }
    // 5. Terminal states: exactly the targets that are not nodes.
    let terminals = strings(report.get("terminalStates"));
    let sinks = host.graph.sinks();
    for t in &terminals {
        if host.graph.node(t).is_some() {
            out.push(format!("terminalStates lists `{t}`, which is a node of the graph, not a terminal state"));
        } else if !sinks.contains(t) {
            out.push(format!("terminalStates lists `{t}`, which no transition of the graph reaches"));
        }
    }
    for t in sinks.iter().filter(|t| !terminals.contains(t)) {
        out.push(format!("terminalStates lacks `{t}`, a target of the graph that is not a node"));
    }
    for node in &host.graph.nodes {
        for (label, target) in &node.edges {
            if !nodes.contains(target) && !terminals.contains(target) && host.graph.node(target).is_none() {
                out.push(format!("transition {}--{label}-->{target} has no consumer in the report", node.id));
            }
        }
    }
    // 6. Features, each proved from the graph.
    for feature in strings(report.get("graphFeatures")) {
        match host.graph.demonstrates(&feature) {
            None => out.push(format!(
                "graphFeatures lists `{feature}`, which is not a known feature ({})",
                FEATURES.join(", ")
            )),
            Some(false) => out.push(format!("graphFeatures lists `{feature}`, which the graph does not demonstrate")),
            Some(true) => {}
        }
    }
    // 7. Host positions, both directions (missing counts as empty).
    compare_positions("hostPositions", &string_lists(report.get("hostPositions")), &host.host_positions, &mut out);
    // 8. Level, schema, dispatch order.
    if report.get("level").and_then(Value::as_u64) != Some(LEVEL) {
        out.push(format!("level is {}, this host executes level {LEVEL}", report.get("level").unwrap_or(&Value::Null)));
    }
    if report.get("contractSchema").and_then(Value::as_str) != Some(SCHEMA_V1) {
        out.push(format!(
            "contractSchema is {}, the code reads {SCHEMA_V1}",
            report.get("contractSchema").unwrap_or(&Value::Null)
        ));
    }
    let dispatch = report.get("conformance").and_then(|c| c.get("dispatchAfterCapabilityCheck"));
    if dispatch != Some(&Value::Bool(true)) || !host.dispatch_after_capability_check {
        out.push(format!(
            "conformance.dispatchAfterCapabilityCheck is {}; it must be true (and is, in this host)",
            dispatch.unwrap_or(&Value::Null)
        ));
    }
    // Sufficiency: the reported capabilities must carry every contract of the host.
    let caps = host.capabilities_from_report(report);
    for (name, source) in contracts {
        let parsed = parse(source);
        let mut problems =
            parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned().collect::<Vec<_>>();
        problems.extend(schema(&parsed.contract));
        problems.extend(adapter(&parsed.contract, &caps));
        for d in problems.iter().filter(|d| d.severity == Severity::Error) {
            out.push(format!(
                "the reported capabilities do not carry {name}: {}:{} {} (report untrusted)",
                d.span.line, d.span.column, d.message
            ));
        }
    }
    out
}

fn compare_positions(
    what: &str,
    reported: &BTreeMap<String, Vec<String>>,
    code: &BTreeMap<String, Vec<String>>,
    out: &mut Vec<String>,
) {
    for (position, actions) in code {
        match reported.get(position) {
            None => out.push(format!("{what} lacks `{position}` (the code handles {})", actions.join(", "))),
            Some(r) if set(r) != set(actions) => {
                out.push(format!("{what}[{position}] is [{}], the code handles [{}]", r.join(", "), actions.join(", ")))
            }
            Some(_) => {}
        }
    }
    for position in reported.keys().filter(|p| !code.contains_key(*p)) {
        out.push(format!("{what} lists `{position}`, which the code does not register"));
    }
}

fn compare_sets(what: &str, reported: &[String], code: &[String], out: &mut Vec<String>) {
    let (r, c) = (set(reported), set(code));
    let missing: Vec<&str> = c.difference(&r).copied().collect();
    let extra: Vec<&str> = r.difference(&c).copied().collect();
    if !missing.is_empty() {
        out.push(format!("{what} lacks {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        out.push(format!("{what} lists {}, which the code does not have", extra.join(", ")));
    }
}

fn set(items: &[String]) -> BTreeSet<&str> {
    items.iter().map(String::as_str).collect()
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn string_lists(value: Option<&Value>) -> BTreeMap<String, Vec<String>> {
    value
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(Some(v)))).collect())
        .unwrap_or_default()
}

/// Describe a registered host and its graph (without starting it).
pub fn describe<C>(adapter: &super::HostAdapter<C>, graph: &super::Graph<C>) -> HostDescription {
    let caps = adapter.capabilities(&super::check::decided_blocks(graph));
    HostDescription::from_capabilities(adapter.name(), &caps, graph.shape().clone())
}
