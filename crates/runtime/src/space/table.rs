//! The candidate table and its heads, built from one host snapshot.

use std::collections::HashMap;
use std::hash::Hash;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::ask::{Questions, WireQuestion};

/// The fixed per-task candidate cap (the reference's 250 element actions).
pub const DEFAULT_CANDIDATE_CAP: usize = 250;
/// The operation head's question id.
pub const OPERATION_HEAD: &str = "operation";
/// Always offered: decline to decide; hand the decision back.
pub const ABSTAIN: &str = "ABSTAIN";
/// Always offered: nothing needs doing.
pub const NO_ACTION: &str = "NO_ACTION";

const ABSTAIN_CRITERION: &str = "None of the offered operations can be chosen with confidence; hand the decision back.";
const NO_ACTION_CRITERION: &str = "Nothing needs to be done now: what the task asks for already holds.";

/// An operation the host can perform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Upper-case name, e.g. `CLICK`; its target head is `click_target`.
    pub name: String,
    /// One line: when to choose it.
    pub description: String,
    /// `false` for controls (e.g. `WAIT`), which act on no row.
    pub needs_target: bool,
}

impl Operation {
    pub fn new(name: &str, description: &str, needs_target: bool) -> Operation {
        Operation { name: name.into(), description: description.into(), needs_target }
    }

    /// `<operation lower-cased>_target`.
    pub fn target_head(&self) -> String {
        format!("{}_target", self.name.to_lowercase())
    }
}

/// One enumerated parameter value of an operation on an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamOption {
    /// What the model sees.
    pub label: String,
    /// What the host uses; never sent.
    pub value: String,
}

/// An operation that applies to an object, with enumerated parameter values when it takes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applicable {
    pub operation: String,
    /// `Some` when the operation's parameter is chosen from these values (`row:option` ids).
    pub options: Option<Vec<ParamOption>>,
}

impl Applicable {
    pub fn plain(operation: &str) -> Applicable {
        Applicable { operation: operation.into(), options: None }
    }

    pub fn with_options(operation: &str, options: Vec<ParamOption>) -> Applicable {
        Applicable { operation: operation.into(), options: Some(options) }
    }
}

/// One host object as the snapshot reports it. `id` is the host identity: it maps answers
/// back to the host and is never sent to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostObject<Id> {
    pub id: Id,
    /// finding, operation, route, file, element, …
    pub kind: String,
    pub label: String,
    /// The current value or state.
    pub value: String,
    /// Further state the model may need (`checked`, `selected`, …), in order.
    pub state: Vec<(String, String)>,
    pub applies: Vec<Applicable>,
}

/// One atomic read of an exact host revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot<Id> {
    pub revision: String,
    pub objects: Vec<HostObject<Id>>,
}

/// A row's enumerated parameter value, as sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowOption {
    /// `row:option`, the option 1-based in order of appearance.
    pub id: String,
    pub operation: String,
    pub label: String,
}

/// One row of the table, as sent: no host identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Code-owned, 1-based, in order of first appearance.
    pub index: usize,
    pub kind: String,
    pub label: String,
    pub value: String,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "pairs_as_object")]
    pub state: Vec<(String, String)>,
    pub operations: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<RowOption>,
}

/// A row past the cap: recorded, never sent, never selectable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated<Id> {
    pub index: usize,
    pub id: Id,
    pub label: String,
}

/// What a target id stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetRef {
    /// 0-based position in `rows`.
    pub row: usize,
    /// 0-based option of the operation on that row.
    pub option: Option<usize>,
}

/// One offered target head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetHead {
    pub operation: String,
    pub head: String,
    pub targets: Vec<(String, TargetRef)>,
}

/// The indexed decision state of one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionState<Id> {
    pub(crate) revision: String,
    pub(crate) rows: Vec<Row>,
    pub(crate) identities: Vec<Id>,
    pub(crate) values: Vec<Vec<(String, Vec<ParamOption>)>>,
    pub(crate) truncated: Vec<Truncated<Id>>,
    pub(crate) operations: Vec<Operation>,
    pub(crate) controls: Vec<String>,
    pub(crate) heads: Vec<TargetHead>,
    pub(crate) questions: Questions,
}

/// How to build a state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceConfig {
    /// Rows past this many are truncated.
    pub cap: usize,
    /// The operation head's instructions (the goal, the rules).
    pub instructions: String,
}

impl Default for SpaceConfig {
    fn default() -> Self {
        SpaceConfig {
            cap: DEFAULT_CANDIDATE_CAP,
            instructions: "Which operation advances the task from the current state?".into(),
        }
    }
}

impl<Id: Clone + Eq + Hash> DecisionState<Id> {
    /// Build the table and every head from `snapshot`. `eligible` lists the operations the
    /// deterministic eligibility admits for this task, in the order they are offered; an
    /// operation that needs a target is offered only when some visible row supports it.
    pub fn build(snapshot: &Snapshot<Id>, eligible: &[Operation], config: &SpaceConfig) -> DecisionState<Id> {
        let mut state = DecisionState {
            revision: snapshot.revision.clone(),
            rows: Vec::new(),
            identities: Vec::new(),
            values: Vec::new(),
            truncated: Vec::new(),
            operations: Vec::new(),
            controls: Vec::new(),
            heads: Vec::new(),
            questions: Questions::new(),
        };
        // One index per host object, in order of first appearance, however often it appears.
        let mut seen: HashMap<&Id, Slot> = HashMap::new();
        for object in &snapshot.objects {
            match seen.get(&object.id) {
                Some(Slot::Row(row)) => state.merge_into(*row, object),
                Some(Slot::Truncated) => {}
                None if state.rows.len() < config.cap => {
                    seen.insert(&object.id, Slot::Row(state.rows.len()));
                    state.push_row(object);
                }
                None => {
                    seen.insert(&object.id, Slot::Truncated);
                    let index = state.rows.len() + state.truncated.len() + 1;
                    state.truncated.push(Truncated { index, id: object.id.clone(), label: object.label.clone() });
                }
            }
        }
        state.build_heads(eligible, config);
        state
    }

    fn push_row(&mut self, object: &HostObject<Id>) {
        let index = self.rows.len() + 1;
        self.rows.push(Row {
            index,
            kind: object.kind.clone(),
            label: object.label.clone(),
            value: object.value.clone(),
            state: object.state.clone(),
            operations: Vec::new(),
            options: Vec::new(),
        });
        self.identities.push(object.id.clone());
        self.values.push(Vec::new());
        self.merge_into(index - 1, object);
    }

    /// Add the operations of a later appearance of the same object to its row.
    fn merge_into(&mut self, row: usize, object: &HostObject<Id>) {
        let (Some(target), Some(values)) = (self.rows.get_mut(row), self.values.get_mut(row)) else { return };
        for applicable in &object.applies {
            if target.operations.contains(&applicable.operation) {
                continue;
            }
            target.operations.push(applicable.operation.clone());
            if let Some(options) = &applicable.options {
                for (k, option) in options.iter().enumerate() {
                    target.options.push(RowOption {
                        id: format!("{}:{}", target.index, k + 1),
                        operation: applicable.operation.clone(),
                        label: option.label.clone(),
                    });
                }
                values.push((applicable.operation.clone(), options.clone()));
            }
        }
    }

    fn build_heads(&mut self, eligible: &[Operation], config: &SpaceConfig) {
        let mut operation_criteria = Vec::new();
        for operation in eligible {
            if is_reserved(&operation.name) || operation_criteria.iter().any(|(n, _)| *n == operation.name) {
                continue;
            }
            if !operation.needs_target {
                self.controls.push(operation.name.clone());
                self.operations.push(operation.clone());
                operation_criteria.push((operation.name.clone(), operation.description.clone()));
                continue;
            }
            let targets = self.targets_for(&operation.name);
            if targets.is_empty() {
                continue;
            }
            self.operations.push(operation.clone());
            operation_criteria.push((operation.name.clone(), operation.description.clone()));
            self.heads.push(TargetHead { operation: operation.name.clone(), head: operation.target_head(), targets });
        }
        operation_criteria.push((ABSTAIN.into(), ABSTAIN_CRITERION.into()));
        operation_criteria.push((NO_ACTION.into(), NO_ACTION_CRITERION.into()));
        self.questions.insert(
            OPERATION_HEAD,
            WireQuestion::Choice { instructions: config.instructions.clone(), criteria: operation_criteria },
        );
        let heads = self.heads.clone();
        for head in &heads {
            let description = self.operations.iter().find(|o| o.name == head.operation).map(|o| o.description.as_str());
            let instructions = format!(
                "Assume the next operation is {} ({}). This question cannot see the answer to `{OPERATION_HEAD}`. Which row should {} act on? Choose only an offered id.",
                head.operation,
                description.unwrap_or_default(),
                head.operation
            );
            let criteria = head
                .targets
                .iter()
                .map(|(id, target)| (id.clone(), self.describe(&head.operation, id, target)))
                .collect();
            self.questions.insert(head.head.clone(), WireQuestion::Choice { instructions, criteria });
        }
    }

    /// The compatible, visible rows of an operation: `row` ids, or `row:option` ids.
    fn targets_for(&self, operation: &str) -> Vec<(String, TargetRef)> {
        let mut targets = Vec::new();
        for (row, entry) in self.rows.iter().enumerate() {
            if !entry.operations.iter().any(|o| o == operation) {
                continue;
            }
            let options = self.values.get(row).and_then(|v| v.iter().find(|(op, _)| op == operation));
            match options {
                Some((_, options)) => {
                    for k in 0..options.len() {
                        targets.push((format!("{}:{}", entry.index, k + 1), TargetRef { row, option: Some(k) }));
                    }
                }
                None => targets.push((entry.index.to_string(), TargetRef { row, option: None })),
            }
        }
        targets
    }

    /// `[id] label (kind); current value: "…"; key=value…` — what a target head says of a row.
    fn describe(&self, operation: &str, id: &str, target: &TargetRef) -> String {
        let Some(row) = self.rows.get(target.row) else { return String::new() };
        let option = target.option.and_then(|k| self.option(target.row, operation, k)).map(|o| o.label.as_str());
        let mut text = match option {
            Some(option) => format!("[{id}] {} → {option}", row.label),
            None => format!("[{id}] {}", row.label),
        };
        text.push_str(&format!(" ({}); current value: {:?}", row.kind, row.value));
        for (key, value) in &row.state {
            text.push_str(&format!("; {key}={value}"));
        }
        text
    }

    /// The `k`-th (0-based) enumerated value of `operation` on row `row`.
    pub(crate) fn option(&self, row: usize, operation: &str, k: usize) -> Option<&ParamOption> {
        self.values.get(row)?.iter().find(|(op, _)| op == operation)?.1.get(k)
    }

    pub fn revision(&self) -> &str {
        &self.revision
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Rows past the cap, with their host identities (for the record; never offered).
    pub fn truncated(&self) -> &[Truncated<Id>] {
        &self.truncated
    }

    /// The offered operations (controls included), in order, without `ABSTAIN`/`NO_ACTION`.
    pub fn operations(&self) -> Vec<&str> {
        self.operations.iter().map(|o| o.name.as_str()).collect()
    }

    /// Every head (the operation head first), all sent in one request.
    pub fn questions(&self) -> &Questions {
        &self.questions
    }

    /// The offered ids of a target head.
    pub fn target_ids(&self, head: &str) -> Vec<&str> {
        self.heads
            .iter()
            .find(|h| h.head == head)
            .map(|h| h.targets.iter().map(|(id, _)| id.as_str()).collect())
            .unwrap_or_default()
    }

    /// The state sent with the heads: the revision, the rows, how many rows were truncated,
    /// then the host's own `context` cells (which must not reuse those three keys).
    pub fn state(&self, context: &Map<String, Value>) -> Map<String, Value> {
        let mut state = Map::new();
        state.insert("revision".into(), json!(self.revision));
        state.insert("rows".into(), serde_json::to_value(&self.rows).unwrap_or(Value::Null));
        state.insert("truncated_rows".into(), json!(self.truncated.len()));
        for (key, value) in context {
            if !state.contains_key(key) {
                state.insert(key.clone(), value.clone());
            }
        }
        state
    }
}

fn pairs_as_object<S: serde::Serializer>(pairs: &[(String, String)], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(pairs.len()))?;
    for (key, value) in pairs {
        map.serialize_entry(key, value)?;
    }
    map.end()
}

enum Slot {
    Row(usize),
    Truncated,
}

fn is_reserved(name: &str) -> bool {
    name == ABSTAIN || name == NO_ACTION
}
