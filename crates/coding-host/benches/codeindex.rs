//! The code index's cost on real and large trees, as its tools read them in the worst case (a
//! name found in every file, so every source file is parsed):
//!
//! * `codeindex/serde_json`: serde_json's sources from the cargo registry (the newest version
//!   there; skipped with a printed line when absent). Target: at most 150 ms.
//! * `codeindex/generated_10k_files`: a generated tree of 10,000 source files in five
//!   languages. Target: at most 3 s.
//!
//! After the runs the process's peak resident memory (`VmHWM`) is printed. Target: at most
//! 200 MB.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use decision_coding_host::index_tree;

#[path = "../tests/registry/mod.rs"]
mod registry;
use registry::registry_crate;

/// As in the `decision` binary, which runs the index.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One generated source file of about 40 lines in the language of `index`.
fn generated_file(index: usize) -> (String, String) {
    let dir = format!("pkg{:03}", index / 100);
    match index % 5 {
        0 => (
            format!("{dir}/m{index}.rs"),
            format!(
                "/// Item {index}.\npub struct S{index} {{ a: u32, b: String }}\n\nimpl S{index} {{\n    /// New.\n    pub fn new(a: u32) -> Self {{\n        S{index} {{ a, b: String::new() }}\n    }}\n}}\n\npub enum E{index} {{ One, Two(u8) }}\n\n{}",
                "// filler line\n".repeat(28)
            ),
        ),
        1 => (
            format!("{dir}/m{index}.py"),
            format!(
                "class C{index}:\n    \"\"\"Item.\"\"\"\n\n    def run(self, x):\n        return x + {index}\n\n\ndef f{index}(a, b):\n    return a * b\n{}",
                "# filler line\n".repeat(31)
            ),
        ),
        2 => (
            format!("{dir}/m{index}.ts"),
            format!(
                "export interface I{index} {{ a: number }}\nexport class K{index} {{\n  run(x: number): number {{ return x + {index}; }}\n}}\nexport function g{index}(a: number): number {{ return a; }}\n{}",
                "// filler line\n".repeat(35)
            ),
        ),
        3 => (
            format!("{dir}/m{index}.go"),
            format!(
                "package p\n\ntype T{index} struct {{ A int }}\n\nfunc (t T{index}) Run(x int) int {{ return x + {index} }}\n\nfunc H{index}(a int) int {{ return a }}\n{}",
                "// filler line\n".repeat(33)
            ),
        ),
        _ => (
            format!("{dir}/m{index}.c"),
            format!(
                "#define LIMIT{index} 128\nstruct s{index} {{ int a; }};\nint c{index}(int a) {{ return a + {index}; }}\n{}",
                "/* filler line */\n".repeat(37)
            ),
        ),
    }
}

fn generate_tree(root: &Path, files: usize) {
    for index in 0..files {
        let (path, text) = generated_file(index);
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Peak resident memory of this process, from `/proc/self/status` (Linux).
fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("codeindex");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    match registry_crate("serde_json") {
        Some(dir) => {
            let found = index_tree(&dir).unwrap();
            assert!(found.whole_tree && found.symbols > 500, "{found:?}");
            println!(
                "serde_json ({}): {} source files, {} definitions",
                dir.display(),
                found.source_files,
                found.symbols
            );
            group.bench_function("serde_json", |b| b.iter(|| index_tree(&dir).unwrap()));
        }
        None => println!("codeindex/serde_json skipped: no serde_json sources in the cargo registry"),
    }
    // Generated only when its benchmark runs (a filtered run of the other skips it).
    let root = std::env::temp_dir().join(format!("decision-bench-codeindex-{}", std::process::id()));
    let mut generated = false;
    group.bench_function("generated_10k_files", |b| {
        if !generated {
            let _ = std::fs::remove_dir_all(&root);
            generate_tree(&root, 10_000);
            let found = index_tree(&root).unwrap();
            assert_eq!((found.source_files, found.whole_tree), (10_000, true), "{found:?}");
            println!("generated tree: {} source files, {} definitions", found.source_files, found.symbols);
            generated = true;
        }
        b.iter(|| index_tree(&root).unwrap())
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&root);
    if let Some(mb) = peak_memory_mb() {
        println!("codeindex peak resident memory: {mb:.0} MB");
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
