//! `heuristic`: a decision provider made of plain, documented rules over the reference
//! frames. **It is not a model.** It reads the frame the way the rules below say, answers the
//! reference host's nine question ids, and leaves every other question unanswered (so the
//! decider fails closed on it). It exists so that `decision run` can complete small real
//! tasks offline and deterministically; its answers carry fixed probabilities (0.85 / 0.15
//! for yes-no, 0.8 for the chosen option) that say "a rule fired", not a calibrated belief.
//!
//! What the rules read from the task and the rules per question id are
//! listed in `docs/coding-host.md`. In short: file names are words with an extension;
//! search terms are text in backticks, double or single quotes, and identifiers written
//! plainly (`snake_case`, `CamelCase`, `dotted.names` — their last part —, `ALL_CAPS`), and
//! the word after "mention", "search for" and the like; the intent is search ("which files
//! mention", "where is X used", "is there a TODO"), definition ("which file defines"), write,
//! append, delete, move, or read-all. The rules read the tool results from their header line,
//! which the host puts first: `[search …]` says how much was found and
//! whether the whole tree was searched; `[FILE: …]` says which terms a read found and where
//! to read on when it was cut before a term was found.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::focus::contains_word;
use super::tools::TOOL_ERROR_PREFIX;
use decision_protocol::ask::WireQuestion;
use decision_protocol::frame::{UNTRUSTED_CLOSE, UNTRUSTED_OPEN};
use decision_runtime::provider::{DecisionProvider, ProviderError, Request, Response};

/// The provider's name in records.
pub(crate) const HEURISTIC_NAME: &str = "heuristic";
/// The model name in records: says plainly what it is.
pub(crate) const HEURISTIC_MODEL: &str = "rules (not a model)";

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
pub(crate) struct TaskReading {
    /// Words with an extension (`notes.md`, `src/lib.rs`).
    pub(crate) files: Vec<String>,
    /// What to look for: quoted text that is not a file name, and plain identifiers.
    pub(crate) terms: Vec<String>,
    /// The task's words, lower-cased.
    pub(crate) words: Vec<String>,
    pub(crate) write: bool,
    /// Add to the end of a file (`append`, `add … at the end`): never replaces its content.
    pub(crate) append: bool,
    /// The task says an existing file may be replaced (`overwrite`, `replace`).
    pub(crate) overwrite: bool,
    pub(crate) delete: bool,
    pub(crate) moves: bool,
    pub(crate) read_all: bool,
    /// "Which files mention X", "where is X used", "is there a TODO": answered by a search of
    /// the whole tree.
    pub(crate) search: bool,
    /// A question about a symbol's definition: where it is defined, what it returns, its
    /// signature, variants or fields. Answered from the code index (`find_definition`).
    pub(crate) definition: bool,
    /// A change to existing code ("add a doc comment above …", "fix …", "change …"): the
    /// task's first word asks for an edit that is not a plain write, append, move or delete.
    pub(crate) edit: bool,
    /// Each term as the task spelled it, when it was qualified (`Map::insert`,
    /// `email.policy.Policy`, `json!`): `(term, spelling)`.
    pub(crate) spelled: Vec<(String, String)>,
    /// The exact content the task gives for a write: `containing the line '…'`,
    /// `containing "…"`, `with the text `…``.
    pub(crate) content: Option<String>,
}

impl TaskReading {
    /// The reading of `task`, kept per thread for the last task text read: a run reads its
    /// one task several times a step (the host's rules, the provider's frames, the
    /// generator), and reading it is dozens of string searches. The kept text is compared
    /// with `task` at every call, so the reading is always the one of the text given.
    pub(crate) fn kept(task: &str) -> Rc<TaskReading> {
        thread_local! {
            static LAST: RefCell<Option<(String, Rc<TaskReading>)>> = const { RefCell::new(None) };
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            if let Some((text, reading)) = last.as_ref()
                && text == task
            {
                return Rc::clone(reading);
            }
            let reading = Rc::new(TaskReading::of(task));
            *last = Some((task.to_owned(), Rc::clone(&reading)));
            reading
        })
    }

    /// The reading of `task`, made afresh.
    pub(crate) fn of(task: &str) -> TaskReading {
        let lower = task.to_lowercase();
        let words: Vec<String> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| w.len() > 1)
            .map(str::to_owned)
            .collect();
        let has = |options: &[&str]| words.iter().any(|w| options.contains(&w.as_str()));
        let phrase = |options: &[&str]| options.iter().any(|p| lower.contains(p));
        let files = file_names(task);
        let content = verbatim_content(task);
        let mut terms: Vec<String> = Vec::new();
        let mut spelled: Vec<(String, String)> = Vec::new();
        let mut add = |spelling: &str| {
            let term = last_part(spelling).to_owned();
            if !term.is_empty() && !terms.contains(&term) && !files.contains(&term) {
                if term != spelling {
                    spelled.push((term.clone(), spelling.to_owned()));
                }
                terms.push(term);
            }
        };
        // Identifiers are looked for outside quotes: quoted text is taken whole.
        let mut plain = task.to_owned();
        for quoted in quoted(task) {
            plain = plain.replace(&quoted, " ");
            if looks_like_file(&quoted) || content.as_deref() == Some(quoted.as_str()) {
                continue;
            }
            add(&quoted);
        }
        for word in identifiers(&plain) {
            add(&word);
        }
        for word in searched_words(&words).into_iter().chain(named_words(&words)) {
            // A plain word the task also wrote as an identifier is the same term.
            if !terms.iter().any(|t| t.to_lowercase() == word) {
                terms.push(word);
            }
        }
        let append = has(&["append", "appends"]) || (has(&["add"]) && phrase(&["at the end", "to the end"]));
        let define = has(&[
            "define",
            "defines",
            "defined",
            "definition",
            "declared",
            "declares",
            "implemented",
            "return",
            "returns",
            "signature",
            "variants",
            "fields",
        ]);
        const EDITS: [&str; 10] =
            ["add", "insert", "change", "modify", "edit", "update", "fix", "refactor", "rewrite", "document"];
        let first_word = words.iter().find(|w| *w != "please").map(String::as_str).unwrap_or_default();
        let search = !define
            && (has(&[
                "mention",
                "mentions",
                "mentioning",
                "used",
                "uses",
                "usages",
                "usage",
                "occurrences",
                "occur",
                "occurs",
                "grep",
                "search",
                "references",
                "referenced",
                "todo",
                "todos",
                "fixme",
                "anywhere",
                "contain",
                "contains",
            ]) || phrase(&["is there a", "are there any", "find all", "where is", "which files"]))
            && !terms.is_empty();
        let write = has(&["write", "create", "save", "overwrite"]) && !append;
        let delete = has(&["delete", "remove"]);
        let moves = has(&["move", "rename"]);
        TaskReading {
            definition: define && !search,
            edit: EDITS.contains(&first_word) && !write && !append && !delete && !moves,
            spelled,
            write,
            append,
            overwrite: has(&["overwrite", "replace"]),
            delete,
            moves,
            read_all: has(&["each", "every", "all", "summarise", "summarize", "overview"])
                && !search
                && files.is_empty()
                && terms.is_empty(),
            search,
            content,
            files,
            terms,
            words,
        }
    }

    /// Whether the task asks for a change to the files.
    pub(crate) fn acts(&self) -> bool {
        self.write || self.append || self.delete || self.moves || self.edit
    }

    /// A term as the task spelled it (`Map::insert` for `insert`), or the term itself.
    pub(crate) fn symbol_of(&self, term: &str) -> String {
        self.spelled.iter().find(|(t, _)| t == term).map_or_else(|| term.to_owned(), |(_, s)| s.clone())
    }

    /// Whether the task asks where its one symbol is defined (or what it returns, its
    /// variants …): the question the code index answers.
    pub(crate) fn asks_definition(&self) -> bool {
        self.definition && self.terms.len() == 1 && !self.acts()
    }
}

/// The last part of a dotted or `::` name (`json.dumps` → `dumps`, `Map::insert` →
/// `insert`), without a macro's `!` (`json!` → `json`): what a definition names.
fn last_part(term: &str) -> &str {
    let name = term.strip_suffix('!').filter(|n| is_name(n)).unwrap_or(term);
    if let Some((_, last)) = name.rsplit_once("::")
        && name.split("::").all(is_name)
    {
        return last;
    }
    let is_dotted = name.contains('.') && !name.contains(' ') && name.split('.').all(is_name);
    if is_dotted { name.rsplit('.').next().unwrap_or(name) } else { name }
}

fn is_name(part: &str) -> bool {
    !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Extensions that make a dotted word a file name rather than a dotted identifier.
const FILE_EXTENSIONS: [&str; 34] = [
    "py", "rs", "md", "txt", "toml", "json", "yaml", "yml", "js", "ts", "tsx", "jsx", "c", "h", "cc", "cpp", "hpp",
    "go", "java", "rb", "sh", "cfg", "ini", "lock", "html", "css", "csv", "xml", "rst", "log", "pyi", "cfg", "sql",
    "kt",
];

/// Capitalised words that are not identifiers.
const NOT_IDENTIFIERS: [&str; 12] =
    ["README", "LICENSE", "JSON", "API", "HTTP", "URL", "CLI", "CSV", "OK", "TODO_", "UTF", "HTML"];

/// Identifiers written without quotes: `snake_case`, `CamelCase`/`camelCase`, `dotted.names`
/// (their last part) and `ALL_CAPS` words of three letters or more (`STOCK`, `TODO`).
fn identifiers(task: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in task.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`' | '"' | '?' | '!')) {
        let token = raw.trim_matches(|c: char| matches!(c, '.' | ':' | '\'' | '*'));
        if token.contains("::") && token.split("::").all(is_name) {
            out.push(token.to_owned());
            continue;
        }
        if token.is_empty() || !token.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        if token.contains('.') {
            let ext = token.rsplit('.').next().unwrap_or_default().to_lowercase();
            let parts_are_names =
                token.split('.').all(|p| p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'));
            if !FILE_EXTENSIONS.contains(&ext.as_str()) && parts_are_names {
                out.push(last_part(token).to_owned());
            }
            continue;
        }
        let letters = token.chars().filter(|c| c.is_alphabetic()).count();
        let upper = token.chars().filter(|c| c.is_uppercase()).count();
        let lower = token.chars().filter(|c| c.is_lowercase()).count();
        let snake = token.contains('_') && letters > 0 && !token.starts_with('_') || token.starts_with("__");
        let camel = lower > 0 && token.chars().skip(1).any(char::is_uppercase);
        let caps = lower == 0 && upper >= 3 && !NOT_IDENTIFIERS.contains(&token);
        if snake || camel || caps {
            out.push(token.to_owned());
        }
    }
    out
}

/// The word after "mention", "search for", "find", "uses of", "references to" …, when it is
/// not a filler word.
fn searched_words(words: &[String]) -> Vec<String> {
    const AFTER: [&str; 12] = [
        "mention",
        "mentions",
        "mentioning",
        "for",
        "find",
        "of",
        "to",
        "grep",
        "contain",
        "contains",
        "containing",
        "word",
    ];
    const FILLER: [&str; 16] = [
        "the",
        "a",
        "an",
        "any",
        "all",
        "word",
        "text",
        "string",
        "me",
        "files",
        "file",
        "uses",
        "references",
        "it",
        "this",
        "that",
    ];
    let mut out = Vec::new();
    let searching = words.iter().any(|w| {
        ["mention", "mentions", "mentioning", "search", "grep", "find", "references", "uses", "contain", "contains"]
            .contains(&w.as_str())
    });
    if !searching {
        return out;
    }
    for pair in words.windows(3) {
        let [before, next, after] = pair else { continue };
        if !AFTER.contains(&before.as_str()) {
            continue;
        }
        let word = if FILLER.contains(&next.as_str()) { after } else { next };
        if !FILLER.contains(&word.as_str()) && !["search", "mention", "uses"].contains(&word.as_str()) {
            out.push(word.clone());
        }
    }
    if let [.., before, last] = words
        && AFTER.contains(&before.as_str())
        && !FILLER.contains(&last.as_str())
    {
        out.push(last.clone());
    }
    out.dedup();
    out
}

/// A plain word the task names as code: the word before "defined", "declared" or
/// "implemented" ("where is lookup defined"), and the word after "function", "method",
/// "class", "struct" and the like ("the function wrap").
fn named_words(words: &[String]) -> Vec<String> {
    const BEFORE: [&str; 3] = ["defined", "declared", "implemented"];
    const AFTER: [&str; 9] = ["function", "method", "class", "struct", "constant", "variable", "def", "fn", "macro"];
    const NOT_NAMES: [&str; 24] = [
        "is", "are", "was", "it", "this", "that", "the", "a", "an", "does", "do", "where", "which", "what", "of", "in",
        "for", "to", "on", "with", "called", "named", "that", "and",
    ];
    let mut out = Vec::new();
    for pair in words.windows(2) {
        let [first, second] = pair else { continue };
        let name = if BEFORE.contains(&second.as_str()) {
            first
        } else if AFTER.contains(&first.as_str()) {
            second
        } else {
            continue;
        };
        if !NOT_NAMES.contains(&name.as_str()) && !AFTER.contains(&name.as_str()) && !out.contains(name) {
            out.push(name.clone());
        }
    }
    out
}

/// The exact content a write task gives: the quoted text after `containing`, `with the line`,
/// `with the text`, `with the content`, `saying` (single, double quotes or backticks).
pub(crate) fn verbatim_content(task: &str) -> Option<String> {
    let lower = task.to_lowercase();
    let markers = [
        "containing the line",
        "containing the text",
        "containing",
        "with the line",
        "with the text",
        "with the content",
        "saying",
        "the line",
    ];
    let at = markers.iter().find_map(|m| lower.find(m).map(|i| i + m.len()))?;
    let rest = task.get(at..)?.trim_start();
    let mark = rest.chars().next().filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let inside = rest.get(mark.len_utf8()..)?;
    let end = inside.find(mark)?;
    let content = inside.get(..end)?;
    (!content.trim().is_empty()).then(|| content.to_owned())
}

/// Words with an extension: `name.ext`, possibly with `/`.
pub(crate) fn file_names(text: &str) -> Vec<String> {
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
                // `email.policy.Policy`: a class, not a file with the extension `Policy`.
                && !(ext.chars().any(|c| c.is_ascii_uppercase()) && ext.chars().any(|c| c.is_ascii_lowercase()))
                && token.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        }
        None => false,
    }
}

/// Text inside backticks, double quotes, or single quotes that open after a space (so that
/// an apostrophe, as in "what's", opens nothing).
pub(crate) fn quoted(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |inside: &str| {
        let inside = inside.trim();
        if !inside.is_empty() && !out.iter().any(|o| o == inside) {
            out.push(inside.to_owned());
        }
    };
    for mark in ['`', '"'] {
        let mut parts = text.split(mark);
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
            push(inside);
        }
    }
    let mut rest = text;
    while let Some(open) = rest.find('\'') {
        let before = rest.get(..open).and_then(|b| b.chars().next_back());
        let after_open = rest.get(open + 1..).unwrap_or_default();
        if before.is_some_and(|c| c.is_alphanumeric()) {
            rest = after_open;
            continue;
        }
        // The closing quote is followed by a space, punctuation or the end.
        let close = after_open
            .match_indices('\'')
            .map(|(i, _)| i)
            .find(|&i| after_open.get(i + 1..).and_then(|a| a.chars().next()).is_none_or(|c| !c.is_alphanumeric()));
        match close {
            Some(close) => {
                push(after_open.get(..close).unwrap_or_default());
                rest = after_open.get(close + 1..).unwrap_or_default();
            }
            None => break,
        }
    }
    out
}

/// Frame values with untrusted markers and provenance wrappers removed.
struct FrameView<'a> {
    state: &'a Map<String, Value>,
    task: Rc<TaskReading>,
}

impl<'a> FrameView<'a> {
    fn new(state: &'a Map<String, Value>) -> Self {
        let task = TaskReading::kept(&text(state.get("task")));
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
        ("deliverable", WireQuestion::Noul { .. }) => Some(noul(deliverable(f))),
        ("unsupported", WireQuestion::Noul { .. }) => Some(noul(unsupported(f))),
        _ => None,
    }
}

/// A line that quotes a tool call (`N. tool(input) → result`) is a quotation, not a claim.
pub(crate) fn is_quotation(line: &str) -> bool {
    let Some((number, rest)) = line.split_once(". ") else { return false };
    !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
        && rest
            .split_once('(')
            .is_some_and(|(tool, _)| !tool.is_empty() && tool.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        && rest.contains(" → ")
}

/// What the most recent tool result says, read from its header line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Latest {
    /// A search: its number of matching lines, and whether it covered the whole tree.
    search: Option<(usize, bool)>,
    /// A read that found a term.
    found: bool,
    /// A read that was cut before a term was found.
    read_on: bool,
    /// A `find_definition`: how many definitions it found, and whether it indexed the whole tree.
    defined: Option<(usize, bool)>,
}

impl Latest {
    fn of(result: &str) -> Latest {
        let header = result.lines().next().unwrap_or_default();
        if let Some(rest) = header.strip_prefix("[find_definition `") {
            let count = rest
                .split_once("`: ")
                .or_else(|| rest.split_once("): "))
                .and_then(|(_, r)| r.split_once(' '))
                .and_then(|(n, _)| n.parse::<usize>().ok())
                .unwrap_or(0);
            return Latest { defined: Some((count, header.contains("whole tree indexed"))), ..Latest::default() };
        }
        if let Some(rest) = header.strip_prefix("[search `") {
            let count = rest
                .split_once("`: ")
                .and_then(|(_, r)| r.split_once(' '))
                .and_then(|(n, _)| n.parse::<usize>().ok())
                .unwrap_or(0);
            return Latest { search: Some((count, header.contains("whole tree searched"))), ..Latest::default() };
        }
        if header.starts_with('[') {
            return Latest {
                found: header.contains("` found at line"),
                read_on: header.contains("read on: "),
                ..Latest::default()
            };
        }
        Latest::default()
    }
}

/// The tool names of `steps` entries (`tool(input) → result`).
fn step_tools(steps: &[String]) -> Vec<String> {
    steps.iter().filter_map(|s| s.split_once('(').map(|(t, _)| t.to_owned())).collect()
}

/// Whether `name` (as the task wrote it) was read: by path, by file name, or as a range of it.
fn was_read(read: &[String], name: &str) -> bool {
    read.iter().any(|r| {
        let path = r.rsplit_once(':').filter(|(_, range)| range.contains('-')).map_or(r.as_str(), |(p, _)| p);
        path == name || path.ends_with(&format!("/{name}"))
    })
}

/// The shared rule of `needs_tool` and `is_done`: whether the task still needs a tool, from
/// the tools used so far, the files read, the most recent result and whether any file is known.
fn work_remains(t: &TaskReading, used: &[String], read: &[String], latest: &Latest, named_unread: bool) -> bool {
    let did = |tool: &str| used.iter().any(|d| d == tool);
    if used.is_empty() {
        return true;
    }
    if t.acts() {
        return (t.write && !did("write_file"))
            || (t.append && !did("append_file"))
            || (t.delete && !did("delete_file"))
            || (t.moves && !did("move_file"));
    }
    if latest.read_on {
        return true;
    }
    // The code index answered a definition question: found, or found nowhere in the whole
    // tree. Otherwise (files left out) the text search goes on.
    if let Some((count, whole)) = latest.defined
        && (count > 0 || whole)
    {
        return false;
    }
    if named_unread {
        return true;
    }
    if !t.terms.is_empty() {
        if !did("search") && !latest.found {
            return true;
        }
        if t.search {
            return false;
        }
        // A question about a term: read the best file unless a read found it, or a search of
        // the whole tree found nothing.
        return match latest.search {
            Some((0, true)) => false,
            Some(_) => true,
            None => !latest.found && read.is_empty(),
        };
    }
    read.is_empty()
}

/// A file the task names exists (it is among `known`, or `known` says nothing) and is unread.
fn named_unread(t: &TaskReading, read: &[String], known: Option<&[String]>) -> bool {
    t.files.iter().any(|name| {
        !was_read(read, name) && known.is_none_or(|k| k.iter().any(|f| f == name || f.ends_with(&format!("/{name}"))))
    })
}

fn needs_tool(f: &FrameView<'_>) -> bool {
    let t = &f.task;
    let used = f.done_tools();
    let read = f.list("already_read");
    let known = f.list("files_known");
    let latest = Latest::of(&f.text("last"));
    if t.read_all && used.iter().any(|u| u.starts_with("list")) {
        return known.iter().any(|k| !was_read(&read, k));
    }
    // The known files are ranked, a named one first: past the frame's 20 it may still exist.
    let known_view = (known.len() < 20).then_some(known.as_slice());
    work_remains(t, &used, &read, &latest, named_unread(t, &read, known_view))
}

fn pick_tool(f: &FrameView<'_>, offered: &[String]) -> String {
    let t = &f.task;
    let has = |tool: &str| offered.iter().any(|o| o == tool);
    let known = f.list("files_known");
    let read = f.list("already_read");
    let used = f.done_tools();
    let latest = Latest::of(&f.text("last_result"));
    let unread_named = named_unread(t, &read, (known.len() < 20).then_some(known.as_slice()));
    let wants_read = !t.acts()
        && (unread_named
            || latest.read_on
            || matches!(latest.search, Some((n, _)) if n > 0 && !t.search)
            || t.read_all
            || read.is_empty());
    let pick = if known.is_empty() && has("list_files") {
        "list_files"
    } else if known.is_empty() && has("list_dir") {
        "list_dir"
    } else if t.read_all && has("list_files") {
        // Offered again only while a listing given a page at a time has a page not listed.
        "list_files"
    } else if t.delete && has("delete_file") {
        "delete_file"
    } else if t.moves && has("move_file") {
        "move_file"
    } else if t.asks_definition() && has("find_definition") && !used.iter().any(|u| u == "find_definition") {
        "find_definition"
    } else if !t.acts() && !t.terms.is_empty() && has("search") && !used.iter().any(|u| u == "search") && !latest.found
    {
        "search"
    } else if wants_read && has("read_file") {
        "read_file"
    } else if t.append && has("append_file") {
        "append_file"
    } else if t.write && has("write_file") {
        "write_file"
    } else if has("done") {
        "done"
    } else {
        offered.first().map_or("done", String::as_str)
    };
    pick.to_owned()
}

/// A candidate the task names first (a range of it included); else the first candidate,
/// which the host ranked by relevance.
fn pick_file(t: &TaskReading, offered: &[String]) -> Option<String> {
    let named = |candidate: &String| {
        let path = candidate.rsplit_once(':').filter(|(_, r)| r.contains('-')).map_or(candidate.as_str(), |(p, _)| p);
        t.files.iter().any(|f| path == f || path.ends_with(&format!("/{f}")))
    };
    offered.iter().find(|c| named(c)).or(offered.first()).cloned()
}

fn is_done(f: &FrameView<'_>) -> bool {
    let t = &f.task;
    let read = f.list("already_read");
    let steps = f.list("steps");
    let used = step_tools(&steps);
    let succeeded = |tool: &str| {
        steps.iter().any(|s| s.starts_with(&format!("{tool}(")) && !s.contains(&format!("→ {TOOL_ERROR_PREFIX}")))
    };
    if t.acts() {
        return (!t.write || succeeded("write_file"))
            && (!t.append || succeeded("append_file"))
            && (!t.delete || succeeded("delete_file"))
            && (!t.moves || succeeded("move_file"));
    }
    let last = steps.last().and_then(|s| s.split_once(" → ")).map(|(_, r)| r).unwrap_or_default();
    let latest = Latest::of(last);
    if t.read_all {
        let listed: Vec<String> = steps
            .iter()
            .filter(|s| s.starts_with("list_files(") || s.starts_with("list_dir("))
            .filter_map(|s| s.split_once(" → ").map(|(_, r)| r.to_owned()))
            .flat_map(|r| r.lines().map(str::to_owned).collect::<Vec<_>>())
            .filter(|l| !l.ends_with('/') && !l.trim().is_empty() && !l.starts_with('[') && !l.contains(" …[+"))
            .collect();
        return !listed.is_empty() && listed.iter().all(|l| was_read(&read, l));
    }
    let listed: Vec<String> = steps
        .iter()
        .filter(|s| s.starts_with("list_files(") || s.starts_with("list_dir("))
        .filter_map(|s| s.split_once(" → ").map(|(_, r)| r.to_owned()))
        .flat_map(|r| r.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    // A listing clipped in the frame says nothing about a name it does not show.
    let complete = listed.iter().any(|l| l.starts_with('['));
    let known = complete.then_some(listed.as_slice());
    !work_remains(t, &used, &read, &latest, named_unread(t, &read, known))
}

/// Whether the evidence settles `term`: a cited line holds it, or a search of the whole tree
/// for it found nothing.
fn settled(evidence: &str, term: &str) -> bool {
    let cited = super::focus::cited_lines(evidence).any(|l| contains_word(l, term));
    let searched_nothing = evidence.lines().any(|l| {
        l.contains("[search `")
            && l.contains(": 0 matching lines")
            && l.contains("whole tree searched")
            && l.contains(term)
    });
    cited || searched_nothing
}

fn deliverable(f: &FrameView<'_>) -> bool {
    let t = &f.task;
    let draft = f.text("answer");
    let evidence = f.text("evidence");
    if draft.trim().is_empty() || evidence.trim().is_empty() {
        return false;
    }
    if t.acts() {
        let done = ["written ", "appended ", "moved ", "deleted "];
        return evidence
            .lines()
            .any(|l| l.split_once(" → ").is_some_and(|(_, r)| done.iter().any(|d| r.starts_with(d))));
    }
    t.terms.iter().all(|term| draft.contains(term.as_str()) && settled(&evidence, term))
}

/// Claims of the draft that the evidence does not hold: a file name that is neither in the
/// evidence nor in the task, or a cited `file:N:` line whose place is not in the evidence.
/// Lines quoting a tool call (`N. tool(input) → result`) are quotations, not claims.
fn unsupported(f: &FrameView<'_>) -> bool {
    let draft = f.text("answer");
    let evidence = f.text("evidence");
    let task = f.text("task");
    if draft.trim().is_empty() {
        return true;
    }
    let claims: Vec<&str> = draft.lines().filter(|l| !is_quotation(l)).collect();
    let unknown_file = file_names(&claims.join("\n"))
        .into_iter()
        .any(|name| !evidence.contains(&name) && !task.contains(&name) && !name.contains(':'));
    let unknown_line = claims.iter().map(|l| l.trim_start()).filter(|l| super::focus::is_cited(l)).any(|l| {
        let place = l.split_once(": ").map_or(l, |(p, _)| p);
        !evidence.contains(&format!("{place}: "))
    });
    unknown_file || unknown_line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_reading_is_always_the_reading_of_the_text_given() {
        let tasks = [
            "Create hello.txt containing \"hi there\"",
            "Where is `apply_discount` used?",
            "",
            "Where is `apply_discount` used?",
        ];
        for task in tasks.iter().chain(tasks.iter().rev()).chain(tasks.iter()) {
            assert_eq!(*TaskReading::kept(task), TaskReading::of(task), "{task:?}");
        }
        // The same text twice in a row is read once.
        let first = TaskReading::kept("Read README.md and notes.md");
        assert!(Rc::ptr_eq(&first, &TaskReading::kept("Read README.md and notes.md")));
        assert!(!Rc::ptr_eq(&first, &TaskReading::kept("Read README.md and notes.md ")));
    }

    #[test]
    fn reads_the_task() {
        let t = TaskReading::of("Which file defines `add`, and does notes.md mention \"totals\"? Summarize.");
        assert_eq!(t.files, ["notes.md"]);
        assert_eq!(t.terms, ["add", "totals"]);
        assert!(!t.read_all && !t.search && !t.write && !t.delete && !t.moves, "a named file is not every file");
        assert!(TaskReading::of("Summarise every file").read_all);
        let w = TaskReading::of("Create hello.txt containing \"hi there\"");
        assert!(w.write && !w.append);
        assert_eq!(w.files, ["hello.txt"]);
        assert_eq!(w.content.as_deref(), Some("hi there"));
        assert!(w.terms.is_empty(), "content is not a search term: {:?}", w.terms);
        let a = TaskReading::of("Add the line 'done: ship it' at the end of notes.md");
        assert!(a.append && !a.write);
        assert_eq!(a.content.as_deref(), Some("done: ship it"));
        assert!(contains_word("def add(a, b):", "add"));
        assert!(!contains_word("address", "add"));
    }

    #[test]
    fn identifiers_need_no_backticks() {
        assert_eq!(TaskReading::of("What does with_tax return?").terms, ["with_tax"]);
        assert_eq!(TaskReading::of("Where is JSONDecoder defined?").terms, ["JSONDecoder"]);
        assert_eq!(TaskReading::of("what does json.dumps do").terms, ["dumps"]);
        assert_eq!(TaskReading::of("What is parseConfig for?").terms, ["parseConfig"]);
        let t = TaskReading::of("Which files mention STOCK?");
        assert_eq!(t.terms, ["STOCK"]);
        assert!(t.search);
        let t = TaskReading::of("Is there a TODO anywhere?");
        assert_eq!(t.terms, ["TODO"]);
        assert!(t.search);
        let t = TaskReading::of("Which files mention discount?");
        assert_eq!(t.terms, ["discount"]);
        assert!(t.search);
        assert!(TaskReading::of("Where is `apply_discount` used?").search);
        assert!(!TaskReading::of("Where is `apply_discount` defined?").search);
        assert!(TaskReading::of("What's in the README?").terms.is_empty(), "an apostrophe opens no quote");
        assert!(TaskReading::of("Read README.md and notes.md").terms.is_empty());
        assert!(TaskReading::of("Create CHANGELOG.md containing the line 'v0.1: first release'").terms.is_empty());
        assert_eq!(TaskReading::of("Where is lookup defined? It is a method of Env.").terms, ["lookup"]);
        assert_eq!(TaskReading::of("what does the function wrap do").terms, ["wrap"]);
        assert!(TaskReading::of("Where is it defined?").terms.is_empty());
        assert!(TaskReading::of("Overwrite a.txt with the text 'x'").write);
    }

    #[test]
    fn qualified_names_definition_questions_and_edits() {
        let t = TaskReading::of("What does `Map::insert` return?");
        assert_eq!(t.terms, ["insert"]);
        assert_eq!(t.symbol_of("insert"), "Map::insert");
        assert!(t.asks_definition());
        let t = TaskReading::of("Where is the `json!` macro defined?");
        assert_eq!((t.terms.as_slice(), t.symbol_of("json").as_str()), (&["json".to_owned()][..], "json!"));
        let t = TaskReading::of("What does Deserializer::new return?");
        assert_eq!(t.symbol_of("new"), "Deserializer::new");
        assert_eq!(
            TaskReading::of("Where is `email.policy.Policy` defined?").symbol_of("Policy"),
            "email.policy.Policy"
        );
        assert!(TaskReading::of("How many variants does the enum `Value` have?").asks_definition());
        assert!(!TaskReading::of("Which files mention `RawValue`?").asks_definition());
        let edit = TaskReading::of("Add a doc comment above `from_str` in src/de.rs");
        assert!(edit.edit && edit.acts() && !edit.asks_definition());
        assert!(!TaskReading::of("Add the line 'x' at the end of notes.md").edit, "an append is not an edit");
        assert!(!TaskReading::of("Which file defines `add`?").edit, "the verb must start the task");
    }

    #[test]
    fn verbatim_content_is_only_what_the_task_quotes() {
        assert_eq!(verbatim_content("Create a.txt containing `x = 1`").as_deref(), Some("x = 1"));
        assert_eq!(verbatim_content("Create a.txt with the text \"hi\" please").as_deref(), Some("hi"));
        assert_eq!(verbatim_content("Create a.txt about cats"), None);
        assert_eq!(verbatim_content("Create a.txt containing a summary"), None);
        assert_eq!(verbatim_content("Create a.txt containing ''"), None);
    }

    #[test]
    fn results_are_read_from_their_header() {
        let s = Latest::of("[search `x`: 0 matching lines in 0 files · whole tree searched: 3 text files]");
        assert_eq!(s.search, Some((0, true)));
        let s = Latest::of("[search `x`: 12 matching lines in 2 files · NOT the whole tree: 3 text files]");
        assert_eq!(s.search, Some((12, false)));
        let r = Latest::of("[a.py: whole file, 3 lines; `x` found at line 2]\na.py:2: x = 1");
        assert!(r.found && !r.read_on);
        let r = Latest::of(
            "[a.py: lines 1-9, the file goes on; `x` not found in these lines (the rest was not read; read on: a.py:10-)]",
        );
        assert!(!r.found && r.read_on);
        assert_eq!(Latest::of("plain text"), Latest::default());
        let d =
            Latest::of("[find_definition `Map::insert`: 1 definition in 1 file · whole tree indexed: 70 source files]");
        assert_eq!(d.defined, Some((1, true)));
        let d = Latest::of(
            "[find_definition `json` (macro): 0 definitions in 0 files · NOT the whole tree: 3 source files read; …]",
        );
        assert_eq!(d.defined, Some((0, false)));
    }

    #[test]
    fn the_gate_checks_claims_against_the_evidence() {
        let frame = |answer: &str, evidence: &str| json!({"task": "Where is with_tax defined?", "answer": answer, "evidence": evidence});
        let evidence = "read_file(pricing.py) → [pricing.py: whole file, 9 lines; `with_tax` found at line 3]\npricing.py:3: def with_tax(p):";
        let good = frame("Where `with_tax` occurs:\n    pricing.py:3: def with_tax(p):", evidence);
        let f = FrameView::new(good.as_object().unwrap());
        assert!(deliverable(&f) && !unsupported(&f));
        let invented = frame("Where `with_tax` occurs:\n    pricing.py:7: def with_tax(p):", evidence);
        let f = FrameView::new(invented.as_object().unwrap());
        assert!(unsupported(&f), "a line that is not in the evidence is a claim without support");
        let unread = frame("`with_tax` is in pricing.py", "list_files(.) → pricing.py");
        let f = FrameView::new(unread.as_object().unwrap());
        assert!(!deliverable(&f), "nothing read settles the term");
        let nowhere = frame(
            "`with_tax` occurs in no text file of the tree",
            "search(re:\\bwith_tax\\b) → [search `re:\\bwith_tax\\b`: 0 matching lines in 0 files · whole tree searched: 4 text files]",
        );
        let f = FrameView::new(nowhere.as_object().unwrap());
        assert!(deliverable(&f) && !unsupported(&f));
    }

    #[test]
    fn strips_markers_and_wrappers() {
        let state = json!({"task": "t", "last": decision_protocol::frame::mark_untrusted("abc"),
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
