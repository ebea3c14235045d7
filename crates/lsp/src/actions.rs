//! Code actions: quick fixes for the diagnostics at the requested range — every "did you
//! mean `x`?" help replaces the word it is about, a policy without a catch-all (DC0514) gets
//! `- else → escalate`, and a block asked of a model without a frame (DC0136) gets a frame to
//! fill in.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit};

use decision::contract::Block;
use decision::diag::Diagnostic;
use decision::diag::codes::{L_NO_FALLBACK, NO_FRAME};

use crate::open::{Open, block_at};

/// The quick fixes for the diagnostics that touch `range`.
pub fn code_actions(open: &Open, range: Range) -> Vec<CodeActionOrCommand> {
    let doc = &open.doc;
    let start = doc.index.offset(&doc.text, range.start).offset;
    let end = doc.index.offset(&doc.text, range.end).offset;
    let mut actions = Vec::new();
    for diagnostic in open.report.diagnostics.iter().filter(|d| d.span.start <= end && start <= d.span.end) {
        let fix = suggested_word(open, diagnostic)
            .or_else(|| catch_all(open, diagnostic))
            .or_else(|| missing_frame(open, diagnostic));
        if let Some((title, offset_range, new_text)) = fix {
            let edit = TextEdit { range: doc.index.range(&doc.text, offset_range.0, offset_range.1), new_text };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                edit: Some(edit_of(&open.uri, edit)),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
    }
    actions
}

/// A title, the byte range replaced and the text put there.
type Fix = (String, (usize, usize), String);

fn edit_of(uri: &Uri, edit: TextEdit) -> WorkspaceEdit {
    WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), vec![edit])])), ..WorkspaceEdit::default() }
}

/// "did you mean `x`?" on a diagnostic whose span is one word: that word replaced by `x`.
fn suggested_word(open: &Open, diagnostic: &Diagnostic) -> Option<Fix> {
    let help = diagnostic.help.as_deref()?;
    let suggestion = help.strip_prefix("did you mean `")?.strip_suffix("`?")?;
    let found = open.doc.text.get(diagnostic.span.start..diagnostic.span.end)?;
    let one_word = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace) && !s.contains('`');
    (one_word(found) && one_word(suggestion) && found != suggestion).then(|| {
        (
            format!("Replace `{found}` with `{suggestion}`"),
            (diagnostic.span.start, diagnostic.span.end),
            suggestion.into(),
        )
    })
}

/// A policy without a catch-all: `- else → escalate` after its last rule, indented as it is.
fn catch_all(open: &Open, diagnostic: &Diagnostic) -> Option<Fix> {
    if diagnostic.code != L_NO_FALLBACK {
        return None;
    }
    let block = block_at(&open.report.contract.blocks, diagnostic.span.start)?;
    let last = block.policy.last()?;
    let text = &open.doc.text;
    let line_start = text.get(..last.span.start).and_then(|t| t.rfind('\n')).map_or(0, |i| i + 1);
    let indent: String = text.get(line_start..)?.chars().take_while(|c| *c == ' ').collect();
    let line_end = text.get(last.span.start..)?.find('\n').map_or(text.len(), |i| last.span.start + i);
    Some(("Add `- else → escalate`".into(), (line_end, line_end), format!("\n{indent}- else → escalate")))
}

/// A block asked of a model with no frame: a frame to fill in, before its `policy:`.
fn missing_frame(open: &Open, diagnostic: &Diagnostic) -> Option<Fix> {
    if diagnostic.code != NO_FRAME {
        return None;
    }
    let blocks = &open.report.contract.blocks;
    let block: &Block = block_at(blocks, diagnostic.span.start)?;
    let text = &open.doc.text;
    let end = blocks.iter().find(|b| b.span.start > block.span.start).map_or(text.len(), |next| next.span.start);
    let body = text.get(block.span.start..end)?;
    let mut offset = block.span.start;
    let mut at = None;
    for line in body.split_inclusive('\n') {
        if line.trim() == "policy:" {
            at = Some(offset);
            break;
        }
        offset += line.len();
    }
    let at = at.unwrap_or_else(|| body.rfind(|c: char| !c.is_whitespace()).map_or(end, |i| block.span.start + i + 1));
    let frame = "frame:\n  + task 400 —— what the task asks decides this\n";
    let new_text = if at == end || !text.get(..at).is_some_and(|t| t.ends_with('\n')) {
        format!("\n{frame}")
    } else {
        frame.into()
    };
    Some(("Add a frame (then list the cells the model needs, each with why)".into(), (at, at), new_text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Document;
    use decision::check::{self, CheckOptions};

    fn open(text: &str) -> Open {
        let report = check::check(text.as_bytes(), CheckOptions::default());
        Open { uri: "file:///c/DECISION.md".parse().unwrap(), doc: Document::new(text.to_owned(), 1), report }
    }

    /// Each quick fix at the start of `needle`, applied to the text.
    fn fixed(text: &str, needle: &str) -> Vec<(String, String)> {
        let open = open(text);
        let position = open.doc.index.position(text, text.find(needle).unwrap());
        code_actions(&open, Range { start: position, end: position })
            .into_iter()
            .map(|action| {
                let CodeActionOrCommand::CodeAction(action) = action else { panic!("a code action") };
                let edits = action.edit.unwrap().changes.unwrap().remove(&open.uri).unwrap();
                let mut doc = Document::new(text.to_owned(), 1);
                for edit in edits {
                    doc.apply(lsp_types::TextDocumentContentChangeEvent {
                        range: Some(edit.range),
                        range_length: None,
                        text: edit.new_text,
                    });
                }
                (action.title, doc.text)
            })
            .collect()
    }

    const NOUL: &str = "schema: decision-contract/v1\n## urgent\nkind: noul\nwhen: after-tool —— p\nask: Urgent?\n\
        - true — it is\n- false — it is not\nframe:\n  + task 400 —— the task\npolicy:\n  \
        - prob:urgent >= 0.5 → stop\n  - else → continue\n";

    #[test]
    fn a_did_you_mean_replaces_the_word_and_the_diagnostic_clears() {
        let broken = NOUL.replace("→ continue", "→ contine");
        let fixes = fixed(&broken, "contine");
        assert_eq!(fixes.len(), 1, "{fixes:?}");
        assert_eq!(fixes[0].0, "Replace `contine` with `continue`");
        assert_eq!(fixes[0].1, NOUL);
        assert!(check::check(fixes[0].1.as_bytes(), CheckOptions::default()).diagnostics.is_empty());
    }

    #[test]
    fn a_policy_without_a_catch_all_gets_one() {
        let open_ended = NOUL.replace("\n  - else → continue", "");
        let report = check::check(open_ended.as_bytes(), CheckOptions::default());
        let at = report.diagnostics.iter().find(|d| d.code == L_NO_FALLBACK).unwrap().span.start;
        let needle = open_ended.get(at..at + 4).unwrap().to_owned();
        let fixes = fixed(&open_ended, &needle);
        let added = fixes.iter().find(|(title, _)| title == "Add `- else → escalate`").unwrap();
        assert!(added.1.ends_with("  - prob:urgent >= 0.5 → stop\n  - else → escalate\n"), "{}", added.1);
        let report = check::check(added.1.as_bytes(), CheckOptions::default());
        assert!(report.diagnostics.iter().all(|d| d.code != L_NO_FALLBACK));
    }

    #[test]
    fn a_block_without_a_frame_gets_one_to_fill_in() {
        let frameless = NOUL.replace("frame:\n  + task 400 —— the task\n", "");
        let report = check::check(frameless.as_bytes(), CheckOptions::default());
        let at = report.diagnostics.iter().find(|d| d.code == NO_FRAME).unwrap().span.start;
        let needle = frameless.get(at..at + 3).unwrap().to_owned();
        let fixes = fixed(&frameless, &needle);
        let (_, text) = fixes.iter().find(|(title, _)| title.starts_with("Add a frame")).unwrap();
        assert!(text.contains("frame:\n  + task 400 —— what the task asks decides this\npolicy:"), "{text}");
        let report = check::check(text.as_bytes(), CheckOptions::default());
        assert!(report.diagnostics.iter().all(|d| d.code != NO_FRAME), "{:?}", report.diagnostics);
        assert!(fixed(NOUL, "ask:").is_empty(), "a clean contract has nothing to fix");
    }
}
