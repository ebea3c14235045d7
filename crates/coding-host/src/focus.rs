//! The part of a tool result that matters, put first.
//!
//! Frames clip every result to its first characters (the delivery gate sees 200 or 600 of
//! each), so what the run keeps as a step's result starts with a header line saying what was
//! found and where, then the lines that matter as `file:N: text` — each line that holds a
//! search term, and after a definition (`def`, `class`, `fn`, `function`, …) its body — then
//! the tool's output itself. The tool's output is unchanged in the log's `tool:result`.
//!
//! A header never claims absence beyond what was read: a clipped read says
//! "not found in lines 1-K (the rest was not read; read on: FILE:K+1-)".

use decision_protocol::frame::clip;

/// How far a definition's body is read (lines after the definition line).
pub(crate) const DEFINITION_BODY_LINES: usize = 40;
/// Body lines kept from its start; further on, only the lines that return a value.
pub(crate) const DEFINITION_HEAD_LINES: usize = 3;
/// Focused lines kept per term.
pub(crate) const LINES_PER_TERM: usize = 8;
/// A focused line is clipped to this many characters.
pub(crate) const FOCUS_LINE_CHARS: usize = 100;

/// What a read showed about the task's terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReadFocus {
    /// The result text to keep: header, focused lines, then the output.
    pub(crate) text: String,
    /// Terms that occur in the lines read.
    pub(crate) found: Vec<String>,
    /// Where to read on when the read was clipped and a term was not found (`path:K-`).
    pub(crate) read_on: Option<String>,
    /// The last line read, and whether the file goes on past it.
    pub(crate) last_line: usize,
    pub(crate) clipped: bool,
}

/// The lines of a read's output with their line numbers, and how the read ended.
struct ReadLines<'a> {
    lines: Vec<(usize, &'a str)>,
    /// The last line read, the total when known, and whether the file goes on.
    last: usize,
    total: Option<usize>,
    clipped: bool,
}

fn read_lines(output: &str) -> ReadLines<'_> {
    // A range read: `[path lines A-B of N]`, then `N: text` lines.
    if let Some((header, body)) = output.split_once('\n')
        && header.starts_with('[')
        && let Some((range, total)) =
            header.trim_end_matches(']').rsplit_once(" lines ").map(|(_, r)| r).and_then(|r| r.split_once(" of "))
        && let (Some(last), Ok(total)) =
            (range.split_once('-').and_then(|(_, b)| b.parse::<usize>().ok()), total.parse::<usize>())
    {
        let lines = body
            .lines()
            .filter_map(|l| l.split_once(": ").and_then(|(n, t)| Some((n.parse::<usize>().ok()?, t))))
            .collect();
        return ReadLines { lines, last, total: Some(total), clipped: last < total };
    }
    // A whole read, possibly cut with `\n…[+N chars]` or `\n…[+N bytes]`.
    let (body, clipped) = match output.rsplit_once("\n…[+") {
        Some((body, rest)) if rest.ends_with(" chars]") || rest.ends_with(" bytes]") => (body, true),
        _ => (output, false),
    };
    let mut lines: Vec<(usize, &str)> = body.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    // The last line of a cut read may be cut too: it is read again when reading on.
    if clipped && !body.ends_with('\n') {
        lines.pop();
    }
    let last = lines.last().map_or(0, |(n, _)| *n);
    ReadLines { lines, last, total: (!clipped).then_some(last), clipped }
}

/// Whether a line starts a definition of `term`.
pub(crate) fn defines(line: &str, term: &str) -> bool {
    let trimmed = line.trim_start();
    let keywords = [
        "def ",
        "async def ",
        "class ",
        "fn ",
        "pub fn ",
        "pub(crate) fn ",
        "async fn ",
        "pub async fn ",
        "function ",
        "struct ",
        "pub struct ",
        "enum ",
        "pub enum ",
        "trait ",
        "pub trait ",
        "type ",
        "pub type ",
        "const ",
        "pub const ",
        "static ",
        "let ",
        "var ",
        "interface ",
        "impl ",
    ];
    if keywords.iter().any(|k| trimmed.strip_prefix(k).is_some_and(|rest| starts_with_word(rest, term))) {
        return true;
    }
    // `NAME = …` at the start of a line (a constant or an assignment).
    trimmed.strip_prefix(term).is_some_and(|rest| {
        let rest = rest.trim_start();
        (rest.starts_with('=') && !rest.starts_with("==")) || rest.starts_with(": ")
    })
}

fn starts_with_word(text: &str, term: &str) -> bool {
    text.strip_prefix(term).is_some_and(|rest| !rest.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_'))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Focus a `read_file` result on the task's terms.
pub(crate) fn focus_read(path: &str, output: &str, terms: &[String]) -> ReadFocus {
    let read = read_lines(output);
    let span = match read.total {
        Some(total) if !read.clipped && read.lines.first().is_some_and(|(n, _)| *n == 1) => {
            format!("whole file, {total} line{}", if total == 1 { "" } else { "s" })
        }
        Some(total) => format!("lines {}-{} of {total}", read.lines.first().map_or(1, |(n, _)| *n), read.last),
        None => format!("lines {}-{}, the file goes on", read.lines.first().map_or(1, |(n, _)| *n), read.last),
    };
    let mut notes = Vec::new();
    let mut focused: Vec<String> = Vec::new();
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for term in terms {
        let mut kept: Vec<usize> = Vec::new();
        let mut lines_of_term: Vec<usize> = Vec::new();
        for (i, (_, line)) in read.lines.iter().enumerate() {
            if contains_word(line, term) {
                lines_of_term.push(i);
            }
        }
        // Definitions first: they are what "where is X defined" and "what does X return" need.
        lines_of_term.sort_by_key(|i| !read.lines.get(*i).is_some_and(|(_, l)| defines(l, term)));
        for i in lines_of_term {
            if kept.len() >= LINES_PER_TERM {
                break;
            }
            if kept.contains(&i) {
                continue;
            }
            kept.push(i);
            if let Some((_, line)) = read.lines.get(i)
                && defines(line, term)
            {
                let depth = indent(line);
                let mut body_lines = Vec::new();
                for j in i + 1..(i + 1 + DEFINITION_BODY_LINES).min(read.lines.len()) {
                    let Some((_, body)) = read.lines.get(j) else { break };
                    if !body.trim().is_empty() && indent(body) <= depth {
                        break;
                    }
                    body_lines.push(j);
                }
                // Blank lines after the body are not part of it.
                while body_lines.last().is_some_and(|j| read.lines.get(*j).is_some_and(|(_, l)| l.trim().is_empty())) {
                    body_lines.pop();
                }
                // The head of the body, then what it returns ("what does X return" needs that line).
                let returns = body_lines
                    .iter()
                    .skip(DEFINITION_HEAD_LINES)
                    .filter(|j| {
                        read.lines.get(**j).is_some_and(|(_, l)| contains_word(l, "return") || contains_word(l, "Ok"))
                    })
                    .copied()
                    .collect::<Vec<_>>();
                body_lines.truncate(DEFINITION_HEAD_LINES);
                body_lines.extend(returns);
                for j in body_lines {
                    if kept.len() < LINES_PER_TERM && !kept.contains(&j) {
                        kept.push(j);
                    }
                }
            }
        }
        if kept.is_empty() {
            missing.push(term.clone());
            continue;
        }
        found.push(term.clone());
        let numbers: Vec<String> = kept
            .iter()
            .filter_map(|i| read.lines.get(*i))
            .filter(|(_, l)| contains_word(l, term))
            .map(|(n, _)| n.to_string())
            .collect();
        notes.push(format!("`{term}` found at line {}", numbers.join(", ")));
        for i in kept {
            if let Some((n, line)) = read.lines.get(i) {
                let entry = format!("{path}:{n}: {}", clip(line.trim_end(), FOCUS_LINE_CHARS));
                if !focused.contains(&entry) {
                    focused.push(entry);
                }
            }
        }
    }
    let read_on = (read.clipped && !missing.is_empty()).then(|| format!("{path}:{}-", read.last + 1));
    if !missing.is_empty() {
        let listed: Vec<String> = missing.iter().map(|t| format!("`{t}`")).collect();
        notes.push(match &read_on {
            Some(next) => {
                format!("{} not found in these lines (the rest was not read; read on: {next})", listed.join(", "))
            }
            None if read.clipped => format!("{} not found in these lines (the rest was not read)", listed.join(", ")),
            None => format!("{} not found in it", listed.join(", ")),
        });
    }
    let mut header = format!("[{path}: {span}");
    if !notes.is_empty() {
        header.push_str("; ");
        header.push_str(&notes.join("; "));
    }
    header.push(']');
    let mut text = header;
    for line in &focused {
        text.push('\n');
        text.push_str(line);
    }
    if !focused.is_empty() {
        text.push_str("\n---");
    }
    text.push('\n');
    text.push_str(output);
    ReadFocus { text, found, read_on, last_line: read.last, clipped: read.clipped }
}

/// Where to read on when a search found a definition of a term in `path` past the lines a
/// read showed: `(path:N-, the header note)`. `definitions` are the line numbers of those
/// definitions.
pub(crate) fn read_on_to_definition(
    path: &str,
    focus: &ReadFocus,
    definitions: &[(String, usize)],
) -> Option<(String, String)> {
    if !focus.clipped {
        return None;
    }
    let (term, line) = definitions.iter().filter(|(_, line)| *line > focus.last_line).min_by_key(|(_, line)| *line)?;
    let from = line.saturating_sub(1).max(focus.last_line + 1);
    Some((
        format!("{path}:{from}-"),
        format!("`{term}` is defined at line {line}, past these lines (read on: {path}:{from}-)"),
    ))
}

/// Hit lines kept at the top of a search's result.
pub(crate) const SEARCH_LINES: usize = 12;

/// Focus a `search` result: its summary line, then the matching lines compactly — the first
/// of each file before the others, so that every file with a hit is seen — then `---` and
/// the rest of the output (the matches with their context).
pub(crate) fn focus_search(output: &str) -> String {
    let (summary, rest) = output.split_once('\n').unwrap_or((output, ""));
    // The line naming every file with a hit stays with the summary.
    let (summary, rest) = match rest.split_once('\n') {
        Some((files, after)) if files.starts_with(super::explore::FILES_WITH_HITS) => {
            (output.get(..summary.len() + 1 + files.len()).unwrap_or(summary), after)
        }
        None if rest.starts_with(super::explore::FILES_WITH_HITS) => (output, ""),
        _ => (summary, rest),
    };
    let hits: Vec<&str> = cited_lines(rest).collect();
    let file_of =
        |line: &str| line.split_once(": ").and_then(|(place, _)| place.rsplit_once(':')).map(|(f, _)| f.to_owned());
    let mut first_of_each: Vec<&str> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for line in hits {
        let file = file_of(line).unwrap_or_default();
        if seen.contains(&file) {
            others.push(line);
        } else {
            seen.push(file);
            first_of_each.push(line);
        }
    }
    let mut text = summary.to_owned();
    for line in first_of_each.into_iter().chain(others).take(SEARCH_LINES) {
        text.push('\n');
        text.push_str(&clip(line, FOCUS_LINE_CHARS));
    }
    if !rest.is_empty() {
        text.push_str("\n---\n");
        text.push_str(rest);
    }
    text
}

/// The `file:N: text` lines of a result (search hits and focused lines), with the term they hold.
pub(crate) fn cited_lines(result: &str) -> impl Iterator<Item = &str> {
    result.lines().filter(|l| is_cited(l))
}

/// `file:N: text`: a path without spaces, a line number, then the text.
pub(crate) fn is_cited(line: &str) -> bool {
    let Some((head, _)) = line.split_once(": ") else { return false };
    let Some((file, number)) = head.rsplit_once(':') else { return false };
    !file.is_empty()
        && !file.contains(' ')
        && !file.starts_with('[')
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// Whether `term` occurs in `text` as a whole word.
pub(crate) fn contains_word(text: &str, term: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(term).any(|(at, _)| {
        let before = text.get(..at).and_then(|s| s.chars().next_back());
        let after = text.get(at + term.len()..).and_then(|s| s.chars().next());
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_definition_is_shown_with_its_body() {
        let output = "import x\n\ndef with_tax(price, rate):\n    total = price * (1 + rate)\n    return total\n\ndef other():\n    pass\n";
        let f = focus_read("pricing.py", output, &terms(&["with_tax"]));
        assert_eq!(f.found, ["with_tax"]);
        assert_eq!(f.read_on, None);
        assert!(f.text.starts_with(
            "[pricing.py: whole file, 8 lines; `with_tax` found at line 3]\npricing.py:3: def with_tax(price, rate):\n\
             pricing.py:4:     total = price * (1 + rate)\npricing.py:5:     return total\n---\n"
        ), "{}", f.text);
        assert!(f.text.ends_with(output));
    }

    #[test]
    fn absence_is_claimed_only_for_what_was_read() {
        let head: String = (1..=50).map(|n| format!("line {n}\n")).collect();
        let output = format!("{head}partial…\n…[+900 chars]");
        let f = focus_read("big.py", &output, &terms(&["detect_encoding"]));
        assert!(f.found.is_empty());
        assert_eq!(f.read_on.as_deref(), Some("big.py:51-"));
        assert!(f.text.starts_with(
            "[big.py: lines 1-50, the file goes on; `detect_encoding` not found in these lines (the rest was not read; read on: big.py:51-)]"
        ), "{}", f.text);
        let whole = focus_read("a.py", "x = 1\n", &terms(&["nope"]));
        assert!(whole.text.starts_with("[a.py: whole file, 1 line; `nope` not found in it]"));
    }

    #[test]
    fn range_reads_keep_their_numbers() {
        let output = "[big.py lines 51-53 of 53]\n51: def detect_encoding(b):\n52:     return 'utf-8'\n53: # end";
        let f = focus_read("big.py", output, &terms(&["detect_encoding"]));
        assert_eq!(f.found, ["detect_encoding"]);
        assert!(f.text.starts_with("[big.py: lines 51-53 of 53; `detect_encoding` found at line 51]\nbig.py:51: def detect_encoding(b):\nbig.py:52:     return 'utf-8'\n"), "{}", f.text);
        let partial = "[big.py lines 1-2 of 9]\n1: a\n2: b";
        assert_eq!(focus_read("big.py", partial, &terms(&["zzz"])).read_on.as_deref(), Some("big.py:3-"));
    }

    #[test]
    fn a_search_shows_every_file_with_a_hit_first() {
        let output = "[search `x`: 3 matching lines in 2 files · whole tree searched: 2 text files]\n\
                      a.py-1- before\na.py:2: x = 1\na.py:3: y = x\n--\nb.py:9: print(x)";
        assert_eq!(
            focus_search(output),
            "[search `x`: 3 matching lines in 2 files · whole tree searched: 2 text files]\na.py:2: x = 1\n\
             b.py:9: print(x)\na.py:3: y = x\n---\na.py-1- before\na.py:2: x = 1\na.py:3: y = x\n--\nb.py:9: print(x)"
        );
        let none = "[search `x`: 0 matching lines in 0 files · whole tree searched: 2 text files]";
        assert_eq!(focus_search(none), none);
    }

    #[test]
    fn definitions_and_citations_are_recognised() {
        assert!(defines("def add(a, b):", "add"));
        assert!(defines("    pub fn add(", "add"));
        assert!(defines("STOCK = {", "STOCK"));
        assert!(!defines("return add(a)", "add"));
        assert!(!defines("def address():", "add"));
        assert!(!defines("STOCK == 3", "STOCK"));
        assert!(is_cited("src/a.rs:12: fn x()"));
        assert!(!is_cited("[search `x`: 1 matching line]"));
        assert!(!is_cited("Task: what is x: y"));
    }
}
