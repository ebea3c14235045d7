//! The candidate table and its heads, built from one host snapshot.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use foldhash::fast::RandomState;

use serde_json::{Map, Value};

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
    /// An operation from its name, its one-line description and whether it needs a row.
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
    /// The [`Operation::name`] that applies.
    pub operation: String,
    /// `Some` when the operation's parameter is chosen from these values (`row:option` ids).
    pub options: Option<Vec<ParamOption>>,
}

impl Applicable {
    /// An operation that takes no parameter (or a free one the host fills).
    pub fn plain(operation: &str) -> Applicable {
        Applicable { operation: operation.into(), options: None }
    }

    /// An operation whose parameter is one of `options`; each becomes a `row:option` id.
    pub fn with_options(operation: &str, options: Vec<ParamOption>) -> Applicable {
        Applicable { operation: operation.into(), options: Some(options) }
    }
}

/// One host object as the snapshot reports it. `id` is the host identity: it maps answers
/// back to the host and is never sent to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostObject<Id> {
    /// The host's identity for the object (never sent).
    pub id: Id,
    /// finding, operation, route, file, element, …
    pub kind: String,
    /// What the model sees the object as: a name, a title, a path.
    pub label: String,
    /// The current value or state.
    pub value: String,
    /// Further state the model may need (`checked`, `selected`, …), in order.
    pub state: Vec<(String, String)>,
    /// The operations that apply to the object; an object with none gets no row.
    pub applies: Vec<Applicable>,
}

/// One atomic read of an exact host revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot<Id> {
    /// The host's id for the revision read; answers carrying another are stale.
    pub revision: String,
    /// The objects, in the order rows are numbered.
    pub objects: Vec<HostObject<Id>>,
}

/// One row of the table. The host identity is kept apart, in the state, never in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Code-owned, 1-based, in order of first appearance.
    pub index: usize,
    /// The object's [`HostObject::kind`].
    pub kind: String,
    /// The object's [`HostObject::label`].
    pub label: String,
    /// The object's [`HostObject::value`].
    pub value: String,
    /// The object's [`HostObject::state`].
    pub state: Vec<(String, String)>,
    /// The operations that apply, in first-seen order, as positions in `DecisionState::operation_names`.
    pub(crate) operations: RowOperations,
    /// The enumerated values per operation position (only for operations that take one).
    pub(crate) options: Vec<(usize, Vec<ParamOption>)>,
}

/// How many operations a row holds without a heap allocation. Most objects take one or two
/// (an element is clicked, a field is typed into and clicked): a table of hundreds of rows
/// then needs no allocation per row for them.
const INLINE_OPERATIONS: usize = 3;

/// The operations of one row, in first-seen order, without repeats: the first
/// [`INLINE_OPERATIONS`] inline, any further ones on the heap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RowOperations {
    inline: [usize; INLINE_OPERATIONS],
    len: usize,
    spilled: Vec<usize>,
}

impl RowOperations {
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.inline.iter().take(self.len).chain(&self.spilled).copied()
    }

    fn contains(&self, op: usize) -> bool {
        self.iter().any(|o| o == op)
    }

    /// Add `op` unless present; `false` when it was already there.
    fn insert(&mut self, op: usize) -> bool {
        if self.contains(op) {
            return false;
        }
        match self.inline.get_mut(self.len) {
            Some(slot) => {
                *slot = op;
                self.len += 1;
            }
            None => self.spilled.push(op),
        }
        true
    }
}

impl Row {
    /// The enumerated values of the operation at position `op`, when it takes one.
    fn options_of(&self, op: usize) -> Option<&Vec<ParamOption>> {
        self.options.iter().find(|(o, _)| *o == op).map(|(_, options)| options)
    }
}

/// A row past the cap: recorded, never sent, never selectable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated<Id> {
    /// The 1-based index the row would have had.
    pub index: usize,
    /// The host identity of the object.
    pub id: Id,
    /// Its label.
    pub label: String,
}

/// What one offered target id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TargetRef {
    /// 0-based position in `rows`.
    pub row: usize,
    /// 0-based enumerated value of the operation on that row.
    pub option: Option<usize>,
}

/// One offered target head. `targets` is parallel to the head's criteria (same order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetHead {
    pub operation: String,
    pub head: String,
    pub targets: Vec<TargetRef>,
}

/// The columns of the table as sent; `state` only when some row has state attributes.
const COLUMNS: [&str; 4] = ["index", "kind", "label", "value"];

/// The indexed decision state of one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionState<Id> {
    pub(crate) revision: String,
    pub(crate) rows: Vec<Row>,
    pub(crate) identities: Vec<Id>,
    pub(crate) truncated: Vec<Truncated<Id>>,
    /// Every operation name any object mentioned, in first-seen order (rows point here).
    pub(crate) operation_names: Vec<String>,
    pub(crate) operations: Vec<Operation>,
    pub(crate) controls: Vec<String>,
    pub(crate) heads: Vec<TargetHead>,
    pub(crate) questions: Arc<Questions>,
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
    /// The snapshot is consumed: its strings move into the table instead of being copied.
    pub fn build(snapshot: Snapshot<Id>, eligible: &[Operation], config: &SpaceConfig) -> DecisionState<Id> {
        let visible = snapshot.objects.len().min(config.cap);
        let mut state = DecisionState {
            revision: snapshot.revision,
            rows: Vec::with_capacity(visible),
            identities: Vec::with_capacity(visible),
            truncated: Vec::new(),
            operation_names: Vec::new(),
            operations: Vec::new(),
            controls: Vec::new(),
            heads: Vec::new(),
            questions: Arc::new(Questions::new()),
        };
        // One index per host object, in order of first appearance, however often it appears.
        // Host identities are looked up once per object: a fast hash, seeded per process.
        let mut seen: HashMap<Id, Slot, RandomState> =
            HashMap::with_capacity_and_hasher(snapshot.objects.len(), RandomState::default());
        for object in snapshot.objects {
            match seen.get(&object.id) {
                Some(Slot::Row(row)) => {
                    let row = *row;
                    state.merge_into(row, object.applies);
                }
                Some(Slot::Truncated) => {}
                None if state.rows.len() < config.cap => {
                    let row = state.rows.len();
                    seen.insert(object.id.clone(), Slot::Row(row));
                    state.rows.push(Row {
                        index: row + 1,
                        kind: object.kind,
                        label: object.label,
                        value: object.value,
                        state: object.state,
                        operations: RowOperations::default(),
                        options: Vec::new(),
                    });
                    state.identities.push(object.id);
                    state.merge_into(row, object.applies);
                }
                None => {
                    seen.insert(object.id.clone(), Slot::Truncated);
                    let index = state.rows.len() + state.truncated.len() + 1;
                    state.truncated.push(Truncated { index, id: object.id, label: object.label });
                }
            }
        }
        state.build_heads(eligible, config);
        state
    }

    /// Add the operations of one appearance of an object to its row.
    fn merge_into(&mut self, row: usize, applies: Vec<Applicable>) {
        for applicable in applies {
            let op = match self.operation_names.iter().position(|n| *n == applicable.operation) {
                Some(op) => op,
                None => {
                    self.operation_names.push(applicable.operation);
                    self.operation_names.len() - 1
                }
            };
            let Some(target) = self.rows.get_mut(row) else { return };
            if !target.operations.insert(op) {
                continue;
            }
            if let Some(options) = applicable.options {
                target.options.push((op, options));
            }
        }
    }

    fn build_heads(&mut self, eligible: &[Operation], config: &SpaceConfig) {
        let mut operation_criteria: Vec<(String, String)> = Vec::with_capacity(eligible.len() + 2);
        let mut target_questions = Vec::new();
        for operation in eligible {
            if is_reserved(&operation.name) || operation_criteria.iter().any(|(n, _)| *n == operation.name) {
                continue;
            }
            if operation.needs_target {
                let Some((criteria, targets)) = self.targets_for(operation) else { continue };
                let head = operation.target_head();
                let instructions = format!(
                    "Assume the next operation is {name} ({}). This question cannot see the answer to `{OPERATION_HEAD}`. Which row should {name} act on? Choose only an offered id.",
                    operation.description,
                    name = operation.name
                );
                target_questions.push((head.clone(), WireQuestion::Choice { instructions, criteria }));
                self.heads.push(TargetHead { operation: operation.name.clone(), head, targets });
            } else {
                self.controls.push(operation.name.clone());
            }
            self.operations.push(operation.clone());
            operation_criteria.push((operation.name.clone(), operation.description.clone()));
        }
        operation_criteria.push((ABSTAIN.into(), ABSTAIN_CRITERION.into()));
        operation_criteria.push((NO_ACTION.into(), NO_ACTION_CRITERION.into()));
        let mut questions = Questions::new();
        questions.insert(
            OPERATION_HEAD,
            WireQuestion::Choice { instructions: config.instructions.clone(), criteria: operation_criteria },
        );
        for (head, question) in target_questions {
            questions.insert(head, question);
        }
        self.questions = Arc::new(questions);
    }

    /// The compatible, visible rows of an operation (`row` or `row:option` ids, with what
    /// each says about its row), or `None` when no row supports it.
    fn targets_for(&self, operation: &Operation) -> Option<(Criteria, Vec<TargetRef>)> {
        let op = self.operation_names.iter().position(|n| *n == operation.name)?;
        // Sized first, so that the vectors are allocated once rather than grown.
        let count: usize = self
            .rows
            .iter()
            .filter(|entry| entry.operations.contains(op))
            .map(|entry| entry.options_of(op).map_or(1, Vec::len))
            .sum();
        if count == 0 {
            return None;
        }
        let mut criteria = Vec::with_capacity(count);
        let mut targets = Vec::with_capacity(count);
        for (row, entry) in self.rows.iter().enumerate() {
            if !entry.operations.contains(op) {
                continue;
            }
            match entry.options_of(op) {
                Some(options) => {
                    for (k, option) in options.iter().enumerate() {
                        let mut id = String::with_capacity(8);
                        push_decimal(&mut id, entry.index);
                        id.push(':');
                        push_decimal(&mut id, k + 1);
                        let text = describe(&id, entry, Some(&option.label));
                        criteria.push((id, text));
                        targets.push(TargetRef { row, option: Some(k) });
                    }
                }
                None => {
                    let mut id = String::with_capacity(4);
                    push_decimal(&mut id, entry.index);
                    let text = describe(&id, entry, None);
                    criteria.push((id, text));
                    targets.push(TargetRef { row, option: None });
                }
            }
        }
        (!targets.is_empty()).then_some((criteria, targets))
    }

    /// The `k`-th (0-based) enumerated value of `operation` on row `row`.
    pub(crate) fn option(&self, row: usize, operation: &str, k: usize) -> Option<&ParamOption> {
        let op = self.operation_names.iter().position(|n| n == operation)?;
        self.rows.get(row)?.options_of(op)?.get(k)
    }

    /// The snapshot's revision.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The offered rows, in index order (at most the cap).
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The operations that apply to the row at 0-based position `row`, in first-seen order.
    pub fn row_operations(&self, row: usize) -> Vec<&str> {
        let names = &self.operation_names;
        self.rows
            .get(row)
            .map(|r| r.operations.iter().filter_map(|op| names.get(op).map(String::as_str)).collect())
            .unwrap_or_default()
    }

    /// Rows past the cap, with their host identities (for the record; never offered).
    pub fn truncated(&self) -> &[Truncated<Id>] {
        &self.truncated
    }

    /// The offered operations (controls included), in order, without `ABSTAIN`/`NO_ACTION`.
    pub fn operations(&self) -> Vec<&str> {
        self.operations.iter().map(|o| o.name.as_str()).collect()
    }

    /// Every head (the operation head first), all sent in one request: shared, so a request
    /// built from it ([`DecisionState::state`] as its state) copies nothing.
    pub fn questions(&self) -> &Arc<Questions> {
        &self.questions
    }

    /// The offered ids of a target head.
    pub fn target_ids(&self, head: &str) -> Vec<&str> {
        self.questions
            .get(head)
            .filter(|_| head != OPERATION_HEAD)
            .map(|q| match q {
                WireQuestion::Choice { criteria, .. } => criteria.iter().map(|(id, _)| id.as_str()).collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default()
    }

    /// The state sent with the heads: the revision, the table (`columns`, then one array per
    /// row), how many rows were truncated, then the host's own `context` cells (which cannot
    /// replace those keys).
    pub fn state(&self, context: &Map<String, Value>) -> Map<String, Value> {
        let with_state = self.rows.iter().any(|r| !r.state.is_empty());
        let mut columns: Vec<Value> = COLUMNS.iter().map(|c| Value::from(*c)).collect();
        if with_state {
            columns.push(Value::from("state"));
        }
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut cells = Vec::with_capacity(5);
                cells.push(Value::from(r.index));
                cells.push(Value::String(r.kind.clone()));
                cells.push(Value::String(r.label.clone()));
                cells.push(Value::String(r.value.clone()));
                if with_state {
                    let attributes: Map<String, Value> =
                        r.state.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
                    cells.push(Value::Object(attributes));
                }
                Value::Array(cells)
            })
            .collect();
        let mut state = Map::with_capacity(4 + context.len());
        state.insert("revision".into(), Value::String(self.revision.clone()));
        state.insert("columns".into(), Value::Array(columns));
        state.insert("rows".into(), Value::Array(rows));
        state.insert("truncated_rows".into(), Value::from(self.truncated.len()));
        for (key, value) in context {
            if !state.contains_key(key) {
                state.insert(key.clone(), value.clone());
            }
        }
        state
    }
}

/// `[id] label (kind); current value: "…"; key=value…` — what a target head says of a row,
/// with ` → option` for an enumerated value. Built with plain pushes: this runs once per
/// offered target, hundreds of times per step.
fn describe(id: &str, row: &Row, option: Option<&str>) -> String {
    let extra: usize = row.state.iter().map(|(k, v)| k.len() + v.len() + 3).sum();
    let mut text = String::with_capacity(id.len() + row.label.len() + row.kind.len() + row.value.len() + extra + 40);
    text.push('[');
    text.push_str(id);
    text.push_str("] ");
    text.push_str(&row.label);
    if let Some(option) = option {
        text.push_str(" → ");
        text.push_str(option);
    }
    text.push_str(" (");
    text.push_str(&row.kind);
    text.push_str("); current value: \"");
    text.push_str(&row.value);
    text.push('"');
    for (key, value) in &row.state {
        text.push_str("; ");
        text.push_str(key);
        text.push('=');
        text.push_str(value);
    }
    text
}

/// Append `n` in decimal. Target ids are written hundreds of times per step; this avoids the
/// formatting machinery and a temporary string per id.
fn push_decimal(text: &mut String, mut n: usize) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        if let Some(digit) = digits.get_mut(start) {
            // `n % 10` is below 10: the cast cannot truncate.
            *digit = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || start == 0 {
            break;
        }
    }
    for digit in digits.iter().skip(start) {
        text.push(char::from(*digit));
    }
}

/// `(id, when to pick it)` pairs of a choice head.
type Criteria = Vec<(String, String)>;

enum Slot {
    Row(usize),
    Truncated,
}

fn is_reserved(name: &str) -> bool {
    name == ABSTAIN || name == NO_ACTION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_operations_keep_first_seen_order_without_repeats_past_the_inline_slots() {
        let mut operations = RowOperations::default();
        for op in [4, 1, 4, 7, 2, 1, 9, 2] {
            operations.insert(op);
        }
        assert_eq!(operations.iter().collect::<Vec<_>>(), [4, 1, 7, 2, 9]);
        assert!(operations.contains(9) && operations.contains(4));
        assert!(!operations.contains(3));
        assert!(!operations.insert(7), "a repeat is refused");
        assert_eq!(operations.spilled, [2, 9], "only the operations past the inline slots are on the heap");
    }

    #[test]
    fn decimals_match_the_formatter() {
        for n in [0, 1, 9, 10, 99, 100, 250, 1_000_007, usize::MAX] {
            let mut text = String::from("x");
            push_decimal(&mut text, n);
            assert_eq!(text, format!("x{n}"));
        }
    }

    #[test]
    fn a_row_with_many_operations_offers_each_head_once() {
        let names = ["A", "B", "C", "D", "E"];
        let applies = names.iter().chain(&names).map(|name| Applicable::plain(name)).collect();
        let object =
            HostObject { id: 1, kind: "k".into(), label: "l".into(), value: String::new(), state: vec![], applies };
        let eligible: Vec<Operation> = names.iter().map(|name| Operation::new(name, "d", true)).collect();
        let snapshot = Snapshot { revision: "r".into(), objects: vec![object] };
        let state = DecisionState::build(snapshot, &eligible, &SpaceConfig::default());
        assert_eq!(state.row_operations(0), names);
        for name in names {
            assert_eq!(state.target_ids(&format!("{}_target", name.to_lowercase())), ["1"]);
        }
    }
}
