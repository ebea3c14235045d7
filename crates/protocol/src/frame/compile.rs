//! `compileFrame` (`runtime.md` §2.3) and the frame artifact (§2.11).

use std::borrow::Cow;
use std::sync::Arc;

use crate::digest::{ObjectText, write_string};
use serde_json::{Map, Value};
use thiserror::Error;

use super::projections::{HostState, Projections};
use super::{HostCells, UNTRUSTED_PROVENANCE, clip, mark_untrusted, utf16_len};
use crate::frame::SharedState;

/// How untrusted values are marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Byte for byte the reference: only strings are wrapped; untrusted lists and counts
    /// are merely listed in `untrusted`.
    Reference,
    /// Strings are wrapped as in the reference, and every other non-empty value from an
    /// untrusted cell becomes `{"provenance": "untrusted tool output — …", "value": v}`, so
    /// the mark is inside the state and covered by the digest.
    #[default]
    Provenance,
}

/// One frame field: `+ key bound [projection] —— why`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    /// The name the model sees.
    pub key: String,
    /// The cell it reads: the projection's declared cell, or the key itself.
    pub from: String,
    /// The budget: UTF-16 units for strings, items for lists (`chars = listMax = bound`).
    pub bound: Option<u64>,
    /// The projection that computes the value from host state; `None` reads the cell
    /// `from` as it is.
    pub projection: Option<String>,
    /// The contract's `—— why` text, carried into `unfilled` and `absent` entries.
    pub why: String,
}

/// A frame declaration: `FrameSpec = {node, fields, excluded}`.
#[derive(Debug, Clone)]
pub struct FrameSpec {
    /// The node id that goes into the digest.
    pub node: String,
    /// The fields, in declaration order (which is the frame state's key order).
    pub fields: Vec<FieldSpec>,
    /// `[cell, why]` pairs, shared with every frame compiled from this spec.
    pub excluded: Arc<FixedList<(String, String)>>,
    /// `{key, from}` of every field, shared with every frame compiled from this spec (made
    /// again by [`compile_frame`] if `fields` was changed since).
    field_refs: Arc<FixedList<FieldRef>>,
}

/// Specs are equal when they declare the same frame (the shared `{key, from}` list is made
/// from `fields`).
impl PartialEq for FrameSpec {
    fn eq(&self, other: &FrameSpec) -> bool {
        self.node == other.node && self.fields == other.fields && self.excluded == other.excluded
    }
}

impl Eq for FrameSpec {}

/// A list a frame spec fixes, shared by every frame compiled from it, together with its
/// `JSON.stringify` text, so that the text is written once per spec instead of once per
/// record. It cannot change after it is made, so the text always matches the items.
///
/// A performance detail of [`FrameArtifact`] that a host sees only as a slice (it derefs
/// to `[T]`); it is built for `T` = [`FieldRef`] and `(cell, why)` pairs only.
#[derive(Debug, PartialEq, Eq)]
pub struct FixedList<T> {
    items: Vec<T>,
    json: String,
}

/// How an item of a [`FixedList`] is written. Not re-exported: the trait is sealed, so the
/// item types stay the two a frame artifact holds.
pub trait JsonItem {
    /// Appends the item's `JSON.stringify` text to `out`.
    fn write_json(&self, out: &mut String);
}

impl JsonItem for FieldRef {
    /// `{"key":…,"from":…}`.
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"key\":");
        write_string(&self.key, out);
        out.push_str(",\"from\":");
        write_string(&self.from, out);
        out.push('}');
    }
}

impl JsonItem for (String, String) {
    /// `[cell,why]`.
    fn write_json(&self, out: &mut String) {
        out.push('[');
        write_string(&self.0, out);
        out.push(',');
        write_string(&self.1, out);
        out.push(']');
    }
}

impl<T: JsonItem> FixedList<T> {
    /// Fixes `items` and writes their JSON text once.
    pub fn new(items: Vec<T>) -> Self {
        let mut json = String::from("[");
        for (index, item) in items.iter().enumerate() {
            if index > 0 {
                json.push(',');
            }
            item.write_json(&mut json);
        }
        json.push(']');
        FixedList { items, json }
    }
}

impl<T> FixedList<T> {
    /// `JSON.stringify` of the list.
    pub fn json(&self) -> &str {
        &self.json
    }
}

impl<T> std::ops::Deref for FixedList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T: JsonItem> From<Vec<T>> for FixedList<T> {
    fn from(items: Vec<T>) -> Self {
        FixedList::new(items)
    }
}

/// The `{key, from}` list of a spec's fields.
fn field_refs(fields: &[FieldSpec]) -> FixedList<FieldRef> {
    FixedList::new(fields.iter().map(|f| FieldRef { key: f.key.clone(), from: f.from.clone() }).collect())
}

/// Why [`FrameSpec::from_block`] cannot make a frame spec of a block for this host.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FrameSpecError {
    /// The block declares no `frame:` at all.
    #[error("block `{block}` has no `frame:`")]
    NoFrame {
        /// The block id.
        block: String,
    },
    /// A field names a projection that is neither standard nor registered by the host.
    #[error("field `{key}` uses unknown projection `{projection}`")]
    UnknownProjection {
        /// The field's key.
        key: String,
        /// The projection name as written.
        projection: String,
    },
    /// The vocabulary declares the projection, but this runtime has no body for it, so the
    /// field cannot be filled (rather than being dropped without a word).
    #[error("field `{key}` uses standard projection `{projection}`, which is declared but has no body in this runtime")]
    ProjectionWithoutBody {
        /// The field's key.
        key: String,
        /// The declared projection.
        projection: String,
    },
    /// A field without projection reads the cell named like its key, and the host has none.
    #[error("field `{key}` has no projection and is not a state cell of this host")]
    UnknownCell {
        /// The field's key.
        key: String,
    },
    /// An `excluded:` entry names a cell the host does not have.
    #[error("excluded cell `{cell}` is not a state cell of this host")]
    UnknownExcludedCell {
        /// The cell as written.
        cell: String,
    },
}

/// The reference's node id for one of its seven blocks (`needs_tool` → `loop.needsTool`).
pub fn reference_node_id(block_id: &str) -> Option<&'static str> {
    Some(match block_id {
        "needs_tool" => "loop.needsTool",
        "pick_tool" => "loop.pickTool",
        "pick_input" => "loop.pickInput",
        "grade_risk" => "loop.gradeRisk",
        "step_ok" => "loop.stepOk",
        "is_done" => "loop.isDone",
        "can_deliver" => "loop.canDeliver",
        _ => return None,
    })
}

impl FrameSpec {
    /// Compiles a contract block's `frame:` as `frameSpecFromBlock` does: `from` is the
    /// projection's cell or the key itself; unknown projections and cells are refused.
    pub fn from_block(
        node: &str,
        block: &decision_core::Block,
        cells: &HostCells,
        projections: &Projections,
    ) -> Result<FrameSpec, FrameSpecError> {
        let frame = block.frame.as_ref().ok_or_else(|| FrameSpecError::NoFrame { block: block.id.clone() })?;
        let mut fields = Vec::with_capacity(frame.fields.len());
        for field in &frame.fields {
            let from = match &field.projection {
                Some(name) => match projections.get(name) {
                    Some(projection) => projection.reads.clone(),
                    None if projections.without_body().contains(name) => {
                        return Err(FrameSpecError::ProjectionWithoutBody {
                            key: field.key.clone(),
                            projection: name.clone(),
                        });
                    }
                    None => {
                        return Err(FrameSpecError::UnknownProjection {
                            key: field.key.clone(),
                            projection: name.clone(),
                        });
                    }
                },
                None if cells.get(&field.key).is_some() => field.key.clone(),
                None => return Err(FrameSpecError::UnknownCell { key: field.key.clone() }),
            };
            fields.push(FieldSpec {
                key: field.key.clone(),
                from,
                bound: Some(field.bound),
                projection: field.projection.clone(),
                why: field.why.clone(),
            });
        }
        let mut excluded = Vec::with_capacity(frame.excluded.len());
        for e in &frame.excluded {
            if cells.get(&e.field).is_none() {
                return Err(FrameSpecError::UnknownExcludedCell { cell: e.field.clone() });
            }
            excluded.push((e.field.clone(), e.why.clone()));
        }
        let field_refs = Arc::new(field_refs(&fields));
        Ok(FrameSpec { node: node.to_owned(), fields, excluded: Arc::new(excluded.into()), field_refs })
    }
}

/// `{key, from}`: which cell a frame key was read from (an entry of the artifact's `fields`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRef {
    /// The key in the frame state.
    pub key: String,
    /// The source cell.
    pub from: String,
}

/// `{key, from, to}`: `from` is the original length, `to` the bound (not the result length).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// The frame key that was cut.
    pub key: String,
    /// The value's length before the cut: UTF-16 units for a string, items for a list.
    pub from: usize,
    /// The field's bound, in the same unit.
    pub to: u64,
}

/// The spec wants a cell the host state does not have (`runtime.md` §2.6). The field may
/// still have a value: its projection's default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfilled {
    /// The frame key.
    pub key: String,
    /// The missing cell.
    pub from: String,
    /// The field's `why`.
    pub why: String,
}

/// The projection said "not applicable": the key is left out of the state (`runtime.md` §2.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Absent {
    /// The frame key that was left out.
    pub key: String,
    /// The field's `why`.
    pub why: String,
}

/// A compiled frame: what the model sees, and the record of how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameArtifact {
    /// The node id the digest was computed under.
    pub node: String,
    /// What the model sees: frame key → bounded, marked value, in field order. Shared with
    /// the request that sends it and the decision that records it.
    pub state: SharedState,
    /// `frameDigest(node, state)`: 16 lowercase hex characters.
    pub digest: String,
    /// `{key, from}` of every declared field, absent ones included.
    pub fields: Arc<FixedList<FieldRef>>,
    /// The keys whose values came from an untrusted cell, in field order.
    pub untrusted: Vec<String>,
    /// The values cut to their bound.
    pub truncated: Vec<Truncation>,
    /// The fields whose cell the host state lacked.
    pub unfilled: Vec<Unfilled>,
    /// The fields their projection declared not applicable (left out of `state`).
    pub absent: Vec<Absent>,
    /// The spec's `[cell, why]` exclusions, which decide what may merge.
    pub excluded: Arc<FixedList<(String, String)>>,
    /// How untrusted values were marked.
    pub mode: Mode,
    /// The state's text, written when the frame was compiled (its digest was hashed from it).
    pub state_text: StateText,
}

/// The JSON text of a frame's state, kept with the state it was written from: it is used
/// only while the frame's state is still that same shared object (which cannot change while
/// this holds it). A cache, not part of the frame: it never makes two frames differ.
#[derive(Debug, Clone, Default)]
pub struct StateText(Option<(SharedState, ObjectText)>);

impl StateText {
    /// Writes the text of `state`.
    pub fn written(state: &SharedState) -> StateText {
        StateText(Some((Arc::clone(state), ObjectText::new(state))))
    }

    /// The text of `state`, when this was written from it.
    pub fn of(&self, state: &SharedState) -> Option<&str> {
        match &self.0 {
            Some((of, text)) if Arc::ptr_eq(of, state) => Some(text.text()),
            _ => None,
        }
    }
}

impl PartialEq for StateText {
    fn eq(&self, _: &StateText) -> bool {
        true
    }
}

impl FrameArtifact {
    /// The artifact in the reference's key order. In provenance mode a `provenance` list
    /// follows: for each untrusted key, its source cell and how the state marks it.
    pub fn to_value(&self) -> Value {
        self.clone().into_value()
    }

    /// [`FrameArtifact::to_value`], moving the names and lists instead of copying them (the
    /// state is copied when it is still shared).
    pub fn into_value(self) -> Value {
        let provenance = (self.mode == Mode::Provenance).then(|| self.provenance());
        let mut v = Map::with_capacity(10);
        v.insert("node".into(), Value::String(self.node));
        v.insert("state".into(), Value::Object(Arc::unwrap_or_clone(self.state)));
        v.insert("digest".into(), Value::String(self.digest));
        let fields =
            self.fields.iter().map(|f| object([("key", f.key.as_str().into()), ("from", f.from.as_str().into())]));
        v.insert("fields".into(), fields.collect());
        v.insert("untrusted".into(), self.untrusted.into_iter().map(Value::String).collect());
        let truncated = self
            .truncated
            .into_iter()
            .map(|t| object([("key", t.key.into()), ("from", t.from.into()), ("to", t.to.into())]));
        v.insert("truncated".into(), truncated.collect());
        let unfilled = self
            .unfilled
            .into_iter()
            .map(|u| object([("key", u.key.into()), ("from", u.from.into()), ("why", u.why.into())]));
        v.insert("unfilled".into(), unfilled.collect());
        let absent = self.absent.into_iter().map(|a| object([("key", a.key.into()), ("why", a.why.into())]));
        v.insert("absent".into(), absent.collect());
        let excluded = self.excluded.iter().map(|(c, w)| Value::Array(vec![c.as_str().into(), w.as_str().into()]));
        v.insert("excluded".into(), excluded.collect());
        if let Some(provenance) = provenance {
            v.insert("provenance".into(), Value::Array(provenance));
        }
        Value::Object(v)
    }

    /// The provenance entries: `(key, source cell, how the state marks it)` for each
    /// untrusted key that names a field.
    pub fn provenance_entries(&self) -> impl Iterator<Item = (&str, &str, &'static str)> {
        self.untrusted.iter().filter_map(|key| {
            let from = self.fields.iter().find(|f| &f.key == key).map(|f| f.from.as_str())?;
            let marked = match self.state.get(key) {
                Some(Value::String(s)) if s.is_empty() => "empty",
                Some(Value::String(_)) => "markers",
                Some(Value::Array(a)) if a.is_empty() => "empty",
                Some(_) => "wrapper",
                None => "absent",
            };
            Some((key.as_str(), from, marked))
        })
    }

    /// For each untrusted key, its source cell and how the state marks it.
    fn provenance(&self) -> Vec<Value> {
        self.provenance_entries()
            .map(|(key, from, marked)| {
                object([
                    ("key", key.into()),
                    ("from", from.into()),
                    ("trust", "untrusted".into()),
                    ("marked", marked.into()),
                ])
            })
            .collect()
    }
}

/// A JSON object of a few members, in the order given.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// Compiles a frame from host state, exactly as the reference does (in [`Mode::Reference`]).
pub fn compile_frame(
    spec: &FrameSpec,
    state: &HostState,
    cells: &HostCells,
    projections: &Projections,
    mode: Mode,
) -> FrameArtifact {
    let mut out = Map::with_capacity(spec.fields.len());
    let mut untrusted = Vec::new();
    let mut truncated = Vec::new();
    let mut unfilled = Vec::new();
    let mut absent = Vec::new();
    for field in &spec.fields {
        let cell = state.get(&field.from);
        // 1. Not fed: recorded whatever the projection then supplies.
        if cell.is_none() {
            unfilled.push(Unfilled { key: field.key.clone(), from: field.from.clone(), why: field.why.clone() });
        }
        // 2. Not applicable: the key is left out entirely. A cell read directly is borrowed:
        // only what goes into the frame is copied.
        let projection = field.projection.as_deref().and_then(|name| projections.get(name));
        let raw: Option<Cow<'_, Value>> = match projection {
            Some(p) => p.value(state),
            None if field.projection.is_some() => None,
            None => cell.map(Cow::Borrowed),
        };
        let Some(raw) = raw else {
            absent.push(Absent { key: field.key.clone(), why: field.why.clone() });
            continue;
        };
        // 3. Trust depends only on the source cell.
        let is_untrusted = cells.is_untrusted(&field.from);
        if is_untrusted {
            untrusted.push(field.key.clone());
        }
        let value = match &*raw {
            // 4. Lists are cut to their bound; items are neither clipped nor wrapped.
            Value::Array(items) => {
                let max = field.bound.map_or(items.len(), |b| usize::try_from(b).unwrap_or(usize::MAX));
                let items = if items.len() > max {
                    truncated.push(Truncation { key: field.key.clone(), from: items.len(), to: max as u64 });
                    items.iter().take(max).cloned().collect()
                } else {
                    match raw {
                        Cow::Owned(Value::Array(items)) => items,
                        _ => items.clone(),
                    }
                };
                provenance(Value::Array(items), is_untrusted, mode)
            }
            // 5. Strings are clipped first, then wrapped, so the marker is never cut off.
            Value::String(text) => {
                let limit = field.bound.map(|chars| usize::try_from(chars).unwrap_or(usize::MAX));
                // A string has no more UTF-16 units than UTF-8 bytes: short ones need no count.
                let clipped = match limit {
                    Some(max) if text.len() > max && utf16_len(text) > max => {
                        truncated.push(Truncation { key: field.key.clone(), from: utf16_len(text), to: max as u64 });
                        Cow::Owned(clip(text, max))
                    }
                    _ => Cow::Borrowed(text.as_str()),
                };
                Value::String(if is_untrusted { mark_untrusted(&clipped) } else { clipped.into_owned() })
            }
            // 6. Numbers, booleans and objects pass unchanged.
            _ => provenance(raw.into_owned(), is_untrusted, mode),
        };
        out.insert(field.key.clone(), value);
    }
    // The state is written once: its digest is hashed from that text, and the record copies it.
    let text = ObjectText::new(&out);
    let digest = text.frame_digest(&spec.node);
    let state = Arc::new(out);
    FrameArtifact {
        node: spec.node.clone(),
        state_text: StateText(Some((Arc::clone(&state), text))),
        state,
        digest,
        fields: shared_field_refs(spec),
        untrusted,
        truncated,
        unfilled,
        absent,
        excluded: Arc::clone(&spec.excluded),
        mode,
    }
}

/// The spec's `{key, from}` list: the shared one, unless `fields` was changed after the spec
/// was made.
fn shared_field_refs(spec: &FrameSpec) -> Arc<FixedList<FieldRef>> {
    let current = spec.field_refs.len() == spec.fields.len()
        && spec.field_refs.iter().zip(&spec.fields).all(|(r, f)| r.key == f.key && r.from == f.from);
    match current {
        true => Arc::clone(&spec.field_refs),
        false => Arc::new(field_refs(&spec.fields)),
    }
}

/// In provenance mode, a non-empty non-string value from an untrusted cell is wrapped with
/// its provenance; an empty list carries nothing to distrust (like the empty string).
fn provenance(value: Value, is_untrusted: bool, mode: Mode) -> Value {
    let empty = matches!(&value, Value::Array(a) if a.is_empty());
    if mode == Mode::Provenance && is_untrusted && !empty {
        object([("provenance", Value::from(UNTRUSTED_PROVENANCE)), ("value", value)])
    } else {
        value
    }
}
