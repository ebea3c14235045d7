//! The host's own check of a draft before the delivery gate's model is asked: whatever a model
//! answers at `can_deliver`, an answer the evidence does not support never goes out.
//!
//! The check reads the draft against the run's whole history (what the tools returned, not
//! the frame's clipped view) and the files themselves, through the work directory handle:
//!
//! - every cited line (`file:N: text`) exists and says what the draft says it says, and every
//!   place the draft names (`file:N`) exists;
//! - a question about where a symbol is defined (or what it returns, its variants …) is
//!   answered only from a definition the code index or a read found, and the draft cites it;
//! - "which files mention X" is answered with every file of a whole-tree search, all of them;
//! - "X occurs in no text file" is said only after a whole-tree search for exactly `X` found
//!   nothing;
//! - a task about every file is answered only after an uncut listing and a read of every file
//!   it lists;
//! - otherwise each term of the task is in the draft on a cited line that holds it.
//!
//! A draft that fails is sent back by code (`revise`, the model is not asked); when the
//! revision fails too, the run halts with the reason (`not_found`, `unsupported`).

use serde_json::Value;

use super::explore::next_page;
use super::explore::read_capped;
use super::focus::{cited_lines, contains_word, defines};
use super::heuristic::{TaskReading, is_quotation};
use super::sandbox::WorkDir;
use super::tools::{TOOL_ERROR_PREFIX, listed_files, listing_is_cut};

/// Why a draft may not be delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The halt the run ends with when the revision is refused too.
    pub(crate) halt: &'static str,
    /// What is wrong, in words.
    pub(crate) reason: String,
}

fn refuse(halt: &'static str, reason: String) -> Result<(), Refusal> {
    Err(Refusal { halt, reason })
}

/// The history's `(tool, input, result)` triples.
fn steps(history: &[Value]) -> Vec<(&str, &str, &str)> {
    history
        .iter()
        .filter_map(|h| Some((h.get("tool")?.as_str()?, h.get("input")?.as_str()?, h.get("result")?.as_str()?)))
        .collect()
}

/// Check `draft` for `task` against `history` and the files of `dir`.
pub(crate) fn check_draft(task: &TaskReading, draft: &str, history: &[Value], dir: &WorkDir) -> Result<(), Refusal> {
    if draft.trim().is_empty() {
        return refuse("unsupported", "the answer is empty".into());
    }
    // A task that asks for an action is judged by whether the action happened (the run
    // checks that before it counts a delivery).
    if task.acts() {
        return Ok(());
    }
    let claims: Vec<&str> = draft.lines().filter(|l| !is_quotation(l)).collect();
    check_cited_lines(&claims, dir)?;
    let steps = steps(history);
    if task.read_all && !task.search && !task.definition {
        check_every_file_read(&steps)?;
    }
    if task.definition
        && let [term] = task.terms.as_slice()
    {
        return check_definition(term, &task.symbol_of(term), &claims, &steps);
    }
    for term in &task.terms {
        check_absence_claim(term, &claims, &steps)?;
        if task.search {
            check_file_list(term, &claims, &steps)?;
        }
        let cited = claims.iter().any(|l| super::focus::is_cited(l.trim_start()) && contains_word(l, term));
        let absent = absence_claimed(term, &claims);
        if !cited && !absent {
            return refuse(
                "unsupported",
                format!(
                    "the answer cites no line that holds `{term}`, and does not say it was searched for and not found"
                ),
            );
        }
    }
    Ok(())
}

/// A task about every file ("summarize each file") is answered only when a listing was made,
/// no listing was cut (the files after a cut were never seen) and every listed file was read.
fn check_every_file_read(steps: &[(&str, &str, &str)]) -> Result<(), Refusal> {
    let ok = |result: &str| !result.starts_with(TOOL_ERROR_PREFIX);
    let listings: Vec<&str> = steps
        .iter()
        .filter(|(tool, _, result)| matches!(*tool, "list_files" | "list_dir") && ok(result))
        .map(|(_, _, result)| *result)
        .collect();
    if listings.is_empty() {
        return refuse(
            "unsupported",
            "the task is about every file, and no listing was made, so which files there are is not known".into(),
        );
    }
    if listings.iter().any(|listing| listing_is_cut(listing)) {
        return refuse(
            "unsupported",
            "the task is about every file, and the listing was cut, so the files after the cut were never read".into(),
        );
    }
    // A listing given a page at a time is whole only when every page it announced was listed.
    let listed_pages: std::collections::HashSet<&str> = steps
        .iter()
        .filter(|(tool, _, result)| *tool == "list_files" && ok(result))
        .map(|(_, input, _)| input.trim())
        .collect();
    if let Some(missing) = listings.iter().filter_map(|listing| next_page(listing)).find(|p| !listed_pages.contains(p))
    {
        return refuse(
            "unsupported",
            format!(
                "the task is about every file, and the listing's next page (`list_files {missing}`) was never \
                 listed, so the files on it were never read"
            ),
        );
    }
    // A range read (`path:N-M`) counts as a read of its file.
    let read: std::collections::HashSet<&str> = steps
        .iter()
        .filter(|(tool, _, result)| *tool == "read_file" && ok(result))
        .map(|(_, input, _)| input.rsplit_once(':').filter(|(_, range)| range.contains('-')).map_or(*input, |(p, _)| p))
        .collect();
    let listed: Vec<String> = listings.iter().flat_map(|listing| listed_files(listing)).collect();
    // Looked up, not searched: a run reads hundreds of files, and this runs on every draft.
    // A listing of a subdirectory names its files without the directory: every read path's
    // tails after a `/` are looked up too.
    let tails: std::collections::HashSet<&str> =
        read.iter().flat_map(|r| r.match_indices('/').filter_map(move |(i, _)| r.get(i + 1..))).collect();
    let was_read = |file: &str| read.contains(file) || tails.contains(file);
    let unread: Vec<&str> = listed.iter().map(String::as_str).filter(|f| !was_read(f)).collect();
    if let Some(first) = unread.first() {
        return refuse(
            "unsupported",
            format!(
                "the task is about every file, and {} of the {} listed files were never read (the first: {first})",
                unread.len(),
                listed.len()
            ),
        );
    }
    Ok(())
}

/// Every `file:N: text` the draft cites is line N of that file, and every `file:N` it names
/// exists.
fn check_cited_lines(claims: &[&str], dir: &WorkDir) -> Result<(), Refusal> {
    let mut texts: Vec<(String, Option<String>)> = Vec::new();
    let read = |file: &str, texts: &mut Vec<(String, Option<String>)>| -> Option<String> {
        if let Some((_, text)) = texts.iter().find(|(f, _)| f == file) {
            return text.clone();
        }
        let text = read_capped(dir, file, 4 * 1024 * 1024)
            .ok()
            .filter(|(_, longer)| !longer)
            .and_then(|(bytes, _)| String::from_utf8(bytes).ok());
        texts.push((file.to_owned(), text.clone()));
        text
    };
    for line in claims {
        for (file, number, cited) in places(line) {
            let Some(text) = read(&file, &mut texts) else {
                return refuse("unsupported", format!("the answer cites {file}:{number}, and no such file was read"));
            };
            let Some(actual) = text.lines().nth(number.saturating_sub(1)).filter(|_| number >= 1) else {
                return refuse(
                    "unsupported",
                    format!("the answer cites {file}:{number}, and {file} has no line {number}"),
                );
            };
            if let Some(cited) = cited {
                let cited = cited.split("…[+").next().unwrap_or_default().trim_end_matches('…');
                if !actual.trim().starts_with(cited.trim()) {
                    return refuse(
                        "unsupported",
                        format!(
                            "the answer quotes {file}:{number} as `{}`, and the line says something else",
                            cited.trim()
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// The places a claim line names: a cited line `file:N: text` (with its text), and `file:N`
/// in backticks.
fn places(line: &str) -> Vec<(String, usize, Option<String>)> {
    let trimmed = line.trim_start();
    let mut out = Vec::new();
    if super::focus::is_cited(trimmed)
        && let Some((place, text)) = trimmed.split_once(": ")
        && let Some((file, number)) = place.rsplit_once(':')
        && let Ok(number) = number.parse::<usize>()
    {
        out.push((file.to_owned(), number, Some(text.to_owned())));
        return out;
    }
    for quoted in line.split('`').skip(1).step_by(2) {
        if let Some((file, number)) = quoted.rsplit_once(':')
            && let Ok(number) = number.parse::<usize>()
            && !file.is_empty()
            && !file.contains(' ')
            && file.contains('.')
        {
            out.push((file.to_owned(), number, None));
        }
    }
    out
}

/// The places of the definitions the evidence holds for `term`: the code index's, or a read's
/// line that defines it. `(places, what the index said when it found none)`.
fn definitions(term: &str, steps: &[(&str, &str, &str)]) -> (Vec<String>, Option<String>) {
    let mut places = Vec::new();
    let mut none_found = None;
    for (tool, _, result) in steps {
        match *tool {
            "find_definition" => {
                let header = result.lines().next().unwrap_or_default();
                let listed: Vec<&str> = result.lines().skip(1).take_while(|l| *l != "---").collect();
                let found: Vec<String> = cited_lines(&listed.join("\n"))
                    .filter_map(|l| l.split_once(": ").map(|(place, _)| place.to_owned()))
                    .collect();
                if found.is_empty() {
                    none_found = Some(header.trim_matches(['[', ']']).to_owned());
                }
                places.extend(found);
            }
            "read_file" => {
                for line in cited_lines(result) {
                    if let Some((place, text)) = line.split_once(": ")
                        && defines(text, term)
                    {
                        places.push(place.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    places.dedup();
    (places, none_found)
}

fn check_definition(term: &str, symbol: &str, claims: &[&str], steps: &[(&str, &str, &str)]) -> Result<(), Refusal> {
    let (places, none_found) = definitions(term, steps);
    if places.is_empty() {
        let searched = none_found.map(|h| format!(" ({h})")).unwrap_or_default();
        return refuse("not_found", format!("no definition of `{symbol}` was found{searched}"));
    }
    let text = claims.join("\n");
    if !places.iter().any(|p| text.contains(p.as_str())) {
        return refuse(
            "unsupported",
            format!("the answer does not cite where `{symbol}` is defined ({})", places.join(", ")),
        );
    }
    Ok(())
}

/// Whether the draft says `term` occurs nowhere.
fn absence_claimed(term: &str, claims: &[&str]) -> bool {
    claims.iter().any(|l| l.contains(&format!("`{term}` occurs in no text file")))
}

/// "X occurs in no text file" only after a whole-tree search for exactly X found nothing.
fn check_absence_claim(term: &str, claims: &[&str], steps: &[(&str, &str, &str)]) -> Result<(), Refusal> {
    if !absence_claimed(term, claims) {
        return Ok(());
    }
    let exact = [term.to_owned(), format!("re:\\b{}\\b", regex::escape(term))];
    let searched_nothing = steps.iter().any(|(tool, input, result)| {
        let header = result.lines().next().unwrap_or_default();
        *tool == "search"
            && exact.iter().any(|e| input.lines().next() == Some(e.as_str()))
            && header.contains(": 0 matching lines")
            && header.contains("whole tree searched")
    });
    if searched_nothing {
        return Ok(());
    }
    refuse(
        "unsupported",
        format!(
            "the answer says `{term}` occurs nowhere, and no search of the whole tree for exactly `{term}` found zero hits"
        ),
    )
}

/// "Which files mention X": every file of the latest whole-tree search is named.
fn check_file_list(term: &str, claims: &[&str], steps: &[(&str, &str, &str)]) -> Result<(), Refusal> {
    let Some((_, _, result)) = steps.iter().rev().find(|(tool, _, _)| *tool == "search") else {
        return refuse("unsupported", format!("no search for `{term}` was made, so no list of files is known"));
    };
    let header = result.lines().next().unwrap_or_default();
    if header.contains(": 0 matching lines") {
        return Ok(());
    }
    if !header.contains("whole tree searched") {
        return refuse(
            "unsupported",
            format!(
                "the search for `{term}` did not cover the whole tree, so a list of the files that mention it would be incomplete ({})",
                header.trim_matches(['[', ']'])
            ),
        );
    }
    let files = super::explore::files_with_hits(result);
    let text = claims.join("\n");
    let missing: Vec<&String> = files.iter().filter(|f| !text.contains(f.as_str())).collect();
    if files.is_empty() || !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).map(|s| s.as_str()).collect();
        return refuse(
            "unsupported",
            format!(
                "the answer lists {} of the {} files the search found (missing: {})",
                files.len() - missing.len(),
                files.len(),
                shown.join(", ")
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    struct Tree(std::path::PathBuf, WorkDir);

    fn tree(name: &str) -> Tree {
        let dir = std::env::temp_dir().join(format!("decision-gate-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src")).unwrap();
        fs::write(dir.join("src/map.rs"), "use x;\n\npub fn insert(k: u8) -> Option<u8> {\n    None\n}\n").unwrap();
        fs::write(dir.join("README.md"), "see insert\n").unwrap();
        let wd = WorkDir::open(&dir).unwrap();
        Tree(dir, wd)
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn step(tool: &str, input: &str, result: &str) -> Value {
        json!({"step": 1, "tool": tool, "input": input, "result": result})
    }

    fn check(task: &str, draft: &str, history: &[Value], t: &Tree) -> Result<(), Refusal> {
        check_draft(&TaskReading::of(task), draft, history, &t.1)
    }

    const FOUND: &str = "[find_definition `insert`: 1 definition in 1 file · whole tree indexed: 1 source file]\n\
        src/map.rs:3: pub fn insert(k: u8) -> Option<u8> {\n    fn `insert` · returns `Option<u8>` · lines 3-5\n---\n";

    #[test]
    fn an_empty_answer_is_refused() {
        let t = tree("empty");
        assert_eq!(check("What is x?", " ", &[], &t).unwrap_err().halt, "unsupported");
    }

    #[test]
    fn a_task_about_every_file_needs_every_listed_file_read() {
        let t = tree("every-file");
        let task = "Summarize each file";
        let listing = step("list_files", ".", "README.md\nsrc/map.rs\n[2 files]");
        let readme = step("read_file", "README.md", "[README.md: whole file, 1 line]\nsee insert");
        let map = step("read_file", "src/map.rs:1-5", "[src/map.rs: lines 1-5]\nuse x;");
        let draft = "README.md: see insert\nsrc/map.rs: the insert function";
        assert!(check(task, draft, &[listing.clone(), readme.clone(), map.clone()], &t).is_ok());
        let unread = check(task, draft, &[listing.clone(), readme.clone()], &t).unwrap_err();
        assert_eq!(unread.halt, "unsupported");
        assert!(
            unread.reason.contains("1 of the 2 listed files were never read (the first: src/map.rs)"),
            "{unread:?}"
        );
        let failed = step("read_file", "src/map.rs", "error: src/map.rs is a binary file; it was not read");
        assert!(check(task, draft, &[listing, readme.clone(), failed], &t).is_err(), "a failed read is no read");
        let cut = step("list_files", ".", "README.md\nsrc/map.rs\n[2000 files; listing cut at 2000 files or depth 24]");
        let refused = check(task, draft, &[cut, readme.clone(), map], &t).unwrap_err();
        assert!(refused.reason.contains("the listing was cut"), "{refused:?}");
        let unlisted = check(task, draft, &[readme], &t).unwrap_err();
        assert!(unlisted.reason.contains("no listing was made"), "{unlisted:?}");
    }

    #[test]
    fn cited_lines_must_exist_and_say_what_is_quoted() {
        let t = tree("cited");
        let history = [step("read_file", "src/map.rs", "x")];
        let task = "What does `insert` do?";
        assert!(check(task, "src/map.rs:3: pub fn insert(k: u8) -> Option<u8> {", &history, &t).is_ok());
        let wrong = check(task, "src/map.rs:3: pub fn insert(k: String)", &history, &t).unwrap_err();
        assert!(wrong.reason.contains("says something else"), "{wrong:?}");
        let missing = check(task, "src/map.rs:99: pub fn insert", &history, &t).unwrap_err();
        assert!(missing.reason.contains("has no line 99"), "{missing:?}");
        let no_file = check(task, "`insert` is at `src/set.rs:3`", &history, &t).unwrap_err();
        assert!(no_file.reason.contains("no such file"), "{no_file:?}");
        // A quotation of a tool call is not a claim.
        assert!(check(task, "src/map.rs:3: pub fn insert(\n1. read_file(a.rs:9: x) → y", &history, &t).is_ok());
    }

    #[test]
    fn a_listing_given_in_pages_is_whole_only_with_every_page() {
        let t = tree("pages");
        let task = "Summarize each file";
        let first = step("list_files", ".", "README.md\n[2 files; entries 1-1 of 2; next page: `list_files .:2-`]");
        let second = step("list_files", ".:2-", "src/map.rs\n[2 files; entries 2-2 of 2]");
        let readme = step("read_file", "README.md", "[README.md: whole file, 1 line]\nsee insert");
        let map = step("read_file", "src/map.rs", "[src/map.rs: whole file, 1 line]\nuse x;");
        let draft = "README.md: see insert\nsrc/map.rs: the insert function";
        let refused = check(task, draft, &[first.clone(), readme.clone()], &t).unwrap_err();
        assert_eq!(refused.halt, "unsupported");
        assert!(refused.reason.contains("next page (`list_files .:2-`) was never listed"), "{refused:?}");
        let failed = step("list_files", ".:2-", "error: the listing has 1 entries; entry 2 does not exist");
        assert!(check(task, draft, &[first.clone(), failed, readme.clone(), map.clone()], &t).is_err());
        let unread = check(task, draft, &[first.clone(), second.clone(), readme.clone()], &t).unwrap_err();
        assert!(unread.reason.contains("1 of the 2 listed files were never read"), "{unread:?}");
        assert!(check(task, draft, &[first, second, readme, map], &t).is_ok());
    }

    #[test]
    fn a_definition_question_needs_the_definition_found_and_cited() {
        let t = tree("definition");
        let task = "Where is `Map::insert` defined?";
        let found = [step("find_definition", "Map::insert", FOUND)];
        assert!(check(task, "Answer: `Map::insert` is defined in `src/map.rs:3`.", &found, &t).is_ok());
        let uncited = check(task, "Answer: it is in the map module.", &found, &t).unwrap_err();
        assert_eq!(uncited.halt, "unsupported");
        let none = [step(
            "find_definition",
            "Map::insert",
            "[find_definition `Map::insert`: 0 definitions in 0 files · whole tree indexed: 1 source file]",
        )];
        let refused = check(task, "Answer: no definition of `Map::insert` was found.", &none, &t).unwrap_err();
        assert_eq!(refused.halt, "not_found");
        assert!(refused.reason.contains("no definition of `Map::insert`"), "{refused:?}");
        // A doc comment that mentions the name is not its definition.
        let mention = [step("search", "re:\\binsert\\b", "[search …]\nREADME.md:1: see insert")];
        assert_eq!(check(task, "README.md:1: see insert", &mention, &t).unwrap_err().halt, "not_found");
    }

    #[test]
    fn occurs_nowhere_only_after_an_exact_whole_tree_search_found_nothing() {
        let t = tree("absence");
        let task = "Is `frob` used anywhere?";
        let draft = "`frob` occurs in no text file of the tree";
        let nothing = [step(
            "search",
            "re:\\bfrob\\b",
            "[search `re:\\bfrob\\b`: 0 matching lines in 0 files · whole tree searched: 2 text files]",
        )];
        assert!(check(task, draft, &nothing, &t).is_ok());
        let found = [step(
            "search",
            "re:\\bfrob\\b",
            "[search `re:\\bfrob\\b`: 3 matching lines in 1 file · whole tree searched: 2 text files]",
        )];
        assert!(check(task, draft, &found, &t).is_err());
        let partial = [step(
            "search",
            "re:\\bfrob\\b",
            "[search `re:\\bfrob\\b`: 0 matching lines in 0 files · NOT the whole tree: 2 text files]",
        )];
        assert!(check(task, draft, &partial, &t).is_err());
        let other = [step(
            "search",
            "frob::x",
            "[search `frob::x`: 0 matching lines in 0 files · whole tree searched: 2 text files]",
        )];
        assert!(check(task, draft, &other, &t).is_err(), "a search for another string says nothing about `frob`");
    }

    #[test]
    fn a_file_list_names_every_file_the_search_found() {
        let t = tree("list");
        let task = "Which files mention `insert`?";
        let result = "[search `re:\\binsert\\b`: 2 matching lines in 2 files · whole tree searched: 2 text files]\n\
            [files with hits (2): README.md, src/map.rs]\nREADME.md:1: see insert\nsrc/map.rs:3: pub fn insert(k: u8) -> Option<u8> {";
        let history = [step("search", "re:\\binsert\\b", result)];
        let all = "Answer: `insert` occurs in 2 files:\n    README.md, src/map.rs\nREADME.md:1: see insert";
        assert!(check(task, all, &history, &t).is_ok());
        let short = "Answer: `insert` occurs in src/map.rs\nsrc/map.rs:3: pub fn insert(k: u8) -> Option<u8> {";
        let refused = check(task, short, &history, &t).unwrap_err();
        assert!(refused.reason.contains("1 of the 2 files"), "{refused:?}");
        let cut = [step("search", "re:\\binsert\\b", &result.replace("whole tree searched", "NOT the whole tree"))];
        assert!(check(task, all, &cut, &t).is_err(), "a search that stopped cannot back a complete list");
    }
}
