//! What the contracts are checked against: the `--profile reference` setting, a capabilities
//! file named in the settings, or a `capabilities.json` beside the contract.
//!
//! Settings come from the command line, the client's `initializationOptions` and
//! `workspace/didChangeConfiguration`, each as `{"profile": "reference", "capabilities":
//! "path.json"}` (optionally under a `"decision"` key, as editors nest their settings). A
//! later source replaces the keys it names. A relative `capabilities` path is read from the
//! workspace root.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use decision::check::Capabilities;
use serde_json::Value;

/// The name of the capabilities file looked for beside a contract.
pub const BESIDE_FILE: &str = "capabilities.json";

/// The settings that choose what the adapter layer checks against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Check against the reference coding host's profile (`--profile reference`).
    pub reference_profile: bool,
    /// A capabilities file to check every contract against.
    pub capabilities: Option<PathBuf>,
}

impl Settings {
    /// Applies a settings object from the client; returns a message for each value it could
    /// not use (the rest is still applied).
    pub fn update(&mut self, value: &Value, root: Option<&Path>) -> Vec<String> {
        let value = value.get("decision").unwrap_or(value);
        let mut problems = Vec::new();
        if !value.is_object() {
            if !value.is_null() {
                problems.push("the settings are not a JSON object; they were ignored".to_string());
            }
            return problems;
        }
        match value.get("profile") {
            None => {}
            Some(Value::Null) => self.reference_profile = false,
            Some(Value::String(p)) if p == "reference" => self.reference_profile = true,
            Some(Value::String(p)) if p.is_empty() || p == "none" => self.reference_profile = false,
            Some(other) => problems.push(format!("unknown profile {other}: the only profile is \"reference\"")),
        }
        match value.get("capabilities") {
            None => {}
            Some(Value::Null) => self.capabilities = None,
            Some(Value::String(p)) if p.is_empty() => self.capabilities = None,
            Some(Value::String(p)) => {
                let path = PathBuf::from(p);
                self.capabilities = Some(match root {
                    Some(root) if path.is_relative() => root.join(path),
                    _ => path,
                });
            }
            Some(other) => problems.push(format!("`capabilities` must be a path, not {other}")),
        }
        problems
    }
}

/// What a contract is checked against.
pub enum Host<'a> {
    /// No capabilities: the adapter layer is skipped, as `decision check` without options.
    None,
    /// These capabilities.
    Capabilities(&'a Capabilities),
    /// A capabilities file that could not be used: the message says why.
    Unusable(String),
}

/// Capability files read, kept while their modification time and size stay the same, so
/// that a check per keystroke does not re-read and re-parse them.
#[derive(Default)]
pub struct CapabilitiesCache {
    reference: Option<Capabilities>,
    files: HashMap<PathBuf, Cached>,
}

struct Cached {
    stamp: Option<(SystemTime, u64)>,
    result: Result<Capabilities, String>,
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl CapabilitiesCache {
    /// What the contract at `contract` (a file path, when the document has one) is checked
    /// against under `settings`.
    pub fn host(&mut self, settings: &Settings, contract: Option<&Path>) -> Host<'_> {
        if settings.reference_profile {
            return Host::Capabilities(self.reference.get_or_insert_with(Capabilities::reference));
        }
        let path = match (&settings.capabilities, contract.and_then(Path::parent)) {
            (Some(path), _) => path.clone(),
            (None, Some(dir)) if dir.join(BESIDE_FILE).is_file() => dir.join(BESIDE_FILE),
            _ => return Host::None,
        };
        let current = stamp(&path);
        let fresh = self.files.get(&path).is_some_and(|c| c.stamp.is_some() && c.stamp == current);
        if !fresh {
            let result = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
                .and_then(|text| Capabilities::from_json(&text).map_err(|e| format!("{}: {e}", path.display())));
            self.files.insert(path.clone(), Cached { stamp: current, result });
        }
        match self.files.get(&path).map(|c| &c.result) {
            Some(Ok(caps)) => Host::Capabilities(caps),
            Some(Err(message)) => Host::Unusable(message.clone()),
            None => Host::None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn settings_are_read_flat_or_nested_and_bad_values_are_reported() {
        let mut s = Settings::default();
        assert!(s.update(&json!({"decision": {"profile": "reference"}}), None).is_empty());
        assert!(s.reference_profile);
        assert!(s.update(&json!({"profile": null, "capabilities": "caps.json"}), Some(Path::new("/ws"))).is_empty());
        assert_eq!(s, Settings { reference_profile: false, capabilities: Some(PathBuf::from("/ws/caps.json")) });
        let problems = s.update(&json!({"profile": "strict", "capabilities": 3}), None);
        assert_eq!(problems.len(), 2);
        assert_eq!(s.capabilities, Some(PathBuf::from("/ws/caps.json")));
        assert_eq!(s.update(&json!("x"), None).len(), 1);
    }

    #[test]
    fn a_capabilities_file_beside_the_contract_is_used_and_reread_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let contract = dir.path().join("DECISION.md");
        let mut cache = CapabilitiesCache::default();
        let settings = Settings::default();
        assert!(matches!(cache.host(&settings, Some(&contract)), Host::None));
        std::fs::write(
            dir.path().join(BESIDE_FILE),
            "{\"positions\": {\"tool-choice\": [\"x\"]}, \"actions\": [\"x\"]}",
        )
        .unwrap();
        assert!(
            matches!(cache.host(&settings, Some(&contract)), Host::Capabilities(c) if c.actions.iter().any(|a| a == "x"))
        );
        std::fs::write(dir.path().join(BESIDE_FILE), "{\"actionz\": []}").unwrap();
        assert!(matches!(cache.host(&settings, Some(&contract)), Host::Unusable(m) if m.contains("actionz")));
        let reference = Settings { reference_profile: true, capabilities: None };
        assert!(
            matches!(cache.host(&reference, Some(&contract)), Host::Capabilities(c) if c == &Capabilities::reference())
        );
    }
}
