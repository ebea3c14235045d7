//! The order in which the host offers files: by relevance to the task, not alphabetically.
//!
//! Each known file is scored from what the run knows about it, in this order of weight:
//! a file the task names (by path or by file name) first; then a file where a search found a
//! definition of a term; then files by their number of search hits; then BM25 over the words
//! of the file's path and of its search hits, against the task's words. A README breaks a
//! tie when nothing else tells the files apart. Ties keep the listing's order. The score is
//! computed by code from the task and the tool results; the decision model only sees the
//! resulting order.

use std::collections::BTreeMap;

use super::focus::defines;
use super::heuristic::TaskReading;

/// A search hit: `(file, line number, text)`.
pub(crate) type Hit = (String, usize, String);

/// Words of a path or a line: lower-cased runs of letters and digits, with `snake_case` and
/// `CamelCase` split into their parts as well.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !c.is_alphanumeric() && c != '_') {
        if raw.is_empty() {
            continue;
        }
        let whole = raw.to_lowercase();
        let mut part = String::new();
        let mut previous_lower = false;
        for c in raw.chars() {
            if c == '_' || (c.is_uppercase() && previous_lower) {
                if part.len() > 1 {
                    out.push(part.to_lowercase());
                }
                part.clear();
            }
            if c != '_' {
                part.push(c);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
        }
        if part.len() > 1 && part.to_lowercase() != whole {
            out.push(part.to_lowercase());
        }
        if whole.len() > 1 {
            out.push(whole);
        }
    }
    out
}

/// Whether the task names `file` (its path, or its file name).
pub(crate) fn named(task: &TaskReading, file: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    task.files.iter().any(|f| f == file || f == base || file.ends_with(&format!("/{f}")))
}

/// `files` ordered by relevance to the task.
pub(crate) fn rank(files: &[String], task: &TaskReading, hits: &[Hit]) -> Vec<String> {
    let mut per_file: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (file, _, line) in hits {
        per_file.entry(file.as_str()).or_default().push(line.as_str());
    }
    let docs: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            let mut words = tokens(f);
            for line in per_file.get(f.as_str()).map_or(&[][..], Vec::as_slice) {
                words.extend(tokens(line));
            }
            words
        })
        .collect();
    let mut query: Vec<String> = task.words.iter().filter(|w| !STOP_WORDS.contains(&w.as_str())).cloned().collect();
    for term in &task.terms {
        query.extend(tokens(term));
    }
    query.sort();
    query.dedup();
    let bm25 = bm25(&docs, &query);
    let mut scored: Vec<(usize, f64)> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let lines = per_file.get(f.as_str()).map_or(&[][..], Vec::as_slice);
            let definition = lines.iter().any(|l| task.terms.iter().any(|t| defines(l, t)));
            let mut score = bm25.get(i).copied().unwrap_or(0.0);
            score += 5.0 * (lines.len().min(10) as f64);
            if definition {
                score += 100.0;
            }
            if named(task, f) {
                score += 1000.0;
            }
            let base = f.rsplit('/').next().unwrap_or(f).to_lowercase();
            if base.starts_with("readme") {
                score += 0.01;
            }
            (i, score)
        })
        .collect();
    // Stable: equal scores keep the listing's order.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.into_iter().filter_map(|(i, _)| files.get(i).cloned()).collect()
}

/// Okapi BM25 (k1 = 1.2, b = 0.75) of each document against the query words.
fn bm25(docs: &[Vec<String>], query: &[String]) -> Vec<f64> {
    let n = docs.len() as f64;
    let average = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let idf: Vec<f64> = query
        .iter()
        .map(|q| {
            let df = docs.iter().filter(|d| d.contains(q)).count() as f64;
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    docs.iter()
        .map(|doc| {
            let length = doc.len() as f64;
            query
                .iter()
                .zip(&idf)
                .map(|(q, idf)| {
                    let tf = doc.iter().filter(|w| *w == q).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average.max(1.0)))
                })
                .sum()
        })
        .collect()
}

/// Words that say nothing about which file matters.
const STOP_WORDS: [&str; 48] = [
    "the", "a", "an", "and", "or", "of", "in", "on", "to", "is", "are", "was", "does", "do", "what", "which", "where",
    "who", "how", "file", "files", "this", "that", "it", "its", "for", "with", "there", "any", "all", "from", "by",
    "be", "me", "tell", "show", "say", "says", "about", "return", "returns", "defined", "defines", "define", "used",
    "mention", "mentions", "code",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn tokens_split_identifiers() {
        assert_eq!(tokens("src/with_tax.py"), ["src", "with", "tax", "with_tax", "py"]);
        assert_eq!(tokens("applyDiscount"), ["apply", "discount", "applydiscount"]);
    }

    #[test]
    fn named_files_then_definitions_then_hits_then_words() {
        let listing = files(&["README.md", "a/inventory.py", "pricing.py", "tests/test_pricing.py"]);
        let t = TaskReading::of("Summarise inventory.py");
        assert_eq!(rank(&listing, &t, &[])[0], "a/inventory.py");
        let t = TaskReading::of("What does with_tax return?");
        let hits = vec![
            ("tests/test_pricing.py".to_owned(), 3, "assert with_tax(1) == 2".to_owned()),
            ("tests/test_pricing.py".to_owned(), 4, "assert with_tax(2) == 3".to_owned()),
            ("pricing.py".to_owned(), 9, "def with_tax(price):".to_owned()),
        ];
        let ranked = rank(&listing, &t, &hits);
        assert_eq!(ranked[..2], ["pricing.py", "tests/test_pricing.py"]);
        let t = TaskReading::of("How is the stock of the inventory kept?");
        assert_eq!(rank(&listing, &t, &[])[0], "a/inventory.py");
        let t = TaskReading::of("What is this project?");
        assert_eq!(rank(&files(&["a.py", "README.md"]), &t, &[])[0], "README.md");
    }

    /// The host ranks after a listing or a search and not after a read: ranking a ranked list
    /// again on the same hits must leave it as it is, ties included.
    #[test]
    fn ranking_a_ranked_list_again_changes_nothing() {
        let listing =
            files(&["z.py", "b/pricing.py", "README.md", "a.py", "pricing_test.py", "docs/README.md", "y.py"]);
        let hits = vec![("a.py".to_owned(), 2, "total = with_tax(price)".to_owned())];
        for task in ["What does with_tax return in pricing?", "What is this project?", "Summarise a.py"] {
            let t = TaskReading::of(task);
            let once = rank(&listing, &t, &hits);
            assert_ne!(once, listing, "{task}: the listing is reordered");
            assert_eq!(rank(&once, &t, &hits), once, "{task}");
        }
    }
}
