//! Hover: what the word under the cursor means — an action's row of the semantics table, a
//! projection's promise, the question a predicate (or heading) names with its options — and
//! the diagnostics reported at that place, each with its code's summary and its entry in
//! docs/diagnostics.md.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use decision::diag::codes::CODES;
use decision::vocab::{Returns, action_semantics, projection};

use crate::open::{Open, block_at};
use crate::text::word_around;

/// The hover at `position`, or `None` when nothing there has a meaning to show.
pub fn hover(open: &Open, position: Position) -> Option<Hover> {
    let doc = &open.doc;
    let at = doc.index.offset(&doc.text, position);
    if at.clamped {
        return None;
    }
    let (start, end) = word_around(&doc.text, at.offset);
    let word = doc.text.get(start..end).unwrap_or_default();
    let mut sections: Vec<String> = Vec::new();
    if !word.is_empty() {
        if let Some(row) = action_semantics(word) {
            let next = serde_json::to_value(row.next).ok();
            let next = next.as_ref().and_then(|n| n.as_str()).unwrap_or("?");
            sections.push(format!(
                "**`{word}`** — action\n\nnext: `{next}` · ends the tool loop: {} · more model calls: {} · \
                 needs evidence: {} · retries: {}",
                yes_no(row.ends_tool_loop),
                yes_no(row.more_model_calls),
                yes_no(row.needs_evidence),
                row.retries
            ));
        }
        if let Some(declared) = projection(word) {
            let returns = match declared.returns {
                Returns::String => "a string, clipped to the field's bound in characters",
                Returns::List => "a list, clipped to the field's bound in items",
                Returns::Count => "a number (the bound does not clip it)",
            };
            sections.push(format!(
                "**`{word}`** — projection\n\nreads `{}` · returns {returns} · when the cell is missing: {}",
                declared.reads, declared.when_missing
            ));
        }
        if let Some(question) = block_at(&open.report.contract.blocks, at.offset).and_then(|b| b.question(word)) {
            let options: Vec<String> =
                question
                    .options
                    .iter()
                    .map(|o| {
                        if o.named {
                            format!("- `{}` — {}", o.name, o.criterion)
                        } else {
                            format!("- {}", o.criterion)
                        }
                    })
                    .collect();
            let kind = format!("{:?}", question.primitive).to_lowercase();
            sections.push(format!(
                "**`{word}`** — {kind} question\n\n{}\n\n{}",
                if question.ask.is_empty() { "(no `ask:` text)" } else { &question.ask },
                options.join("\n")
            ));
        }
    }
    for diagnostic in open.report.diagnostics.iter().filter(|d| d.span.start <= at.offset && at.offset < d.span.end) {
        let summary = CODES.iter().find(|(code, _, _)| *code == diagnostic.code).map_or("", |(_, _, s)| s);
        let mut section = format!("**{}** ({summary}): {}", diagnostic.code, diagnostic.message);
        if let Some(entry) = documented(diagnostic.code) {
            section.push_str("\n\n");
            section.push_str(&entry);
        }
        sections.push(section);
    }
    if sections.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n---\n\n"),
        }),
        range: (start < end).then(|| doc.index.range(&doc.text, start, end)),
    })
}

/// The diagnostics reference, whose entry for a code a hover shows.
const DIAGNOSTICS_DOC: &str = include_str!("../../../docs/diagnostics.md");

/// The entry of `code` in docs/diagnostics.md: its prose up to the example, links shown as
/// their text (they are relative to the docs, not to the contract).
fn documented(code: &str) -> Option<String> {
    let heading = format!("### {code} — ");
    let mut lines = DIAGNOSTICS_DOC.lines().skip_while(|line| !line.starts_with(&heading)).skip(1);
    let prose: Vec<&str> =
        lines.by_ref().take_while(|line| !line.starts_with("```") && !line.starts_with("#")).collect();
    let text = prose.join("\n").trim().to_owned();
    (!text.is_empty()).then(|| without_links(&text))
}

/// `[text](target)` shown as `text`.
fn without_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = rest.get(open + 1..).unwrap_or_default();
        let link = after.find("](").and_then(|close| {
            let target = after.get(close + 2..)?;
            target.find(')').map(|end| (close, close + 2 + end + 1))
        });
        match link {
            Some((close, end)) => {
                out.push_str(rest.get(..open).unwrap_or_default());
                out.push_str(after.get(..close).unwrap_or_default());
                rest = after.get(end..).unwrap_or_default();
            }
            None => {
                out.push_str(rest.get(..=open).unwrap_or_default());
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Document;
    use decision::check::{self, CheckOptions};

    const CONTRACT: &str = "schema: decision-contract/v1\n## gate\nkind: score\nwhen: before-call —— p\n### risk\n\
        ask: How risky?\n- low\n- mid\n- high\nframe:\n  + lastResult 400 resultMaybe —— the last result\n\
        policy:\n  - score:risk >= 2 → ask_human\n  - else → auto\n";

    fn open(text: &str) -> Open {
        let report = check::check(text.as_bytes(), CheckOptions::default());
        let uri = "file:///c/DECISION.md".parse().unwrap();
        Open { uri, doc: Document::new(text.to_owned(), 1), report }
    }

    fn hover_text(open: &Open, needle: &str, into: usize) -> Option<String> {
        let offset = open.doc.text.find(needle).unwrap() + into;
        let position = open.doc.index.position(&open.doc.text, offset);
        hover(open, position).map(|h| match h.contents {
            HoverContents::Markup(m) => m.value,
            _ => panic!("markdown expected"),
        })
    }

    #[test]
    fn an_action_shows_its_row_of_the_semantics_table() {
        let open = open(CONTRACT);
        let text = hover_text(&open, "ask_human", 3).unwrap();
        assert!(text.starts_with("**`ask_human`** — action"), "{text}");
        assert!(text.contains("next: `human` · ends the tool loop: yes"), "{text}");
    }

    #[test]
    fn a_question_a_predicate_names_shows_its_ask_and_options() {
        let open = open(CONTRACT);
        let text = hover_text(&open, "risk >= 2", 1).unwrap();
        assert!(text.starts_with("**`risk`** — score question\n\nHow risky?"), "{text}");
        assert!(text.contains("- low\n- mid\n- high"), "{text}");
    }

    #[test]
    fn a_projection_shows_what_it_reads_and_promises() {
        let open = open(CONTRACT);
        let text = hover_text(&open, "resultMaybe", 0).unwrap();
        assert!(text.contains("reads `lastResult` · returns a string"), "{text}");
        assert!(text.contains("when the cell is missing: empty string"), "{text}");
    }

    #[test]
    fn a_diagnostic_shows_its_code_and_summary_and_plain_words_show_nothing() {
        let broken = CONTRACT.replace("→ auto\n", "→ sometimes\n");
        let open = open(&broken);
        let text = hover_text(&open, "sometimes", 2).unwrap();
        assert!(text.starts_with("**DC0108** (unknown action): unknown action `sometimes`"), "{text}");
        // Its entry in docs/diagnostics.md, links shown as their text.
        assert!(text.contains("The rule's action is not one of the 14 actions (format.md)."), "{text}");
        assert!(text.contains("**Fix:** use one of the 14 actions"), "{text}");
        assert_eq!(hover_text(&open, "How risky", 1), None, "a word of the ask text means nothing here");
        let past = hover(&open, Position { line: 999, character: 0 });
        assert!(past.is_none(), "a position outside the document shows nothing");
    }
}

#[cfg(test)]
mod entry_tests {
    use super::*;

    #[test]
    fn every_code_has_an_entry_to_show() {
        for (code, _, _) in CODES {
            assert!(documented(code).is_some_and(|e| e.len() > 20), "{code} has no entry to show");
        }
    }

    #[test]
    fn links_show_as_their_text() {
        assert_eq!(without_links("see [format.md](format.md#actions), [a] and [b](c"), "see format.md, [a] and [b](c");
    }
}
