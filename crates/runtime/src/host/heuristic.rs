//! `heuristic`: a decision provider made of plain, documented rules over the reference
//! frames. **It is not a model.** It reads the frame the way the rules below say, answers the
//! reference host's nine question ids, and leaves every other question unanswered (so the
//! decider fails closed on it). It exists so that `decision run` can complete small real
//! tasks offline and deterministically; its answers carry fixed probabilities (0.85 / 0.15
//! for yes-no, 0.8 for the chosen option) that say "a rule fired", not a calibrated belief.
//!
//! What the rules read from the task:
//! * **file names**: words with an extension (`notes.md`, `src/lib.rs`);
//! * **search terms**: text in backticks or double quotes that is not a file name;
//! * **intent**: write (`write`, `create`, `save`), delete (`delete`, `remove`), move
//!   (`move`, `rename`), read-all (`each`, `every`, `all`, `summarise`, `summarize`, `overview`).
//!
//! The rules, per question id:
//! * `needs_tool`: yes when nothing was done yet; when an intended write/delete/move has not
//!   happened; when a named file is unread; when a search term is not in the last result;
//!   with read-all intent, when a known file is unread; otherwise no.
//! * `tool`: `list_dir` while no file is known; then the intended delete/move; then
//!   `read_file` for a named unread file, for search or read-all intent, or when nothing
//!   has been read and no write is intended; then `write_file` for write intent; else `done`.
//!   Only offered candidates are ever chosen.
//! * `file`: a named candidate first; else the candidate sharing most words with the task;
//!   else the first candidate.
//! * `risk`: the tool's baseline (`base_risk`), or the top level when it is absent (unknown tool).
//! * `needs_auth`: yes when the baseline is 2 or more, or absent.
//! * `ok`: yes when the output is non-empty and does not start with `error: `.
//! * `done`: the intended write/delete/move happened; every named file was read; every search
//!   term appears in a result; with read-all intent, every listed file was read; with none of
//!   these, at least one file was read.
//! * `deliverable`: the draft is non-empty, the evidence is non-empty, and every search term
//!   appears in both the draft and the evidence.
//! * `unsupported`: no when every file name the draft claims appears in the evidence or the
//!   task; lines quoting a tool call (`N. tool(input) → result`) are quotations, not claims.

use std::time::Instant;

use serde_json::{Map, Value, json};

use super::tools::TOOL_ERROR_PREFIX;
use crate::ask::WireQuestion;
use crate::frame::{UNTRUSTED_CLOSE, UNTRUSTED_OPEN};
use crate::provider::{DecisionProvider, ProviderError, Request, Response};

/// The provider's name in records.
pub const HEURISTIC_NAME: &str = "heuristic";
/// The model name in records: says plainly what it is.
pub const HEURISTIC_MODEL: &str = "rules (not a model)";

const YES: f64 = 0.85;
const NO: f64 = 0.15;
const PICK: f64 = 0.8;

/// The rule-based provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeuristicProvider;

impl DecisionProvider for HeuristicProvider {
    fn name(&self) -> &str {
        HEURISTIC_NAME
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        let frame = FrameView::new(&request.state);
        let mut answers = Map::new();
        let mut unanswered = Vec::new();
        for (id, question) in request.questions.iter() {
            match answer(id, question, &frame) {
                Some(a) => {
                    answers.insert(id.to_owned(), a);
                }
                None => unanswered.push(id.to_owned()),
            }
        }
        let warnings = if unanswered.is_empty() {
            Vec::new()
        } else {
            vec![format!("heuristic has no rule for: {}", unanswered.join(", "))]
        };
        Ok(Response {
            degraded: !unanswered.is_empty(),
            answers,
            provider: HEURISTIC_NAME.into(),
            model: Some(HEURISTIC_MODEL.into()),
            latency: started.elapsed(),
            usage: None,
            warnings,
        })
    }
}

/// The task as the rules read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskReading {
    pub files: Vec<String>,
    pub terms: Vec<String>,
    pub words: Vec<String>,
    pub write: bool,
    pub delete: bool,
    pub moves: bool,
    pub read_all: bool,
}

impl TaskReading {
    pub fn of(task: &str) -> TaskReading {
        let lower = task.to_lowercase();
        let words: Vec<String> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| w.len() > 1)
            .map(str::to_owned)
            .collect();
        let has = |options: &[&str]| words.iter().any(|w| options.contains(&w.as_str()));
        let files = file_names(task);
        let terms = quoted(task).into_iter().filter(|t| !looks_like_file(t)).collect();
        TaskReading {
            write: has(&["write", "create", "save"]),
            delete: has(&["delete", "remove"]),
            moves: has(&["move", "rename"]),
            read_all: has(&["each", "every", "all", "summarise", "summarize", "overview"]),
            files,
            terms,
            words,
        }
    }

    fn acts(&self) -> bool {
        self.write || self.delete || self.moves
    }
}

/// Words with an extension: `name.ext`, possibly with `/`.
pub fn file_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`' | '"' | '\'')) {
        let token = raw.trim_end_matches(['.', ':', '?', '!']);
        if looks_like_file(token) && !out.iter().any(|f| f == token) {
            out.push(token.to_owned());
        }
    }
    out
}

fn looks_like_file(token: &str) -> bool {
    match token.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=8).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && token.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        }
        None => false,
    }
}

/// Text inside backticks or double quotes.
pub fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for mark in ['`', '"'] {
        let mut parts = text.split(mark);
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
            let inside = inside.trim();
            if !inside.is_empty() && !out.iter().any(|o: &String| o == inside) {
                out.push(inside.to_owned());
            }
        }
    }
    out
}

/// Whether `term` occurs in `text` as a whole word.
pub fn contains_word(text: &str, term: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(term).any(|(at, _)| {
        let before = text.get(..at).and_then(|s| s.chars().next_back());
        let after = text.get(at + term.len()..).and_then(|s| s.chars().next());
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Frame values with untrusted markers and provenance wrappers removed.
struct FrameView<'a> {
    state: &'a Map<String, Value>,
    task: TaskReading,
}

impl<'a> FrameView<'a> {
    fn new(state: &'a Map<String, Value>) -> Self {
        let task = TaskReading::of(&text(state.get("task")));
        FrameView { state, task }
    }

    fn text(&self, key: &str) -> String {
        text(self.state.get(key))
    }

    fn list(&self, key: &str) -> Vec<String> {
        let value = match self.state.get(key) {
            Some(Value::Object(wrapper)) => wrapper.get("value"),
            other => other,
        };
        value.and_then(Value::as_array).map(|a| a.iter().map(|v| text(Some(v))).collect()).unwrap_or_default()
    }

    fn number(&self, key: &str) -> Option<f64> {
        match self.state.get(key) {
            Some(Value::Object(wrapper)) => wrapper.get("value").and_then(Value::as_f64),
            other => other.and_then(Value::as_f64),
        }
    }

    /// Tools named in `already_done` ("already called: a, b (n steps)").
    fn done_tools(&self) -> Vec<String> {
        let done = self.text("already_done");
        done.strip_prefix("already called: ")
            .map(|rest| rest.rsplit_once(" (").map_or(rest, |(tools, _)| tools))
            .map(|tools| tools.split(", ").map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

/// A string value without the untrusted markers.
fn text(value: Option<&Value>) -> String {
    let raw = match value {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Object(wrapper)) => return text(wrapper.get("value")),
        Some(Value::Number(n)) => return n.to_string(),
        _ => return String::new(),
    };
    raw.strip_prefix(UNTRUSTED_OPEN)
        .and_then(|s| s.strip_prefix('\n'))
        .and_then(|s| s.strip_suffix(UNTRUSTED_CLOSE))
        .and_then(|s| s.strip_suffix('\n'))
        .unwrap_or(raw)
        .to_owned()
}

fn noul(yes: bool) -> Value {
    json!({"type": "noul", "noul": if yes { YES } else { NO }})
}

fn choice(options: &[String], pick: &str) -> Value {
    let rest = if options.len() > 1 { (1.0 - PICK) / (options.len() - 1) as f64 } else { 0.0 };
    let probabilities: Map<String, Value> = options
        .iter()
        .map(|o| (o.clone(), json!(if o == pick { if options.len() > 1 { PICK } else { 1.0 } } else { rest })))
        .collect();
    json!({"type": "choice", "choice": pick, "probabilities": probabilities})
}

fn score(levels: usize, level: usize) -> Value {
    let n = levels.max(1);
    let level = level.min(n - 1);
    let rest = if n > 1 { 0.15 / (n - 1) as f64 } else { 0.0 };
    let probabilities: Vec<f64> =
        (0..n).map(|k| if k == level { if n > 1 { 0.85 } else { 1.0 } } else { rest }).collect();
    let expected: f64 = probabilities.iter().enumerate().map(|(k, p)| k as f64 * p).sum();
    let map: Map<String, Value> = probabilities.iter().enumerate().map(|(k, p)| (k.to_string(), json!(p))).collect();
    json!({"type": "score", "score": expected, "probabilities": map})
}

fn answer(id: &str, question: &WireQuestion, f: &FrameView<'_>) -> Option<Value> {
    let t = &f.task;
    match (id, question) {
        ("needs_tool", WireQuestion::Noul { .. }) => Some(noul(needs_tool(f))),
        ("tool", WireQuestion::Choice { criteria, .. }) => {
            let offered: Vec<String> = criteria.iter().map(|(id, _)| id.clone()).collect();
            Some(choice(&offered, &pick_tool(f, &offered)))
        }
        ("file", WireQuestion::Choice { criteria, .. }) => {
            let offered: Vec<String> = criteria.iter().map(|(id, _)| id.clone()).collect();
            let pick = pick_file(t, &offered)?;
            Some(choice(&offered, &pick))
        }
        ("risk", WireQuestion::Score { criteria, .. }) => {
            let level = f.number("base_risk").map_or(criteria.len().saturating_sub(1), |r| r.max(0.0) as usize);
            Some(score(criteria.len(), level))
        }
        ("needs_auth", WireQuestion::Noul { .. }) => Some(noul(f.number("base_risk").is_none_or(|r| r >= 2.0))),
        ("ok", WireQuestion::Noul { .. }) => {
            let output = f.text("output");
            Some(noul(!output.trim().is_empty() && !output.starts_with(TOOL_ERROR_PREFIX)))
        }
        ("done", WireQuestion::Noul { .. }) => Some(noul(is_done(f))),
        ("deliverable", WireQuestion::Noul { .. }) => {
            let draft = f.text("answer");
            let evidence = f.text("evidence");
            let covered = t.terms.iter().all(|term| draft.contains(term.as_str()) && contains_word(&evidence, term));
            Some(noul(!draft.trim().is_empty() && !evidence.trim().is_empty() && covered))
        }
        ("unsupported", WireQuestion::Noul { .. }) => {
            let draft = f.text("answer");
            let evidence = f.text("evidence");
            let task = f.text("task");
            let claims: String = draft.lines().filter(|l| !is_quotation(l)).collect::<Vec<_>>().join("\n");
            let unknown =
                file_names(&claims).into_iter().any(|name| !evidence.contains(&name) && !task.contains(&name));
            Some(noul(draft.trim().is_empty() || unknown))
        }
        _ => None,
    }
}

/// A line that quotes a tool call (`N. tool(input) → result`) is a quotation, not a claim.
fn is_quotation(line: &str) -> bool {
    let Some((number, rest)) = line.split_once(". ") else { return false };
    !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
        && rest
            .split_once('(')
            .is_some_and(|(tool, _)| !tool.is_empty() && tool.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        && rest.contains(" → ")
}

fn needs_tool(f: &FrameView<'_>) -> bool {
    let t = &f.task;
    let done = f.done_tools();
    if done.is_empty() {
        return true;
    }
    let did = |tool: &str| done.iter().any(|d| d == tool);
    let read = f.list("already_read");
    let known = f.list("files_known");
    let last = f.text("last");
    (t.write && !did("write_file"))
        || (t.delete && !did("delete_file"))
        || (t.moves && !did("move_file"))
        || t.files.iter().any(|name| known.contains(name) && !read.contains(name))
        || (!t.terms.is_empty() && !t.terms.iter().all(|term| contains_word(&last, term)))
        || (t.read_all && known.iter().any(|k| !read.contains(k)))
        || (read.is_empty() && !t.acts() && !known.is_empty())
}

fn pick_tool(f: &FrameView<'_>, offered: &[String]) -> String {
    let t = &f.task;
    let has = |tool: &str| offered.iter().any(|o| o == tool);
    let known = f.list("files_known");
    let read = f.list("already_read");
    let unread_named = t.files.iter().any(|name| known.contains(name) && !read.contains(name));
    let wants_read = unread_named || !t.terms.is_empty() || t.read_all || (read.is_empty() && !t.acts());
    let pick = if has("list_dir") && known.is_empty() {
        "list_dir"
    } else if t.delete && has("delete_file") {
        "delete_file"
    } else if t.moves && has("move_file") {
        "move_file"
    } else if wants_read && has("read_file") {
        "read_file"
    } else if t.write && has("write_file") {
        "write_file"
    } else if has("done") {
        "done"
    } else {
        offered.first().map_or("done", String::as_str)
    };
    pick.to_owned()
}

fn pick_file(t: &TaskReading, offered: &[String]) -> Option<String> {
    if let Some(named) = t.files.iter().find(|f| offered.contains(f)) {
        return Some(named.clone());
    }
    let overlap = |name: &str| {
        name.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|part| part.len() > 1 && t.words.iter().any(|w| w == part))
            .count()
    };
    // The first candidate with the largest overlap (ties keep the offered order).
    let mut best: Option<(&String, usize)> = None;
    for name in offered {
        let score = overlap(name);
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((name, score));
        }
    }
    best.map(|(name, _)| name.clone())
}

fn is_done(f: &FrameView<'_>) -> bool {
    let t = &f.task;
    let read = f.list("already_read");
    let steps = f.list("steps");
    let succeeded = |tool: &str| {
        steps.iter().any(|s| s.starts_with(&format!("{tool}(")) && !s.contains(&format!("→ {TOOL_ERROR_PREFIX}")))
    };
    if t.acts() {
        return (!t.write || succeeded("write_file"))
            && (!t.delete || succeeded("delete_file"))
            && (!t.moves || succeeded("move_file"));
    }
    let named_read = t.files.iter().all(|name| read.contains(name));
    let results: Vec<&str> = steps.iter().filter_map(|s| s.split_once(" → ").map(|(_, r)| r)).collect();
    let terms_found = t.terms.iter().all(|term| results.iter().any(|r| contains_word(r, term)));
    let listed: Vec<String> = steps
        .iter()
        .filter_map(|s| s.strip_prefix("list_dir(").and_then(|s| s.split_once(" → ")).map(|(_, r)| r.to_owned()))
        .flat_map(|r| r.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| !l.ends_with('/') && !l.trim().is_empty() && !l.contains(" …[+"))
        .collect();
    let all_read = !t.read_all || (!listed.is_empty() && listed.iter().all(|l| read.contains(l)));
    let specific = !t.files.is_empty() || !t.terms.is_empty() || t.read_all;
    named_read && terms_found && all_read && (specific || !read.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_task() {
        let t = TaskReading::of("Which file defines `add`, and does notes.md mention \"totals\"? Summarize.");
        assert_eq!(t.files, ["notes.md"]);
        assert_eq!(t.terms, ["add", "totals"]);
        assert!(t.read_all && !t.write && !t.delete && !t.moves);
        let w = TaskReading::of("Create hello.txt containing \"hi there\"");
        assert!(w.write);
        assert_eq!(w.files, ["hello.txt"]);
        assert_eq!(w.terms, ["hi there"]);
        assert!(contains_word("def add(a, b):", "add"));
        assert!(!contains_word("address", "add"));
    }

    #[test]
    fn strips_markers_and_wrappers() {
        let state = json!({"task": "t", "last": crate::frame::mark_untrusted("abc"),
            "files_known": {"provenance": "untrusted", "value": ["a.txt"]}});
        let f = FrameView::new(state.as_object().unwrap());
        assert_eq!(f.text("last"), "abc");
        assert_eq!(f.list("files_known"), ["a.txt"]);
    }

    #[test]
    fn answers_are_valid_distributions() {
        let c = choice(&["a".into(), "b".into(), "c".into()], "b");
        assert_eq!(c["probabilities"]["b"], json!(PICK));
        let s = score(4, 3);
        assert!(s["score"].as_f64().unwrap() >= 2.0);
        let s = score(4, 1);
        let v = s["score"].as_f64().unwrap();
        assert!((1.0..2.0).contains(&v), "{v}");
        let s = score(4, 0);
        assert!(s["score"].as_f64().unwrap() < 1.0);
    }
}
