//! The main job on real code nobody here wrote: questions about the sources of this project's
//! own dependencies in the cargo registry (`serde_json`, `regex`, `clap_builder`) and about
//! CPython's standard-library packages (`json`, `email`, `http`), found at test time. A tree
//! that is absent is skipped with one printed line.
//!
//! The true answers are established here, by plain regular expressions over the files (never
//! by the code index under test): functions whose one-line signature declares a return type,
//! types, macros and classes whose name is defined exactly once in the tree, the files that
//! mention a name, names defined nowhere, and edits the offline host cannot write. A question
//! is answered correctly when the run delivers an answer holding the true place (and the
//! return type), or — for a name defined nowhere and an edit — when it does not deliver. A
//! delivered answer that is not correct is a false delivery: there must be none, and at least
//! 90% must be correct. Every run's log must replay clean.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;
mod registry;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use decision_coding_host::heuristic::HeuristicProvider;
use host_common::{Options, TempDir, replay, run};
use regex::Regex;
use registry::registry_crate;

/// What a correct run does.
enum Expect {
    /// Delivered, and the answer holds every one of these.
    Delivered(Vec<String>),
    /// Not delivered, with one of these halts; files unchanged.
    Refused(&'static [&'static str]),
}

struct Question {
    tree: PathBuf,
    task: String,
    expect: Expect,
    allow_write: bool,
}

/// The directory of a CPython standard-library package.
fn python_package(name: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("import {name},os;print(os.path.dirname({name}.__file__))")])
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (out.status.success() && dir.is_dir()).then_some(dir)
}

/// Every text file of the tree (dot names skipped, at most 1 MiB, UTF-8 without NUL), as
/// `(relative path, text)`, sorted by path.
fn text_files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().unwrap();
            if name.starts_with('.') || kind.is_symlink() {
                continue;
            }
            if kind.is_dir() {
                if name != "__pycache__" {
                    pending.push(entry.path());
                }
                continue;
            }
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            if bytes.len() > 1024 * 1024 || bytes.iter().take(8192).any(|b| *b == 0) {
                continue;
            }
            if let Ok(text) = String::from_utf8(bytes) {
                let rel = entry.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

/// The lines of a file outside block comments (`/* … */`, a Rust crate's `/*! … */` docs
/// included), with their 1-based numbers: code in a comment defines nothing.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut in_comment = false;
    for (n, line) in text.lines().enumerate() {
        let opens = line.trim_start().starts_with("/*");
        if in_comment || opens {
            in_comment = !line.contains("*/");
            continue;
        }
        out.push((n + 1, line));
    }
    out
}

/// The definitions `pattern` finds (capture 1: the name; capture 2, if any: more), with the
/// file and 1-based line, over files with extension `ext`.
fn definitions(files: &[(String, String)], ext: &str, pattern: &Regex) -> Vec<(String, usize, String, String)> {
    let mut out = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| p.ends_with(ext)) {
        for (n, line) in code_lines(text) {
            if let Some(c) = pattern.captures(line) {
                let extra = c.get(2).map_or("", |m| m.as_str()).trim().to_owned();
                out.push((path.clone(), n, c[1].to_owned(), extra));
            }
        }
    }
    out
}

/// How many times each name is defined in the tree, by any of the language's definition
/// words (a name assigned at the start of a line counts too), outside block comments.
fn times_defined(files: &[(String, String)], ext: &str) -> HashMap<String, usize> {
    let words = if ext == ".rs" {
        r"\b(?:fn|struct|enum|union|trait|type|const|static|mod|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]*)"
    } else {
        r"\b(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)"
    };
    let any = Regex::new(words).unwrap();
    let assigned = Regex::new(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=[^=]").unwrap();
    let mut counts = HashMap::new();
    for (_, text) in files.iter().filter(|(p, _)| p.ends_with(ext)) {
        for (_, line) in code_lines(text) {
            for c in any.captures_iter(line).chain(assigned.captures_iter(line)) {
                *counts.entry(c[1].to_owned()).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// The files that hold `name` as a whole word, and how many lines do.
fn mentions(files: &[(String, String)], name: &str) -> (Vec<String>, usize) {
    let word = Regex::new(&format!(r"\b{}\b", regex::escape(name))).unwrap();
    let mut hit_files = Vec::new();
    let mut lines = 0;
    for (path, text) in files {
        let n = text.lines().filter(|l| word.is_match(l)).count();
        if n > 0 {
            hit_files.push(path.clone());
            lines += n;
        }
    }
    (hit_files, lines)
}

/// `count` items spread evenly over `items`.
fn spread<T: Clone>(items: &[T], count: usize) -> Vec<T> {
    if items.len() <= count {
        return items.to_vec();
    }
    (0..count).map(|i| items[i * items.len() / count].clone()).collect()
}

/// Questions about a Rust crate: what functions return, where types and macros are defined,
/// which files mention a type, and a name defined nowhere.
fn rust_questions(tree: &Path, functions: usize, types: usize, lists: usize) -> Vec<Question> {
    let files = text_files(tree);
    let mut out = Vec::new();
    let ask = |task: String, expect: Expect| Question { tree: tree.to_path_buf(), task, expect, allow_write: false };
    let function = Regex::new(
        r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+([a-z_][a-z0-9_]*)\s*(?:<[^()]*>)?\(.*\)\s*->\s*([^{]+?)\s*(?:\{.*|where\b.*)?$",
    )
    .unwrap();
    let defined = times_defined(&files, ".rs");
    let once = |name: &str| defined.get(name) == Some(&1);
    let unique_fns: Vec<_> = definitions(&files, ".rs", &function)
        .into_iter()
        .filter(|(_, _, name, returns)| once(name) && !returns.contains("where"))
        .collect();
    println!(
        "real trees: {}: {} source lines, {} names defined once, {} functions with a return type",
        tree.display(),
        files.iter().map(|(_, t)| t.lines().count()).sum::<usize>(),
        defined.values().filter(|n| **n == 1).count(),
        unique_fns.len()
    );
    for (path, line, name, returns) in spread(&unique_fns, functions) {
        let returns = returns.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(ask(
            format!("What does the function `{name}` return?"),
            Expect::Delivered(vec![format!("{path}:{line}"), format!("returns `{returns}`")]),
        ));
    }
    let type_pattern =
        Regex::new(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait)\s+([A-Z][A-Za-z0-9_]*)").unwrap();
    let unique_types: Vec<_> =
        definitions(&files, ".rs", &type_pattern).into_iter().filter(|(_, _, name, _)| once(name)).collect();
    for (path, line, name, _) in spread(&unique_types, types) {
        out.push(ask(format!("Where is `{name}` defined?"), Expect::Delivered(vec![format!("{path}:{line}")])));
    }
    let macros = Regex::new(r"^\s*macro_rules!\s+([a-z_][a-z0-9_]*)").unwrap();
    let unique_macros: Vec<_> =
        definitions(&files, ".rs", &macros).into_iter().filter(|(_, _, name, _)| once(name)).collect();
    if let Some((path, line, name, _)) = unique_macros.first() {
        out.push(ask(
            format!("Where is the `{name}!` macro defined?"),
            Expect::Delivered(vec![format!("{path}:{line}")]),
        ));
    }
    // Names mentioned in a few files, few enough lines for a search to cover the whole tree.
    let listed: Vec<(String, Vec<String>)> = spread(&unique_types, 30)
        .iter()
        .map(|(_, _, name, _)| (name.clone(), mentions(&files, name)))
        .filter(|(_, (hit_files, lines))| (2..=8).contains(&hit_files.len()) && *lines < 150)
        .map(|(name, (hit_files, _))| (name, hit_files))
        .collect();
    for (name, hit_files) in spread(&listed, lists) {
        out.push(ask(format!("Which files mention `{name}`?"), Expect::Delivered(hit_files)));
    }
    out.push(ask("Where is `frobnicate_widget_zz` defined?".into(), Expect::Refused(&["not_found"])));
    out
}

/// Questions about a Python package: where its top-level classes and functions are defined
/// (one by its dotted name), which files mention one, and a name defined nowhere.
fn python_questions(package: &str, tree: &Path, count: usize) -> Vec<Question> {
    let files = text_files(tree);
    let ask = |task: String, expect: Expect| Question { tree: tree.to_path_buf(), task, expect, allow_write: false };
    let top_level = Regex::new(r"^(?:class|def)\s+([A-Za-z][A-Za-z0-9_]*)").unwrap();
    let defined = times_defined(&files, ".py");
    let unique: Vec<_> = definitions(&files, ".py", &top_level)
        .into_iter()
        .filter(|(_, _, name, _)| defined.get(name) == Some(&1))
        .collect();
    let mut out = Vec::new();
    for (path, line, name, _) in spread(&unique, count) {
        out.push(ask(format!("Where is `{name}` defined?"), Expect::Delivered(vec![format!("{path}:{line}")])));
    }
    if let Some((path, line, name, _)) = unique.iter().find(|(p, _, _, _)| !p.contains('/') && p != "__init__.py") {
        let module = path.trim_end_matches(".py");
        out.push(ask(
            format!("Where is `{package}.{module}.{name}` defined?"),
            Expect::Delivered(vec![format!("{path}:{line}")]),
        ));
    }
    let listed: Vec<(String, Vec<String>)> = spread(&unique, 30)
        .iter()
        .map(|(_, _, name, _)| (name.clone(), mentions(&files, name)))
        .filter(|(_, (hit_files, lines))| (2..=8).contains(&hit_files.len()) && *lines < 150)
        .map(|(name, (hit_files, _))| (name, hit_files))
        .collect();
    if let Some((name, hit_files)) = listed.first() {
        out.push(ask(format!("Which files mention `{name}`?"), Expect::Delivered(hit_files.clone())));
    }
    out.push(ask("Where is `frobnicate_widget_zz` defined?".into(), Expect::Refused(&["not_found"])));
    out
}

/// The line (1-based) of the first line of `file` that starts with `prefix` once trimmed,
/// after the line starting with `after` (when given).
fn line_of(tree: &Path, file: &str, after: Option<&str>, prefix: &str) -> Option<usize> {
    let text = std::fs::read_to_string(tree.join(file)).ok()?;
    let start = after.map_or(Some(0), |a| text.lines().position(|l| l.starts_with(a)))?;
    text.lines().enumerate().skip(start).find(|(_, l)| l.trim_start().starts_with(prefix)).map(|(n, _)| n + 1)
}

/// The questions of the issue that asked for the code index, on serde_json, phrased as a user
/// wrote them, with their answers read from the files here.
fn issue_questions(tree: &Path) -> Vec<Question> {
    let ask = |task: &str, needed: Vec<String>| Question {
        tree: tree.to_path_buf(),
        task: task.into(),
        expect: Expect::Delivered(needed),
        allow_write: false,
    };
    let mut out = Vec::new();
    if let Some(n) = line_of(tree, "src/macros.rs", None, "macro_rules! json {") {
        out.push(ask("Where is the `json!` macro defined?", vec![format!("src/macros.rs:{n}")]));
    }
    if let Some(n) = line_of(tree, "src/ser.rs", None, "pub fn to_string_pretty<") {
        out.push(ask(
            "What does the function `to_string_pretty` return?",
            vec![format!("src/ser.rs:{n}"), "returns `Result<String>`".into()],
        ));
    }
    let text = std::fs::read_to_string(tree.join("src/value/mod.rs")).unwrap_or_default();
    let variant = Regex::new(r"^    ([A-Z][A-Za-z]*)").unwrap();
    let variants: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("pub enum Value {"))
        .take_while(|l| *l != "}")
        .filter_map(|l| variant.captures(l).map(|c| c[1].to_owned()))
        .collect();
    if !variants.is_empty() {
        let mut needed = vec![format!("has {} variants", variants.len())];
        needed.extend(variants);
        out.push(ask("How many variants does the enum `Value` have?", needed));
    }
    if let Some(n) = line_of(tree, "src/de.rs", Some("impl<'de, R> Deserializer<R>"), "pub fn new(") {
        out.push(ask("What does `Deserializer::new` return?", vec![format!("src/de.rs:{n}"), "returns `Self`".into()]));
    }
    let (files, lines) = mentions(&text_files(tree), "RawValue");
    if lines < 200 {
        out.push(ask("Which files mention `RawValue`?", files));
    }
    out
}

/// Edits the offline host cannot write: a copy of serde_json's `src/de.rs`, asked to change.
fn edit_questions(serde_json: &Path, dir: &TempDir) -> Vec<Question> {
    let copy = dir.path().join("edit-tree");
    std::fs::create_dir_all(copy.join("src")).unwrap();
    std::fs::copy(serde_json.join("src/de.rs"), copy.join("src/de.rs")).unwrap();
    ["Add a doc comment above `from_str` in src/de.rs", "Change `from_str` in src/de.rs to return an Option"]
        .into_iter()
        .map(|task| Question {
            tree: copy.clone(),
            task: task.into(),
            expect: Expect::Refused(&["write_refused"]),
            allow_write: true,
        })
        .collect()
}

/// The state of every file under `dir`, to see that nothing changed.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    text_files(dir)
}

#[test]
fn the_main_job_answers_questions_about_real_trees() {
    let dir = TempDir::new("real-trees");
    let mut questions = Vec::new();
    for (name, functions, types, lists) in [("serde_json", 6, 4, 2), ("regex", 5, 3, 2), ("clap_builder", 5, 3, 2)] {
        match registry_crate(name) {
            Some(tree) => {
                if name == "serde_json" {
                    questions.extend(edit_questions(&tree, &dir));
                    // A qualified name, and the README's own question kinds on this crate.
                    let map = std::fs::read_to_string(tree.join("src/map.rs")).unwrap_or_default();
                    if let Some(n) = map.lines().position(|l| l.trim_start().starts_with("pub fn insert(")) {
                        questions.push(Question {
                            tree: tree.clone(),
                            task: "What does `Map::insert` return?".into(),
                            expect: Expect::Delivered(vec![
                                format!("src/map.rs:{}", n + 1),
                                "returns `Option<Value>`".into(),
                            ]),
                            allow_write: false,
                        });
                    }
                }
                if name == "serde_json" {
                    questions.extend(issue_questions(&tree));
                }
                questions.extend(rust_questions(&tree, functions, types, lists));
            }
            None => println!("real trees: skipped {name}: not in the cargo registry"),
        }
    }
    for (package, count) in [("json", 3), ("email", 3), ("http", 3)] {
        match python_package(package) {
            Some(tree) => questions.extend(python_questions(package, &tree, count)),
            None => println!("real trees: skipped the Python package {package}: python3 or the package is absent"),
        }
    }
    if questions.is_empty() {
        println!("real trees: skipped: no real tree found on this machine");
        return;
    }
    let mut correct = 0;
    let mut false_deliveries = Vec::new();
    let mut wrong = Vec::new();
    for (index, q) in questions.iter().enumerate() {
        let run_dir = TempDir::new(&format!("real-{index}"));
        let started = Instant::now();
        // Only an edit's tree is compared before and after (the others are never written to).
        let before = if q.allow_write { snapshot(&q.tree) } else { Vec::new() };
        let options = Options { allow_write: q.allow_write, max_steps: 12, ..Options::default() };
        let out = run(&run_dir, &q.task, &q.tree, Arc::new(HeuristicProvider), options);
        let summary = out.summary();
        println!("real trees: {:>5} ms  {}", started.elapsed().as_millis(), q.task);
        let (mismatch, verified, intact) = replay(&out.log);
        assert_eq!((mismatch, intact), (0, true), "{} ({}): the log does not replay", q.task, q.tree.display());
        assert!(verified > 0, "{}: nothing verified", q.task);
        let ok = match &q.expect {
            Expect::Delivered(needed) => {
                summary.delivered && needed.iter().all(|n| summary.answer.contains(n.as_str()))
            }
            Expect::Refused(halts) => {
                // `write_refused+revise`: the gate's revision after the refusal counts as the refusal.
                let halt = summary.halt.split('+').next().unwrap_or_default();
                !summary.delivered && halts.contains(&halt) && (!q.allow_write || snapshot(&q.tree) == before)
            }
        };
        let line = format!(
            "{} [{}] → halt {}, delivered {}\n--- answer ---\n{}\n",
            q.task,
            q.tree.display(),
            summary.halt,
            summary.delivered,
            summary.answer
        );
        if ok {
            correct += 1;
        } else if summary.delivered {
            false_deliveries.push(line);
        } else {
            wrong.push(line);
        }
    }
    let total = questions.len();
    println!(
        "real trees: {correct} of {total} correct ({:.0}%), {} false deliveries, {} not delivered",
        correct as f64 * 100.0 / total as f64,
        false_deliveries.len(),
        wrong.len()
    );
    for line in wrong.iter().chain(&false_deliveries) {
        eprintln!("{line}");
    }
    assert!(false_deliveries.is_empty(), "false deliveries:\n{}", false_deliveries.join("\n"));
    assert!(correct * 10 >= total * 9, "{correct} of {total} correct, below 90%");
}
