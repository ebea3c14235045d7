//! The contracts file: one deliverable contract per tool and method, loaded with a lint that
//! never ignores a keyword.
//!
//! ```json
//! {"contracts": [{"tool": "catalog", "method": "find_movies", "purpose": "…",
//!   "deliverable": {"type": "object", "required": ["movies"],
//!                   "properties": {"movies": {"type": "array", "min_items": 1}}},
//!   "acceptance": "prose, recorded, never executed", "failure_policy": "…"}]}
//! ```
//!
//! Every problem is reported with the line and column of the offending key (or value) and the
//! JSON pointer of that place in the file; all problems are collected, not just the first.
//! An unknown keyword, or a keyword that cannot apply where it is written (`min_items` on an
//! `object`, `required` without `type: object`), is an error. The seed's form
//! `constraints: {properties: {…}, min_items: n}` means the same as writing those keywords
//! directly; writing one both ways is an error.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use super::deliverable::{ArrayShape, Deliverable, JsonType, Key, ObjectShape, Shape};
use super::shape::{json_equal, pointer_child};
use super::spanned::{self, Member, Node, Position, Spanned};

/// One contract: what a tool's method is for and what its ok value must deliver.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolContract {
    /// The tool's name, matched exactly against an outcome's `tool`.
    pub tool: String,
    /// The method's name, matched exactly against an outcome's `method`.
    pub method: String,
    /// What the method is for, as written; shown, never executed. `None` when not written.
    pub purpose: Option<String>,
    /// `None`: nothing is checked and every ok value holds.
    pub deliverable: Option<Deliverable>,
    /// Prose: recorded and shown, never executed.
    pub acceptance: Option<String>,
    /// Recorded as written (a string or an object), never executed.
    pub failure_policy: Option<Value>,
}

/// All contracts of a file, looked up by tool and method.
#[derive(Debug, Clone, Default)]
pub struct ContractSet {
    contracts: Vec<ToolContract>,
    index: HashMap<(String, String), usize>,
}

impl ContractSet {
    /// Every contract, in file order.
    pub fn contracts(&self) -> &[ToolContract] {
        &self.contracts
    }

    /// The contract for a tool's method (exact names); `None` when the file declares none, in
    /// which case every outcome of that method is accepted unchecked.
    pub fn get(&self, tool: &str, method: &str) -> Option<&ToolContract> {
        self.index.get(&(tool.to_owned(), method.to_owned())).and_then(|&position| self.contracts.get(position))
    }

    /// How many contracts the file declares.
    pub fn len(&self) -> usize {
        self.contracts.len()
    }

    /// Whether the file declares no contract.
    pub fn is_empty(&self) -> bool {
        self.contracts.is_empty()
    }
}

/// One located problem in a contracts file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintError {
    /// 1-based line of the offending key (or value).
    pub line: usize,
    /// 1-based column, in Unicode scalar values.
    pub column: usize,
    /// JSON pointer of the offending place in the file.
    pub pointer: String,
    /// What is wrong, in one sentence (no location: [`fmt::Display`] adds it).
    pub message: String,
}

impl fmt::Display for LintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)?;
        if !self.pointer.is_empty() {
            write!(f, " (at {})", self.pointer)?;
        }
        Ok(())
    }
}

/// All problems found in a contracts file, in file order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} problem(s) in the contracts file; first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
pub struct LintErrors(pub Vec<LintError>);

/// The keywords a deliverable may use.
pub const KEYWORDS: &[&str] = &[
    "type",
    "required",
    "properties",
    "items",
    "min_items",
    "max_items",
    "enum",
    "non_empty",
    "aliases",
    "constraints",
];

/// The members a contract entry may have.
pub const CONTRACT_MEMBERS: &[&str] = &["tool", "method", "purpose", "deliverable", "acceptance", "failure_policy"];

/// Load and lint a contracts file.
pub fn load_contracts(text: &str) -> Result<ContractSet, LintErrors> {
    let tree = spanned::parse(text).map_err(|error| {
        LintErrors(vec![LintError {
            line: error.at.line,
            column: error.at.column,
            pointer: String::new(),
            message: format!("invalid JSON: {}", error.message),
        }])
    })?;
    let mut lint = Lint::default();
    let set = lint.file(&tree);
    if lint.errors.is_empty() {
        Ok(set)
    } else {
        lint.errors.sort_by_key(|error| (error.line, error.column));
        Err(LintErrors(lint.errors))
    }
}

#[derive(Default)]
struct Lint {
    errors: Vec<LintError>,
}

/// A keyword as found in a deliverable: where its key is, and its value.
struct Found<'t> {
    key_at: Position,
    pointer: String,
    value: &'t Spanned,
}

impl Lint {
    fn error(&mut self, at: Position, pointer: &str, message: impl Into<String>) {
        self.errors.push(LintError {
            line: at.line,
            column: at.column,
            pointer: pointer.to_owned(),
            message: message.into(),
        });
    }

    /// The members of an object node, reporting duplicates; `None` (and an error) otherwise.
    fn members<'t>(&mut self, node: &'t Spanned, pointer: &str, what: &str) -> Option<&'t [Member]> {
        let Node::Object(members) = &node.node else {
            self.error(node.at, pointer, format!("{what} must be an object, not {}", node.kind()));
            return None;
        };
        for (position, member) in members.iter().enumerate() {
            if members.iter().take(position).any(|earlier| earlier.key == member.key) {
                self.error(
                    member.key_at,
                    &pointer_child(pointer, &member.key),
                    format!("duplicate key `{}`", member.key),
                );
            }
        }
        Some(members)
    }

    fn file(&mut self, tree: &Spanned) -> ContractSet {
        let mut set = ContractSet::default();
        let Some(members) = self.members(tree, "", "a contracts file") else { return set };
        let mut entries = None;
        for member in members {
            if member.key == "contracts" {
                entries = Some(&member.value);
            } else {
                self.error(
                    member.key_at,
                    &pointer_child("", &member.key),
                    format!(
                        "unknown key `{}`{} (a contracts file has only `contracts`)",
                        member.key,
                        did_you_mean(&member.key, &["contracts"])
                    ),
                );
            }
        }
        let Some(entries) = entries else {
            self.error(tree.at, "", "a contracts file needs `contracts`: an array of contracts");
            return set;
        };
        let Node::Array(items) = &entries.node else {
            self.error(entries.at, "/contracts", format!("`contracts` must be an array, not {}", entries.kind()));
            return set;
        };
        for (position, item) in items.iter().enumerate() {
            let pointer = pointer_child("/contracts", &position.to_string());
            let Some(contract) = self.contract(item, &pointer) else { continue };
            let key = (contract.tool.clone(), contract.method.clone());
            if set.index.contains_key(&key) {
                self.error(
                    item.at,
                    &pointer,
                    format!("a second contract for tool `{}` method `{}`", contract.tool, contract.method),
                );
                continue;
            }
            set.index.insert(key, set.contracts.len());
            set.contracts.push(contract);
        }
        set
    }

    fn contract(&mut self, node: &Spanned, pointer: &str) -> Option<ToolContract> {
        let members = self.members(node, pointer, "a contract")?;
        let errors_before = self.errors.len();
        let mut tool = None;
        let mut method = None;
        let mut purpose = None;
        let mut deliverable = None;
        let mut acceptance = None;
        let mut failure_policy = None;
        for member in members {
            let here = pointer_child(pointer, &member.key);
            match member.key.as_str() {
                "tool" => tool = self.non_empty_string(&member.value, &here, "`tool`"),
                "method" => method = self.non_empty_string(&member.value, &here, "`method`"),
                "purpose" => purpose = self.string(&member.value, &here, "`purpose`"),
                "acceptance" => acceptance = self.string(&member.value, &here, "`acceptance`"),
                "failure_policy" => match &member.value.node {
                    Node::String(_) | Node::Object(_) => failure_policy = Some(member.value.to_value()),
                    _ => self.error(
                        member.value.at,
                        &here,
                        format!("`failure_policy` must be a string or an object, not {}", member.value.kind()),
                    ),
                },
                "deliverable" => deliverable = self.deliverable(&member.value, &here),
                other => self.error(
                    member.key_at,
                    &here,
                    format!(
                        "unknown key `{other}` in a contract{} (allowed: {})",
                        did_you_mean(other, CONTRACT_MEMBERS),
                        CONTRACT_MEMBERS.join(", ")
                    ),
                ),
            }
        }
        if tool.is_none() && !members.iter().any(|member| member.key == "tool") {
            self.error(node.at, pointer, "a contract needs `tool`");
        }
        if method.is_none() && !members.iter().any(|member| member.key == "method") {
            self.error(node.at, pointer, "a contract needs `method`");
        }
        if self.errors.len() != errors_before {
            return None;
        }
        Some(ToolContract { tool: tool?, method: method?, purpose, deliverable, acceptance, failure_policy })
    }

    fn string(&mut self, node: &Spanned, pointer: &str, what: &str) -> Option<String> {
        match &node.node {
            Node::String(text) => Some(text.clone()),
            _ => {
                self.error(node.at, pointer, format!("{what} must be a string, not {}", node.kind()));
                None
            }
        }
    }

    fn non_empty_string(&mut self, node: &Spanned, pointer: &str, what: &str) -> Option<String> {
        let text = self.string(node, pointer, what)?;
        if text.is_empty() {
            self.error(node.at, pointer, format!("{what} must not be empty"));
            return None;
        }
        Some(text)
    }

    fn count(&mut self, found: &Found<'_>, name: &str) -> Option<u64> {
        match &found.value.node {
            Node::Number(number) if number.as_u64().is_some() => number.as_u64(),
            _ => {
                self.error(
                    found.value.at,
                    &found.pointer,
                    format!("`{name}` must be a non-negative integer, not {}", found.value.kind()),
                );
                None
            }
        }
    }

    /// Gather the keywords of a deliverable, merging the seed's `constraints: {…}` form.
    fn keywords<'t>(&mut self, members: &'t [Member], pointer: &str) -> Vec<(&'t str, Found<'t>)> {
        let mut found: Vec<(&'t str, Found<'t>)> = Vec::new();
        for member in members {
            let here = pointer_child(pointer, &member.key);
            if member.key == "constraints" {
                let Some(inner) = self.members(&member.value, &here, "`constraints`") else { continue };
                for constraint in inner {
                    let inner_here = pointer_child(&here, &constraint.key);
                    match constraint.key.as_str() {
                        "type" | "constraints" => self.error(
                            constraint.key_at,
                            &inner_here,
                            format!("`{}` cannot be written inside `constraints`", constraint.key),
                        ),
                        name if KEYWORDS.contains(&name) => {
                            if found.iter().any(|(existing, _)| *existing == name) {
                                self.error(
                                    constraint.key_at,
                                    &inner_here,
                                    format!("`{name}` is given both directly and in `constraints`"),
                                );
                            } else {
                                found.push((
                                    name,
                                    Found { key_at: constraint.key_at, pointer: inner_here, value: &constraint.value },
                                ));
                            }
                        }
                        other => self.error(constraint.key_at, &inner_here, unknown_keyword(other)),
                    }
                }
            } else if KEYWORDS.contains(&member.key.as_str()) {
                if let Some(position) = found.iter().position(|(existing, _)| *existing == member.key) {
                    // Only possible when `constraints` came first; duplicates are reported already.
                    if found.get(position).is_some_and(|(_, earlier)| earlier.pointer.contains("/constraints/")) {
                        self.error(
                            member.key_at,
                            &here,
                            format!("`{}` is given both directly and in `constraints`", member.key),
                        );
                    }
                } else {
                    found.push((
                        member.key.as_str(),
                        Found { key_at: member.key_at, pointer: here, value: &member.value },
                    ));
                }
            } else {
                self.error(member.key_at, &here, unknown_keyword(&member.key));
            }
        }
        found
    }

    fn deliverable(&mut self, node: &Spanned, pointer: &str) -> Option<Deliverable> {
        let members = self.members(node, pointer, "a deliverable")?;
        let errors_before = self.errors.len();
        let keywords = self.keywords(members, pointer);
        let mut declared = None;
        if let Some((_, found)) = keywords.iter().find(|(name, _)| *name == "type") {
            match &found.value.node {
                Node::String(name) => match JsonType::from_name(name) {
                    Some(kind) => declared = Some(kind),
                    None => self.error(
                        found.value.at,
                        &found.pointer,
                        format!(
                            "unknown type {}{}; expected one of {}",
                            Value::String(name.clone()),
                            did_you_mean(name, &JsonType::ALL.map(JsonType::as_str)),
                            JsonType::ALL.map(JsonType::as_str).join(", ")
                        ),
                    ),
                },
                _ => self.error(
                    found.value.at,
                    &found.pointer,
                    format!("`type` must be a string, not {}", found.value.kind()),
                ),
            }
        }
        let type_ok = declared.is_some() || !keywords.iter().any(|(name, _)| *name == "type");
        // Applicability: each type-specific keyword needs the matching declared type.
        for (name, found) in &keywords {
            let needs = match *name {
                "required" | "properties" | "aliases" => JsonType::Object,
                "items" | "min_items" | "max_items" => JsonType::Array,
                "non_empty" => JsonType::String,
                _ => continue,
            };
            if !type_ok || declared == Some(needs) {
                continue;
            }
            let hint = match (*name, declared) {
                ("non_empty", Some(JsonType::Array)) => "; for arrays write `min_items: 1`",
                ("min_items" | "max_items", Some(JsonType::Object)) => {
                    "; to require items in a member, put it under `properties.<key>` with `type: array`"
                }
                _ => "",
            };
            let written = match declared {
                Some(kind) => format!("`type: {}`", kind.as_str()),
                None => "a deliverable with no `type`".to_owned(),
            };
            self.error(
                found.key_at,
                &found.pointer,
                format!("`{name}` cannot apply to {written}: it applies only to `type: {}`{hint}", needs.as_str()),
            );
        }
        if self.errors.len() != errors_before {
            // Keep linting nested deliverables so every problem is reported in one pass.
            for (name, found) in &keywords {
                match *name {
                    "properties" => {
                        if let Some(properties) = self.members(found.value, &found.pointer, "`properties`") {
                            for property in properties {
                                let _ =
                                    self.deliverable(&property.value, &pointer_child(&found.pointer, &property.key));
                            }
                        }
                    }
                    "items" => {
                        let _ = self.deliverable(found.value, &found.pointer);
                    }
                    _ => {}
                }
            }
            return None;
        }
        let lookup = |wanted: &str| keywords.iter().find(|(name, _)| *name == wanted).map(|(_, found)| found);
        let enum_values = lookup("enum").and_then(|found| self.enum_values(found, declared));
        let shape = match declared {
            None => Shape::Any,
            Some(JsonType::Object) => {
                Shape::Object(self.object_shape(lookup("required"), lookup("properties"), lookup("aliases")))
            }
            Some(JsonType::Array) => {
                let items =
                    lookup("items").and_then(|found| self.deliverable(found.value, &found.pointer)).map(Box::new);
                let min_items = lookup("min_items").and_then(|found| self.count(found, "min_items"));
                let max_items = lookup("max_items").and_then(|found| self.count(found, "max_items"));
                if let (Some(min), Some(max), Some(found)) = (min_items, max_items, lookup("max_items"))
                    && min > max
                {
                    self.error(
                        found.key_at,
                        &found.pointer,
                        format!("`max_items` ({max}) is less than `min_items` ({min}): no array can hold"),
                    );
                }
                Shape::Array(ArrayShape { items, min_items, max_items })
            }
            Some(JsonType::String) => {
                let non_empty = match lookup("non_empty") {
                    None => false,
                    Some(found) => match found.value.node {
                        Node::Bool(flag) => flag,
                        _ => {
                            self.error(
                                found.value.at,
                                &found.pointer,
                                format!("`non_empty` must be true or false, not {}", found.value.kind()),
                            );
                            false
                        }
                    },
                };
                Shape::String { non_empty }
            }
            Some(JsonType::Number) => Shape::Number,
            Some(JsonType::Integer) => Shape::Integer,
            Some(JsonType::Boolean) => Shape::Boolean,
            Some(JsonType::Null) => Shape::Null,
        };
        if self.errors.len() != errors_before {
            return None;
        }
        Some(Deliverable { shape, enum_values })
    }

    fn enum_values(&mut self, found: &Found<'_>, declared: Option<JsonType>) -> Option<Vec<Value>> {
        let Node::Array(items) = &found.value.node else {
            self.error(found.value.at, &found.pointer, format!("`enum` must be an array, not {}", found.value.kind()));
            return None;
        };
        if items.is_empty() {
            self.error(
                found.value.at,
                &found.pointer,
                "`enum` must list at least one value: an empty enum admits nothing",
            );
            return None;
        }
        let mut values: Vec<Value> = Vec::with_capacity(items.len());
        for (position, item) in items.iter().enumerate() {
            let value = item.to_value();
            let here = pointer_child(&found.pointer, &position.to_string());
            if let Some(kind) = declared
                && !kind.admits(&value)
            {
                self.error(
                    item.at,
                    &here,
                    format!("enum value {value} is not of the declared type `{}`", kind.as_str()),
                );
            } else if values.iter().any(|earlier| json_equal(earlier, &value)) {
                self.error(item.at, &here, format!("enum value {value} is listed twice"));
            }
            values.push(value);
        }
        Some(values)
    }

    fn key_list(&mut self, found: &Found<'_>, what: &str) -> Vec<(String, Position, String)> {
        let Node::Array(items) = &found.value.node else {
            self.error(
                found.value.at,
                &found.pointer,
                format!("{what} must be an array of strings, not {}", found.value.kind()),
            );
            return Vec::new();
        };
        let mut keys: Vec<(String, Position, String)> = Vec::new();
        for (position, item) in items.iter().enumerate() {
            let here = pointer_child(&found.pointer, &position.to_string());
            match &item.node {
                Node::String(key) if key.is_empty() => {
                    self.error(item.at, &here, format!("{what} must not contain an empty key"))
                }
                Node::String(key) if keys.iter().any(|(earlier, _, _)| earlier == key) => {
                    self.error(item.at, &here, format!("{what} lists `{key}` twice"));
                }
                Node::String(key) => keys.push((key.clone(), item.at, here)),
                _ => self.error(item.at, &here, format!("{what} must contain strings, not {}", item.kind())),
            }
        }
        keys
    }

    fn object_shape(
        &mut self,
        required: Option<&Found<'_>>,
        properties: Option<&Found<'_>>,
        aliases: Option<&Found<'_>>,
    ) -> ObjectShape {
        let required_keys: Vec<String> = required
            .map(|found| self.key_list(found, "`required`").into_iter().map(|(key, _, _)| key).collect())
            .unwrap_or_default();
        let mut property_list: Vec<(String, Deliverable)> = Vec::new();
        if let Some(found) = properties
            && let Some(members) = self.members(found.value, &found.pointer, "`properties`")
        {
            for member in members {
                let here = pointer_child(&found.pointer, &member.key);
                if member.key.is_empty() {
                    self.error(member.key_at, &here, "a property key must not be empty");
                } else if let Some(deliverable) = self.deliverable(&member.value, &here) {
                    property_list.push((member.key.clone(), deliverable));
                }
            }
        }
        let declared_keys: Vec<&str> =
            required_keys.iter().map(String::as_str).chain(property_list.iter().map(|(key, _)| key.as_str())).collect();
        let mut alias_map: Vec<(String, Vec<String>)> = Vec::new();
        if let Some(found) = aliases
            && let Some(members) = self.members(found.value, &found.pointer, "`aliases`")
        {
            for member in members {
                let here = pointer_child(&found.pointer, &member.key);
                if !declared_keys.contains(&member.key.as_str()) {
                    self.error(
                        member.key_at,
                        &here,
                        format!("alias target `{}` is neither required nor a declared property", member.key),
                    );
                    continue;
                }
                let entry = Found { key_at: member.key_at, pointer: here, value: &member.value };
                let mut names = Vec::new();
                for (alias, at, alias_pointer) in self.key_list(&entry, "an alias list") {
                    let taken = declared_keys.contains(&alias.as_str())
                        || alias_map.iter().any(|(_, others)| others.contains(&alias));
                    if taken {
                        self.error(at, &alias_pointer, format!("alias `{alias}` is already a declared key or alias"));
                    } else {
                        names.push(alias);
                    }
                }
                alias_map.push((member.key.clone(), names));
            }
        }
        let make_key = |name: &str| Key {
            name: name.to_owned(),
            aliases: alias_map.iter().find(|(key, _)| key == name).map(|(_, names)| names.clone()).unwrap_or_default(),
        };
        ObjectShape::new(
            required_keys.iter().map(|name| make_key(name)).collect(),
            property_list.into_iter().map(|(name, deliverable)| (make_key(&name), deliverable)).collect(),
        )
    }
}

fn unknown_keyword(name: &str) -> String {
    format!("unknown deliverable keyword `{name}`{} (known: {})", did_you_mean(name, KEYWORDS), KEYWORDS.join(", "))
}

/// `; did you mean `x`?` when a known name is close to `name`, else nothing.
fn did_you_mean(name: &str, known: &[&str]) -> String {
    decision_core::suggest::did_you_mean(name, known.iter().copied())
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_default()
}
