//! Deliverables: the machine-checkable shape a tool's ok value must have, and the check that
//! turns a failure into exactly one typed violation.
//!
//! Why not the `jsonschema` crate, although a deliverable maps onto JSON Schema:
//! * declared `aliases` have no JSON Schema counterpart that keeps the failure typed — they
//!   would become `anyOf` branches whose errors collapse into one "anyOf" kind, losing
//!   `missing_required_key` and the list of missing keys;
//! * a violation must name every missing key at once and be the first failure in declaration
//!   order, deterministically; JSON Schema validators report one error per key in their own
//!   order;
//! * `non_empty` means "not blank after trimming whitespace", which no keyword expresses without
//!   a regular-expression engine;
//! * its default features pull an HTTP client and TLS stack into the runtime for `$ref`
//!   resolution that contracts never need.
//!
//! The check below allocates nothing while a value holds: the path is linked through the call
//! stack and turned into a JSON pointer only for a violation, and small objects are matched by
//! one scan of their members instead of hashing each declared key.
//!
//! Checking order, first failure wins: the type; then for objects all `required` keys (missing
//! ones reported together), then each declared property in declaration order; for arrays
//! `min_items`, `max_items`, then each item in order; for strings `non_empty`; `enum` last.
//! A declared property that is absent is not a failure: presence is what `required` is for.

use serde_json::{Map, Value};

use super::shape::{is_integral, json_equal, pointer_child, shape_of};

/// The JSON types a deliverable can declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
    /// A JSON string.
    String,
    /// Any JSON number, integral or not.
    Number,
    /// A number without a fractional part (`1.0` counts).
    Integer,
    /// `true` or `false`.
    Boolean,
    /// `null`.
    Null,
}

impl JsonType {
    /// Every type, in the order of the deliverable vocabulary (outcomes.md, decision 3).
    pub const ALL: [JsonType; 7] = [
        JsonType::Object,
        JsonType::Array,
        JsonType::String,
        JsonType::Number,
        JsonType::Integer,
        JsonType::Boolean,
        JsonType::Null,
    ];

    /// The name a contract's `type` keyword uses (lowercase).
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Object => "object",
            JsonType::Array => "array",
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Null => "null",
        }
    }

    /// Exact name match; no trimming or case folding.
    pub fn from_name(name: &str) -> Option<JsonType> {
        JsonType::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// Whether a value is of this type. `number` admits integers; `integer` admits `1.0`.
    pub fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::Object, Value::Object(_))
            | (JsonType::Array, Value::Array(_))
            | (JsonType::String, Value::String(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Null, Value::Null) => true,
            (JsonType::Integer, Value::Number(number)) => is_integral(number),
            _ => false,
        }
    }
}

/// A key the deliverable names, with the alternative names declared for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The canonical key, matched exactly (no case or style folding).
    pub name: String,
    /// Alternative names accepted in its place, in declared order; a use is recorded as an
    /// [`AliasUse`]. Empty when none are declared.
    pub aliases: Vec<String>,
}

/// What an object deliverable declares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectShape {
    required: Vec<Key>,
    properties: Vec<(Key, Deliverable)>,
    /// Every declared key once, in declaration order (required first).
    slot_names: Vec<String>,
    /// For each required key and each property, its index in `slot_names`.
    required_slots: Vec<usize>,
    property_slots: Vec<usize>,
    has_aliases: bool,
}

/// Objects with at most this many declared keys and members are matched by one linear scan
/// of their members (no hashing); larger ones use map lookups.
const SCAN_LIMIT: usize = 16;

impl ObjectShape {
    /// An object shape from its `required` keys and its declared `properties`, both in
    /// declaration order (which is the checking order).
    pub fn new(required: Vec<Key>, properties: Vec<(Key, Deliverable)>) -> ObjectShape {
        let mut slot_names: Vec<String> = Vec::new();
        let mut slot_of = |name: &str| match slot_names.iter().position(|known| known == name) {
            Some(slot) => slot,
            None => {
                slot_names.push(name.to_owned());
                slot_names.len() - 1
            }
        };
        let required_slots = required.iter().map(|key| slot_of(&key.name)).collect();
        let property_slots = properties.iter().map(|(key, _)| slot_of(&key.name)).collect();
        let has_aliases =
            required.iter().chain(properties.iter().map(|(key, _)| key)).any(|key| !key.aliases.is_empty());
        ObjectShape { required, properties, slot_names, required_slots, property_slots, has_aliases }
    }

    /// The keys that must be present, in declaration order.
    pub fn required(&self) -> &[Key] {
        &self.required
    }

    /// The declared properties with the deliverable each must hold when present.
    pub fn properties(&self) -> &[(Key, Deliverable)] {
        &self.properties
    }
}

/// What an array deliverable declares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArrayShape {
    /// The deliverable every item must hold; `None` leaves items unchecked.
    pub items: Option<Box<Deliverable>>,
    /// The fewest items allowed (inclusive); `None` for no lower bound.
    pub min_items: Option<u64>,
    /// The most items allowed (inclusive); `None` for no upper bound.
    pub max_items: Option<u64>,
}

/// The type-specific part of a deliverable. Keywords that cannot apply to a type have no
/// place to be stored, so a loaded deliverable cannot hold a misplaced constraint.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// No `type` declared: any value (only `enum` may constrain it).
    Any,
    /// `type: object`, with its required keys and properties.
    Object(ObjectShape),
    /// `type: array`, with its item deliverable and bounds.
    Array(ArrayShape),
    /// `type: string`.
    String {
        /// `non_empty: true`: the string must not be blank after trimming whitespace.
        non_empty: bool,
    },
    /// `type: number` (integers included).
    Number,
    /// `type: integer`.
    Integer,
    /// `type: boolean`.
    Boolean,
    /// `type: null`.
    Null,
}

/// A compiled deliverable.
#[derive(Debug, Clone, PartialEq)]
pub struct Deliverable {
    /// The type and its type-specific constraints.
    pub shape: Shape,
    /// `enum`: the value must equal one of these (numbers compared mathematically); `None`
    /// when no `enum` is declared. Checked after the shape.
    pub enum_values: Option<Vec<Value>>,
}

/// The six mismatch kinds a contract violation can report.
/// Serialised (in the violation's metadata `mismatch`) by [`Mismatch::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Mismatch {
    /// The value is not of the declared type.
    TypeMismatch,
    /// An object lacks one or more `required` keys (and none of their aliases is present).
    MissingRequiredKey,
    /// An array has fewer items than `min_items`.
    MinItemsViolation,
    /// An array has more items than `max_items`.
    MaxItemsViolation,
    /// The value is none of the declared `enum` values.
    EnumMismatch,
    /// A `non_empty` string is blank.
    EmptyValue,
}

impl Mismatch {
    /// Every kind, in the order reports list them.
    pub const ALL: [Mismatch; 6] = [
        Mismatch::TypeMismatch,
        Mismatch::MissingRequiredKey,
        Mismatch::MinItemsViolation,
        Mismatch::MaxItemsViolation,
        Mismatch::EnumMismatch,
        Mismatch::EmptyValue,
    ];

    /// The snake-case name used in metadata, reports and logs (e.g. `missing_required_key`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mismatch::TypeMismatch => "type_mismatch",
            Mismatch::MissingRequiredKey => "missing_required_key",
            Mismatch::MinItemsViolation => "min_items_violation",
            Mismatch::MaxItemsViolation => "max_items_violation",
            Mismatch::EnumMismatch => "enum_mismatch",
            Mismatch::EmptyValue => "empty_value",
        }
    }
}

/// Why a value does not hold its deliverable.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Which check failed.
    pub mismatch: Mismatch,
    /// JSON pointer to the failing value inside the ok value; `""` is the value itself.
    pub path: String,
    /// The declared type (`any` when none is declared).
    pub expected_shape: &'static str,
    /// The shape of the failing value.
    pub actual_shape: &'static str,
    /// For `missing_required_key`, every missing key in declaration order; empty otherwise.
    pub missing_keys: Vec<String>,
    /// For `min_items_violation`, the declared minimum; `None` otherwise.
    pub expected_min_items: Option<u64>,
    /// For `max_items_violation`, the declared maximum; `None` otherwise.
    pub expected_max_items: Option<u64>,
    /// For an item-count violation, how many items the array has; `None` otherwise.
    pub actual_items: Option<u64>,
    /// For `enum_mismatch`: the value found and the declared values, as compact JSON (each
    /// clipped, so a long tool output cannot flood a message); empty otherwise. Not part of
    /// the outcome's metadata, whose members are fixed.
    pub enum_found: Option<String>,
    /// For `enum_mismatch`: the declared values, each as clipped compact JSON.
    pub enum_allowed: Vec<String>,
}

/// How much of a value an `enum_mismatch` message shows, in characters.
const SHOWN_VALUE_CHARS: usize = 60;

/// A value as compact JSON (which escapes control characters), clipped to
/// [`SHOWN_VALUE_CHARS`].
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(SHOWN_VALUE_CHARS) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or_default()),
        None => text,
    }
}

impl Violation {
    /// The metadata of the `contract_violation` outcome, in a fixed member order.
    pub fn metadata(&self) -> Map<String, Value> {
        let mut metadata = Map::new();
        metadata.insert("mismatch".into(), Value::from(self.mismatch.as_str()));
        metadata.insert("path".into(), Value::from(self.path.clone()));
        metadata.insert("expected_shape".into(), Value::from(self.expected_shape));
        metadata.insert("actual_shape".into(), Value::from(self.actual_shape));
        metadata.insert("missing_keys".into(), Value::from(self.missing_keys.clone()));
        if let Some(min) = self.expected_min_items {
            metadata.insert("expected_min_items".into(), Value::from(min));
        }
        if let Some(max) = self.expected_max_items {
            metadata.insert("expected_max_items".into(), Value::from(max));
        }
        if let Some(actual) = self.actual_items {
            metadata.insert("actual_items".into(), Value::from(actual));
        }
        metadata
    }

    /// A one-line human description.
    pub fn describe(&self) -> String {
        let place = if self.path.is_empty() { "the value".to_owned() } else { format!("`{}`", self.path) };
        match self.mismatch {
            Mismatch::TypeMismatch => {
                format!("{place} is {} but the contract expects {}", self.actual_shape, self.expected_shape)
            }
            Mismatch::MissingRequiredKey => format!("{place} lacks required key(s) {}", self.missing_keys.join(", ")),
            Mismatch::MinItemsViolation => format!(
                "{place} has {} item(s), fewer than the required {}",
                self.actual_items.unwrap_or_default(),
                self.expected_min_items.unwrap_or_default()
            ),
            Mismatch::MaxItemsViolation => format!(
                "{place} has {} item(s), more than the allowed {}",
                self.actual_items.unwrap_or_default(),
                self.expected_max_items.unwrap_or_default()
            ),
            Mismatch::EnumMismatch => match &self.enum_found {
                Some(found) => format!(
                    "{place} is {found}, which is not one of the declared enum values ({})",
                    self.enum_allowed.join(", ")
                ),
                None => format!("{place} is not one of the declared enum values"),
            },
            Mismatch::EmptyValue => format!("{place} is an empty string but the contract requires non-empty"),
        }
    }
}

/// A declared alias that was used to satisfy a key, recorded so tolerance is never silent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasUse {
    /// JSON pointer of the object holding the key.
    pub object_path: String,
    /// The canonical key the contract declares.
    pub key: String,
    /// The alias the value actually used in its place.
    pub alias: String,
}

/// One step of the path from the root to the value being checked.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// The path to the value being checked, linked through the call stack so that checking
/// allocates nothing; the JSON pointer is built only when a violation or alias needs it.
#[derive(Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Option<Step<'a>>,
}

impl<'a> Path<'a> {
    const ROOT: Path<'static> = Path { parent: None, step: None };

    fn child(&'a self, step: Step<'a>) -> Path<'a> {
        Path { parent: Some(self), step: Some(step) }
    }

    fn pointer(&self) -> String {
        let mut steps = Vec::new();
        let mut node = Some(self);
        while let Some(current) = node {
            if let Some(step) = current.step {
                steps.push(step);
            }
            node = current.parent;
        }
        let mut pointer = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Key(key) => pointer = pointer_child(&pointer, key),
                Step::Index(index) => pointer = pointer_child(&pointer, &index.to_string()),
            }
        }
        pointer
    }

    fn violation(&self, mismatch: Mismatch, expected_shape: &'static str, value: &Value) -> Box<Violation> {
        Box::new(Violation {
            mismatch,
            path: self.pointer(),
            expected_shape,
            actual_shape: shape_of(value),
            missing_keys: Vec::new(),
            expected_min_items: None,
            expected_max_items: None,
            actual_items: None,
            enum_found: None,
            enum_allowed: Vec::new(),
        })
    }
}

impl Key {
    /// The member that satisfies this key: the exact name first, then declared aliases in
    /// order. Returns the name used.
    fn find<'v>(&self, object: &'v Map<String, Value>) -> Option<(&'v str, &'v Value)> {
        if let Some((name, value)) = object.get_key_value(&self.name) {
            return Some((name.as_str(), value));
        }
        self.aliases.iter().find_map(|alias| object.get_key_value(alias)).map(|(name, value)| (name.as_str(), value))
    }
}

impl Deliverable {
    /// A deliverable that accepts anything.
    pub fn any() -> Deliverable {
        Deliverable { shape: Shape::Any, enum_values: None }
    }

    /// The declared type, if any.
    pub fn declared_type(&self) -> Option<JsonType> {
        match self.shape {
            Shape::Any => None,
            Shape::Object(_) => Some(JsonType::Object),
            Shape::Array(_) => Some(JsonType::Array),
            Shape::String { .. } => Some(JsonType::String),
            Shape::Number => Some(JsonType::Number),
            Shape::Integer => Some(JsonType::Integer),
            Shape::Boolean => Some(JsonType::Boolean),
            Shape::Null => Some(JsonType::Null),
        }
    }

    fn expected_shape(&self) -> &'static str {
        self.declared_type().map_or("any", JsonType::as_str)
    }

    /// Check a value. On success, returns the declared aliases that were used (usually none).
    pub fn check(&self, value: &Value) -> Result<Vec<AliasUse>, Box<Violation>> {
        let mut aliases_used = Vec::new();
        self.check_at(value, &Path::ROOT, &mut aliases_used)?;
        Ok(aliases_used)
    }

    fn check_at(&self, value: &Value, path: &Path<'_>, aliases: &mut Vec<AliasUse>) -> Result<(), Box<Violation>> {
        if let Some(kind) = self.declared_type()
            && !kind.admits(value)
        {
            return Err(path.violation(Mismatch::TypeMismatch, kind.as_str(), value));
        }
        match (&self.shape, value) {
            (Shape::Object(object), Value::Object(members)) => check_object(object, members, value, path, aliases)?,
            (Shape::Array(array), Value::Array(items)) => check_array(array, items, value, path, aliases)?,
            (Shape::String { non_empty: true }, Value::String(text)) if text.trim().is_empty() => {
                return Err(path.violation(Mismatch::EmptyValue, "string", value));
            }
            _ => {}
        }
        if let Some(allowed) = &self.enum_values
            && !allowed.iter().any(|candidate| json_equal(candidate, value))
        {
            let mut violation = path.violation(Mismatch::EnumMismatch, self.expected_shape(), value);
            violation.enum_found = Some(shown(value));
            violation.enum_allowed = allowed.iter().map(shown).collect();
            return Err(violation);
        }
        Ok(())
    }
}

fn check_object(
    object: &ObjectShape,
    members: &Map<String, Value>,
    value: &Value,
    path: &Path<'_>,
    aliases: &mut Vec<AliasUse>,
) -> Result<(), Box<Violation>> {
    if !object.has_aliases && object.slot_names.len() <= SCAN_LIMIT && members.len() <= SCAN_LIMIT {
        return check_object_by_scan(object, members, value, path, aliases);
    }
    let mut missing: Vec<String> = Vec::new();
    for key in &object.required {
        match key.find(members) {
            Some((used, _)) => record_alias(path, key, used, aliases),
            None => missing.push(key.name.clone()),
        }
    }
    if !missing.is_empty() {
        return Err(missing_keys(path, value, missing));
    }
    for (key, deliverable) in &object.properties {
        let Some((used, member)) = key.find(members) else { continue };
        if !object.required.iter().any(|required| required.name == key.name) {
            record_alias(path, key, used, aliases);
        }
        deliverable.check_at(member, &path.child(Step::Key(used)), aliases)?;
    }
    Ok(())
}

/// The same checks as [`check_object`] for small objects without aliases: one pass over the
/// members fills a slot per declared key.
fn check_object_by_scan(
    object: &ObjectShape,
    members: &Map<String, Value>,
    value: &Value,
    path: &Path<'_>,
    aliases: &mut Vec<AliasUse>,
) -> Result<(), Box<Violation>> {
    let mut slots: [Option<(&str, &Value)>; SCAN_LIMIT] = [None; SCAN_LIMIT];
    for (name, member) in members {
        if let Some(slot) = object.slot_names.iter().position(|declared| declared == name)
            && let Some(entry) = slots.get_mut(slot)
        {
            *entry = Some((name.as_str(), member));
        }
    }
    let found = |slot: usize| slots.get(slot).copied().flatten();
    if object.required_slots.iter().any(|&slot| found(slot).is_none()) {
        let missing = object
            .required
            .iter()
            .zip(&object.required_slots)
            .filter(|(_, slot)| found(**slot).is_none())
            .map(|(key, _)| key.name.clone())
            .collect();
        return Err(missing_keys(path, value, missing));
    }
    for ((_, deliverable), &slot) in object.properties.iter().zip(&object.property_slots) {
        if let Some((name, member)) = found(slot) {
            deliverable.check_at(member, &path.child(Step::Key(name)), aliases)?;
        }
    }
    Ok(())
}

fn missing_keys(path: &Path<'_>, value: &Value, missing: Vec<String>) -> Box<Violation> {
    let mut violation = path.violation(Mismatch::MissingRequiredKey, "object", value);
    violation.missing_keys = missing;
    violation
}

fn record_alias(path: &Path<'_>, key: &Key, used: &str, aliases: &mut Vec<AliasUse>) {
    if used != key.name {
        aliases.push(AliasUse { object_path: path.pointer(), key: key.name.clone(), alias: used.to_owned() });
    }
}

fn check_array(
    array: &ArrayShape,
    items: &[Value],
    value: &Value,
    path: &Path<'_>,
    aliases: &mut Vec<AliasUse>,
) -> Result<(), Box<Violation>> {
    let count = items.len() as u64;
    if let Some(min) = array.min_items
        && count < min
    {
        let mut violation = path.violation(Mismatch::MinItemsViolation, "array", value);
        violation.expected_min_items = Some(min);
        violation.actual_items = Some(count);
        return Err(violation);
    }
    if let Some(max) = array.max_items
        && count > max
    {
        let mut violation = path.violation(Mismatch::MaxItemsViolation, "array", value);
        violation.expected_max_items = Some(max);
        violation.actual_items = Some(count);
        return Err(violation);
    }
    if let Some(item_deliverable) = &array.items {
        for (index, item) in items.iter().enumerate() {
            item_deliverable.check_at(item, &path.child(Step::Index(index)), aliases)?;
        }
    }
    Ok(())
}
