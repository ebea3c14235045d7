//! The architecture's invariants (docs/architecture.md, "Invariants"), checked on the real
//! workspace: the crate graph from `cargo metadata` (imports only point down; the pure crates
//! pull in no HTTP, filesystem or clock crate) and a scan of the core's sources (no module
//! imports `std::fs`, `std::net`, `std::time`, `std::thread` or `std::process`).
//!
//! Each checker is a plain function that returns the violations it finds; it is also run on a
//! made-up metadata document or source text that breaks the rule, so that none of these
//! tests can pass vacuously.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
// The test (not the core) reads the workspace from disk and runs `cargo metadata`.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// Crates that a pure crate must not have in its dependency closure: HTTP clients and
/// servers, TLS, async runtimes, filesystem capability and walking crates, an allocator.
const IMPURE_CRATES: &[&str] =
    &["ureq", "rustls", "hyper", "reqwest", "tokio", "cap-std", "cap-fs-ext", "ignore", "walkdir", "mimalloc"];

/// Standard-library modules the core does not import.
const IMPURE_STD_MODULES: &[&str] = &["fs", "net", "time", "thread", "process"];

/// The layer of a workspace crate: a crate may depend only on crates of a lower layer. The
/// language server is a library on the facade, under the CLI that serves it. Every crate not
/// named here (the CLI, bindings, examples) is an application, at the top.
fn layer(name: &str) -> u8 {
    match name {
        "decision-core" => 0,
        "decision-protocol" | "decision-outcomes" => 1,
        "decision-runtime" => 2,
        "decision-coding-host" => 3,
        "decision" => 4,
        // Libraries over the facade that applications use: the MCP gateway, the language
        // server, and the export (kept out of the facade for its heavy dependencies, Arrow and
        // Parquet).
        "decision-mcp" | "decision-lsp" | "decision-export" => 5,
        _ => 6,
    }
}

/// The workspace crates an example or an entrance may depend on (normal dependencies), as
/// its description says; its tests may use more. Every entrance — the CLI, the Python and
/// wasm bindings, the language server, the MCP gateway, the export — enters through the
/// facade, and Python through nothing else; the CLI also runs the coding host and serves the
/// libraries above the facade.
const EXAMPLE_DEPENDENCIES: &[(&str, &[&str])] = &[
    ("decision-external-host", &["decision-core"]),
    ("decision-lsp", &["decision"]),
    ("decision-mcp", &["decision"]),
    ("decision-export", &["decision"]),
    ("decision-wasm", &["decision"]),
    ("decision-contract-python", &["decision"]),
    ("decision-cli", &["decision", "decision-coding-host", "decision-mcp", "decision-lsp", "decision-export"]),
];

/// The crates of this project the fuzz targets (outside the workspace) name in their
/// manifest: the facade alone.
fn fuzz_project_dependencies() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace_root().join("fuzz/Cargo.toml")).unwrap_or_default();
    manifest
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name.trim().to_owned()))
        .filter(|name| name == "decision" || name.starts_with("decision-") && name != "decision-fuzz")
        .collect()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--manifest-path"])
        .arg(workspace_root().join("Cargo.toml"))
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo metadata failed:\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// A resolved dependency: the package id and the kinds it is used as (`None` normal,
/// `Some("dev")`, `Some("build")`).
type Edge<'a> = (&'a str, Vec<Option<&'a str>>);

/// The resolved graph of a metadata document: package names by id, and each package's
/// dependencies with their kinds (`None` normal, `Some("dev")`, `Some("build")`).
struct Graph<'a> {
    names: BTreeMap<&'a str, &'a str>,
    edges: BTreeMap<&'a str, Vec<Edge<'a>>>,
    members: Vec<&'a str>,
}

impl<'a> Graph<'a> {
    fn of(metadata: &'a Value) -> Graph<'a> {
        let names = metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
            .collect();
        let edges = metadata["resolve"]["nodes"]
            .as_array()
            .expect("a resolved graph")
            .iter()
            .map(|node| {
                let deps = node["deps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|dep| {
                        let kinds = dep["dep_kinds"].as_array().unwrap().iter().map(|k| k["kind"].as_str()).collect();
                        (dep["pkg"].as_str().unwrap(), kinds)
                    })
                    .collect();
                (node["id"].as_str().unwrap(), deps)
            })
            .collect();
        let members = metadata["workspace_members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        Graph { names, edges, members }
    }

    fn name(&self, id: &str) -> &'a str {
        self.names.get(id).copied().unwrap_or("?")
    }

    fn id(&self, name: &str) -> Option<&'a str> {
        self.members.iter().copied().find(|id| self.name(id) == name)
    }

    /// Every package reachable from `roots` over normal and build dependencies, each with the
    /// chain of names that reaches it.
    fn closure(&self, roots: &[&'a str]) -> BTreeMap<&'a str, Vec<&'a str>> {
        let mut reached: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut queue: VecDeque<&str> = VecDeque::new();
        for root in roots {
            reached.insert(root, vec![self.name(root)]);
            queue.push_back(root);
        }
        while let Some(id) = queue.pop_front() {
            let chain = reached[id].clone();
            for (dep, kinds) in self.edges.get(id).into_iter().flatten() {
                let linked = kinds.iter().any(|kind| *kind != Some("dev"));
                if linked && !reached.contains_key(dep) {
                    let mut longer = chain.clone();
                    longer.push(self.name(dep));
                    reached.insert(dep, longer);
                    queue.push_back(dep);
                }
            }
        }
        reached
    }
}

/// Workspace dependencies that point sideways or up, and example dependencies beyond what the
/// example says it depends on.
fn layering_violations(metadata: &Value) -> Vec<String> {
    let graph = Graph::of(metadata);
    let mut violations = Vec::new();
    for &member in &graph.members {
        let from = graph.name(member);
        for (dep, kinds) in graph.edges.get(member).into_iter().flatten() {
            if !graph.members.contains(dep) {
                continue;
            }
            let to = graph.name(dep);
            if layer(to) >= layer(from) {
                violations.push(format!("{from} (layer {}) depends on {to} (layer {})", layer(from), layer(to)));
            }
            let allowed = EXAMPLE_DEPENDENCIES.iter().find(|(example, _)| *example == from);
            if let Some((_, allowed)) = allowed
                && kinds.iter().any(Option::is_none)
                && !allowed.contains(&to)
            {
                violations.push(format!("{from} says it depends on {allowed:?} only, but depends on {to}"));
            }
        }
    }
    violations
}

/// Impure crates in the dependency closure of workspace crate `root`, each with its chain.
fn impure_dependencies(metadata: &Value, root: &str) -> Vec<String> {
    let graph = Graph::of(metadata);
    let root = graph.id(root).unwrap_or_else(|| panic!("{root} is not a workspace member"));
    impure_in(&graph, &graph.closure(&[root]))
}

/// Impure crates in the dependency closure of workspace crate `root` built with
/// `default-features = false`: its non-optional normal and build dependencies and their
/// closures. The resolved graph unifies features, so this over-approximates: it can only
/// report too much, never too little.
fn impure_dependencies_without_default_features(metadata: &Value, root: &str) -> Vec<String> {
    let graph = Graph::of(metadata);
    let root_id = graph.id(root).unwrap_or_else(|| panic!("{root} is not a workspace member"));
    let manifest = metadata["packages"].as_array().unwrap().iter().find(|p| p["id"] == root_id).unwrap();
    let required: Vec<&Value> = manifest["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"].as_str() != Some("dev") && d["optional"] == false)
        .collect();
    // A workspace crate taken without its default features is followed by the same rule
    // (the facade takes the runtime so); any other dependency by its resolved closure.
    let (lean, full): (Vec<&Value>, Vec<&Value>) = required.iter().partition(|d| {
        d["uses_default_features"] == false
            && graph.id(dependency_name(d)).is_some_and(|id| graph.members.contains(&id))
    });
    let full: BTreeSet<&str> = full.iter().map(|d| dependency_name(d)).collect();
    let direct: Vec<&str> = graph
        .edges
        .get(root_id)
        .into_iter()
        .flatten()
        .map(|(dep, _)| *dep)
        .filter(|dep| full.contains(graph.name(dep)))
        .collect();
    let mut closure = graph.closure(&direct);
    for chain in closure.values_mut() {
        chain.insert(0, root);
    }
    let mut found = impure_in(&graph, &closure);
    for dep in lean {
        let below = impure_dependencies_without_default_features(metadata, dependency_name(dep));
        found.extend(below.into_iter().map(|chain| format!("{root} → {chain}")));
    }
    found
}

/// The crate name a manifest dependency entry of `cargo metadata` names.
fn dependency_name(dependency: &Value) -> &str {
    dependency["name"].as_str().unwrap()
}

fn impure_in(graph: &Graph<'_>, closure: &BTreeMap<&str, Vec<&str>>) -> Vec<String> {
    closure
        .iter()
        .filter(|(id, _)| IMPURE_CRATES.contains(&graph.name(id)))
        .map(|(_, chain)| chain.join(" → "))
        .collect()
}

/// `(line, module)` for every use of an impure standard-library module in Rust source,
/// whether written as a path (`std::fs::read`) or in a group (`use std::{fs, io}`); comments
/// are skipped.
fn impure_std_uses(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("std::") {
            let after = &rest[at + "std::".len()..];
            let modules: Vec<&str> = if let Some(group) = after.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                inner.split(',').map(|item| item.trim().split("::").next().unwrap_or("").trim()).collect()
            } else {
                vec![after.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("")]
            };
            for module in modules {
                if IMPURE_STD_MODULES.contains(&module) {
                    found.push((index + 1, format!("std::{module}")));
                }
            }
            rest = after;
        }
    }
    found
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// A module's path inside its crate: `["graph", "exec"]` for `graph/exec.rs`, `[]` for the
/// crate root.
type ModulePath = Vec<String>;

/// The module path of a source file, relative to the crate's `src/`.
fn module_path(relative: &Path) -> ModulePath {
    let mut parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    if parts.last().is_some_and(|last| last == "mod" || last == "lib" || last == "main") {
        parts.pop();
    }
    parts
}

/// The paths a source names through `crate::…` and `super::…`, resolved against the module
/// the source is, its unit tests (`#[cfg(test)] mod tests`, at the end of a file) and
/// comments left out.
fn named_paths(module: &[String], source: &str) -> Vec<ModulePath> {
    let code = source.split("#[cfg(test)]\nmod tests").next().unwrap_or(source);
    let mut found = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find(['c', 's']) {
            let before = line.len() - rest.len() + at;
            let preceded_by_identifier =
                line[..before].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
            let tail = &rest[at..];
            let (mut base, mut after) = if let Some(after) = tail.strip_prefix("crate::") {
                (Vec::new(), after)
            } else if tail.starts_with("super::") {
                let mut base = module.to_vec();
                let mut after = tail;
                while let Some(next) = after.strip_prefix("super::") {
                    base.pop();
                    after = next;
                }
                (base, after)
            } else {
                rest = &rest[at + 1..];
                continue;
            };
            if preceded_by_identifier {
                rest = &rest[at + 1..];
                continue;
            }
            loop {
                let end = after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
                if end == 0 {
                    break;
                }
                base.push(after[..end].to_string());
                match after[end..].strip_prefix("::") {
                    Some(next) => after = next,
                    None => break,
                }
            }
            found.push(base);
            rest = &rest[at + 1..];
        }
    }
    found
}

/// The circles among sibling modules of one crate, given its sources as (module path, text):
/// an import from `a::x` to `b::y` is an edge between the siblings `a` and `b`; a child that
/// uses its parent (or a parent its child) is not a circle. Each circle is listed once, as
/// its modules joined by ` ↔ `.
fn module_circles(sources: &[(ModulePath, String)]) -> Vec<String> {
    let modules: BTreeSet<&ModulePath> = sources.iter().map(|(module, _)| module).collect();
    let mut edges: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (module, source) in sources {
        for named in named_paths(module, source) {
            // The longest prefix that is a module: `crate::graph::Step` names `graph`.
            let Some(target) = (0..=named.len()).rev().map(|n| named[..n].to_vec()).find(|p| modules.contains(p))
            else {
                continue;
            };
            let common = module.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == module.len() || common == target.len() {
                continue; // ancestor and descendant
            }
            edges.entry(module[..=common].to_vec()).or_default().insert(target[..=common].to_vec());
        }
    }
    let reaches = |from: &ModulePath, to: &ModulePath| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(next) = stack.pop() {
            if &next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.extend(edges.get(&next).into_iter().flatten().cloned());
            }
        }
        false
    };
    let mut circles = BTreeSet::new();
    for (from, targets) in &edges {
        for to in targets {
            if reaches(to, from) {
                let mut members: Vec<String> =
                    edges.keys().filter(|m| reaches(m, from) && reaches(from, m)).map(|m| m.join("::")).collect();
                members.sort();
                circles.insert(members.join(" ↔ "));
            }
        }
    }
    circles.into_iter().collect()
}

/// The sources of a workspace crate, as (module path, text).
fn crate_sources(dir: &str) -> Vec<(ModulePath, String)> {
    let src = workspace_root().join(dir).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|file| (module_path(file.strip_prefix(&src).unwrap()), std::fs::read_to_string(&file).unwrap()))
        .collect()
}

/// The parse problems the block rules report (`ParseProblem::Name` in `rules`), and every
/// scanner module (`syntax`, but not the file that defines the problems) that reports one of
/// them too: the scanner reads lines, and what only a whole block shows is the rules' to judge.
fn whole_block_problems_in_the_scanner(rules: &str, scanner: &[(ModulePath, String)]) -> Vec<String> {
    let reported = |source: &str| -> BTreeSet<String> {
        source
            .split("ParseProblem::")
            .skip(1)
            .map(|rest| rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>())
            .filter(|name| name.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect()
    };
    let judged = reported(rules);
    let mut found = Vec::new();
    for (module, source) in scanner {
        if module.first().map(String::as_str) != Some("syntax") || module.last().map(String::as_str) == Some("problem")
        {
            continue;
        }
        for name in reported(source).intersection(&judged) {
            found.push(format!("{}: {name}", module.join("::")));
        }
    }
    found
}

/// Whether `source` writes a `Block { … }` literal (not a `ScannedBlock { … }`).
fn builds_a_block(source: &str) -> bool {
    source.match_indices("Block {").any(|(at, _)| !source[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
}

/// The layer crates the facade re-exports from: (Rust name, directory).
const LAYER_CRATE_DIRS: &[(&str, &str)] = &[
    ("decision_core", "crates/core"),
    ("decision_protocol", "crates/protocol"),
    ("decision_outcomes", "crates/outcomes"),
    ("decision_runtime", "crates/runtime"),
];

/// The only modules the facade may re-export whole: the command surface every entrance goes
/// through, and the table of diagnostic codes (every constant of it is API).
const WHOLE_MODULES_ALLOWED: &[&str] = &["decision_runtime::api", "decision_core::diag::codes"];

/// Every path a `pub use` of `source` re-exports, braces expanded (`a::{b, c::d}` → `a::b`,
/// `a::c::d`), aliases dropped, a glob kept as its `*`.
fn pub_use_paths(source: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, into: &mut Vec<String>) {
        let tree = tree.trim();
        if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(prefix, &inner[start..i], into);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(prefix, &inner[start..], into);
            return;
        }
        if tree.is_empty() {
            return;
        }
        let join = |head: &str| if prefix.is_empty() { head.to_owned() } else { format!("{prefix}::{head}") };
        match tree.split_once("::") {
            Some((head, rest)) => expand(&join(head.trim()), rest, into),
            None => into.push(join(tree.split(" as ").next().unwrap_or(tree).trim())),
        }
    }
    let code: String = source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut paths = Vec::new();
    for statement in code.split("pub use ").skip(1) {
        let tree = statement.split(';').next().unwrap_or("");
        expand("", &tree.split_whitespace().collect::<Vec<_>>().join(" "), &mut paths);
    }
    paths
}

/// Whether `path` (`decision_runtime::log::approval`) names a public module of a layer
/// crate: its parent's file (`src/log/mod.rs` or `src/log.rs`; `src/lib.rs` at the top)
/// declares `pub mod approval;`. A private module of the same name as a function (`digest`'s
/// `stringify`) is not one.
fn names_a_layer_module(root: &Path, path: &str) -> bool {
    let mut segments = path.split("::");
    let Some(dir) = segments.next().and_then(|name| LAYER_CRATE_DIRS.iter().find(|(n, _)| *n == name)) else {
        return false;
    };
    let mut rest: Vec<&str> = segments.collect();
    let Some(leaf) = rest.pop() else { return true };
    let src = root.join(dir.1).join("src");
    let parent = if rest.is_empty() {
        vec![src.join("lib.rs")]
    } else {
        let module = src.join(rest.join("/"));
        vec![module.with_extension("rs"), module.join("mod.rs")]
    };
    let declaration = format!("pub mod {leaf};");
    parent
        .iter()
        .any(|file| std::fs::read_to_string(file).is_ok_and(|text| text.lines().any(|l| l.trim() == declaration)))
}

/// The facade's re-exports that give a layer crate's module whole (or a glob of one), other
/// than those [`WHOLE_MODULES_ALLOWED`].
fn whole_module_exports(source: &str, is_module: impl Fn(&str) -> bool) -> Vec<String> {
    pub_use_paths(source)
        .into_iter()
        .filter(|path| {
            let whole = path.ends_with("::*") || is_module(path);
            whole && !WHOLE_MODULES_ALLOWED.contains(&path.as_str())
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The real workspace
// ---------------------------------------------------------------------------------------

#[test]
fn workspace_crates_depend_only_on_crates_below_them() {
    let metadata = metadata();
    let graph = Graph::of(&metadata);
    let names: Vec<&str> = graph.members.iter().map(|id| graph.name(id)).collect();
    assert!(names.contains(&"decision-core") && names.contains(&"decision-runtime"), "{names:?}");
    let violations = layering_violations(&metadata);
    assert!(violations.is_empty(), "imports must point down:\n{}", violations.join("\n"));
}

/// The crates every binding and every other implementation's host can sit on.
const PURE_CRATES: &[&str] = &["decision-core", "decision-protocol", "decision-outcomes"];

#[test]
fn the_fuzz_targets_enter_through_the_facade() {
    assert_eq!(fuzz_project_dependencies(), ["decision"]);
}

#[test]
fn the_pure_crates_pull_in_no_http_filesystem_or_clock_crate() {
    let metadata = metadata();
    let graph = Graph::of(&metadata);
    for name in PURE_CRATES {
        let found = impure_dependencies(&metadata, name);
        assert!(found.is_empty(), "{name} must stay pure:\n{}", found.join("\n"));
        // The closure is not empty: the check looks at real dependencies.
        let closure = graph.closure(&[graph.id(name).unwrap_or_else(|| panic!("{name} is a member"))]);
        assert!(closure.keys().any(|id| graph.name(id) == "serde_json"), "{name}: {closure:?}");
    }
}

/// `decision-runtime` with `default-features = false` is pure too, once its HTTP providers sit
/// behind the `http` feature; until the runtime has that feature, it is not checked.
#[test]
fn the_runtime_without_default_features_pulls_in_no_impure_crate() {
    let metadata = metadata();
    let runtime = metadata["packages"].as_array().unwrap().iter().find(|p| p["name"] == "decision-runtime").unwrap();
    if runtime["features"].get("http").is_none() {
        eprintln!("decision-runtime has no `http` feature yet: its pure build is not checked");
        return;
    }
    let found = impure_dependencies_without_default_features(&metadata, "decision-runtime");
    assert!(found.is_empty(), "decision-runtime (no default features) must stay pure:\n{}", found.join("\n"));
}

/// The wasm binding and the fuzz targets take the facade without its default features: it
/// must then leave the HTTP providers out as the runtime does.
#[test]
fn the_facade_without_default_features_pulls_in_no_impure_crate() {
    let found = impure_dependencies_without_default_features(&metadata(), "decision");
    assert!(found.is_empty(), "decision (no default features) must stay pure:\n{}", found.join("\n"));
}

#[test]
fn no_module_of_a_pure_crate_imports_io_clock_threads_or_processes() {
    for dir in ["crates/core/src", "crates/protocol/src", "crates/outcomes/src"] {
        let mut files = Vec::new();
        rust_files(&workspace_root().join(dir), &mut files);
        assert!(files.len() > 5, "the sources of {dir} are found: {files:?}");
        let mut violations = Vec::new();
        for file in files {
            let source = std::fs::read_to_string(&file).unwrap();
            for (line, module) in impure_std_uses(&source) {
                violations.push(format!("{}:{line}: {module}", file.display()));
            }
        }
        assert!(violations.is_empty(), "{dir} is pure:\n{}", violations.join("\n"));
    }
}

/// Every library crate and the binary: no two sibling modules import each other, directly or
/// round a longer circle.
#[test]
fn no_modules_import_each_other_in_a_circle() {
    for dir in [
        "crates/core",
        "crates/protocol",
        "crates/outcomes",
        "crates/runtime",
        "crates/coding-host",
        "crates/mcp",
        "crates/lsp",
        "crates/export",
        "crates/cli",
    ] {
        let sources = crate_sources(dir);
        assert!(sources.len() > 5, "the sources of {dir} are found");
        let circles = module_circles(&sources);
        assert!(circles.is_empty(), "{dir} has modules that import each other:\n{}", circles.join("\n"));
    }
}

/// The scanner only scans: what only a whole block shows (a missing kind, a question without
/// options, a kind its questions do not make) is judged by the block rules in the checker,
/// which build the block; no scanner module reports one of their problems or builds a block.
#[test]
fn the_scanner_judges_no_whole_block() {
    let sources = crate_sources("crates/core");
    let rules = sources.iter().find(|(module, _)| module == &["check", "blocks"]).map(|(_, text)| text.as_str());
    let rules = rules.expect("the block rules are in check::blocks");
    assert!(rules.contains("ParseProblem::KindMissing") && rules.contains("ParseProblem::QuestionNoOptions"));
    let found = whole_block_problems_in_the_scanner(rules, &sources);
    assert!(found.is_empty(), "the scanner judges whole blocks:\n{}", found.join("\n"));
    let builds: Vec<&ModulePath> = sources
        .iter()
        .filter(|(module, text)| module.first().map(String::as_str) == Some("syntax") && builds_a_block(text))
        .map(|(module, _)| module)
        .collect();
    assert!(builds.is_empty(), "a scanner module builds the contract's Block: {builds:?}");
}

/// The facade names what it exports: no layer module is re-exported whole, so its page is
/// the public API and a layer's new item is not public until the facade lists it.
#[test]
fn the_facade_exports_a_curated_api_not_whole_modules() {
    let root = workspace_root();
    let source = std::fs::read_to_string(root.join("crates/decision/src/lib.rs")).unwrap();
    let paths = pub_use_paths(&source);
    // The scan reads the real file: it finds the command surface and items deep in the log.
    assert!(paths.contains(&"decision_runtime::api".to_owned()), "{paths:?}");
    assert!(paths.contains(&"decision_runtime::log::approval::verify_log".to_owned()), "{paths:?}");
    let whole = whole_module_exports(&source, |path| names_a_layer_module(&root, path));
    assert!(whole.is_empty(), "the facade re-exports whole modules:\n{}", whole.join("\n"));
}

// ---------------------------------------------------------------------------------------
// The checkers on inputs that break the rules
// ---------------------------------------------------------------------------------------

/// A fake manifest dependency: (name, kind, optional).
type FakeDep<'a> = (&'a str, Option<&'a str>, bool);

/// A metadata document with the given packages (name, [(dependency, kind, optional)]), every
/// package whose name starts with `decision-` a workspace member.
fn fake_metadata(packages: &[(&str, &[FakeDep<'_>])]) -> Value {
    let id = |name: &str| format!("fake#{name}@0.1.0");
    let mut listed: BTreeSet<&str> = packages.iter().map(|(name, _)| *name).collect();
    for (_, deps) in packages {
        listed.extend(deps.iter().map(|(dep, _, _)| *dep));
    }
    let manifests: BTreeMap<&str, &[FakeDep<'_>]> = packages.iter().copied().collect();
    let package_list: Vec<Value> = listed
        .iter()
        .map(|name| {
            let deps = manifests.get(name).copied().unwrap_or(&[]);
            json!({
                "id": id(name),
                "name": name,
                "features": {},
                "dependencies": deps.iter().map(|(dep, kind, optional)| json!({
                    "name": dep, "kind": kind, "optional": optional,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let nodes: Vec<Value> = listed
        .iter()
        .map(|name| {
            let deps = manifests.get(name).copied().unwrap_or(&[]);
            json!({
                "id": id(name),
                "deps": deps.iter().map(|(dep, kind, _)| json!({
                    "pkg": id(dep), "dep_kinds": [{ "kind": kind, "target": null }],
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let members: Vec<String> = listed.iter().filter(|n| n.starts_with("decision-")).map(|n| id(n)).collect();
    json!({ "packages": package_list, "resolve": { "nodes": nodes }, "workspace_members": members })
}

#[test]
fn a_dependency_that_points_up_or_sideways_is_reported() {
    let upward = fake_metadata(&[
        ("decision-core", &[("decision-runtime", None, false)]),
        ("decision-runtime", &[("decision-core", None, false)]),
        ("decision-cli", &[("decision-runtime", None, false), ("decision-wasm", Some("dev"), false)]),
        ("decision-wasm", &[("decision-runtime", None, false)]),
    ]);
    // The CLI and wasm are entrances: depending on a layer crate rather than the facade is
    // reported too.
    assert_eq!(
        layering_violations(&upward),
        [
            "decision-cli says it depends on [\"decision\", \"decision-coding-host\", \"decision-mcp\", \"decision-lsp\", \"decision-export\"] only, but depends on decision-runtime",
            "decision-cli (layer 6) depends on decision-wasm (layer 6)",
            "decision-core (layer 0) depends on decision-runtime (layer 2)",
            "decision-wasm says it depends on [\"decision\"] only, but depends on decision-runtime",
        ]
    );
    let example = fake_metadata(&[
        ("decision-core", &[]),
        ("decision-runtime", &[("decision-core", None, false)]),
        ("decision-external-host", &[("decision-runtime", None, false), ("decision-core", None, false)]),
    ]);
    assert_eq!(
        layering_violations(&example),
        ["decision-external-host says it depends on [\"decision-core\"] only, but depends on decision-runtime"]
    );
    let server = fake_metadata(&[
        ("decision-runtime", &[]),
        ("decision", &[("decision-runtime", None, false)]),
        ("decision-lsp", &[("decision", None, false), ("decision-runtime", None, false)]),
        ("decision-cli", &[("decision-lsp", None, false)]),
    ]);
    assert_eq!(
        layering_violations(&server),
        ["decision-lsp says it depends on [\"decision\"] only, but depends on decision-runtime"]
    );
    let fine = fake_metadata(&[
        ("decision-core", &[]),
        ("decision-runtime", &[("decision-core", None, false)]),
        ("decision-external-host", &[("decision-core", None, false), ("decision-runtime", Some("dev"), false)]),
    ]);
    assert_eq!(layering_violations(&fine), Vec::<String>::new());
}

#[test]
fn an_impure_crate_anywhere_in_the_closure_is_reported_with_its_chain() {
    let metadata = fake_metadata(&[
        ("decision-core", &[("serde_json", None, false), ("mimalloc", Some("dev"), false)]),
        ("serde_json", &[("helper", None, false)]),
        ("helper", &[("ureq", None, false)]),
        ("ureq", &[("rustls", None, false)]),
    ]);
    assert_eq!(
        impure_dependencies(&metadata, "decision-core"),
        ["decision-core → serde_json → helper → ureq → rustls", "decision-core → serde_json → helper → ureq"]
    );
    let pure = fake_metadata(&[("decision-core", &[("serde_json", None, false), ("mimalloc", Some("dev"), false)])]);
    assert_eq!(impure_dependencies(&pure, "decision-core"), Vec::<String>::new(), "dev-dependencies do not count");
}

#[test]
fn without_default_features_only_optional_dependencies_are_left_out() {
    let metadata = fake_metadata(&[
        ("decision-core", &[]),
        (
            "decision-runtime",
            &[("decision-core", None, false), ("ureq", None, true), ("cap-std", None, false), ("memchr", None, false)],
        ),
    ]);
    assert_eq!(
        impure_dependencies_without_default_features(&metadata, "decision-runtime"),
        ["decision-runtime → cap-std"]
    );
    let pure = fake_metadata(&[
        ("decision-core", &[]),
        ("decision-runtime", &[("decision-core", None, false), ("ureq", None, true)]),
    ]);
    assert_eq!(impure_dependencies_without_default_features(&pure, "decision-runtime"), Vec::<String>::new());
    assert_eq!(impure_dependencies(&pure, "decision-runtime"), ["decision-runtime → ureq"], "with the feature on");
}

#[test]
fn impure_std_modules_are_found_in_paths_and_groups_but_not_in_comments() {
    let source = "\
use std::fmt;
use std::{collections::BTreeMap, fs};
// std::net is mentioned here only
fn f() { let _ = std::time::Instant::now(); } // and std::thread here
use std::{ process::Command, io };
let x = std::fsx;
";
    assert_eq!(
        impure_std_uses(source),
        [(2, "std::fs".to_string()), (4, "std::time".to_string()), (5, "std::process".to_string())]
    );
    assert_eq!(impure_std_uses("use std::collections::BTreeMap;\nuse std::fmt::Write;\n"), []);
}

#[test]
fn modules_that_import_each_other_are_reported_and_a_parent_using_its_child_is_not() {
    let source = |module: &[&str], text: &str| (module.iter().map(|m| m.to_string()).collect(), text.to_string());
    let circle = [
        source(&[], "mod graph; mod log; mod decide;"),
        source(&["graph"], "mod exec; mod model; pub use exec::Run;"),
        source(&["graph", "exec"], "use super::model::Step; use crate::decide::Decider;"),
        source(&["graph", "model"], "use super::exec::Invocation; // use crate::log::x in a comment"),
        source(&["decide"], "use crate::log::Event;"),
        source(&["log"], "fn f() -> crate::decide::Decision { todo() }"),
    ];
    assert_eq!(module_circles(&circle), ["decide ↔ log", "graph::exec ↔ graph::model"]);
    let down = [
        source(&[], "mod graph; mod log;"),
        source(&["graph"], "mod exec; use exec::Run; use crate::log::Event;"),
        source(&["graph", "exec"], "use super::super::log::Event; use super::Helper; use my_crate::graph::x;"),
        source(&["log"], "#[cfg(test)]\nmod tests { use crate::graph::Run; }"),
    ];
    assert_eq!(module_circles(&down), Vec::<String>::new());
}

#[test]
fn a_whole_module_or_a_glob_re_exported_by_the_facade_is_reported() {
    let root = workspace_root();
    let source = "
pub use decision_runtime::api; // the door: allowed
pub use decision_core::{check, Contract};
pub mod log {
    pub use decision_runtime::log::{approval, SessionLog as Log, replay_file};
    pub use decision_protocol::digest::*;
}
";
    assert_eq!(
        pub_use_paths(source),
        [
            "decision_runtime::api",
            "decision_core::check",
            "decision_core::Contract",
            "decision_runtime::log::approval",
            "decision_runtime::log::SessionLog",
            "decision_runtime::log::replay_file",
            "decision_protocol::digest::*",
        ]
    );
    assert_eq!(
        whole_module_exports(source, |path| names_a_layer_module(&root, path)),
        ["decision_core::check", "decision_runtime::log::approval", "decision_protocol::digest::*"]
    );
    // A function named like a private module of its parent (`digest`'s `stringify`) is an item.
    let curated = "pub use decision_core::check::{check, Report};\npub use decision_runtime::log::approval::verify_log;\npub use decision_protocol::digest::stringify;";
    assert_eq!(whole_module_exports(curated, |path| names_a_layer_module(&root, path)), Vec::<String>::new());
}

#[test]
fn a_scanner_module_that_reports_a_block_rule_problem_is_reported() {
    let source = |module: &[&str], text: &str| (module.iter().map(|m| m.to_string()).collect(), text.to_string());
    let rules = "self.report(ParseProblem::KindMissing { block: id }, heading); ParseProblem::ChoiceFew { .. }";
    let scanner = [
        source(&["syntax", "block", "lines"], "self.report(ParseProblem::DuplicateAsk { .. }, span);"),
        source(
            &["syntax", "block"],
            "if !self.saw_kind { self.report(ParseProblem::KindMissing { block: self.id }, h) }",
        ),
        // Where the problems are defined, and the checker itself, are not the scanner.
        source(&["syntax", "problem"], "ParseProblem::KindMissing { .. } => \"DC0101\","),
        source(&["check", "lints"], "ParseProblem::ChoiceFew"),
    ];
    assert_eq!(whole_block_problems_in_the_scanner(rules, &scanner), ["syntax::block: KindMissing"]);
    let clean = [source(&["syntax", "block", "lines"], "self.report(ParseProblem::DuplicateAsk { .. }, span);")];
    assert_eq!(whole_block_problems_in_the_scanner(rules, &clean), Vec::<String>::new());
    assert!(builds_a_block("let block = Block { id, span };"));
    assert!(!builds_a_block("let scanned = ScannedBlock { id, heading };"));
}
