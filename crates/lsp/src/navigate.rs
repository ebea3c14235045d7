//! Go to definition, find references and rename, for question ids and block ids: a question
//! is defined by its `### id` heading (the implicit question of a `noul` or `score` block by
//! the block's `## id` heading) and referred to by the policy's probes (`prob:id`,
//! `score:id`, `picked:id`) of its block; a block by its heading, which nothing else in the
//! file names (but its implicit question's probes).

use std::collections::HashMap;

use lsp_types::{Location, Position, Range, TextEdit, Uri, WorkspaceEdit};

use decision::contract::Block;

use crate::open::{Failure, Open};
use crate::text::word_around;

/// The probes whose argument is a question id.
const PROBES: [&str; 3] = ["prob:", "score:", "picked:"];

/// A question id under the cursor: where it is defined and every place that names it.
struct Named {
    definition: (usize, usize),
    /// The definition first, then the probes, in document order.
    places: Vec<(usize, usize)>,
}

/// The question id at `position` (on its heading or in a probe), with its places.
fn named_at(open: &Open, position: Position) -> Option<Named> {
    let doc = &open.doc;
    let at = doc.index.offset(&doc.text, position);
    if at.clamped {
        return None;
    }
    let (start, end) = word_around(&doc.text, at.offset);
    let word = doc.text.get(start..end).filter(|w| !w.is_empty())?;
    let blocks = &open.report.contract.blocks;
    let index = blocks.iter().rposition(|b| b.span.start <= at.offset)?;
    let block = blocks.get(index)?;
    // A question id of the block, or the block's own id (on its heading).
    if block.question(word).is_none() && block.id != word {
        return None;
    }
    let block_end = blocks.get(index + 1).map_or(doc.text.len(), |next| next.span.start);
    let definition = heading_of(&doc.text, block, word, block_end)?;
    let mut places = vec![definition];
    for rule in &block.policy {
        let line = doc.text.get(rule.span.start..rule.span.end).unwrap_or_default();
        for probe in PROBES {
            let named = format!("{probe}{word}");
            for (i, _) in line.match_indices(&named) {
                let from = rule.span.start + i + probe.len();
                let to = from + word.len();
                let next = doc.text.get(to..).and_then(|rest| rest.chars().next());
                if !next.is_some_and(is_word) {
                    places.push((from, to));
                }
            }
        }
    }
    places.sort_unstable();
    places.dedup();
    // Only a place that names the question counts: the cursor on another word of a heading
    // or on a word of prose is no reference.
    places.iter().any(|&(s, e)| s <= at.offset && at.offset <= e).then_some(Named { definition, places })
}

/// Where question `id` of `block` is defined: its `### id` heading, or for the block's
/// implicit question the block's own heading.
fn heading_of(text: &str, block: &Block, id: &str, block_end: usize) -> Option<(usize, usize)> {
    let body = text.get(block.span.start..block_end)?;
    let mut offset = block.span.start;
    for line in body.split_inclusive('\n') {
        if line.trim_end().strip_prefix("### ").map(str::trim) == Some(id) {
            let column = line.find(id)?;
            return Some((offset + column, offset + column + id.len()));
        }
        offset += line.len();
    }
    // The implicit question: the block's heading (its span starts at the id).
    let heading = text.get(block.span.start..block.span.end)?;
    (block.id == id).then_some(())?;
    let column = heading.find(id)?;
    Some((block.span.start + column, block.span.start + column + id.len()))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn range(open: &Open, (start, end): (usize, usize)) -> Range {
    open.doc.index.range(&open.doc.text, start, end)
}

/// Where the question id at `position` is defined.
pub fn definition(open: &Open, position: Position) -> Option<Location> {
    let named = named_at(open, position)?;
    Some(Location { uri: open.uri.clone(), range: range(open, named.definition) })
}

/// Every place that names the question id at `position`; its definition only when
/// `include_declaration`.
pub fn references(open: &Open, position: Position, include_declaration: bool) -> Vec<Location> {
    let Some(named) = named_at(open, position) else { return Vec::new() };
    named
        .places
        .iter()
        .filter(|&&place| include_declaration || place != named.definition)
        .map(|&place| Location { uri: open.uri.clone(), range: range(open, place) })
        .collect()
}

/// The edits that rename the question id at `position` to `new_name` everywhere it is named;
/// `None` when nothing there can be renamed. A name that is not an identifier is refused.
pub fn rename(open: &Open, uri: &Uri, position: Position, new_name: &str) -> Result<Option<WorkspaceEdit>, Failure> {
    let valid = !new_name.is_empty() && new_name.chars().all(is_word);
    if !valid {
        return Err(Failure::invalid_params(
            "textDocument/rename",
            format!("`{new_name}` is not a question id (letters, digits and `_` only)"),
        ));
    }
    let Some(named) = named_at(open, position) else { return Ok(None) };
    let edits: Vec<TextEdit> = named
        .places
        .iter()
        .map(|&place| TextEdit { range: range(open, place), new_text: new_name.to_owned() })
        .collect();
    Ok(Some(WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..WorkspaceEdit::default() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Document;
    use decision::check::{self, CheckOptions};

    const CONTRACT: &str = "schema: decision-contract/v1\n## gate\nkind: mixed\nwhen: before-call —— p\n### risk\n\
        ask: How risky?\n- low\n- mid\n- high\n### sure\nask: Sure?\n- true — y\n- false — n\nframe:\n  \
        + task 400 —— the task\npolicy:\n  - score:risk >= 2 → ask_human\n  - prob:sure < 0.5 → ask_human\n  \
        - score:risk >= 1 → auto_audit\n  - else → auto\n";

    fn open(text: &str) -> Open {
        let report = check::check(text.as_bytes(), CheckOptions::default());
        Open { uri: "file:///c/DECISION.md".parse().unwrap(), doc: Document::new(text.to_owned(), 1), report }
    }

    fn at(open: &Open, needle: &str, into: usize) -> Position {
        let offset = open.doc.text.find(needle).unwrap() + into;
        open.doc.index.position(&open.doc.text, offset)
    }

    fn lines(locations: &[Location]) -> Vec<(u32, u32)> {
        locations.iter().map(|l| (l.range.start.line, l.range.start.character)).collect()
    }

    #[test]
    fn a_probe_leads_to_its_question_heading_and_every_probe_of_it() {
        let open = open(CONTRACT);
        assert!(open.report.diagnostics.is_empty(), "{:?}", open.report.diagnostics);
        let found = definition(&open, at(&open, "score:risk", 7)).unwrap();
        assert_eq!((found.range.start.line, found.range.start.character, found.range.end.character), (4, 4, 8));
        let all = references(&open, at(&open, "### risk", 5), true);
        assert_eq!(lines(&all), [(4, 4), (16, 10), (18, 10)]);
        assert_eq!(lines(&references(&open, at(&open, "### risk", 5), false)), [(16, 10), (18, 10)]);
        assert_eq!(lines(&references(&open, at(&open, "prob:sure", 6), true)), [(9, 4), (17, 9)]);
    }

    #[test]
    fn rename_changes_the_heading_and_every_probe_and_nothing_else() {
        let open = open(CONTRACT);
        let uri = open.uri.clone();
        let edit = rename(&open, &uri, at(&open, "score:risk", 8), "danger").unwrap().unwrap();
        let edits = edit.changes.unwrap().remove(&uri).unwrap();
        assert_eq!(edits.len(), 3);
        assert!(edits.iter().all(|e| e.new_text == "danger"));
        assert!(rename(&open, &uri, at(&open, "score:risk", 8), "two words").is_err());
        assert!(rename(&open, &uri, at(&open, "How risky", 1), "x").unwrap().is_none(), "prose is no question id");
    }

    #[test]
    fn a_block_id_is_renamed_on_its_heading() {
        let open = open(CONTRACT);
        let uri = open.uri.clone();
        let edit = rename(&open, &uri, at(&open, "## gate", 4), "risk_gate").unwrap().unwrap();
        let edits = edit.changes.unwrap().remove(&uri).unwrap();
        assert_eq!(edits.len(), 1);
        assert_eq!((edits[0].range.start.line, edits[0].range.start.character), (1, 3));
    }

    #[test]
    fn the_implicit_question_is_defined_by_the_block_heading() {
        let text = "schema: decision-contract/v1\n## urgent\nkind: noul\nwhen: after-tool —— p\nask: Urgent?\n\
            - true — it is\n- false — it is not\nframe:\n  + task 400 —— the task\npolicy:\n  \
            - prob:urgent >= 0.5 → stop\n  - else → continue\n";
        let open = open(text);
        assert!(open.report.diagnostics.is_empty(), "{:?}", open.report.diagnostics);
        let found = definition(&open, at(&open, "prob:urgent", 6)).unwrap();
        assert_eq!((found.range.start.line, found.range.start.character), (1, 3));
        assert_eq!(references(&open, at(&open, "## urgent", 4), true).len(), 2);
    }
}
