//! What a host can honour: positions and their actions, actions, state cells, projections,
//! dynamic providers and the cells they read. Read from the reference's capability report
//! format, or built in (the reference host's profile).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;
use thiserror::Error;

use crate::vocab::{self, ACTIONS, ANY_POSITION_ACTION, POSITIONS, PROJECTIONS, REFERENCE_BLOCKS, REFERENCE_CELLS};

/// A host's capabilities.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Capabilities {
    /// Core and `host:` positions, each with the actions it handles.
    pub positions: BTreeMap<String, Vec<String>>,
    /// Actions the host has handlers for.
    pub actions: Vec<String>,
    /// State cells; `None` skips state-cell checks.
    pub state_cells: Option<Vec<String>>,
    /// Projections the host implements (names as written in frame fields).
    pub projections: Vec<String>,
    /// The cell each projection reads, where known (used to find a field's source cell).
    pub projection_reads: BTreeMap<String, String>,
    /// Dynamic providers the host has registered.
    pub dynamic_providers: Vec<String>,
    /// The state cells each provider reads, where the host declares them; a `dynamic:` line
    /// must name exactly these.
    pub dynamic_provider_reads: BTreeMap<String, Vec<String>>,
    /// Blocks the host requires, in order.
    pub required_blocks: Vec<String>,
    /// The question ids the host reads from each required block.
    pub required_questions: BTreeMap<String, Vec<String>>,
    /// Every frame must account for every state cell (read or excluded, with reasons).
    pub require_coverage: bool,
}

/// Why a capability file could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CapabilitiesError {
    /// The text is not JSON, or a key has a value of the wrong shape.
    #[error("invalid capability JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The JSON reader's explanation.
        message: String,
    },
    /// A top-level key the format does not have: a misspelt key would otherwise be ignored
    /// and the host's capability silently missing.
    #[error("unknown key `{key}` at line {line}, column {column}{}", help.as_ref().map(|h| format!("; {h}")).unwrap_or_default())]
    UnknownKey {
        /// The key as written.
        key: String,
        /// 1-based line of the key.
        line: usize,
        /// 1-based column of the key.
        column: usize,
        /// A "did you mean" suggestion, when a known key is close.
        help: Option<String>,
    },
}

impl CapabilitiesError {
    /// Where the problem is: `(line, column)`, both 1-based.
    pub fn location(&self) -> (usize, usize) {
        match self {
            CapabilitiesError::Json { line, column, .. } | CapabilitiesError::UnknownKey { line, column, .. } => {
                (*line, *column)
            }
        }
    }
}

/// Every top-level key of the capability report format: those the check reads, and those that
/// describe the host (its graph, its conformance commands) and are accepted but not read.
pub(crate) const REPORT_KEYS: [&str; 16] = [
    "positions",
    "hostPositions",
    "projections",
    "dynamicProviders",
    "dynamicProviderReads",
    "actions",
    "stateCells",
    "adapter",
    "contractSchema",
    "level",
    "description",
    "customGraphNodes",
    "terminalStates",
    "graphFeatures",
    "conformance",
    "knownLimitations",
];

/// The key named by serde's "unknown field `key`, expected …" message.
fn unknown_field(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split_once('`').map(|(key, _)| key)
}

/// The line and column where `key` (quoted) starts, searching back from the position serde
/// reported (the end of the key): the error points at the key, not past it.
fn key_start(text: &str, key: &str, line: usize, column: usize) -> (usize, usize) {
    let quoted = format!("\"{key}\"");
    let line_text = text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
    let end = line_text.char_indices().nth(column).map_or(line_text.len(), |(i, _)| i);
    match line_text.get(..end).and_then(|head| head.rfind(&quoted)) {
        Some(byte) => (line, line_text.get(..byte).map_or(0, |h| h.chars().count()) + 1),
        None => (line, column),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReportFile {
    positions: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    host_positions: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    projections: Vec<String>,
    #[serde(default)]
    dynamic_providers: Vec<String>,
    #[serde(default)]
    dynamic_provider_reads: BTreeMap<String, Vec<String>>,
    actions: Option<Vec<String>>,
    state_cells: Option<Vec<String>>,
    // Accepted, not read: they describe the host rather than what it can honour. Declared so
    // that `deny_unknown_fields` refuses only keys the format does not have.
    #[allow(dead_code)]
    #[serde(default)]
    adapter: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    contract_schema: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    level: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    description: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    custom_graph_nodes: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    terminal_states: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    graph_features: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    conformance: Option<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    known_limitations: Option<IgnoredAny>,
}

impl Capabilities {
    /// Read a capability report (`positions`, `hostPositions`, `projections`,
    /// `dynamicProviders`, `dynamicProviderReads`, and optional `actions` and `stateCells`).
    /// Without `actions`, the host handles every action named in its positions, and
    /// `escalate`, which is legal everywhere. Without `stateCells`, cells are not checked.
    pub fn from_json(text: &str) -> Result<Capabilities, CapabilitiesError> {
        let file: ReportFile = serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            match unknown_field(&message) {
                Some(key) => {
                    let (line, column) = key_start(text, key, e.line(), e.column());
                    let help = crate::suggest::did_you_mean(key, REPORT_KEYS.iter().copied())
                        .map(|k| format!("did you mean `{k}`?"));
                    CapabilitiesError::UnknownKey { key: key.to_owned(), line, column, help }
                }
                None => CapabilitiesError::Json { line: e.line(), column: e.column(), message },
            }
        })?;
        let mut positions = file.positions;
        positions.extend(file.host_positions);
        let actions = file.actions.unwrap_or_else(|| {
            let mut actions: Vec<String> = positions.values().flatten().cloned().collect();
            actions.push(ANY_POSITION_ACTION.to_string());
            actions.sort();
            actions.dedup();
            actions
        });
        let projection_reads = file
            .projections
            .iter()
            .filter_map(|p| vocab::projection(p).map(|decl| (p.clone(), decl.reads.to_string())))
            .collect();
        Ok(Capabilities {
            positions,
            actions,
            state_cells: file.state_cells,
            projections: file.projections,
            projection_reads,
            dynamic_providers: file.dynamic_providers,
            dynamic_provider_reads: file.dynamic_provider_reads,
            required_blocks: Vec::new(),
            required_questions: BTreeMap::new(),
            require_coverage: false,
        })
    }

    /// The reference host: 11 state cells, 14 projections, 2 providers with their reads,
    /// 6 positions, 14 actions, the seven required blocks and full frame coverage.
    pub fn reference() -> Capabilities {
        let strings = |items: &[&str]| items.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        Capabilities {
            positions: POSITIONS.iter().map(|(p, actions)| ((*p).to_string(), strings(actions))).collect(),
            actions: strings(&ACTIONS),
            state_cells: Some(REFERENCE_CELLS.iter().map(|c| c.name.to_string()).collect()),
            projections: PROJECTIONS.iter().map(|p| p.name.to_string()).collect(),
            projection_reads: PROJECTIONS.iter().map(|p| (p.name.to_string(), p.reads.to_string())).collect(),
            dynamic_providers: vocab::REFERENCE_PROVIDERS.iter().map(|(p, _)| (*p).to_string()).collect(),
            dynamic_provider_reads: vocab::REFERENCE_PROVIDERS
                .iter()
                .map(|(p, reads)| ((*p).to_string(), strings(reads)))
                .collect(),
            required_blocks: strings(&REFERENCE_BLOCKS),
            required_questions: vocab::REFERENCE_QUESTIONS
                .iter()
                .map(|(b, q)| ((*b).to_string(), strings(q)))
                .collect(),
            require_coverage: true,
        }
    }

    /// The cell a projection reads, if known.
    pub fn projection_cell(&self, projection: &str) -> Option<&str> {
        self.projection_reads.get(projection).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_default_to_those_named_in_positions_plus_escalate() {
        let caps =
            Capabilities::from_json(r#"{"positions":{"after-tool":["stop"]},"hostPositions":{"host:x":["call"]}}"#)
                .unwrap();
        assert_eq!(caps.actions, ["call", "escalate", "stop"]);
        assert!(caps.positions.contains_key("host:x"));
        assert_eq!(caps.state_cells, None);
    }

    #[test]
    fn malformed_files_are_located_errors() {
        let err = Capabilities::from_json("{\n  \"positions\": 3\n}").unwrap_err();
        assert_eq!(err.location().0, 2);
        assert!(Capabilities::from_json("{}").is_err(), "positions is required");
    }
}
