//! The code index: definitions and references read by real parsers (tree-sitter, with each
//! grammar's own tags query and a few additions), as three tools of the coding host:
//!
//! - `find_definition NAME [KIND]`: every definition of NAME in the tree, each with its
//!   signature line, what it is and where (its enclosing `impl`, class or module), what it
//!   returns, an enum's variants or a struct's fields, then the whole item — doc comment
//!   included — as `file:N: text` lines. `Map::insert`, `Deserializer::new` and
//!   `email.policy.Policy` are qualified names: the last part is the name, the parts before it
//!   must be among the item's enclosing scopes or the parts of its file's path.
//! - `list_symbols PATH`: the definitions of one file, in order.
//! - `find_references NAME`: the places where NAME is used as an identifier (comments and
//!   strings are not identifiers), definitions left out.
//!
//! Every file is read through the run's work directory handle, the same way `search` reads
//! them (`.gitignore` honoured, links never followed). Files larger than
//! [`MAX_INDEX_FILE_BYTES`] are skipped and named; a file whose parse takes longer than
//! [`PARSE_BUDGET`] is skipped and named; at most [`MAX_INDEXED_FILES`] files are walked. Only
//! files that hold the name's text at all are parsed, so a query over a large tree reads every
//! file once and parses few.
//!
//! Languages: Rust, Python, JavaScript, TypeScript (and TSX), Go and C (headers included).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tree_sitter::{Language, Node, ParseOptions, Parser, Query, QueryCursor, StreamingIterator};

use super::explore::{read_capped, text_of, walk_limited};
use super::sandbox::WorkDir;
use decision_protocol::frame::clip;

/// Files larger than this are not indexed (and are named as skipped).
pub(crate) const MAX_INDEX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many files of a tree are walked.
pub(crate) const MAX_INDEXED_FILES: usize = 50_000;
/// A file's parse is abandoned past this (and the file named as skipped).
pub(crate) const PARSE_BUDGET: Duration = Duration::from_millis(500);
/// A definition's whole item is shown up to this many lines.
pub(crate) const MAX_ITEM_LINES: usize = 60;
/// At most this many definitions are shown whole.
pub(crate) const MAX_SHOWN_DEFINITIONS: usize = 3;
/// At most this many references are listed.
pub(crate) const MAX_REFERENCES: usize = 200;
/// A shown line is clipped to this many characters.
const LINE_CHARS: usize = 200;

/// The languages the index reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    C,
}

impl Lang {
    /// The language of a file, from its extension.
    pub(crate) fn of(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "c" | "h" => Lang::C,
            _ => return None,
        })
    }

    fn language(self) -> Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
        }
    }

    /// The grammar's tags query, with the definitions it leaves out added.
    fn tags(self) -> String {
        match self {
            Lang::Rust => format!(
                "{}\n(const_item name: (identifier) @name) @definition.constant\n\
                 (static_item name: (identifier) @name) @definition.constant\n",
                tree_sitter_rust::TAGS_QUERY
            ),
            Lang::Python => tree_sitter_python::TAGS_QUERY.to_owned(),
            Lang::JavaScript => tree_sitter_javascript::TAGS_QUERY.to_owned(),
            // The TypeScript grammar extends JavaScript's; its own tags add what it adds.
            Lang::TypeScript | Lang::Tsx => format!(
                "{}\n{}\n(enum_declaration name: (identifier) @name) @definition.enum\n\
                 (type_alias_declaration name: (type_identifier) @name) @definition.type\n",
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY
            ),
            Lang::Go => tree_sitter_go::TAGS_QUERY.to_owned(),
            Lang::C => format!(
                "{}\n(preproc_def name: (identifier) @name) @definition.macro\n\
                 (preproc_function_def name: (identifier) @name) @definition.macro\n",
                tree_sitter_c::TAGS_QUERY
            ),
        }
    }
}

/// A compiled grammar: the language and its tags query.
struct Grammar {
    language: Language,
    query: Query,
}

/// The grammar of `lang`, compiled once per process; `None` when its query does not compile
/// (a build defect, reported as the file being skipped rather than as a crash).
fn grammar(lang: Lang) -> Option<&'static Grammar> {
    static CELLS: [OnceLock<Option<Grammar>>; 7] = [const { OnceLock::new() }; 7];
    let index = lang as usize;
    CELLS
        .get(index)?
        .get_or_init(|| {
            let language = lang.language();
            let query = Query::new(&language, &lang.tags()).ok()?;
            Some(Grammar { language, query })
        })
        .as_ref()
}

/// One definition the index found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Symbol {
    /// The file, relative to the work directory.
    pub(crate) file: String,
    pub(crate) name: String,
    /// What it is: `fn`, `method`, `struct`, `enum`, `class`, `macro`, `const` …
    pub(crate) kind: String,
    /// The enclosing items, outermost first: an `impl`'s type (and trait), a class, a module.
    pub(crate) scope: Vec<String>,
    /// The line of its name (1-based), and the item's first line (its doc comment and
    /// attributes included) and last line.
    pub(crate) line: usize,
    pub(crate) first: usize,
    pub(crate) last: usize,
    /// The item's first line, trimmed.
    pub(crate) signature: String,
    /// The declared return type of a function, when it declares one.
    pub(crate) returns: Option<String>,
    /// An enum's variants or a struct's fields, with what they are called.
    pub(crate) members: Option<(&'static str, Vec<String>)>,
}

impl Symbol {
    /// `file:line`.
    pub(crate) fn place(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The scope in words: `Map`, `email.policy`.
    fn scope_text(&self) -> String {
        self.scope.join("::")
    }

    /// Whether `qualifiers` (the parts of a qualified name before its last) are among this
    /// definition's scopes, its file's path parts or `root` (the work directory's own name, so
    /// that `email.policy.Policy` resolves inside the `email` package).
    fn qualified_by(&self, qualifiers: &[&str], root: &str) -> bool {
        let mut path_parts: Vec<&str> = self
            .file
            .split('/')
            .map(|p| p.rsplit_once('.').map_or(p, |(stem, _)| stem))
            .filter(|p| !p.is_empty())
            .collect();
        path_parts.push(root);
        qualifiers.iter().all(|q| self.scope.iter().any(|s| s == q) || path_parts.contains(q))
    }

    /// Whether `kind` (a word the task used: function, method, class, struct, enum, macro …)
    /// describes this definition.
    fn is_kind(&self, kind: &str) -> bool {
        let k = self.kind.as_str();
        match kind {
            "function" | "fn" | "func" | "def" => matches!(k, "fn" | "function" | "method" | "def"),
            "method" => k == "method",
            "class" => matches!(k, "class" | "struct" | "enum" | "union" | "type" | "interface"),
            "struct" => matches!(k, "struct" | "class" | "type"),
            "enum" => k == "enum",
            "trait" | "interface" => matches!(k, "trait" | "interface"),
            "macro" => k == "macro",
            "module" | "mod" => k == "mod" || k == "module",
            "constant" | "const" | "static" => matches!(k, "const" | "constant"),
            "type" => matches!(k, "type" | "struct" | "enum" | "class" | "interface" | "union"),
            _ => true,
        }
    }
}

/// What a scan of the tree read and left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scan {
    pub(crate) symbols: Vec<Symbol>,
    /// Source files of a supported language that were read (whether or not they were parsed).
    pub(crate) source_files: usize,
    /// Files that were parsed (they hold the name's text).
    pub(crate) parsed: usize,
    pub(crate) too_large: Vec<String>,
    pub(crate) unparsed: Vec<String>,
    pub(crate) unreadable: Vec<String>,
    /// The walk stopped at [`MAX_INDEXED_FILES`] entries or the depth limit.
    pub(crate) cut: bool,
}

impl Scan {
    /// Whether every source file of the tree was read and, where it held the name, parsed.
    pub(crate) fn whole_tree(&self) -> bool {
        !self.cut && self.too_large.is_empty() && self.unparsed.is_empty() && self.unreadable.is_empty()
    }

    /// `whole tree indexed: N source files`, or what was left out.
    fn coverage(&self) -> String {
        let files = plural(self.source_files, "source file", "source files");
        if self.whole_tree() {
            return format!("whole tree indexed: {files}");
        }
        let mut left = Vec::new();
        for (what, list) in [
            ("larger than 1 MiB", &self.too_large),
            ("not parsed in time", &self.unparsed),
            ("unreadable", &self.unreadable),
        ] {
            if !list.is_empty() {
                let shown: Vec<&str> = list.iter().take(10).map(String::as_str).collect();
                left.push(format!("skipped as {what}: {}", shown.join(", ")));
            }
        }
        if self.cut {
            left.push(format!("the walk stopped at {MAX_INDEXED_FILES} files or the depth limit"));
        }
        format!("NOT the whole tree: {files} read; {}", left.join("; "))
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The definitions of one file's text. `Err` when the parse ran past [`PARSE_BUDGET`] or the
/// grammar is unavailable.
pub(crate) fn symbols_of(file: &str, lang: Lang, text: &str) -> Result<Vec<Symbol>, String> {
    let grammar = grammar(lang).ok_or_else(|| format!("no grammar for {file}"))?;
    let tree = parse(grammar, text).ok_or_else(|| format!("{file} was not parsed within {PARSE_BUDGET:?}"))?;
    let lines: Vec<&str> = text.lines().collect();
    let names = grammar.query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&grammar.query, tree.root_node(), text.as_bytes());
    let mut out: Vec<Symbol> = Vec::new();
    let mut seen: Vec<(usize, usize)> = Vec::new();
    while let Some(m) = matches.next() {
        let mut name_node = None;
        let mut item = None;
        let mut category = "";
        for capture in m.captures {
            let capture_name = names.get(capture.index as usize).copied().unwrap_or_default();
            if capture_name == "name" {
                name_node = Some(capture.node);
            } else if let Some(what) = capture_name.strip_prefix("definition.") {
                item = Some(capture.node);
                category = what;
            }
        }
        let (Some(name_node), Some(item)) = (name_node, item) else { continue };
        // A method matches both the method and the function pattern: the first one counts.
        let key = (item.start_byte(), name_node.start_byte());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let Ok(name) = name_node.utf8_text(text.as_bytes()) else { continue };
        out.push(symbol(file, lang, text, &lines, item, name, category));
    }
    out.sort_by_key(|s| (s.line, s.first));
    Ok(out)
}

fn parse(grammar: &Grammar, text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser.set_language(&grammar.language).ok()?;
    let started = Instant::now();
    let mut over_budget = |_: &tree_sitter::ParseState| started.elapsed() > PARSE_BUDGET;
    let options = ParseOptions::new().progress_callback(&mut over_budget);
    let bytes = text.as_bytes();
    let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    parser.parse_with_options(&mut read, None, Some(options))
}

/// The text of a node, or `""`.
fn node_text<'t>(node: Node<'_>, text: &'t str) -> &'t str {
    node.utf8_text(text.as_bytes()).unwrap_or_default()
}

/// Whitespace runs as one space.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn symbol(file: &str, lang: Lang, text: &str, lines: &[&str], item: Node<'_>, name: &str, category: &str) -> Symbol {
    // C's tags name a function by its declarator: the item is the definition around it.
    let mut item = item;
    while item.kind().ends_with("declarator")
        && let Some(parent) = item.parent()
    {
        item = parent;
    }
    // A Python definition under decorators, and an item under doc comments and attributes,
    // starts where those do.
    let mut whole = item;
    if let Some(parent) = item.parent().filter(|p| p.kind() == "decorated_definition") {
        whole = parent;
    }
    // Python's module-level assignments are captured as the expression statement; JavaScript
    // variables as their declarator: the item shown is the statement.
    if matches!(item.kind(), "variable_declarator")
        && let Some(parent) = item.parent()
    {
        whole = parent;
    }
    let mut first_node = whole;
    while let Some(previous) = first_node.prev_sibling() {
        let adjacent = previous.end_position().row + 1 >= first_node.start_position().row;
        let leading = matches!(previous.kind(), "line_comment" | "block_comment" | "comment" | "attribute_item");
        if !(adjacent && leading) {
            break;
        }
        first_node = previous;
    }
    let line = item.start_position().row + 1;
    let first = first_node.start_position().row + 1;
    let last = whole.end_position().row + 1;
    let signature = lines.get(item.start_position().row).map(|l| l.trim().to_owned()).unwrap_or_default();
    Symbol {
        file: file.to_owned(),
        name: name.to_owned(),
        kind: kind_of(item, category),
        scope: scope_of(lang, item, text),
        line,
        first,
        last,
        signature,
        returns: returns_of(lang, item, text),
        members: members_of(item, text),
    }
}

/// What a definition is, from its node and its tags category.
fn kind_of(item: Node<'_>, category: &str) -> String {
    let by_node = match item.kind() {
        "function_item" if category == "method" => "method",
        "function_item" => "fn",
        "struct_item" | "struct_specifier" => "struct",
        "enum_item" | "enum_specifier" | "enum_declaration" => "enum",
        "union_item" | "union_specifier" => "union",
        "type_item" | "type_alias_declaration" | "type_definition" | "type_spec" => "type",
        "trait_item" => "trait",
        "mod_item" => "mod",
        "macro_definition" | "preproc_def" | "preproc_function_def" => "macro",
        "const_item" | "static_item" => "const",
        "function_definition" if category == "method" => "method",
        "function_definition" | "function_declaration" | "function_signature" | "generator_function_declaration" => {
            "function"
        }
        "method_definition" | "method_declaration" | "method_signature" | "abstract_method_signature" => "method",
        "class_definition" | "class_declaration" | "class" | "abstract_class_declaration" => "class",
        "interface_declaration" => "interface",
        _ => category,
    };
    by_node.to_owned()
}

/// The enclosing items of a definition, outermost first.
fn scope_of(lang: Lang, item: Node<'_>, text: &str) -> Vec<String> {
    let mut scope = Vec::new();
    // A Go method's receiver type is its scope.
    if lang == Lang::Go
        && let Some(receiver) = item.child_by_field_name("receiver")
    {
        let receiver = node_text(receiver, text);
        let type_name = receiver
            .trim_matches(['(', ')'])
            .split_whitespace()
            .last()
            .map(|t| t.trim_start_matches('*').split('[').next().unwrap_or_default().to_owned());
        scope.extend(type_name.filter(|t| !t.is_empty()));
    }
    let mut node = item.parent();
    while let Some(current) = node {
        let named = match current.kind() {
            "impl_item" => {
                let mut names = Vec::new();
                if let Some(trait_node) = current.child_by_field_name("trait") {
                    names.push(type_name(trait_node, text));
                }
                if let Some(type_node) = current.child_by_field_name("type") {
                    names.push(type_name(type_node, text));
                }
                names
            }
            "trait_item"
            | "mod_item"
            | "class_definition"
            | "function_definition"
            | "function_item"
            | "class_declaration"
            | "class"
            | "abstract_class_declaration"
            | "interface_declaration"
            | "internal_module"
            | "module" => {
                current.child_by_field_name("name").map(|n| vec![node_text(n, text).to_owned()]).unwrap_or_default()
            }
            _ => Vec::new(),
        };
        for name in named.into_iter().rev() {
            if !name.is_empty() {
                scope.insert(0, name);
            }
        }
        node = current.parent();
    }
    scope
}

/// A type's name without its generic arguments or path: `Map<String, Value>` → `Map`.
fn type_name(node: Node<'_>, text: &str) -> String {
    match node.kind() {
        "generic_type" => node.child_by_field_name("type").map_or_else(String::new, |n| type_name(n, text)),
        "scoped_type_identifier" => node.child_by_field_name("name").map_or_else(String::new, |n| type_name(n, text)),
        "reference_type" | "pointer_type" => {
            node.child_by_field_name("type").map_or_else(String::new, |n| type_name(n, text))
        }
        _ => node_text(node, text).to_owned(),
    }
}

/// The declared return type of a function.
fn returns_of(lang: Lang, item: Node<'_>, text: &str) -> Option<String> {
    let field = match lang {
        Lang::Go => "result",
        Lang::C => {
            // C: the type before the declarator, when the item is a function.
            if item.kind() != "function_definition" {
                return None;
            }
            "type"
        }
        _ => "return_type",
    };
    let node = item.child_by_field_name(field)?;
    let shown = collapse(node_text(node, text).trim_start_matches(':').trim());
    (!shown.is_empty()).then_some(shown)
}

/// An enum's variants, or a struct's fields.
fn members_of(item: Node<'_>, text: &str) -> Option<(&'static str, Vec<String>)> {
    let (label, wanted): (&'static str, &[&str]) = match item.kind() {
        "enum_item" => ("variants", &["enum_variant"]),
        "enum_specifier" => ("variants", &["enumerator"]),
        "enum_declaration" => ("members", &["property_identifier", "enum_assignment"]),
        "struct_item" | "struct_specifier" => ("fields", &["field_declaration"]),
        _ => return None,
    };
    let body = item.child_by_field_name("body")?;
    let mut walker = body.walk();
    let members: Vec<String> = body
        .named_children(&mut walker)
        .filter(|child| wanted.contains(&child.kind()))
        .map(|child| {
            // A variant's own doc comments and attributes are its siblings, never inside it.
            let shown = match child.kind() {
                "enumerator" | "enum_assignment" => child.child_by_field_name("name").unwrap_or(child),
                _ => child,
            };
            collapse(node_text(shown, text).trim_end_matches([',', ';']))
        })
        .collect();
    Some((label, members))
}

/// Walk the tree and index the source files that hold `needle` (every source file when it is
/// `None`), through the work directory handle. Files are read and parsed on up to
/// [`MAX_INDEX_THREADS`] threads (parsing is nine tenths of the cost); what they found is put
/// together in the walk's order, so the result does not depend on the threads.
pub(crate) fn scan(workdir: &WorkDir, needle: Option<&str>) -> Result<Scan, String> {
    let tree = walk_limited(workdir, "", MAX_INDEXED_FILES)?;
    let mut out = Scan { cut: tree.cut, ..Scan::default() };
    let finder = needle.map(|n| memchr::memmem::Finder::new(n.as_bytes()).into_owned());
    let sources: Vec<(&String, Lang)> =
        tree.files.iter().filter_map(|file| Lang::of(file).map(|lang| (file, lang))).collect();
    out.source_files = sources.len();
    let index_one = |(file, lang): (&String, Lang)| -> FileOutcome {
        let (bytes, longer) = match read_capped(workdir, file, MAX_INDEX_FILE_BYTES) {
            Ok(read) => read,
            Err(_) => return FileOutcome::Unreadable,
        };
        if longer {
            return FileOutcome::TooLarge;
        }
        if finder.as_ref().is_some_and(|f| f.find(&bytes).is_none()) {
            return FileOutcome::WithoutName;
        }
        let Some(text) = text_of(&bytes) else { return FileOutcome::Unreadable };
        match symbols_of(file, lang, &text) {
            Ok(symbols) => FileOutcome::Parsed(symbols),
            Err(_) => FileOutcome::Unparsed,
        }
    };
    let outcomes = in_parallel(&sources, index_one);
    for ((file, _), outcome) in sources.iter().zip(outcomes) {
        match outcome {
            FileOutcome::Parsed(symbols) => {
                out.parsed += 1;
                out.symbols.extend(symbols);
            }
            FileOutcome::Unparsed => {
                out.parsed += 1;
                out.unparsed.push((*file).clone());
            }
            FileOutcome::TooLarge => out.too_large.push((*file).clone()),
            FileOutcome::Unreadable => out.unreadable.push((*file).clone()),
            FileOutcome::WithoutName => {}
        }
    }
    Ok(out)
}

/// At most this many threads read and parse a tree's files.
pub(crate) const MAX_INDEX_THREADS: usize = 8;

/// The fewest files worth a thread of their own: starting and joining a thread costs more
/// than reading and searching a few small files. On the bench's 2-step task over six files
/// (2,000 whole runs in one process) a run took 670 µs with a thread per 4 files and 515 µs
/// with the files read on the calling thread.
const FILES_PER_THREAD: usize = 16;

/// What indexing one file came to.
enum FileOutcome {
    Parsed(Vec<Symbol>),
    Unparsed,
    TooLarge,
    Unreadable,
    /// It does not hold the name asked for, so it was not parsed.
    WithoutName,
}

/// `work` applied to every item, on as many threads as the machine has cores (at most
/// [`MAX_INDEX_THREADS`], and one per [`FILES_PER_THREAD`] items), each taking the next item
/// not yet taken; the results in the items' order.
fn in_parallel<T: Copy + Sync, R: Send>(items: &[T], work: impl Fn(T) -> R + Sync) -> Vec<R> {
    // Read once: on Linux the answer comes from the cgroup files, read again at every call.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get));
    let threads = cores.min(MAX_INDEX_THREADS).min(items.len().div_ceil(FILES_PER_THREAD)).max(1);
    if threads == 1 {
        return items.iter().map(|item| work(*item)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(at) else { break };
                        mine.push((at, work(*item)));
                    }
                    mine
                })
            })
            .collect();
        // A thread that panicked lost its items: they are redone here, on this thread.
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    done.sort_unstable_by_key(|(at, _)| *at);
    let mut results = Vec::with_capacity(items.len());
    let mut done = done.into_iter().peekable();
    for (at, item) in items.iter().enumerate() {
        match done.next_if(|(index, _)| *index == at) {
            Some((_, result)) => results.push(result),
            None => results.push(work(*item)),
        }
    }
    results
}

/// What a whole-tree index of a directory found ([`index_tree`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeIndex {
    /// Source files of a supported language that were read.
    pub source_files: usize,
    /// Files that were parsed.
    pub parsed: usize,
    /// Definitions found.
    pub symbols: usize,
    /// Files left out: larger than the limit, not parsed in time, or unreadable.
    pub skipped: usize,
    /// Every source file of the tree was read and parsed.
    pub whole_tree: bool,
}

/// Indexes every source file under `root` as the code index's tools read a tree — through a
/// work directory handle, `.gitignore` honoured, the same size, time and count limits — and
/// says what it found. The tools parse only the files that hold the name asked for; this is
/// their worst case, a name found in every file, and what the index benchmarks measure.
pub fn index_tree(root: &std::path::Path) -> Result<TreeIndex, String> {
    let workdir = WorkDir::open(root).map_err(|e| format!("cannot open {}: {e}", root.display()))?;
    let scan = scan(&workdir, None)?;
    Ok(TreeIndex {
        source_files: scan.source_files,
        parsed: scan.parsed,
        symbols: scan.symbols.len(),
        skipped: scan.too_large.len() + scan.unparsed.len() + scan.unreadable.len(),
        whole_tree: scan.whole_tree(),
    })
}

/// A name as the task wrote it: `Map::insert`, `email.policy.Policy`, `json!` → the name and
/// the qualifiers before it.
pub(crate) fn split_qualified(name: &str) -> (&str, Vec<&str>) {
    let name = name.trim().trim_end_matches('!').trim_end_matches("()");
    let parts: Vec<&str> = name.split("::").flat_map(|p| p.split('.')).filter(|p| !p.is_empty()).collect();
    match parts.split_last() {
        Some((last, rest)) => (last, rest.to_vec()),
        None => (name, Vec::new()),
    }
}

/// `find_definition NAME [KIND]`.
pub(crate) fn find_definition(workdir: &WorkDir, input: &str) -> Result<String, String> {
    let mut words = input.split_whitespace();
    let asked = words.next().ok_or("find_definition needs a name")?;
    let kind = words.next().map(str::to_lowercase);
    let (name, qualifiers) = split_qualified(asked);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err(format!("find_definition needs an identifier, not `{asked}`"));
    }
    let scan = scan(workdir, Some(name))?;
    let root = workdir.root().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let named: Vec<&Symbol> = scan.symbols.iter().filter(|s| s.name == name).collect();
    let found: Vec<&Symbol> = named
        .iter()
        .copied()
        .filter(|s| s.qualified_by(&qualifiers, &root))
        .filter(|s| kind.as_deref().is_none_or(|k| s.is_kind(k)))
        .collect();
    let files = {
        let mut files: Vec<&str> = found.iter().map(|s| s.file.as_str()).collect();
        files.dedup();
        files.len()
    };
    let mut out = vec![format!(
        "[find_definition `{asked}`{}: {} in {} · {}]",
        kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default(),
        plural(found.len(), "definition", "definitions"),
        plural(files, "file", "files"),
        scan.coverage()
    )];
    for s in &found {
        out.push(format!("{}: {}", s.place(), clip(&s.signature, LINE_CHARS)));
        out.push(format!("    {}", facts(s)));
    }
    if found.is_empty() && !named.is_empty() {
        let others: Vec<String> = named
            .iter()
            .take(10)
            .map(|s| format!("{} `{}` in {} at {}", s.kind, s.name, scope_or_file(s), s.place()))
            .collect();
        out.push(format!("[other definitions named `{name}`, not matching: {}]", others.join("; ")));
    }
    for s in found.iter().take(MAX_SHOWN_DEFINITIONS) {
        out.push("---".into());
        out.push(whole_item(workdir, s));
    }
    Ok(out.join("\n"))
}

fn scope_or_file(s: &Symbol) -> String {
    if s.scope.is_empty() { s.file.clone() } else { s.scope_text() }
}

/// One definition's facts in a line: what it is, where, what it returns, its members.
pub(crate) fn facts(s: &Symbol) -> String {
    let mut parts = vec![format!("{} `{}`", s.kind, s.name)];
    if !s.scope.is_empty() {
        parts.push(format!("in `{}`", s.scope_text()));
    }
    if let Some(returns) = &s.returns {
        parts.push(format!("returns `{returns}`"));
    }
    if let Some((label, members)) = &s.members {
        parts.push(format!("{} {label}: {}", members.len(), members.join(", ")));
    }
    parts.push(format!("lines {}-{}", s.first, s.last));
    clip(&parts.join(" · "), 1000)
}

/// The whole item, its doc comment and attributes included, as `file:N: text` lines (at most
/// [`MAX_ITEM_LINES`], then where to read on).
fn whole_item(workdir: &WorkDir, s: &Symbol) -> String {
    let Ok((bytes, _)) = read_capped(workdir, &s.file, MAX_INDEX_FILE_BYTES) else {
        return format!("[{} could not be read again]", s.file);
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut out = vec![format!("[{}:{}-{}: {} `{}`, the whole item]", s.file, s.first, s.last, s.kind, s.name)];
    let last_shown = s.last.min(s.first + MAX_ITEM_LINES - 1);
    for (n, line) in text.lines().enumerate().take(last_shown).skip(s.first.saturating_sub(1)) {
        out.push(format!("{}:{}: {}", s.file, n + 1, clip(line, LINE_CHARS)));
    }
    if last_shown < s.last {
        out.push(format!("[{} more lines; read on: {}:{}-{}]", s.last - last_shown, s.file, last_shown + 1, s.last));
    }
    out.join("\n")
}

/// `list_symbols PATH`: the definitions of one file.
pub(crate) fn list_symbols(workdir: &WorkDir, input: &str) -> Result<String, String> {
    let file = input.trim();
    let lang = Lang::of(file).ok_or_else(|| format!("{file} is not a file of a language the index reads"))?;
    let (bytes, longer) = read_capped(workdir, file, MAX_INDEX_FILE_BYTES)?;
    if longer {
        return Err(format!("{file} is larger than 1 MiB; it is not indexed"));
    }
    let text = text_of(&bytes).ok_or_else(|| format!("{file} is not UTF-8 text"))?;
    let symbols = symbols_of(file, lang, &text)?;
    let mut out = vec![format!("[list_symbols {file}: {}]", plural(symbols.len(), "definition", "definitions"))];
    for s in &symbols {
        out.push(format!("{}: {}", s.place(), clip(&s.signature, LINE_CHARS)));
        out.push(format!("    {}", facts(s)));
    }
    Ok(out.join("\n"))
}

/// `find_references NAME`: every identifier spelled NAME outside its definitions.
pub(crate) fn find_references(workdir: &WorkDir, input: &str) -> Result<String, String> {
    let asked = input.split_whitespace().next().ok_or("find_references needs a name")?;
    let (name, _) = split_qualified(asked);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err(format!("find_references needs an identifier, not `{asked}`"));
    }
    let tree = walk_limited(workdir, "", MAX_INDEXED_FILES)?;
    let finder = memchr::memmem::Finder::new(name.as_bytes());
    let mut scan = Scan { cut: tree.cut, ..Scan::default() };
    let mut hits: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    for file in &tree.files {
        let Some(lang) = Lang::of(file) else { continue };
        scan.source_files += 1;
        let Ok((bytes, longer)) = read_capped(workdir, file, MAX_INDEX_FILE_BYTES) else {
            scan.unreadable.push(file.clone());
            continue;
        };
        if longer {
            scan.too_large.push(file.clone());
            continue;
        }
        if finder.find(&bytes).is_none() {
            continue;
        }
        let Some(text) = text_of(&bytes) else { continue };
        let Some(grammar) = grammar(lang) else { continue };
        let Some(parsed) = parse(grammar, &text) else {
            scan.unparsed.push(file.clone());
            continue;
        };
        let definitions: Vec<usize> = symbols_of(file, lang, &text)
            .unwrap_or_default()
            .iter()
            .filter(|s| s.name == name)
            .map(|s| s.line)
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        let mut rows: Vec<usize> = Vec::new();
        identifier_rows(parsed.root_node(), &text, name, &mut rows);
        rows.dedup();
        let before = hits.len();
        for row in rows {
            if definitions.contains(&(row + 1)) {
                continue;
            }
            if hits.len() < MAX_REFERENCES {
                let line = lines.get(row).copied().unwrap_or_default();
                hits.push(format!("{file}:{}: {}", row + 1, clip(line.trim_end(), LINE_CHARS)));
            }
        }
        if hits.len() > before {
            files.push(file.clone());
        }
    }
    let mut out = vec![format!(
        "[find_references `{name}`: {} in {} · {}]",
        plural(hits.len(), "reference", "references"),
        plural(files.len(), "file", "files"),
        scan.coverage()
    )];
    out.extend(hits);
    Ok(out.join("\n"))
}

/// The rows of the identifiers spelled `name` under `node`, in order.
fn identifier_rows(node: Node<'_>, text: &str, name: &str, rows: &mut Vec<usize>) {
    let mut cursor = node.walk();
    let mut done = false;
    while !done {
        let current = cursor.node();
        if current.kind().ends_with("identifier") && node_text(current, text) == name {
            rows.push(current.start_position().row);
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                done = true;
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(file: &str, text: &str) -> Vec<Symbol> {
        symbols_of(file, Lang::of(file).unwrap(), text).unwrap()
    }

    /// The whole-tree index counts what it read and parsed, and a file it had to skip makes
    /// it say that the tree was not indexed whole.
    #[test]
    fn a_whole_tree_index_says_what_it_left_out() {
        let dir = std::env::temp_dir().join(format!("decision-index-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/lib.rs"), "pub fn one() {}\npub struct Two;\n").unwrap();
        std::fs::write(dir.join("tool.py"), "def three():\n    pass\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "fn not_code() {}\n").unwrap();
        let whole = index_tree(&dir).unwrap();
        assert_eq!(whole, TreeIndex { source_files: 2, parsed: 2, symbols: 3, skipped: 0, whole_tree: true });
        std::fs::write(dir.join("big.rs"), "// x\n".repeat(300_000)).unwrap();
        let cut = index_tree(&dir).unwrap();
        assert_eq!((cut.source_files, cut.skipped, cut.whole_tree), (3, 1, false));
        assert!(index_tree(&dir.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A few items are not worth a thread: they are worked on the calling thread.
    #[test]
    fn a_few_items_are_worked_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let items: Vec<usize> = (0..FILES_PER_THREAD).collect();
        let threads = in_parallel(&items, |_| std::thread::current().id());
        assert!(threads.iter().all(|id| *id == caller));
    }

    /// Work spread over threads comes back in the items' order, whatever the threads did.
    #[test]
    fn parallel_work_keeps_the_items_order() {
        let items: Vec<usize> = (0..1000).collect();
        let doubled = in_parallel(&items, |n| {
            if n % 97 == 0 {
                std::thread::yield_now();
            }
            n * 2
        });
        assert_eq!(doubled, items.iter().map(|n| n * 2).collect::<Vec<_>>());
        assert_eq!(in_parallel(&[7usize], |n| n + 1), [8]);
        assert!(in_parallel(&[] as &[usize], |n| n).is_empty());
    }

    #[test]
    fn every_grammar_and_its_query_load() {
        for lang in [Lang::Rust, Lang::Python, Lang::JavaScript, Lang::TypeScript, Lang::Tsx, Lang::Go, Lang::C] {
            assert!(grammar(lang).is_some(), "{lang:?}");
        }
    }

    #[test]
    fn rust_items_with_scope_returns_and_variants() {
        let text = "/// A map.\npub struct Map { inner: Vec<u8>, len: usize }\n\nimpl<K> Map<K> {\n    /// Inserts.\n    pub fn insert(&mut self, k: K) -> Option<u8> {\n        None\n    }\n}\n\n#[derive(Clone)]\npub enum Value {\n    /// nothing\n    Null,\n    Bool(bool),\n    Object { a: u8 },\n}\n\nmacro_rules! json {\n    () => {};\n}\nconst LIMIT: u8 = 128;\n";
        let found = symbols("src/map.rs", text);
        let map = found.iter().find(|s| s.name == "Map").unwrap();
        assert_eq!((map.kind.as_str(), map.first, map.line), ("struct", 1, 2));
        assert_eq!(map.members.as_ref().unwrap().1, ["inner: Vec<u8>", "len: usize"]);
        let insert = found.iter().find(|s| s.name == "insert").unwrap();
        assert_eq!(insert.kind, "method");
        assert_eq!(insert.scope, ["Map"]);
        assert_eq!(insert.returns.as_deref(), Some("Option<u8>"));
        assert_eq!((insert.first, insert.line, insert.last), (5, 6, 8));
        assert!(insert.qualified_by(&["Map"], "") && !insert.qualified_by(&["Set"], ""));
        let value = found.iter().find(|s| s.name == "Value").unwrap();
        assert_eq!(value.kind, "enum");
        assert_eq!(
            value.members.as_ref().unwrap(),
            &("variants", vec!["Null".into(), "Bool(bool)".into(), "Object { a: u8 }".into()])
        );
        assert_eq!(value.first, 11, "the attribute belongs to the item");
        assert_eq!(found.iter().find(|s| s.name == "json").unwrap().kind, "macro");
        assert_eq!(found.iter().find(|s| s.name == "LIMIT").unwrap().kind, "const");
    }

    #[test]
    fn python_classes_methods_and_module_paths() {
        let text = "import os\n\nclass Policy:\n    \"\"\"A policy.\"\"\"\n    @property\n    def header(self) -> str:\n        return 'x'\n\ndef helper(a):\n    return a\n";
        let found = symbols("email/policy.py", text);
        let policy = found.iter().find(|s| s.name == "Policy").unwrap();
        assert_eq!(policy.kind, "class");
        assert!(policy.qualified_by(&["policy"], "") && policy.qualified_by(&["email", "policy"], "lib"));
        let inside = Symbol { file: "policy.py".into(), ..policy.clone() };
        assert!(inside.qualified_by(&["email", "policy"], "email"), "the work directory's name counts");
        let header = found.iter().find(|s| s.name == "header").unwrap();
        assert_eq!(header.scope, ["Policy"]);
        assert_eq!(header.returns.as_deref(), Some("str"));
        assert_eq!(header.first, 5, "the decorator starts the item");
        assert_eq!(found.iter().find(|s| s.name == "helper").unwrap().returns, None);
    }

    #[test]
    fn javascript_typescript_go_and_c() {
        assert!(
            symbols("a.js", "function add(a, b) { return a + b }\nclass K { m() {} }\n")
                .iter()
                .any(|s| s.name == "add")
        );
        let ts = symbols(
            "a.ts",
            "export function parse(s: string): number { return 1 }\nenum Color { Red, Green = 2 }\ninterface P { x: number }\n",
        );
        assert_eq!(ts.iter().find(|s| s.name == "parse").unwrap().returns.as_deref(), Some("number"));
        assert_eq!(ts.iter().find(|s| s.name == "Color").unwrap().members.as_ref().unwrap().1, ["Red", "Green"]);
        assert!(ts.iter().any(|s| s.name == "P" && s.kind == "interface"));
        let go = symbols("a.go", "package a\n\ntype T struct{}\n\nfunc (t *T) Run() error { return nil }\n");
        let run = go.iter().find(|s| s.name == "Run").unwrap();
        assert_eq!((run.scope.as_slice(), run.returns.as_deref()), (&["T".to_owned()][..], Some("error")));
        let c = symbols("a.c", "#define MAX 3\nenum color { RED, GREEN };\nint add(int a, int b) { return a + b; }\n");
        assert_eq!(c.iter().find(|s| s.name == "add").unwrap().returns.as_deref(), Some("int"));
        assert!(c.iter().any(|s| s.name == "MAX" && s.kind == "macro"));
    }

    #[test]
    fn qualified_names_split() {
        assert_eq!(split_qualified("Map::insert"), ("insert", vec!["Map"]));
        assert_eq!(split_qualified("email.policy.Policy"), ("Policy", vec!["email", "policy"]));
        assert_eq!(split_qualified("json!"), ("json", vec![]));
        assert_eq!(split_qualified("to_string()"), ("to_string", vec![]));
    }
}
