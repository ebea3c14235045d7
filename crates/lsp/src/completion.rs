//! Completion, from what the line says before the cursor: the kinds after `kind:`, the
//! positions after `when:`, the actions the block's position handles after a policy rule's
//! arrow, the block's question ids after a probe (`prob:`, `score:`, `picked:`), and the
//! projections after a frame field's bound.

use lsp_types::{CompletionItem, CompletionItemKind, Position};

use decision::contract::Kind;
use decision::vocab::{ACTIONS, ANY_POSITION_ACTION, POSITIONS, PROJECTIONS, position_actions};

use crate::open::{Open, block_at};

/// The probes whose argument is a question id.
const PROBES: [&str; 3] = ["prob:", "score:", "picked:"];

/// The completions at `position`: empty when the line gives no context for one.
pub fn complete(open: &Open, position: Position) -> Vec<CompletionItem> {
    let doc = &open.doc;
    let at = doc.index.offset(&doc.text, position);
    if at.clamped {
        return Vec::new();
    }
    let line_start = doc.text.get(..at.offset).and_then(|before| before.rfind('\n')).map_or(0, |i| i + 1);
    let before = doc.text.get(line_start..at.offset).unwrap_or_default();
    // The word being typed is replaced by the item: the context is what precedes it.
    let context = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '-');
    let trimmed = context.trim_start();
    let block = block_at(&open.report.contract.blocks, at.offset);
    if trimmed == "kind:" || trimmed == "kind: " {
        return Kind::ALL.iter().map(|k| item(k.as_str(), CompletionItemKind::ENUM_MEMBER, "block kind")).collect();
    }
    if trimmed.starts_with("when:") && !trimmed.contains("——") {
        return POSITIONS.iter().map(|(name, _)| item(name, CompletionItemKind::ENUM_MEMBER, "position")).collect();
    }
    if trimmed.starts_with('-') && (trimmed.contains('→') || trimmed.contains("->")) {
        let allowed: Vec<&str> = match block.and_then(|b| position_actions(&b.position)) {
            Some(actions) => actions.iter().copied().chain([ANY_POSITION_ACTION]).collect(),
            None => ACTIONS.to_vec(),
        };
        return allowed.into_iter().map(|a| item(a, CompletionItemKind::KEYWORD, "action")).collect();
    }
    if PROBES.iter().any(|probe| context.ends_with(probe)) {
        let questions = block.map(|b| b.questions.as_slice()).unwrap_or_default();
        return questions
            .iter()
            .map(|q| item(&q.id, CompletionItemKind::FIELD, &format!("{:?} question", q.primitive).to_lowercase()))
            .collect();
    }
    if is_after_a_bound(trimmed) {
        return PROJECTIONS
            .iter()
            .map(|p| item(p.name, CompletionItemKind::FUNCTION, &format!("projection of `{}`", p.reads)))
            .collect();
    }
    Vec::new()
}

/// Whether the text before the word is a frame field up to its bound: `+ cell 400 `.
fn is_after_a_bound(context: &str) -> bool {
    let mut words = context.split_whitespace();
    matches!(
        (words.next(), words.next(), words.next(), words.next()),
        (Some("+"), Some(_), Some(bound), None) if bound.chars().all(|c| c.is_ascii_digit())
    ) && context.ends_with(' ')
}

fn item(label: &str, kind: CompletionItemKind, detail: &str) -> CompletionItem {
    CompletionItem { label: label.to_owned(), kind: Some(kind), detail: Some(detail.to_owned()), ..Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Document;
    use decision::check::{self, CheckOptions};

    const CONTRACT: &str = "schema: decision-contract/v1\n## gate\nkind: score\nwhen: before-call —— p\n### risk\n\
        ask: How risky?\n- low\n- mid\n- high\nframe:\n  + lastResult 400 resultMaybe —— the last result\n\
        policy:\n  - score:risk >= 2 → ask_human\n  - else → auto\n";

    /// The labels offered with the cursor right after the first `needle` (its end), in a
    /// copy of the contract where `needle` replaced `replaced`.
    fn labels(replaced: &str, needle: &str) -> Vec<String> {
        let text = CONTRACT.replacen(replaced, needle, 1);
        let report = check::check(text.as_bytes(), CheckOptions::default());
        let open = Open { uri: "file:///c/DECISION.md".parse().unwrap(), doc: Document::new(text.clone(), 1), report };
        let offset = text.find(needle).unwrap() + needle.len();
        let position = open.doc.index.position(&text, offset);
        complete(&open, position).into_iter().map(|i| i.label).collect()
    }

    #[test]
    fn after_the_arrow_the_actions_of_the_block_position() {
        assert_eq!(labels("→ auto", "→ au"), ["auto", "auto_audit", "ask_human", "escalate"]);
    }

    #[test]
    fn after_a_probe_the_block_question_ids() {
        assert_eq!(labels("score:risk", "score:ri"), ["risk"]);
    }

    #[test]
    fn after_kind_and_when_the_kinds_and_positions() {
        assert_eq!(labels("kind: score", "kind: "), ["choice", "noul", "score", "mixed", "rule"]);
        let positions = labels("when: before-call", "when: bef");
        assert_eq!(positions.len(), 6);
        assert!(positions.contains(&"after-generate".to_owned()));
    }

    #[test]
    fn after_a_bound_the_projections_and_elsewhere_nothing() {
        let projections = labels("400 resultMaybe", "400 res");
        assert_eq!(projections.len(), PROJECTIONS.len());
        assert!(labels("How risky?", "How ri").is_empty(), "the ask text offers nothing");
        assert!(labels("+ lastResult", "+ lastRe").is_empty(), "a cell name is not a projection");
    }
}
