//! The latency `decision mcp` adds to a forwarded `tools/call`, side by side with calling the
//! same server directly, in one run.
//!
//! Two copies of the upstream server run at once: one spoken to directly, one behind the
//! gateway (`decision mcp --log LOG -- SERVER`, the bundled contract and the `heuristic`
//! provider). This process is the client on both: it writes one JSON-RPC line and reads the
//! answer, so its own cost is a few microseconds, and it alternates the two paths call by call
//! so that the machine's drift falls on both alike. It prints the median and the 99th
//! percentile of each path and of their difference.
//!
//! By default the upstream is the gateway tests' small Python server and the call is its
//! read-only `read_note`; `MCP_BENCH_SERVER` (a command line, split on spaces) and
//! `MCP_BENCH_CALL` (the `params` of the `tools/call`, as JSON) measure another server, e.g.
//! the official filesystem server. `MCP_BENCH_CALLS` sets the number of calls on each path
//! (default 2,000). The whole run is bounded: a server that stops answering ends it after
//! 120 s with an error.
//!
//! `cargo bench -p decision-cli --bench mcp_latency`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The longest the whole run may take.
const DEADLINE: Duration = Duration::from_secs(120);
/// Calls on each path before measuring (process start-up, caches, the gateway's first frame).
const WARM_UP: usize = 100;

/// One MCP server on stdio, spoken to line by line.
struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Peer {
    fn start(program: &str, args: &[String]) -> Peer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Peer { child, input, output, next_id: 0 }
    }

    /// Sends a request and returns the response line (notifications the server sends in
    /// between are skipped).
    fn request(&mut self, method: &str, params: &serde_json::Value) -> String {
        self.next_id += 1;
        let id = self.next_id;
        let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
        let mut answer = String::new();
        loop {
            answer.clear();
            assert!(self.output.read_line(&mut answer).unwrap() > 0, "the server closed its output");
            let value: serde_json::Value = serde_json::from_str(&answer).expect("a JSON-RPC line");
            if value.get("id").and_then(serde_json::Value::as_u64) == Some(id) {
                return answer;
            }
        }
    }

    fn notify(&mut self, method: &str) {
        writeln!(self.input, "{}", serde_json::json!({"jsonrpc": "2.0", "method": method})).unwrap();
        self.input.flush().unwrap();
    }

    /// initialize, initialized and one tools/list (the gateway pins the definitions from it).
    fn open(&mut self) {
        let client = serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp-latency-bench", "version": "1"}
        });
        self.request("initialize", &client);
        self.notify("notifications/initialized");
        self.request("tools/list", &serde_json::json!({}));
    }

    /// One timed call; fails the run when the call was not forwarded and answered.
    fn timed_call(&mut self, params: &serde_json::Value) -> Duration {
        let started = Instant::now();
        let answer = self.request("tools/call", params);
        let took = started.elapsed();
        let value: serde_json::Value = serde_json::from_str(&answer).unwrap();
        let result = value.get("result").unwrap_or_else(|| panic!("the call failed: {answer}"));
        assert_ne!(result.get("isError"), Some(&serde_json::Value::Bool(true)), "the call was refused: {answer}");
        took
    }

    fn close(mut self) {
        drop(self.input);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value at `fraction` of the sorted `values` (nearest rank).
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    let rank = ((sorted.len() as f64) * fraction).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summary(label: &str, mut micros: Vec<f64>) -> (f64, f64) {
    micros.sort_by(f64::total_cmp);
    let (median, p99) = (percentile(&micros, 0.5), percentile(&micros, 0.99));
    println!("  {label:<28} median {:>8.1} µs   p99 {:>8.1} µs", median, p99);
    (median, p99)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter or other flags are not used by this bench.
    let calls: usize = std::env::var("MCP_BENCH_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(2_000);
    let server: Vec<String> = match std::env::var("MCP_BENCH_SERVER") {
        Ok(line) => line.split_whitespace().map(str::to_owned).collect(),
        Err(_) => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/data/fake_server.py");
            vec!["python3".to_owned(), script.display().to_string()]
        }
    };
    let params: serde_json::Value = match std::env::var("MCP_BENCH_CALL") {
        Ok(json) => serde_json::from_str(&json).expect("MCP_BENCH_CALL is the JSON params of a tools/call"),
        Err(_) => serde_json::json!({"name": "read_note", "arguments": {"name": "a"}}),
    };
    // A server that stops answering must not hold the run (and the machine) forever.
    std::thread::spawn(|| {
        std::thread::sleep(DEADLINE);
        eprintln!("mcp_latency: the run took longer than {} s; stopped", DEADLINE.as_secs());
        std::process::exit(1);
    });

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gateway.jsonl");
    let (program, args) = server.split_first().expect("MCP_BENCH_SERVER names a command");
    let mut gateway_args = vec!["mcp".to_owned(), "--log".to_owned(), log.display().to_string(), "--".to_owned()];
    gateway_args.extend(server.iter().cloned());
    let mut direct = Peer::start(program, args);
    let mut gateway = Peer::start(env!("CARGO_BIN_EXE_decision"), &gateway_args);
    direct.open();
    gateway.open();
    for _ in 0..WARM_UP {
        direct.timed_call(&params);
        gateway.timed_call(&params);
    }

    let (mut direct_us, mut gateway_us, mut added_us) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..calls {
        // Alternate which path goes first, so neither always follows the other.
        let (d, g) = if i % 2 == 0 {
            let d = direct.timed_call(&params);
            (d, gateway.timed_call(&params))
        } else {
            let g = gateway.timed_call(&params);
            (direct.timed_call(&params), g)
        };
        let (d, g) = (d.as_secs_f64() * 1e6, g.as_secs_f64() * 1e6);
        direct_us.push(d);
        gateway_us.push(g);
        added_us.push(g - d);
    }
    direct.close();
    gateway.close();

    // The server's command line with each path shortened to its last part.
    let shown: Vec<&str> = server.iter().map(|word| word.rsplit('/').next().unwrap_or(word)).collect();
    println!("mcp_latency: {calls} calls on each path, server `{}`, params {params}", shown.join(" "));
    let (direct_median, direct_p99) = summary("direct", direct_us);
    let (gateway_median, gateway_p99) = summary("through decision mcp", gateway_us);
    summary("added, call by call", added_us);
    println!(
        "  added, of the distributions   median {:>+8.1} µs   p99 {:>+8.1} µs",
        gateway_median - direct_median,
        gateway_p99 - direct_p99
    );
    let verified = Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(["replay", "--require-seal", "--format", "json"])
        .arg(&log)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(verified.success(), "the gateway's log does not verify");
    println!("  the gateway's log verifies (decision replay --require-seal)");
}
