//! Attacks on approvals and resume by someone who can write the session log, each written as
//! the attacker would write it: lines added or changed by hand, with the hash chain recomputed
//! (`seq` and `prev` of every line after the change). Each must be refused — by `decision
//! approve`, `decision resume` (before anything runs) or `decision replay` — and nothing may
//! run. Also: one writer at a time, the log out of the tools' reach, a head that keeps
//! verifying an extended log, every byte counted, and key handling.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::TempDir;
use serde_json::Value;
use sha2::{Digest, Sha256};

const KEY: &str = "a-log-key-of-32-bytes-for-tests!";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `decision ARGS`, with the log key set to `key` (or unset), no terminal, no generator.
fn decision(args: &[&str], key: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_decision"));
    command.args(args).env_remove("DECISION_GENERATOR_URL").stdin(Stdio::null());
    match key {
        Some(key) => command.env("DECISION_LOG_KEY", key),
        None => command.env_remove("DECISION_LOG_KEY"),
    };
    command.output().unwrap()
}

fn hex(bytes: &[u8]) -> String {
    const_hex::encode(bytes)
}

/// A run of "Delete keep.txt" halted awaiting approval (deletion allowed, no terminal).
struct Halted {
    dir: TempDir,
    log: PathBuf,
    key: Option<&'static str>,
}

impl Halted {
    fn new(tag: &str, key: Option<&'static str>) -> Halted {
        Halted::named(tag, "run", key)
    }

    fn named(tag: &str, name: &str, key: Option<&'static str>) -> Halted {
        let dir = TempDir::new(tag);
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("keep.txt"), "precious").unwrap();
        std::fs::write(ws.join("notes.md"), "notes").unwrap();
        let log = dir.path().join(format!("{name}.jsonl"));
        let out = decision(
            &["run", "--task", "Delete keep.txt", "--workdir", s(&ws), "--allow-delete", "--log", s(&log), "--quiet"],
            key,
        );
        assert!(text(&out.stdout).contains("halt: awaiting_approval"), "{}{}", text(&out.stdout), text(&out.stderr));
        Halted { dir, log, key }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn id(&self) -> String {
        let out = decision(&["approvals", s(&self.log), "--format", "json"], self.key);
        let pending: Value = serde_json::from_slice(&out.stdout).unwrap();
        pending[0]["id"].as_str().unwrap().to_owned()
    }

    fn exists(&self, name: &str) -> bool {
        self.ws().join(name).exists()
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log).unwrap().lines().map(str::to_owned).collect()
    }

    /// Writes `lines` back with the chain recomputed from line `from` (0-based) on.
    fn write_rechained(&self, mut lines: Vec<String>, from: usize) {
        rechain(&mut lines, from);
        std::fs::write(&self.log, lines.join("\n") + "\n").unwrap();
    }

    /// Resume with the work directory given again (deletion permitted).
    fn resume(&self, key: Option<&str>) -> Output {
        decision(&["resume", s(&self.log), "--workdir", s(&self.ws()), "--allow-delete", "--quiet"], key)
    }
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What an attacker does after changing a line: every later line gets the `seq` of its place
/// and the SHA-256 of the line before it, so the chain holds again.
fn rechain(lines: &mut [String], from: usize) {
    for i in from.max(1)..lines.len() {
        let prev = hex(&Sha256::digest(lines[i - 1].as_bytes()));
        let line = &lines[i];
        let cut = line.rfind(",\"seq\":").expect("a chained line");
        lines[i] = format!("{},\"seq\":{i},\"prev\":\"{prev}\"}}", &line[..cut]);
    }
}

/// An event line as the writer frames it (its chain fields are filled in by [`rechain`]).
fn event_line(run: u64, e: &Value) -> String {
    format!("{{\"kind\":\"event\",\"run\":{run},\"at\":1,\"e\":{e},\"seq\":0,\"prev\":\"\"}}")
}

fn refused(out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "refused: {stderr}{}", text(&out.stdout));
    assert!(stderr.contains(needle), "expected {needle:?} in: {stderr}");
}

#[test]
fn on_a_keyed_log_approve_without_the_key_refuses_and_writes_nothing() {
    let run = Halted::new("attack-nokey", Some(KEY));
    let before = std::fs::read(&run.log).unwrap();
    let out = decision(&["approve", s(&run.log), &run.id()], None);
    refused(&out, "the log is keyed and $DECISION_LOG_KEY is not set");
    assert_eq!(std::fs::read(&run.log).unwrap(), before, "nothing was written");
    // A resume without the key refuses too, and so does replay with --require-key.
    refused(&run.resume(None), "the log is keyed");
    let replay = decision(&["replay", "--require-key", s(&run.log)], None);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stdout));
    assert!(run.exists("keep.txt"));
}

#[test]
fn a_hand_written_answer_with_the_chain_recomputed_is_refused_and_fails_replay() {
    let run = Halted::new("attack-forged", Some(KEY));
    let id = run.id();
    let pending: Value =
        serde_json::from_str(run.lines().iter().find(|l| l.contains("\"approval:pending\"")).unwrap()).unwrap();
    let print = pending["e"]["fingerprint"].as_str().unwrap();
    let mut lines = run.lines();
    let answer = serde_json::json!({"type": "approval:answer", "id": id, "fingerprint": print, "approved": true,
        "allowsFingerprint": print, "at": 1, "keyed": true, "binding": "00".repeat(32)});
    lines.push(event_line(0, &answer));
    // A seal too, as the writer ends a run: without the key it cannot carry a valid MAC.
    lines.push(format!("{{\"kind\":\"seal\",\"run\":0,\"lines\":{},\"seq\":0,\"prev\":\"\"}}", lines.len()));
    let from = lines.len() - 2;
    run.write_rechained(lines, from);
    let out = run.resume(Some(KEY));
    refused(&out, "nothing was resumed");
    assert!(run.exists("keep.txt"), "nothing ran");
    let replay = decision(&["replay", "--require-seal", "--require-chain", s(&run.log)], Some(KEY));
    assert_eq!(replay.status.code(), Some(1), "the forged seal fails replay: {}", text(&replay.stdout));
}

#[test]
fn an_answer_whose_input_was_changed_is_refused() {
    let run = Halted::new("attack-input", Some(KEY));
    let out = decision(&["approve", s(&run.log), &run.id()], Some(KEY));
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The attacker makes the approval allow deleting notes.md instead: the modified input and
    // the fingerprint it allows, then the chain recomputed.
    let notes = hex(&Sha256::digest(br#"{"tool":"delete_file","input":"notes.md"}"#));
    let mut lines = run.lines();
    let at = lines.iter().position(|l| l.contains("\"approval:answer\"")).unwrap();
    let mut answer: Value = serde_json::from_str(&lines[at]).unwrap();
    answer["e"]["input"] = Value::from("notes.md");
    answer["e"]["allowsFingerprint"] = Value::from(notes);
    lines[at] = event_line(0, &answer["e"]);
    run.write_rechained(lines, at);
    refused(&run.resume(Some(KEY)), "nothing was resumed");
    assert!(run.exists("notes.md") && run.exists("keep.txt"), "nothing was deleted");
}

#[test]
fn an_answer_copied_from_another_session_is_refused() {
    // Two sessions of the same task (same approval id), unkeyed: the answer of one is copied
    // into the other, chain recomputed. Its binding names the other session and pending line.
    let a = Halted::named("attack-copy-a", "a", None);
    let b = Halted::named("attack-copy-b", "b", None);
    assert_eq!(a.id(), b.id(), "the same task asks the same approval");
    let out = decision(&["approve", s(&a.log), &a.id()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let copied = a.lines().into_iter().find(|l| l.contains("\"approval:answer\"")).unwrap();
    let mut lines = b.lines();
    lines.push(copied);
    let from = lines.len() - 1;
    b.write_rechained(lines, from);
    let out = b.resume(None);
    refused(&out, "the answer's binding does not hold");
    assert!(b.exists("keep.txt"), "nothing ran");
    // Replay reports it as an approval problem.
    let replay = decision(&["replay", s(&b.log)], None);
    assert_eq!(replay.status.code(), Some(1));
    assert!(text(&replay.stdout).contains("binding does not hold"), "{}", text(&replay.stdout));
}

#[test]
fn a_changed_request_digest_is_refused() {
    let run = Halted::new("attack-digest", None);
    let out = decision(&["approve", s(&run.log), &run.id()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut lines = run.lines();
    let at = lines.iter().position(|l| l.contains("\"approval:pending\"")).unwrap();
    let digest = serde_json::from_str::<Value>(&lines[at]).unwrap()["e"]["requestDigest"].as_str().unwrap().to_owned();
    lines[at] = lines[at].replace(&digest, "0000000000000000");
    run.write_rechained(lines, at);
    refused(&run.resume(None), "binding does not hold");
    assert!(run.exists("keep.txt"));
}

#[test]
fn resume_takes_nothing_from_unverified_lines() {
    // Two hand-written lines, no chain: a run:start naming another directory with writing
    // allowed, and a resumable halt.
    let dir = TempDir::new("attack-crafted");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let start = serde_json::json!({"type": "run:start", "task": "Write a.txt with hello", "cwd": s(&elsewhere),
        "allowWrite": true, "maxSteps": 4});
    let end = serde_json::json!({"type": "run:end", "halt": "max_steps", "steps": 0});
    let log = dir.path().join("crafted.jsonl");
    let lines = [start, end].map(|e| format!("{{\"kind\":\"event\",\"run\":0,\"at\":1,\"e\":{e}}}"));
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    refused(&decision(&["resume", s(&log)], None), "nothing was resumed");
    assert!(!elsewhere.join("a.txt").exists());

    // On a keyed log, a run:start appended after the last keyed seal (chain recomputed) is
    // not authenticated: refused.
    let run = Halted::new("attack-crafted-keyed", Some(KEY));
    let mut lines = run.lines();
    lines.push(event_line(
        1,
        &serde_json::json!({"type": "run:start", "task": "Delete notes.md",
        "cwd": s(&elsewhere), "allowDelete": true}),
    ));
    lines.push(event_line(1, &serde_json::json!({"type": "run:end", "halt": "max_steps", "steps": 0})));
    let from = lines.len() - 2;
    run.write_rechained(lines, from);
    let out = decision(&["resume", s(&run.log)], Some(KEY));
    refused(&out, "after the last keyed seal");

    // Unkeyed, the work directory is the operator's, and must be the recorded one.
    let plain = Halted::new("attack-workdir", None);
    assert!(decision(&["approve", s(&plain.log), &plain.id()], None).status.success());
    refused(&decision(&["resume", s(&plain.log)], None), "give them again");
    refused(&decision(&["resume", s(&plain.log), "--workdir", s(&elsewhere)], None), "is not the work directory");
}

#[test]
fn permissions_are_enforced_when_the_tool_runs() {
    let run = Halted::new("attack-permission", None);
    let out = decision(&["approve", s(&run.log), &run.id()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Resumed without --allow-delete: the approved delete reaches the tool, which refuses it.
    let out = decision(&["resume", s(&run.log), "--workdir", s(&run.ws()), "--quiet"], None);
    assert!(run.exists("keep.txt"), "not deleted: {}{}", text(&out.stdout), text(&out.stderr));
    let log = std::fs::read_to_string(&run.log).unwrap();
    assert!(log.contains("delete_file is not permitted in this run"), "the refusal is the call's result");
}

#[test]
fn a_head_is_a_prefix_check() {
    let run = Halted::new("attack-head", None);
    let out = decision(&["replay", s(&run.log)], None);
    let head = text(&out.stdout).lines().find_map(|l| l.strip_prefix("head: ")).unwrap().to_owned();
    let out = decision(&["approve", s(&run.log), &run.id()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run.resume(None);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    // The head kept after the first run verifies the extended log.
    let out = decision(&["replay", "--head", &head, s(&run.log)], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // A byte changed before it (chain recomputed) fails it, naming the line.
    let mut lines = run.lines();
    lines[1] = lines[1].replacen("\"at\":", "\"at\":1", 1);
    run.write_rechained(lines, 1);
    let out = decision(&["replay", "--head", &head, s(&run.log)], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("its SHA-256 is not the head's"), "{}", text(&out.stdout));
    refused(&decision(&["resume", s(&run.log), "--workdir", s(&run.ws()), "--head", &head], None), "not the head's");
}

#[test]
fn a_blank_line_anywhere_is_an_alteration() {
    let run = Halted::new("attack-blank", Some(KEY));
    let out = decision(&["replay", s(&run.log)], Some(KEY));
    let head = text(&out.stdout).lines().find_map(|l| l.strip_prefix("head: ")).unwrap().to_owned();
    for (at, blank) in [(1, ""), (3, "   "), (usize::MAX, "\t")] {
        let mut lines = run.lines();
        let at = at.min(lines.len());
        lines.insert(at, blank.to_owned());
        let altered = run.dir.path().join(format!("blank-{at}.jsonl"));
        std::fs::write(&altered, lines.join("\n") + "\n").unwrap();
        let out = decision(&["replay", "--head", &head, s(&altered)], Some(KEY));
        assert_eq!(out.status.code(), Some(1), "line {at}: {}", text(&out.stdout));
        assert!(text(&out.stdout).contains("chain: broken"), "{}", text(&out.stdout));
    }
}

#[test]
fn one_writer_at_a_time() {
    let run = Halted::new("attack-lock", None);
    let id = run.id();
    // Another writer holds the log (as a running `resume` does).
    let holder = std::fs::OpenOptions::new().append(true).open(&run.log).unwrap();
    holder.try_lock().unwrap();
    let before = std::fs::read(&run.log).unwrap();
    refused(&decision(&["approve", s(&run.log), &id], None), "another process is writing this log");
    refused(&run.resume(None), "another process is writing this log");
    assert_eq!(std::fs::read(&run.log).unwrap(), before);
    holder.unlock().unwrap();
    drop(holder);
    let out = decision(&["approve", s(&run.log), &id], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_log_inside_the_work_directory_is_refused() {
    let dir = TempDir::new("attack-log-inside");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let log = ws.join("run.jsonl");
    let out = decision(&["run", "--task", "List the files", "--workdir", s(&ws), "--log", s(&log)], None);
    refused(&out, "is inside the work directory");
    assert!(!log.exists());
}

#[test]
fn an_empty_key_is_an_error() {
    let dir = TempDir::new("attack-empty-key");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let log = dir.path().join("run.jsonl");
    let out = decision(&["run", "--task", "List the files", "--workdir", s(&ws), "--log", s(&log)], Some(""));
    refused(&out, "is set and empty");
    let out = decision(&["replay", s(&log)], Some(""));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn an_over_long_line_is_refused_without_being_held() {
    let run = Halted::new("attack-long", None);
    let mut lines = run.lines();
    let long =
        format!("{{\"kind\":\"event\",\"run\":0,\"e\":{{\"type\":\"x\",\"pad\":\"{}\"}}}}", "x".repeat(17 << 20));
    lines.insert(2, long);
    std::fs::write(&run.log, lines.join("\n") + "\n").unwrap();
    refused(&run.resume(None), "line 3: ");
    let out = decision(&["approvals", s(&run.log), "--format", "json"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = decision(&["replay", "--max-line", "4096", s(&run.log)], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[test]
fn an_approval_id_that_carries_escape_sequences_never_reaches_the_terminal_raw() {
    let run = Halted::new("attack-escape-id", None);
    let id = run.id();
    let evil = format!("{id}\\u001b[2J\\u001b]0;owned\\u0007");
    let lines: Vec<String> =
        run.lines().iter().map(|l| l.replace(&format!("\"{id}\""), &format!("\"{evil}\""))).collect();
    run.write_rechained(lines, 1);
    let out = run.resume(None);
    assert_eq!(out.status.code(), Some(2), "{}{}", text(&out.stdout), text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&id), "the id is named: {stderr}");
    assert!(stderr.contains("\\u{1b}[2J"), "shown escaped: {stderr}");
    for stream in [&out.stdout, &out.stderr] {
        assert!(!stream.iter().any(|b| *b == 0x1b || *b == 0x07), "raw control bytes: {stderr}");
    }
    assert!(run.exists("keep.txt"), "nothing ran");
}
