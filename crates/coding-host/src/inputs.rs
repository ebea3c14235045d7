//! The inputs of write, move and delete calls (they never come from `pick_input`'s
//! candidates), and the audit record `auto_audit` writes.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::heuristic::TaskReading;
use decision_protocol::frame::clip;

/// Where the input of a `write_file`, `move_file` or `delete_file` call comes from, read
/// from the task: a file named in the task, and for writes the quoted content. `None` when
/// the task does not say (the caller may then ask the generator for write content).
pub(crate) fn input_from_task(tool: &str, task: &str, files: &[String]) -> Option<String> {
    let reading = TaskReading::kept(task);
    match tool {
        // Only content the task gives word for word is written; appended text ends its line.
        "write_file" | "append_file" => {
            let path = reading.files.first()?;
            let content = reading.content.as_ref()?;
            // "containing the line '…'" and appended text are whole lines; other content is exact.
            let line = tool == "append_file" || task.to_lowercase().contains("the line");
            Some(format!("{path}\n{content}{}", if line { "\n" } else { "" }))
        }
        "search" => search_input(&reading.terms),
        "find_definition" => {
            let symbol = reading.symbol_of(reading.terms.first()?);
            Some(match definition_kind(task, &symbol) {
                Some(kind) => format!("{symbol} {kind}"),
                None => symbol,
            })
        }
        "move_file" => {
            let from = reading.files.iter().find(|f| files.contains(f))?;
            let to = reading.files.iter().find(|f| *f != from)?;
            Some(format!("{from}\n{to}"))
        }
        "delete_file" => reading.files.iter().find(|f| files.contains(f)).or(reading.files.first()).cloned(),
        _ => None,
    }
}

/// Words of a task that say what kind of definition it asks about.
const DEFINITION_KINDS: [&str; 12] =
    ["macro", "enum", "struct", "trait", "class", "function", "method", "fn", "def", "interface", "module", "constant"];

/// The kind of definition the task names right next to the symbol ("the `json!` macro", "the
/// function `to_string`", "enum Value"); a kind word elsewhere ("which module defines X")
/// says nothing about X.
pub(crate) fn definition_kind(task: &str, symbol: &str) -> Option<&'static str> {
    let lower = task.to_lowercase();
    let symbol = symbol.to_lowercase();
    // Only a kind the task holds at all can stand next to the symbol: the phrases are made
    // for those alone (most tasks hold one or two of the twelve).
    DEFINITION_KINDS.into_iter().filter(|kind| lower.contains(kind)).find(|kind| {
        [
            format!("{kind} `{symbol}`"),
            format!("`{symbol}` {kind}"),
            format!("{kind} {symbol}"),
            format!("{symbol} {kind}"),
        ]
        .iter()
        .any(|phrase| super::focus::contains_word(&lower, phrase))
    })
}

/// The search for the task's terms: one literal as it is; identifiers as whole words; several
/// terms as one regular expression that matches any of them.
pub(crate) fn search_input(terms: &[String]) -> Option<String> {
    let is_word = |t: &String| t.chars().all(|c| c.is_alphanumeric() || c == '_');
    match terms {
        [] => None,
        [one] if !is_word(one) => Some(one.clone()),
        many => {
            let alternatives: Vec<String> = many.iter().map(|t| regex::escape(t)).collect();
            let words = many.iter().all(is_word);
            let (open, close) = if words { ("\\b", "\\b") } else { ("", "") };
            if let [one] = alternatives.as_slice() {
                return Some(format!("re:{open}{one}{close}"));
            }
            Some(format!("re:{open}(?:{}){close}", alternatives.join("|")))
        }
    }
}

/// The write target named by the task, for content the generator writes.
pub(crate) fn write_target(task: &str) -> Option<String> {
    TaskReading::kept(task).files.first().cloned()
}

/// An append-only audit file: one JSON object per line.
#[derive(Debug, Clone)]
pub(crate) struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    pub(crate) fn new(path: &Path) -> Self {
        AuditLog { path: path.to_path_buf() }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `{step, at, tool, target (clipped to 200 + "…"), reason, risk}`.
    pub(crate) fn record(step: u64, at: u64, tool: &str, input: &str, reason: &str, risk: Option<f64>) -> Value {
        let clipped = clip(input, 200);
        let target = if clipped == input { clipped } else { format!("{clipped}…") };
        json!({"step": step, "at": at, "tool": tool, "target": target, "reason": reason, "risk": risk})
    }

    /// Append one record (one whole line per write).
    pub(crate) fn append(&self, record: &Value) -> std::io::Result<()> {
        let mut file = OpenOptions::new().create(true).append(true).open(&self.path)?;
        file.write_all(format!("{record}\n").as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_of_a_definition_is_the_word_next_to_it() {
        assert_eq!(definition_kind("Where is the `json!` macro defined?", "json!"), Some("macro"));
        assert_eq!(definition_kind("What does the function `to_string` return?", "to_string"), Some("function"));
        assert_eq!(definition_kind("How many variants does the enum Value have?", "Value"), Some("enum"));
        assert_eq!(definition_kind("Which module defines `value_5`?", "value_5"), None);
        assert_eq!(definition_kind("Where is `Position` defined?", "Position"), None, "`def` is not `defined`");
        assert_eq!(
            input_from_task("find_definition", "What does `Map::insert` return?", &[]).as_deref(),
            Some("Map::insert")
        );
        assert_eq!(
            input_from_task("find_definition", "Where is the `json!` macro defined?", &[]).as_deref(),
            Some("json! macro")
        );
    }

    #[test]
    fn inputs_come_from_the_task() {
        let files = vec!["a.txt".to_string(), "b.txt".to_string()];
        assert_eq!(
            input_from_task("write_file", "Create hello.txt containing \"hi\"", &files).as_deref(),
            Some("hello.txt\nhi")
        );
        assert_eq!(
            input_from_task("write_file", "Create CHANGELOG.md containing the line 'v0.1: first release'", &files)
                .as_deref(),
            Some("CHANGELOG.md\nv0.1: first release\n")
        );
        assert_eq!(input_from_task("write_file", "Create hello.txt", &files), None);
        assert_eq!(input_from_task("write_file", "Create hello.txt about \"hi\"", &files), None, "not content");
        assert_eq!(input_from_task("search", "Which files mention STOCK?", &files).as_deref(), Some("re:\\bSTOCK\\b"));
        assert_eq!(
            input_from_task("search", "Where are `add` and `sub` used?", &files).as_deref(),
            Some("re:\\b(?:add|sub)\\b")
        );
        assert_eq!(input_from_task("search", "Is \"a b\" anywhere?", &files).as_deref(), Some("a b"));
        assert_eq!(input_from_task("move_file", "Rename a.txt to c.txt", &files).as_deref(), Some("a.txt\nc.txt"));
        assert_eq!(input_from_task("delete_file", "Delete b.txt please", &files).as_deref(), Some("b.txt"));
        assert_eq!(input_from_task("list_dir", "x", &files), None);
    }

    #[test]
    fn audit_targets_are_clipped() {
        let r = AuditLog::record(1, 2, "write_file", &"x".repeat(300), "why", Some(1.1));
        assert!(r["target"].as_str().unwrap().ends_with("]…"));
        assert_eq!(AuditLog::record(1, 2, "t", "short", "why", None)["target"], "short");
    }
}
