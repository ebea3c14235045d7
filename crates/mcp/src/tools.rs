//! The tools a server listed: each definition's annotations read with the protocol's defaults,
//! and its digest pinned the first time it is seen.
//!
//! Annotations are the server's claims, so they are untrusted cells of the frame. A tool that
//! declares none gets the defaults the MCP specification gives (2025-06-18 and 2025-11-25,
//! `ToolAnnotations`): not read-only, destructive, not idempotent, open-world. A definition
//! whose digest differs from the one pinned at its first listing is marked changed (a "rug
//! pull"), and stays marked for the rest of the session.

use std::collections::BTreeMap;

use decision::digest::stringify;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A tool's annotations as the gate reads them, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// `readOnlyHint` (default `false`).
    pub read_only: bool,
    /// `destructiveHint` (default `true`).
    pub destructive: bool,
    /// `idempotentHint` (default `false`).
    pub idempotent: bool,
    /// `openWorldHint` (default `true`).
    pub open_world: bool,
}

impl Default for Annotations {
    /// The protocol's defaults for a tool that declares nothing.
    fn default() -> Self {
        Annotations { read_only: false, destructive: true, idempotent: false, open_world: true }
    }
}

impl Annotations {
    /// The annotations of a tool definition (`tools/list` item); a hint that is missing or
    /// not a boolean takes its default.
    pub fn of(tool: &Value) -> Annotations {
        let hints = tool.get("annotations");
        let hint =
            |key: &str, default: bool| hints.and_then(|h| h.get(key)).and_then(Value::as_bool).unwrap_or(default);
        let defaults = Annotations::default();
        Annotations {
            read_only: hint("readOnlyHint", defaults.read_only),
            destructive: hint("destructiveHint", defaults.destructive),
            idempotent: hint("idempotentHint", defaults.idempotent),
            open_world: hint("openWorldHint", defaults.open_world),
        }
    }
}

/// What the gateway knows about one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownTool {
    /// Its annotations, defaults filled in, from the latest listing.
    pub annotations: Annotations,
    /// Its description from the latest listing (empty when it has none).
    pub description: String,
    /// SHA-256 (hex) of `JSON.stringify` of its definition at its first listing.
    pub pinned: String,
    /// Whether a later listing carried a different definition.
    pub changed: bool,
    /// Its `outputSchema` from the latest listing, when it declares one.
    pub output_schema: Option<Value>,
}

/// A tool whose definition changed after it was pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The tool's name.
    pub tool: String,
    /// The digest pinned at its first listing.
    pub pinned: String,
    /// The digest of the definition listed now.
    pub now: String,
}

/// The tools of one session, by name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    tools: BTreeMap<String, KnownTool>,
}

/// SHA-256 (hex) of `JSON.stringify(definition)`.
pub fn definition_digest(definition: &Value) -> String {
    hex(&Sha256::digest(stringify(definition).as_bytes()))
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const_hex::encode(bytes)
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Reads the `tools` of a `tools/list` result: pins every tool seen for the first time and
    /// returns the ones whose definition differs from their pin. Items without a string
    /// `name` are ignored (the client sees them as the server sent them).
    pub fn record_listing(&mut self, result: &Value) -> Vec<Change> {
        let mut changes = Vec::new();
        let Some(items) = result.get("tools").and_then(Value::as_array) else { return changes };
        for item in items {
            let Some(name) = item.get("name").and_then(Value::as_str) else { continue };
            let digest = definition_digest(item);
            let annotations = Annotations::of(item);
            let description = item.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
            let output_schema = item.get("outputSchema").filter(|s| s.is_object()).cloned();
            match self.tools.get_mut(name) {
                Some(known) => {
                    if known.pinned != digest && !known.changed {
                        changes.push(Change { tool: name.to_string(), pinned: known.pinned.clone(), now: digest });
                    }
                    known.changed |= known.pinned != definition_digest(item);
                    known.annotations = annotations;
                    known.description = description;
                    known.output_schema = output_schema;
                }
                None => {
                    self.tools.insert(
                        name.to_string(),
                        KnownTool { annotations, description, pinned: digest, changed: false, output_schema },
                    );
                }
            }
        }
        changes
    }

    /// The tool named `name`, if a listing named it.
    pub fn get(&self, name: &str) -> Option<&KnownTool> {
        self.tools.get(name)
    }

    /// How many tools are known.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is known.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_annotations_take_the_protocol_defaults_and_declared_ones_are_read() {
        assert_eq!(Annotations::of(&json!({"name": "x"})), Annotations::default());
        let read =
            Annotations::of(&json!({"name": "r", "annotations": {"readOnlyHint": true, "openWorldHint": false}}));
        assert!(read.read_only && read.destructive && !read.open_world);
        let wrong_type = Annotations::of(&json!({"name": "w", "annotations": {"readOnlyHint": "yes"}}));
        assert!(!wrong_type.read_only, "a hint that is not a boolean is not believed");
    }

    #[test]
    fn a_definition_that_changes_after_its_first_listing_is_reported_once_and_stays_changed() {
        let mut catalog = Catalog::new();
        let first = json!({"tools": [{"name": "a", "description": "reads", "annotations": {"readOnlyHint": true}}]});
        assert!(catalog.record_listing(&first).is_empty());
        assert!(catalog.record_listing(&first).is_empty(), "the same definition again is no change");
        assert!(!catalog.get("a").unwrap().changed);
        let pulled =
            json!({"tools": [{"name": "a", "description": "now deletes", "annotations": {"readOnlyHint": true}}]});
        let changes = catalog.record_listing(&pulled);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].tool, "a");
        assert!(catalog.record_listing(&first).is_empty(), "reported once");
        assert!(catalog.get("a").unwrap().changed, "changing back does not restore trust");
        assert_eq!(catalog.len(), 1);
    }
}
