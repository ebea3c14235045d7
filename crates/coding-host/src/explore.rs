//! The tools a code agent needs to look around: `list_files` (the whole tree, honouring
//! `.gitignore`), `search` (a literal or a regular expression over every text file, with
//! matching lines, context and `file:line`) and line ranges for `read_file`.
//!
//! Every file access goes through the four small functions at the top of this module, which
//! use the run's work directory handle ([`super::sandbox::WorkDir`]); nothing here opens a
//! path on its own. Symbolic links and special files are listed but never followed or
//! searched (reading one by name goes through the handle, which refuses what leads outside,
//! a FIFO or a hard-linked file). Dot names are skipped, as `list_dir`
//! skips them. Binary files (a NUL byte in their first 8 KiB, or not UTF-8) are skipped and
//! said to be skipped.

use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use regex::Regex;

use super::sandbox::{EntryKind, WorkDir};
use decision_protocol::frame::clip;

/// At most this many files are listed.
pub(crate) const MAX_LISTED_FILES: usize = 2000;
/// Directories deeper than this are not entered.
pub(crate) const MAX_DEPTH: usize = 24;
/// Files larger than this are not searched (and said to be skipped).
pub(crate) const MAX_SEARCH_FILE_BYTES: u64 = 1024 * 1024;
/// The search stops after this many matching lines.
pub(crate) const MAX_MATCHES: usize = 200;
/// A shown line is clipped to this many characters.
pub(crate) const MAX_LINE_CHARS: usize = 200;
/// A range read returns at most this many lines.
pub(crate) const MAX_RANGE_LINES: usize = 200;
/// The lines of context shown before and after a match.
pub(crate) const CONTEXT_BEFORE: usize = 1;
pub(crate) const CONTEXT_AFTER: usize = 2;
/// A regular expression longer than this is refused.
pub(crate) const MAX_PATTERN_CHARS: usize = 1000;

/// What an entry of a directory is, seen without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    /// A symbolic link or anything else: never entered, listed or searched.
    Other,
}

// --- the file access of this module -------------------------------------------------------

/// The entries of the directory `rel` (relative to the work directory; `""` is the root),
/// each with its kind, links not followed.
fn entries(dir: &WorkDir, rel: &str) -> Result<Vec<(String, Kind)>, String> {
    let path = if rel.is_empty() { PathBuf::new() } else { dir.path(rel).map_err(|e| e.to_string())? };
    let listed = dir.entries(&path).map_err(|e| e.to_string())?;
    Ok(listed
        .into_iter()
        .map(|entry| {
            let kind = match entry.kind {
                EntryKind::File => Kind::File,
                EntryKind::Dir => Kind::Dir,
                EntryKind::Symlink | EntryKind::Other => Kind::Other,
            };
            (entry.name_lossy(), kind)
        })
        .collect())
}

/// At most `max` bytes of the regular file `rel`, and whether it was longer. The handle
/// refuses FIFOs, devices, sockets and hard-linked files without blocking.
pub(crate) fn read_capped(dir: &WorkDir, rel: &str, max: u64) -> Result<(Vec<u8>, bool), String> {
    let path = dir.path(rel).map_err(|e| e.to_string())?;
    let out = dir.read(&path, 0, max).map_err(|e| e.to_string())?;
    Ok((out.bytes, !out.at_end))
}

/// Whether `rel` is a directory inside the work directory (a link that stays inside is followed).
fn is_dir(dir: &WorkDir, rel: &str) -> bool {
    dir.path(rel).is_ok_and(|p| dir.target_kind(&p).is_ok_and(|k| k == EntryKind::Dir))
}

/// The relative, `/`-separated form of a path the handle accepts (`""` for the root).
fn relative(workdir: &WorkDir, rel: &str) -> Result<String, String> {
    let path = workdir.path(rel).map_err(|e| e.to_string())?;
    Ok(path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"))
}

// --- walking ------------------------------------------------------------------------------

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_owned() } else { format!("{dir}/{name}") }
}

/// The `.gitignore` of directory `rel`, if it has one that reads.
fn gitignore_of(workdir: &WorkDir, rel: &str, names: &[(String, Kind)]) -> Option<Gitignore> {
    if !names.iter().any(|(n, k)| n == ".gitignore" && *k == Kind::File) {
        return None;
    }
    let (bytes, _) = read_capped(workdir, &join(rel, ".gitignore"), 256 * 1024).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut builder = GitignoreBuilder::new(Path::new(rel));
    for line in text.lines() {
        // A bad line is skipped, as git skips it.
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

/// Whether `path` is ignored by the matchers that apply to it (the deepest decides).
fn ignored(matchers: &[Gitignore], path: &str, is_dir: bool) -> bool {
    for m in matchers.iter().rev() {
        match m.matched(Path::new(path), is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

/// The text files of the tree and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tree {
    /// Every entry that is not a directory, as relative `/`-separated paths in walk order
    /// (each directory's entries sorted by name): regular files, links and special files.
    pub(crate) listed: Vec<String>,
    /// The regular files among them: the ones a search reads.
    pub(crate) files: Vec<String>,
    /// Entries left out by a `.gitignore`.
    pub(crate) ignored: usize,
    /// Links and special files: listed, never followed or searched.
    pub(crate) links: usize,
    /// Whether the listing stopped at [`MAX_LISTED_FILES`] or [`MAX_DEPTH`].
    pub(crate) cut: bool,
}

/// Walk the tree under `start` (`""`: the root).
pub(crate) fn walk(workdir: &WorkDir, start: &str) -> Result<Tree, String> {
    walk_limited(workdir, start, MAX_LISTED_FILES)
}

/// Walk the tree under `start`, listing at most `max_listed` entries.
pub(crate) fn walk_limited(workdir: &WorkDir, start: &str, max_listed: usize) -> Result<Tree, String> {
    let mut tree = Tree::default();
    // A walk that starts in a subdirectory still obeys the `.gitignore` files above it.
    let mut above = Vec::new();
    let mut ancestor = String::new();
    for part in start.split('/').filter(|p| !p.is_empty()) {
        let names = entries(workdir, &ancestor)?;
        above.extend(gitignore_of(workdir, &ancestor, &names));
        ancestor = join(&ancestor, part);
    }
    // Each pending directory carries the matchers of its ancestors.
    let mut pending: Vec<(String, usize, Vec<Gitignore>)> = vec![(start.to_owned(), 0, above)];
    while let Some((dir, depth, mut matchers)) = pending.pop() {
        let mut names = entries(workdir, &dir)?;
        names.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
        if let Some(own) = gitignore_of(workdir, &dir, &names) {
            matchers.push(own);
        }
        let mut subdirs = Vec::new();
        for (name, kind) in names {
            if name.starts_with('.') {
                continue;
            }
            let path = join(&dir, &name);
            match kind {
                _ if ignored(&matchers, &path, kind == Kind::Dir) => tree.ignored += 1,
                Kind::Dir if depth + 1 >= MAX_DEPTH => tree.cut = true,
                Kind::Dir => subdirs.push(path),
                _ if tree.listed.len() >= max_listed => tree.cut = true,
                Kind::Other => {
                    tree.links += 1;
                    tree.listed.push(path);
                }
                Kind::File => {
                    tree.files.push(path.clone());
                    tree.listed.push(path);
                }
            }
        }
        // Reversed, so that the first directory is walked first.
        for sub in subdirs.into_iter().rev() {
            pending.push((sub, depth + 1, matchers.clone()));
        }
    }
    Ok(tree)
}

/// The entries of one page of a listing take at most this many characters (each with its
/// line break), so that a page and its closing line stay under the tool layer's cap of 8000.
pub(crate) const LIST_PAGE_CHARS: usize = 7000;

/// `list_files [DIR][:N-]`: every file under DIR (default: the whole work directory), one path
/// per line, then one line in brackets saying what was left out. A listing longer than a page
/// ([`LIST_PAGE_CHARS`]) is given a page at a time: the closing line says which entries the
/// page holds and the exact input that lists the next one (`DIR:N-`, from entry N).
pub(crate) fn list_files(workdir: &WorkDir, input: &str) -> Result<String, String> {
    let (dir, from) = split_page(input);
    let start = start_dir(workdir, dir)?;
    let tree = walk(workdir, &start)?;
    let total = tree.listed.len();
    if from > 1 && from > total {
        return Err(format!("the listing has {total} entries; entry {from} does not exist"));
    }
    let first = from.saturating_sub(1);
    let mut chars = 0;
    let page: Vec<&str> = tree
        .listed
        .iter()
        .skip(first)
        .enumerate()
        // A page holds at least one entry, however long its name.
        .take_while(|(index, path)| {
            chars += path.chars().count() + 1;
            *index == 0 || chars <= LIST_PAGE_CHARS
        })
        .map(|(_, path)| path.as_str())
        .collect();
    let last = first + page.len();
    let mut out = page.join("\n");
    let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut notes = vec![count(total, "file", "files")];
    if tree.ignored > 0 {
        notes.push(format!("{} ignored by .gitignore", count(tree.ignored, "entry", "entries")));
    }
    if tree.links > 0 {
        notes.push(format!("{} of them links or special files, never followed or searched", tree.links));
    }
    if tree.cut {
        notes.push(format!("listing cut at {MAX_LISTED_FILES} files or depth {MAX_DEPTH}"));
    }
    if first > 0 || last < total {
        notes.push(format!("{PAGE_NOTE}{}-{last} of {total}", first + 1));
    }
    if last < total {
        let shown = if start.is_empty() { "." } else { start.as_str() };
        notes.push(format!("{NEXT_PAGE_NOTE}{shown}:{}-`", last + 1));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("[{}]", notes.join("; ")));
    Ok(out)
}

/// How a listing's closing line names the entries of its page (`entries 1-312 of 800`).
pub(crate) const PAGE_NOTE: &str = "entries ";
/// How a listing's closing line gives the input of its next page (`` next page: `list_files
/// src:313-` ``).
pub(crate) const NEXT_PAGE_NOTE: &str = "next page: `list_files ";

/// The directory and the first entry (1-based) of a `list_files` input: `src:301-` is the
/// listing of `src` from its 301st entry; `src` and `:301-` alone mean from the first entry
/// and the whole tree.
pub(crate) fn split_page(input: &str) -> (&str, usize) {
    let trimmed = input.trim();
    let page = trimmed.rsplit_once(':').and_then(|(dir, range)| {
        let from: usize = range.strip_suffix('-')?.parse().ok().filter(|n| *n >= 1)?;
        Some((dir, from))
    });
    page.unwrap_or((trimmed, 1))
}

/// The input that lists the page after this listing's, when the listing says it has one.
pub(crate) fn next_page(listing: &str) -> Option<&str> {
    let closing = listing.rsplit('\n').next()?;
    let at = closing.find(NEXT_PAGE_NOTE)? + NEXT_PAGE_NOTE.len();
    closing.get(at..)?.split('`').next().filter(|input| !input.is_empty())
}

fn start_dir(workdir: &WorkDir, input: &str) -> Result<String, String> {
    let trimmed = input.trim().trim_end_matches('/');
    if trimmed.is_empty() || trimmed == "." {
        return Ok(String::new());
    }
    // Resolved through the handle (so `..` and links out are refused), then named relatively.
    let resolved = relative(workdir, trimmed)?;
    if !is_dir(workdir, trimmed) {
        return Err(format!("{trimmed} is not a directory"));
    }
    Ok(resolved)
}

// --- search -------------------------------------------------------------------------------

/// What a search looks for.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    /// As the user wrote it, for the summary line.
    pub(crate) shown: String,
    regex: Regex,
}

impl Pattern {
    /// `re:PATTERN` is a regular expression; anything else is a literal.
    pub(crate) fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim_end_matches(['\r', '\n']);
        if text.trim().is_empty() {
            return Err("search needs a pattern".into());
        }
        let (source, shown) = match text.strip_prefix("re:") {
            Some(re) if re.chars().count() > MAX_PATTERN_CHARS => {
                return Err(format!("the pattern is longer than {MAX_PATTERN_CHARS} characters"));
            }
            Some(re) => (re.to_owned(), format!("re:{re}")),
            None => (regex::escape(text), text.to_owned()),
        };
        let regex = regex::RegexBuilder::new(&source)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("not a valid regular expression: {}", clip(&e.to_string(), 200)))?;
        Ok(Pattern { shown, regex })
    }

    pub(crate) fn is_match(&self, line: &str) -> bool {
        self.regex.is_match(line)
    }
}

/// A search's findings, before they are written out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Findings {
    /// `(file, line number, text)` of each matching line, in walk order.
    pub(crate) hits: Vec<(String, usize, String)>,
    /// The text of each block of matches with context, `file:N: text` for a match and
    /// `file-N- text` for context, blocks separated by `--`.
    pub(crate) blocks: Vec<String>,
    pub(crate) files_searched: usize,
    pub(crate) binary: Vec<String>,
    pub(crate) too_large: Vec<String>,
    pub(crate) unreadable: Vec<String>,
    /// The search stopped at [`MAX_MATCHES`].
    pub(crate) stopped: bool,
    /// The listing of the tree was cut.
    pub(crate) tree_cut: bool,
    /// The search covered only a subdirectory.
    pub(crate) under: Option<String>,
}

impl Findings {
    /// Every text file of the whole tree was searched to its end.
    pub(crate) fn whole_tree(&self) -> bool {
        self.under.is_none()
            && !self.stopped
            && !self.tree_cut
            && self.too_large.is_empty()
            && self.unreadable.is_empty()
    }

    fn files_with_hits(&self) -> usize {
        let mut files: Vec<&str> = self.hits.iter().map(|(f, _, _)| f.as_str()).collect();
        files.dedup();
        files.len()
    }

    /// The first line: what was searched, how much was found, and whether that was everything.
    pub(crate) fn summary(&self, pattern: &str) -> String {
        let scope = if self.whole_tree() {
            "whole tree searched".to_owned()
        } else if let Some(under) = &self.under {
            format!("only {under}/ searched")
        } else {
            "NOT the whole tree".to_owned()
        };
        let mut text = format!(
            "[search `{pattern}`: {} matching line{} in {} file{} · {scope}: {} text file{}",
            self.hits.len(),
            if self.hits.len() == 1 { "" } else { "s" },
            self.files_with_hits(),
            if self.files_with_hits() == 1 { "" } else { "s" },
            self.files_searched,
            if self.files_searched == 1 { "" } else { "s" },
        );
        if !self.binary.is_empty() {
            text.push_str(&format!(", {} binary skipped", self.binary.len()));
        }
        if self.stopped {
            text.push_str(&format!(", stopped after {MAX_MATCHES} matching lines"));
        }
        text.push(']');
        text
    }
}

/// Search the tree under `under` (`""`: the root) for `pattern`.
pub(crate) fn find(workdir: &WorkDir, pattern: &Pattern, under: &str) -> Result<Findings, String> {
    let tree = walk(workdir, under)?;
    let mut found =
        Findings { tree_cut: tree.cut, under: (!under.is_empty()).then(|| under.to_owned()), ..Findings::default() };
    for file in &tree.files {
        if found.stopped {
            break;
        }
        let (bytes, longer) = match read_capped(workdir, file, MAX_SEARCH_FILE_BYTES) {
            Ok(read) => read,
            Err(_) => {
                found.unreadable.push(file.clone());
                continue;
            }
        };
        if longer {
            found.too_large.push(file.clone());
            continue;
        }
        let Some(text) = text_of(&bytes) else {
            found.binary.push(file.clone());
            continue;
        };
        found.files_searched += 1;
        search_text(file, &text, pattern, &mut found);
    }
    Ok(found)
}

/// The text of a file, or `None` when it is binary.
pub(crate) fn text_of(bytes: &[u8]) -> Option<String> {
    let head = bytes.get(..bytes.len().min(8192)).unwrap_or(bytes);
    if memchr::memchr(0, head).is_some() {
        return None;
    }
    String::from_utf8(bytes.to_vec()).ok()
}

fn search_text(file: &str, text: &str, pattern: &Pattern, found: &mut Findings) {
    let lines: Vec<&str> = text.lines().collect();
    // The matching lines (up to the cap), then their context windows merged where they touch.
    let mut matching: Vec<usize> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if pattern.is_match(line) {
            if found.hits.len() + matching.len() >= MAX_MATCHES {
                found.stopped = true;
                break;
            }
            matching.push(index);
        }
    }
    let mut windows: Vec<(usize, usize)> = Vec::new();
    for &index in &matching {
        let from = index.saturating_sub(CONTEXT_BEFORE);
        let to = (index + CONTEXT_AFTER + 1).min(lines.len());
        match windows.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => windows.push((from, to)),
        }
    }
    for (from, to) in windows {
        let mut block = Vec::new();
        for (n, line) in lines.iter().enumerate().take(to).skip(from) {
            let hit = matching.binary_search(&n).is_ok();
            let mark = if hit { ':' } else { '-' };
            block.push(format!("{file}{mark}{}{mark} {}", n + 1, clip(line, MAX_LINE_CHARS)));
            if hit {
                found.hits.push((file.to_owned(), n + 1, (*line).to_owned()));
            }
        }
        found.blocks.push(block.join("\n"));
    }
}

/// `search PATTERN[\nDIR]`: the summary line, then each block of matches with context, then
/// the files that were skipped.
pub(crate) fn search(workdir: &WorkDir, input: &str) -> Result<String, String> {
    let (pattern_text, under) = input.split_once('\n').unwrap_or((input, ""));
    let pattern = Pattern::parse(pattern_text)?;
    let start = start_dir(workdir, under)?;
    let found = find(workdir, &pattern, &start)?;
    Ok(render_findings(&found, &pattern.shown))
}

/// The text of a search's findings.
pub(crate) fn render_findings(found: &Findings, pattern: &str) -> String {
    let mut out = vec![found.summary(pattern)];
    let mut files: Vec<&str> = Vec::new();
    for (file, _, _) in &found.hits {
        if !files.contains(&file.as_str()) {
            files.push(file);
        }
    }
    if !files.is_empty() {
        out.push(format!("{FILES_WITH_HITS}{}): {}]", files.len(), files.join(", ")));
    }
    out.push(found.blocks.join("\n--\n"));
    for (what, files) in
        [("binary", &found.binary), ("larger than 1 MiB", &found.too_large), ("unreadable", &found.unreadable)]
    {
        if !files.is_empty() {
            let listed: Vec<&str> = files.iter().take(20).map(String::as_str).collect();
            out.push(format!("[skipped as {what}: {}]", listed.join(", ")));
        }
    }
    out.retain(|l| !l.is_empty());
    out.join("\n")
}

// --- line ranges --------------------------------------------------------------------------

/// The start of the line after a search's summary that names every file with a hit.
pub(crate) const FILES_WITH_HITS: &str = "[files with hits (";

/// The files a search result names on its [`FILES_WITH_HITS`] line, in order.
pub(crate) fn files_with_hits(result: &str) -> Vec<String> {
    result
        .lines()
        .find_map(|l| l.strip_prefix(FILES_WITH_HITS))
        .and_then(|rest| rest.split_once("): "))
        .map(|(_, names)| names.trim_end_matches(']').split(", ").map(str::to_owned).collect())
        .unwrap_or_default()
}

/// `path:START-END` or `path:START-`: a path and a 1-based inclusive line range.
pub(crate) fn parse_range(input: &str) -> Option<(&str, usize, Option<usize>)> {
    let (path, range) = input.trim().rsplit_once(':')?;
    let (start, end) = range.split_once('-')?;
    let start: usize = start.parse().ok().filter(|s| *s >= 1)?;
    let end: Option<usize> = if end.is_empty() { None } else { Some(end.parse().ok().filter(|e| *e >= start)?) };
    (!path.is_empty()).then_some((path, start, end))
}

/// Lines `start..=end` of the file (at most [`MAX_RANGE_LINES`]), each as `N: text`, after a
/// header `[path lines A-B of N]`.
pub(crate) fn read_range(workdir: &WorkDir, path: &str, start: usize, end: Option<usize>) -> Result<String, String> {
    if is_dir(workdir, path) {
        return Ok("(this is a directory; use list_files)".into());
    }
    let (bytes, longer) = read_capped(workdir, path, MAX_SEARCH_FILE_BYTES)?;
    if longer {
        return Err(format!("{path} is larger than 1 MiB"));
    }
    let text = text_of(&bytes).ok_or_else(|| format!("{path} is a binary file; it was not read"))?;
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if start > total {
        return Err(format!("{path} has {total} lines; line {start} does not exist"));
    }
    let last = end.unwrap_or(usize::MAX).min(total).min(start + MAX_RANGE_LINES - 1);
    let mut out = vec![format!("[{path} lines {start}-{last} of {total}]")];
    for (n, line) in lines.iter().enumerate().take(last).skip(start - 1) {
        out.push(format!("{}: {line}", n + 1));
    }
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{DEFAULT_MAX_OUTPUT_CHARS, listed_files};
    use std::fs;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("decision-explore-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn tree(dir: &Path, files: &[(&str, &[u8])]) {
        for (name, body) in files {
            let path = dir.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, body).unwrap();
        }
    }

    #[test]
    fn lists_the_tree_honouring_gitignore() {
        let dir = temp("list");
        tree(
            &dir,
            &[
                (".gitignore", b"build/\n*.log\n"),
                ("a.py", b"x"),
                ("build/out.txt", b"x"),
                ("src/lib/z.rs", b"x"),
                ("src/b.rs", b"x"),
                ("src/.gitignore", b"gen.rs\n"),
                ("src/gen.rs", b"x"),
                ("run.log", b"x"),
                (".hidden/c", b"x"),
            ],
        );
        let sb = WorkDir::open(&dir).unwrap();
        let out = list_files(&sb, ".").unwrap();
        assert_eq!(out, "a.py\nsrc/b.rs\nsrc/lib/z.rs\n[3 files; 3 entries ignored by .gitignore]");
        assert_eq!(list_files(&sb, "src").unwrap(), "src/b.rs\nsrc/lib/z.rs\n[2 files; 1 entry ignored by .gitignore]");
        // The root's rules hold below it too.
        fs::create_dir_all(dir.join("src/lib/build")).unwrap();
        fs::write(dir.join("src/lib/build/x.rs"), "x").unwrap();
        fs::write(dir.join("src/lib/run.log"), "x").unwrap();
        assert_eq!(list_files(&sb, "src/lib").unwrap(), "src/lib/z.rs\n[1 file; 2 entries ignored by .gitignore]");
        assert!(list_files(&sb, "../").is_err());
        assert!(list_files(&sb, "a.py").unwrap_err().contains("not a directory"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_long_listing_is_given_a_page_at_a_time() {
        let dir = temp("list-pages");
        // 400 entries of 43 characters each (with the line break): three pages.
        let names: Vec<String> = (0..400).map(|i| format!("d/{}{i:03}.txt", "n".repeat(33))).collect();
        let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), b"x".as_slice())).collect();
        tree(&dir, &files);
        let sb = WorkDir::open(&dir).unwrap();
        let per_page = LIST_PAGE_CHARS / 43;
        let first = list_files(&sb, "").unwrap();
        assert!(first.chars().count() < DEFAULT_MAX_OUTPUT_CHARS, "a page fits under the tool layer's cap");
        assert_eq!(listed_files(&first), names[..per_page]);
        let closing = format!("[400 files; entries 1-{per_page} of 400; next page: `list_files .:{}-`]", per_page + 1);
        assert!(first.ends_with(&closing), "{}", first.lines().last().unwrap_or_default());
        assert_eq!(next_page(&first), Some(format!(".:{}-", per_page + 1).as_str()));
        let second = list_files(&sb, next_page(&first).unwrap()).unwrap();
        assert_eq!(listed_files(&second), names[per_page..2 * per_page]);
        let third = list_files(&sb, next_page(&second).unwrap()).unwrap();
        assert_eq!(listed_files(&third), names[2 * per_page..]);
        assert!(third.ends_with(&format!("[400 files; entries {}-400 of 400]", 2 * per_page + 1)), "{third}");
        assert_eq!(next_page(&third), None);
        // A subdirectory's pages name it; an entry past the end is an error, not an empty page.
        assert!(list_files(&sb, "d").unwrap().contains("next page: `list_files d:"));
        assert_eq!(listed_files(&list_files(&sb, "d:400-").unwrap()), names[399..]);
        assert!(list_files(&sb, "d:401-").unwrap_err().contains("the listing has 400 entries; entry 401"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_page_is_named_after_a_colon() {
        assert_eq!(split_page("src:301-"), ("src", 301));
        assert_eq!(split_page(" .:2- "), (".", 2));
        assert_eq!(split_page(":5-"), ("", 5));
        assert_eq!(split_page("src"), ("src", 1));
        // Not a page: the colon belongs to the name.
        assert_eq!(split_page("a:b"), ("a:b", 1));
        assert_eq!(split_page("a:0-"), ("a:0-", 1));
        assert_eq!(split_page("a:3-9"), ("a:3-9", 1));
        assert_eq!(next_page("a\n[2 files]"), None);
        assert_eq!(next_page("a\n[2 files; entries 1-1 of 2; next page: `list_files x:2-`]"), Some("x:2-"));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed() {
        let outside = temp("list-outside");
        tree(&outside, &[("secret.txt", b"needle")]);
        let dir = temp("list-links");
        tree(&dir, &[("a.txt", b"needle here")]);
        std::os::unix::fs::symlink(&outside, dir.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), dir.join("s.txt")).unwrap();
        let sb = WorkDir::open(&dir).unwrap();
        assert_eq!(
            list_files(&sb, "").unwrap(),
            "a.txt\nout\ns.txt\n[3 files; 2 of them links or special files, never followed or searched]"
        );
        let out = search(&sb, "needle").unwrap();
        assert!(out.starts_with("[search `needle`: 1 matching line in 1 file · whole tree searched: 1 text file]"));
        assert!(!out.contains("secret"));
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn search_shows_matches_with_context_and_skips_binaries() {
        let dir = temp("search");
        tree(
            &dir,
            &[
                ("a.py", b"import x\n\ndef with_tax(p):\n    return p * 1.2\n\nprint(with_tax(3))\n"),
                ("b.bin", b"with_tax\0\x01"),
                ("c.txt", b"nothing"),
            ],
        );
        let sb = WorkDir::open(&dir).unwrap();
        let out = search(&sb, "with_tax").unwrap();
        assert_eq!(files_with_hits(&out), ["a.py"], "every file with a hit is named once");
        assert!(files_with_hits("[search `x`: 0 matching lines in 0 files]").is_empty());
        assert_eq!(
            out,
            "[search `with_tax`: 2 matching lines in 1 file · whole tree searched: 2 text files, 1 binary skipped]\n\
             [files with hits (1): a.py]\n\
             a.py-2- \na.py:3: def with_tax(p):\na.py-4-     return p * 1.2\na.py-5- \na.py:6: print(with_tax(3))\n\
             [skipped as binary: b.bin]"
        );
        let none = search(&sb, "re:^absent$").unwrap();
        assert!(none.starts_with("[search `re:^absent$`: 0 matching lines in 0 files · whole tree searched"));
        assert!(search(&sb, "re:(").unwrap_err().contains("not a valid regular expression"));
        assert!(search(&sb, "  ").is_err());
        let under = search(&sb, "x\nnope");
        assert!(under.is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn search_stops_at_its_cap_and_says_so() {
        let dir = temp("search-cap");
        let body = "hit\n".repeat(MAX_MATCHES + 10);
        tree(&dir, &[("a.txt", body.as_bytes())]);
        let sb = WorkDir::open(&dir).unwrap();
        let found = find(&sb, &Pattern::parse("hit").unwrap(), "").unwrap();
        assert_eq!(found.hits.len(), MAX_MATCHES);
        assert!(found.stopped && !found.whole_tree());
        assert!(found.summary("hit").contains("NOT the whole tree"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ranges_read_on() {
        let dir = temp("range");
        let body: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        tree(&dir, &[("a.txt", body.as_bytes()), ("b.bin", b"\0\0")]);
        let sb = WorkDir::open(&dir).unwrap();
        assert_eq!(parse_range("a.txt:3-4"), Some(("a.txt", 3, Some(4))));
        assert_eq!(parse_range("a.txt:3-"), Some(("a.txt", 3, None)));
        assert_eq!(parse_range("a.txt:0-4"), None);
        assert_eq!(parse_range("a.txt:5-4"), None);
        assert_eq!(parse_range("a.txt"), None);
        assert_eq!(read_range(&sb, "a.txt", 3, Some(4)).unwrap(), "[a.txt lines 3-4 of 10]\n3: line 3\n4: line 4");
        assert_eq!(read_range(&sb, "a.txt", 9, None).unwrap(), "[a.txt lines 9-10 of 10]\n9: line 9\n10: line 10");
        assert!(read_range(&sb, "a.txt", 11, None).unwrap_err().contains("has 10 lines"));
        assert!(read_range(&sb, "b.bin", 1, None).unwrap_err().contains("binary"));
        assert!(read_range(&sb, "../a.txt", 1, None).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
