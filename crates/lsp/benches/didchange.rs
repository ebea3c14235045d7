//! Diagnostics after a change, as an editor sees them: the time from writing a
//! `textDocument/didChange` to reading its `textDocument/publishDiagnostics`, over the
//! server's own framing on a pipe (the server runs as `decision lsp` runs it, on a thread).
//! Targets: ≤ 5 ms for the bundled coding-agent contract, ≤ 50 ms for a 2,000-block one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// An editor's end of the server's stdio.
struct Editor {
    to_server: std::io::PipeWriter,
    from_server: BufReader<std::io::PipeReader>,
    version: i64,
    /// The end of the document's first line, in UTF-16 units: where the keystroke goes.
    column: usize,
}

impl Editor {
    fn start() -> Editor {
        let (server_in, to_server) = std::io::pipe().unwrap();
        let (from_server, server_out) = std::io::pipe().unwrap();
        std::thread::spawn(move || decision_lsp::serve(BufReader::new(server_in), server_out, Default::default()));
        let mut editor = Editor { to_server, from_server: BufReader::new(from_server), version: 1, column: 0 };
        editor.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
        editor.read_until(|m| m["id"] == 1);
        editor.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        editor
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.to_server, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.to_server.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.from_server.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.from_server.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn read_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.read();
            if wanted(&message) {
                return message;
            }
        }
    }

    fn open(&mut self, text: &str) {
        self.column = text.lines().next().unwrap_or_default().encode_utf16().count();
        let document =
            json!({"uri": "file:///bench/DECISION.md", "languageId": "decision", "version": 1, "text": text});
        self.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}));
        self.read_until(|m| m["method"] == "textDocument/publishDiagnostics");
    }

    /// One keystroke at the end of the first line and back, alternately: the whole document
    /// is checked again each time. Returns when its diagnostics arrive.
    fn change(&mut self) {
        self.version += 1;
        let text = if self.version % 2 == 0 { " " } else { "" };
        let (start, end) =
            if self.version % 2 == 0 { (self.column, self.column) } else { (self.column, self.column + 1) };
        let range = json!({"start": {"line": 0, "character": start}, "end": {"line": 0, "character": end}});
        let version = self.version;
        self.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "file:///bench/DECISION.md", "version": version},
            "contentChanges": [{"range": range, "text": text}]}}));
        self.read_until(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version);
    }
}

/// A contract of `blocks` blocks, each a small noul block with a frame and a policy.
fn many_blocks(blocks: usize) -> String {
    let mut text = String::from("schema: decision-contract/v1\n");
    for i in 0..blocks {
        text.push_str(&format!(
            "\n## check_{i}\nkind: noul\nwhen: after-tool —— after step {i}\nask: Did step {i} work?\n\
             - true — the result says it worked\n- false — it did not\nframe:\n  + lastResult 400 resultMaybe —— what the step returned\n\
             policy:\n  - prob:check_{i} >= 0.6 → continue\n  - else → stop\n"
        ));
    }
    text
}

fn didchange(c: &mut Criterion) {
    let bundled = include_str!("../../../examples/coding-agent/DECISION.md");
    let mut editor = Editor::start();
    editor.open(bundled);
    c.bench_function("lsp/didchange_to_diagnostics/coding-agent", |b| b.iter(|| editor.change()));
    let large = many_blocks(2000);
    let mut editor = Editor::start();
    editor.open(&large);
    let mut group = c.benchmark_group("lsp/didchange_to_diagnostics");
    group.sample_size(20);
    group.bench_function("2000-blocks", |b| b.iter(|| editor.change()));
    group.finish();
}

criterion_group!(benches, didchange);
criterion_main!(benches);
