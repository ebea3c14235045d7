//! The grammar of single clauses: key lines, options, `when:`, `dynamic:`. Pure functions
//! over already-trimmed text, used by the scanner and the block reader.

use super::text::{find_str, is_identifier, is_js_whitespace, js_trim, js_trim_end, js_trim_start, split_once_str};

/// JavaScript's `.` does not match these, so a line containing one is neither a key line
/// nor a list item (it becomes prose, as in the reference).
pub(crate) fn has_line_terminator(s: &str) -> bool {
    // Bytes, not chars: `\r`, `\n`, or the lead byte of U+2028/U+2029 (E2 80 A8/A9).
    let bytes = s.as_bytes();
    memchr::memchr3_iter(b'\r', b'\n', 0xE2, bytes).any(|at| match bytes.get(at) {
        Some(0xE2) => matches!(bytes.get(at + 1..at + 3), Some([0x80, 0xA8 | 0xA9])),
        _ => true,
    })
}

/// A key line: `[A-Za-z_][A-Za-z0-9_-]*`, optional whitespace, `:`, the value (trimmed).
pub(crate) fn split_key_line(trimmed: &str) -> Option<(&str, &str)> {
    // Bytes, not chars: the key is ASCII, so a line is dismissed on its first byte or the
    // first byte after the key, without decoding anything.
    let first = *trimmed.as_bytes().first()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let end =
        trimmed.bytes().position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'-')).unwrap_or(trimmed.len());
    let (key, rest) = trimmed.split_at_checked(end)?;
    let rest = js_trim_start(rest).strip_prefix(':')?;
    // Only a would-be key line pays for the scan of the whole line.
    if has_line_terminator(trimmed) {
        return None;
    }
    Some((key, js_trim(rest)))
}

/// A list item: `-` or `*`, at least one whitespace, the body (trimmed).
pub(crate) fn list_item(trimmed: &str) -> Option<&str> {
    if !matches!(trimmed.as_bytes().first(), Some(b'-' | b'*')) {
        return None;
    }
    let rest = trimmed.get(1..)?;
    if !rest.starts_with(is_js_whitespace) || has_line_terminator(trimmed) {
        return None;
    }
    Some(js_trim(rest))
}

/// Split `name SEP criterion` at the leftmost separator surrounded by whitespace on both
/// sides (`—` first, then `--`). `None` means the option is unnamed.
pub(crate) fn split_option(body: &str) -> Option<(&str, &str)> {
    ["—", "--"].into_iter().find_map(|sep| {
        let mut from = 0;
        while let Some(found) = body.get(from..).and_then(|rest| find_str(rest, sep)) {
            let at = from + found;
            let before = body.get(..at).unwrap_or_default();
            let after = body.get(at + sep.len()..).unwrap_or_default();
            if before.ends_with(is_js_whitespace) && after.starts_with(is_js_whitespace) {
                let (name, criterion) = (js_trim(before), js_trim(after));
                // Only the first occurrence of each separator is considered.
                return (!name.is_empty() && !criterion.is_empty()).then_some((name, criterion));
            }
            from = at + sep.len();
        }
        None
    })
}

/// `text —— reason`: split at the first `——` (spaces optional).
pub(crate) fn split_reason(text: &str) -> (&str, Option<&str>) {
    match split_once_str(text, "——") {
        Some((head, why)) => (js_trim(head), Some(js_trim(why))),
        None => (js_trim(text), None),
    }
}

/// `when: position [leftover] —— purpose`
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct When<'a> {
    pub position: &'a str,
    /// Text after the position that is not introduced by `——` (an error when non-empty).
    pub leftover: &'a str,
    pub purpose: &'a str,
}

pub(crate) fn split_when(value: &str) -> When<'_> {
    let (head, purpose) = split_reason(value);
    let end = head.find(|c: char| is_js_whitespace(c) || c == '（' || c == '(').unwrap_or(head.len());
    let (position, leftover) = head.split_at(end);
    When { position, leftover: js_trim(leftover), purpose: purpose.unwrap_or_default() }
}

/// What can be wrong with a `dynamic:` value (all are collected).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DynamicProblem {
    /// No `—— reason`.
    NoWhy,
    /// No `→ output`.
    NoArrow,
    /// More than one arrow.
    MultiArrow(usize),
    /// An output other than `candidates`.
    Output(String),
    /// The provider is not written `name(ctx: cell, …)`.
    Call(String),
    /// No cells named.
    NoCells,
    /// A cell name that is not an identifier.
    BadCell(String),
    /// Cell names repeated.
    DupCells(Vec<String>),
}

/// A `dynamic:` value as read, with every problem found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct DynamicParts {
    pub provider: String,
    pub reads: Vec<String>,
    pub output: String,
    pub why: String,
    pub problems: Vec<DynamicProblem>,
}

/// `provider(ctx: cell, …) → candidates —— why`
pub(crate) fn parse_dynamic(value: &str) -> DynamicParts {
    let mut parts = DynamicParts::default();
    let (head, why) = split_reason(js_trim(value));
    parts.why = why.unwrap_or_default().to_string();
    if parts.why.is_empty() {
        parts.problems.push(DynamicProblem::NoWhy);
    }
    let mut pieces: Vec<&str> = Vec::with_capacity(2);
    let mut rest = head;
    while let Some((piece, after)) = split_once_str(rest, "→") {
        pieces.push(piece);
        rest = after;
    }
    pieces.push(rest);
    let call = js_trim(pieces.first().copied().unwrap_or_default());
    match pieces.len() {
        0 | 1 => parts.problems.push(DynamicProblem::NoArrow),
        2 => {
            parts.output = js_trim(pieces.get(1).copied().unwrap_or_default()).to_string();
            if !crate::vocab::DYNAMIC_OUTPUTS.contains(&parts.output.as_str()) {
                parts.problems.push(DynamicProblem::Output(parts.output.clone()));
            }
        }
        n => parts.problems.push(DynamicProblem::MultiArrow(n - 1)),
    }
    match provider_call(call) {
        None => parts.problems.push(DynamicProblem::Call(call.to_string())),
        Some((provider, cells)) => {
            parts.provider = provider.to_string();
            let reads: Vec<&str> =
                cells.split(|c: char| c == ',' || is_js_whitespace(c)).filter(|c| !c.is_empty()).collect();
            if reads.is_empty() {
                parts.problems.push(DynamicProblem::NoCells);
            }
            for cell in &reads {
                if !is_identifier(cell) {
                    parts.problems.push(DynamicProblem::BadCell((*cell).to_string()));
                }
            }
            let mut seen = crate::names::NameSet::new();
            let mut dups: Vec<String> = Vec::new();
            for cell in &reads {
                if !seen.insert(cell) && !dups.iter().any(|d| d == cell) {
                    dups.push((*cell).to_string());
                }
            }
            if !dups.is_empty() {
                parts.problems.push(DynamicProblem::DupCells(dups));
            }
            parts.reads = reads.into_iter().map(str::to_string).collect();
        }
    }
    parts
}

/// `name ( ctx [: cells] )` → (name, cells text).
fn provider_call(call: &str) -> Option<(&str, &str)> {
    let name_end = call.bytes().position(|b| !(b.is_ascii_alphanumeric() || b == b'_')).unwrap_or(call.len());
    let (name, rest) = call.split_at_checked(name_end)?;
    if !is_identifier(name) {
        return None;
    }
    let rest = js_trim_start(rest).strip_prefix('(')?;
    let rest = js_trim_start(rest).strip_prefix("ctx")?;
    let inner = js_trim_end(rest).strip_suffix(')')?;
    let inner = js_trim_start(inner);
    if inner.is_empty() {
        return Some((name, ""));
    }
    let cells = inner.strip_prefix(':')?;
    // The cell list may not contain parentheses (the reference's pattern is anchored at `)`).
    if cells.contains(['(', ')']) {
        return None;
    }
    Some((name, cells))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_lines() {
        assert_eq!(split_key_line("schema:decision-contract/v1"), Some(("schema", "decision-contract/v1")));
        assert_eq!(split_key_line("kind : noul"), Some(("kind", "noul")));
        assert_eq!(split_key_line("typo_key: 1"), Some(("typo_key", "1")));
        assert_eq!(split_key_line("**bold**: x"), None);
        assert_eq!(split_key_line("值: x"), None);
        assert_eq!(split_key_line("a:\u{2028}b"), None);
    }

    #[test]
    fn options_split_at_the_leftmost_separator() {
        assert_eq!(split_option("true — a — b"), Some(("true", "a — b")));
        assert_eq!(split_option("a —— b"), None);
        assert_eq!(split_option("reversible write — x"), Some(("reversible write", "x")));
        assert_eq!(split_option("x -- y"), Some(("x", "y")));
        assert_eq!(split_option("a——b — c"), Some(("a——b", "c")));
        assert_eq!(split_option("read-only"), None);
    }

    #[test]
    fn when_values() {
        let w = split_when("step-start —— purpose");
        assert_eq!((w.position, w.leftover, w.purpose), ("step-start", "", "purpose"));
        let w = split_when("after-tool 每次 —— p");
        assert_eq!((w.position, w.leftover), ("after-tool", "每次"));
        assert_eq!(split_when("——x").position, "");
        assert_eq!(split_when("(x) —— y").position, "");
        assert_eq!(split_when("host:review——p").position, "host:review");
    }

    #[test]
    fn dynamic_values() {
        let d = parse_dynamic("toolsFor(ctx: files, history) → candidates —— r");
        assert_eq!(d.problems, vec![]);
        assert_eq!(d.reads, ["files", "history"]);
        assert_eq!(parse_dynamic("toolsFor(ctx)→candidates——r").problems, vec![DynamicProblem::NoCells]);
        assert_eq!(parse_dynamic("toolsFor(ctx:)→candidates——r").problems, vec![DynamicProblem::NoCells]);
        assert_eq!(
            parse_dynamic("f(ctx: a) → everything —— r").problems,
            vec![DynamicProblem::Output("everything".into())]
        );
        assert_eq!(parse_dynamic("f(ctx: a) → candidates").problems, vec![DynamicProblem::NoWhy]);
        assert_eq!(
            parse_dynamic("f(ctx: a) candidates —— r").problems,
            vec![DynamicProblem::NoArrow, DynamicProblem::Call("f(ctx: a) candidates".into())]
        );
        assert_eq!(parse_dynamic("f(ctx: a) → b → candidates —— r").problems, vec![DynamicProblem::MultiArrow(2)]);
        assert_eq!(
            parse_dynamic("f(state: a) → candidates —— r").problems,
            vec![DynamicProblem::Call("f(state: a)".into())]
        );
        assert_eq!(
            parse_dynamic("f(ctx: a, 1b) → candidates —— r").problems,
            vec![DynamicProblem::BadCell("1b".into())]
        );
        assert_eq!(
            parse_dynamic("f(ctx: a, b, a, a, b) → candidates —— r").problems,
            vec![DynamicProblem::DupCells(vec!["a".into(), "b".into()])]
        );
    }
}
