//! The reference host's two dynamic candidate providers (runtime.md §2.8): `toolsFor` (the
//! usable tools this step) and `fileOptions` (the unread files). Each sees only the cells it
//! declares, so its candidates cannot move for an undeclared reason.

use serde_json::Value;

use decision_protocol::ask::{CandidateProvider, Candidates, ReadCells};
use decision_protocol::frame::projections::step_member;

use super::explore::next_page;
use super::unread::{Unread, unread};

/// At most this many files are offered to `pick_input`.
pub(crate) const MAX_FILE_OPTIONS: usize = 20;

/// The base instruction of `pick_input`.
pub(crate) const PICK_INPUT_INSTRUCTIONS: &str = "Which file should this tool call target?";

/// Whether the cell holds a list with a name in it.
fn lists_any(cells: ReadCells<'_>, cell: &str) -> bool {
    cells.get(cell).and_then(Value::as_array).is_some_and(|a| a.iter().any(Value::is_string))
}

/// The tools already used (they appear in history), each once, in first-use order. A run
/// uses a few tools many times: the list stays short however long the history grows, and a
/// step that repeats the tool before it is passed over with one comparison.
fn used_tools(cells: ReadCells<'_>) -> Vec<&str> {
    let mut used: Vec<&str> = Vec::new();
    let mut last = None;
    let history = cells.get("history").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for tool in history.iter().filter_map(|s| step_member(s, "tool").and_then(Value::as_str)) {
        if last != Some(tool) && !used.contains(&tool) {
            used.push(tool);
        }
        last = Some(tool);
    }
    used
}

/// The next page of a listing given a page at a time, when one was announced and not listed
/// yet: the `list_files` input that lists it.
pub(crate) fn pending_page(history: Option<&Value>) -> Option<&str> {
    fn of<'a>(step: &'a Value, member: &str) -> Option<&'a str> {
        step_member(step, member).and_then(Value::as_str)
    }
    let steps = history.and_then(Value::as_array)?;
    let listings = || steps.iter().filter(|s| of(s, "tool") == Some("list_files"));
    let listed = |input: &str| listings().any(|s| of(s, "input").is_some_and(|i| i.trim() == input));
    listings().filter_map(|s| of(s, "result").and_then(next_page)).find(|page| !listed(page))
}

/// `toolsFor(ctx: history, files, readFiles, canWrite, canDelete)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolsFor;

impl ToolsFor {
    /// The cells `toolsFor` declares, and the only ones it is shown.
    pub const READS: [&'static str; 5] = ["history", "files", "readFiles", "canWrite", "canDelete"];
}

impl CandidateProvider for ToolsFor {
    fn name(&self) -> &str {
        "toolsFor"
    }

    fn reads(&self) -> Vec<String> {
        Self::READS.iter().map(|c| (*c).to_owned()).collect()
    }

    fn candidates(&self, cells: ReadCells<'_>) -> Candidates {
        let used = used_tools(cells);
        let unused = |tool: &str| !used.contains(&tool);
        let can_write = cells.get("canWrite") == Some(&Value::Bool(true));
        let can_delete = cells.get("canDelete") == Some(&Value::Bool(true));
        let mut options: Vec<(String, String)> = Vec::new();
        let mut offer = |id: &str, text: String| options.push((id.to_owned(), text));
        let listed = !unused("list_dir") || !unused("list_files");
        if !listed {
            offer("list_dir", "The agent does not yet know which files exist in the working directory.".into());
            offer(
                "list_files",
                "The agent does not yet know which files exist in the whole tree, subdirectories included.".into(),
            );
        } else if let Some(page) = (!unused("list_files")).then(|| pending_page(cells.get("history"))).flatten() {
            offer(
                "list_files",
                format!(
                    "The listing of the tree was given a page at a time, and its next page ({page}) is not known yet."
                ),
            );
        }
        let files_known = lists_any(cells, "files");
        if files_known {
            match unread(cells, 5) {
                Unread { count: 0, .. } => {}
                Unread { count: 1, .. } => offer(
                    "read_file",
                    "The content of one file is still needed to make progress and has not been read yet.".into(),
                ),
                Unread { count, first } => {
                    offer("read_file", format!("The contents of {count} files are still needed: {}.", first.join(", ")))
                }
            }
            if can_write && unused("write_file") {
                offer("write_file", "A file must be created or its content changed.".into());
            }
            if can_write && unused("append_file") {
                offer("append_file", "Text must be added at the end of a file, keeping what it holds.".into());
            }
        }
        if can_delete && unused("delete_file") {
            offer(
                "delete_file",
                "The task requires removing this file (or it blocks progress), and leaving it in place would be wrong. Requires explicit authorisation.".into(),
            );
        }
        if can_write && can_delete && unused("move_file") {
            offer(
                "move_file",
                "The task requires a file to live at a different path, and leaving it at its original path would be wrong. Requires explicit authorisation.".into(),
            );
        }
        if files_known && unused("search") {
            offer("search", "The task names text or an identifier whose place in the tree is not known yet.".into());
        }
        if files_known && unused("find_definition") {
            offer(
                "find_definition",
                "The task asks where a function, type, macro or constant is defined, what it returns or what it holds, and its definition has not been found yet.".into(),
            );
        }
        offer(
            "done",
            "Everything the task asks for has already been done; calling any other tool would not add information."
                .into(),
        );
        Candidates { options, instructions: None }
    }
}

/// `fileOptions(ctx: files, readFiles)`: the first 20 unread files.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileOptions;

impl FileOptions {
    /// The cells `fileOptions` declares, and the only ones it is shown.
    pub const READS: [&'static str; 2] = ["files", "readFiles"];
}

impl CandidateProvider for FileOptions {
    fn name(&self) -> &str {
        "fileOptions"
    }

    fn reads(&self) -> Vec<String> {
        Self::READS.iter().map(|c| (*c).to_owned()).collect()
    }

    fn candidates(&self, cells: ReadCells<'_>) -> Candidates {
        let unread = unread(cells, MAX_FILE_OPTIONS);
        let options = unread
            .first
            .iter()
            .map(|f| {
                ((*f).to_owned(), format!("The task still needs the contents of {f}, and it has not been read yet."))
            })
            .collect();
        let mut instructions = PICK_INPUT_INSTRUCTIONS.to_owned();
        if unread.count > MAX_FILE_OPTIONS {
            instructions
                .push_str(&format!(" Only the first {MAX_FILE_OPTIONS} of {} candidates are listed.", unread.count));
        }
        Candidates { options, instructions: Some(instructions) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cells(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn ids(c: &Candidates) -> Vec<&str> {
        c.options.iter().map(|(id, _)| id.as_str()).collect()
    }

    #[test]
    fn tools_follow_history_files_and_permissions() {
        let empty = cells(json!({"history": [], "files": [], "readFiles": [], "canWrite": false, "canDelete": false}));
        assert_eq!(ids(&ToolsFor.candidates(ReadCells::all(&empty))), ["list_dir", "list_files", "done"]);
        let listed = cells(json!({"history": [{"tool": "list_dir"}], "files": ["a", "b"], "readFiles": ["a"],
            "canWrite": true, "canDelete": false}));
        let c = ToolsFor.candidates(ReadCells::all(&listed));
        assert_eq!(ids(&c), ["read_file", "write_file", "append_file", "search", "find_definition", "done"]);
        assert!(c.options[0].1.starts_with("The content of one file"));
        let all = cells(json!({"history": [{"tool": "list_dir"}, {"tool": "write_file"}], "files": ["a", "b", "c"],
            "readFiles": [], "canWrite": true, "canDelete": true}));
        let c = ToolsFor.candidates(ReadCells::all(&all));
        assert_eq!(
            ids(&c),
            ["read_file", "append_file", "delete_file", "move_file", "search", "find_definition", "done"]
        );
        // The code index is offered once files are known, until it was used.
        let looked_up = cells(json!({"history": [{"tool": "list_files"}, {"tool": "find_definition"}],
            "files": ["a"], "readFiles": ["a"], "canWrite": false, "canDelete": false}));
        assert_eq!(ids(&ToolsFor.candidates(ReadCells::all(&looked_up))), ["search", "done"]);
        assert_eq!(c.options[0].1, "The contents of 3 files are still needed: a, b, c.");
        // move needs both permissions; delete alone does not offer it.
        let delete_only =
            cells(json!({"history": [], "files": [], "readFiles": [], "canWrite": false, "canDelete": true}));
        assert_eq!(
            ids(&ToolsFor.candidates(ReadCells::all(&delete_only))),
            ["list_dir", "list_files", "delete_file", "done"]
        );
    }

    #[test]
    fn a_listing_with_a_page_not_listed_offers_list_files_again() {
        let page = |input: &str, result: &str| json!({"tool": "list_files", "input": input, "result": result});
        let first = page(".", "a\n[3 files; entries 1-1 of 3; next page: `list_files .:2-`]");
        let second = page(".:2-", "b\n[3 files; entries 2-2 of 3; next page: `list_files .:3-`]");
        let third = page(".:3-", "c\n[3 files; entries 3-3 of 3]");
        let tools = |history: Vec<Value>| {
            let state = cells(json!({"history": history, "files": ["a"], "readFiles": [], "canWrite": false,
                "canDelete": false}));
            ToolsFor.candidates(ReadCells::all(&state))
        };
        let offered = tools(vec![first.clone()]);
        assert_eq!(ids(&offered), ["list_files", "read_file", "search", "find_definition", "done"]);
        assert!(offered.options[0].1.contains("its next page (.:2-) is not known yet"), "{:?}", offered.options[0]);
        assert_eq!(pending_page(Some(&json!([first.clone(), second.clone()]))), Some(".:3-"));
        assert_eq!(pending_page(Some(&json!([first.clone(), second.clone(), third.clone()]))), None);
        assert_eq!(ids(&tools(vec![first, second, third])), ["read_file", "search", "find_definition", "done"]);
    }

    #[test]
    fn file_options_are_the_first_twenty_unread() {
        let files: Vec<String> = (0..25).map(|i| format!("f{i:02}")).collect();
        let c = FileOptions.candidates(ReadCells::all(&cells(json!({"files": files, "readFiles": ["f00"]}))));
        assert_eq!(c.options.len(), 20);
        assert_eq!(c.options[0].0, "f01");
        assert_eq!(
            c.instructions.as_deref(),
            Some("Which file should this tool call target? Only the first 20 of 24 candidates are listed.")
        );
        let none = FileOptions.candidates(ReadCells::all(&cells(json!({"files": ["a"], "readFiles": ["a"]}))));
        assert!(none.options.is_empty());
        assert_eq!(none.instructions.as_deref(), Some(PICK_INPUT_INSTRUCTIONS));
    }
}
