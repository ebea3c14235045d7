//! The session log trusted to its last byte: the seal, the head, the chain claim and the
//! keyed seal, attacked as an editor of the log would attack them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::TempDir;
use sha2::{Digest, Sha256};

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
const TASK: &str = "Which file defines the function `apply_discount`, and what does it return?";
const KEY: &str = "an auditor's key, 16+ bytes long";

fn decision(args: &[&str], key: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_decision"));
    command.args(args).env_remove("DECISION_LOG_KEY");
    if let Some(key) = key {
        command.env("DECISION_LOG_KEY", key);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A finished run's log and the head `decision run` printed.
fn finished_run(dir: &Path, key: Option<&str>) -> (PathBuf, String) {
    let log = dir.join("run.jsonl");
    let out = decision(&["run", "--task", TASK, "--workdir", WORKSPACE, "--log", s(&log), "--quiet"], key);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let head = stdout.lines().find_map(|l| l.strip_prefix("head: ")).expect("the run prints its head");
    let head = head.split_whitespace().next().unwrap().to_owned();
    (log, head)
}

fn replay(log: &Path, extra: &[&str], key: Option<&str>) -> (Option<i32>, String) {
    let mut args = vec!["replay"];
    args.extend_from_slice(extra);
    args.push(s(log));
    let out = decision(&args, key);
    (out.status.code(), text(&out.stdout) + &text(&out.stderr))
}

fn lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap().lines().map(str::to_owned).collect()
}

fn write(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

fn hex(bytes: &[u8]) -> String {
    const_hex::encode(bytes)
}

/// What a forger without the key can do: recompute every `prev` (and the seal's) from the
/// first line on, so the chain is intact again.
fn rechain(lines: &mut [String]) {
    for i in 1..lines.len() {
        let prev = hex(&Sha256::digest(lines[i - 1].as_bytes()));
        let at = lines[i].rfind(",\"prev\":\"").unwrap();
        lines[i] = format!("{},\"prev\":\"{prev}\"}}", &lines[i][..at]);
    }
}

#[test]
fn a_finished_run_is_sealed_and_its_head_checks() {
    let tmp = TempDir::new("seal-head");
    let (log, head) = finished_run(tmp.path(), None);
    let all = lines(&log);
    assert!(all[0].contains(r#""chain":"sha256""#), "the header claims the chain: {}", all[0]);
    assert!(all.last().unwrap().starts_with(r#"{"kind":"seal","run":0,"lines":"#), "{}", all.last().unwrap());
    let (code, out) = replay(&log, &["--require-seal", "--require-chain", "--head", &head], None);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("seal: sealed (line"), "{out}");
    assert!(out.contains(&format!("head: {head}")), "{out}");
    // Another head is refused.
    let other = format!("{}:{}", head.split(':').next().unwrap(), "0".repeat(64));
    let (code, out) = replay(&log, &["--head", &other], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("--head {other}: line ")), "{out}");
    assert!(out.contains("its SHA-256 is not the head's"), "{out}");
    // The JSON report says the same.
    let (code, out) = replay(&log, &["--format", "json", "--head", &other], None);
    assert_eq!(code, Some(1), "{out}");
    let json: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let file = &json["files"][0];
    assert_eq!((file["seal"].as_str(), file["head"].as_str()), (Some("sealed"), Some(head.as_str())), "{file}");
    assert!(file["problems"][0].as_str().unwrap().starts_with(&format!("--head {other}")), "{file}");
    // A head that is not SEQ:HASH is a usage error.
    assert_eq!(replay(&log, &["--head", "12"], None).0, Some(2));
}

#[test]
fn an_edited_last_event_breaks_the_chain_and_a_rechained_one_fails_the_head() {
    let tmp = TempDir::new("seal-edit");
    let (log, head) = finished_run(tmp.path(), None);
    let mut all = lines(&log);
    let end = all.len() - 2;
    assert!(all[end].contains(r#""type":"run:end""#));
    all[end] = all[end].replace(r#""halt":"task_done""#, r#""halt":"answered_directly""#);
    let edited = tmp.path().join("edited.jsonl");
    write(&edited, &all);
    let (code, out) = replay(&edited, &[], None);
    assert_eq!(code, Some(1), "editing the run:end line breaks the seal's link: {out}");
    assert!(out.contains("chain: broken"), "{out}");
    // Recomputing the chain makes the log consistent again: only the head tells.
    rechain(&mut all);
    write(&edited, &all);
    let (code, out) = replay(&edited, &[], None);
    assert_eq!(code, Some(0), "a rechained log is self-consistent: {out}");
    let (code, out) = replay(&edited, &["--head", &head], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("its SHA-256 is not the head's"), "{out}");
}

#[test]
fn a_cut_log_is_unfinished_and_fails_require_seal() {
    let tmp = TempDir::new("seal-cut");
    let (log, head) = finished_run(tmp.path(), None);
    let all = lines(&log);
    for cut in [1, 3] {
        let short = tmp.path().join(format!("cut{cut}.jsonl"));
        write(&short, &all[..all.len() - cut]);
        let (code, out) = replay(&short, &[], None);
        assert_eq!(code, Some(0), "a crash leaves a log that still verifies: {out}");
        assert!(out.contains("seal: unfinished"), "{out}");
        let (code, out) = replay(&short, &["--require-seal"], None);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("--require-seal: the log is unfinished"), "{out}");
        assert_eq!(replay(&short, &["--head", &head], None).0, Some(1));
    }
    // A seal whose count is edited does not hold.
    let mut forged = all.clone();
    let last = forged.len() - 1;
    forged[last] = forged[last].replacen(r#""lines":"#, r#""lines":1"#, 1);
    let bad = tmp.path().join("count.jsonl");
    write(&bad, &forged);
    let (code, out) = replay(&bad, &[], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("seal: invalid") && out.contains("the seal counts"), "{out}");
}

#[test]
fn a_stripped_chain_is_missing_not_reference_written() {
    let tmp = TempDir::new("seal-strip");
    let (log, _) = finished_run(tmp.path(), None);
    let stripped: Vec<String> = lines(&log)
        .iter()
        .map(|l| {
            let l = match l.rfind(",\"prev\":\"") {
                Some(at) => format!("{}}}", &l[..at]),
                None => l.clone(),
            };
            match l.rfind(",\"seq\":") {
                Some(at) => format!("{}}}", &l[..at]),
                None => l,
            }
        })
        .collect();
    assert!(!stripped.iter().any(|l| l.contains("\"seq\"")));
    let path = tmp.path().join("stripped.jsonl");
    write(&path, &stripped);
    let (code, out) = replay(&path, &[], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("chain: missing"), "{out}");
    // Without the claim, the unchained seal line still gives it away.
    let mut unclaimed = stripped.clone();
    unclaimed[0] = unclaimed[0].replace(r#","chain":"sha256""#, "");
    write(&path, &unclaimed);
    let (code, out) = replay(&path, &[], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("the seal carries no chain fields"), "{out}");
    // Without the seal as well it looks reference-written: `--require-chain` refuses it.
    unclaimed.pop();
    write(&path, &unclaimed);
    let (code, out) = replay(&path, &[], None);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("chain: absent"), "{out}");
    let (code, out) = replay(&path, &["--require-chain"], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("--require-chain: the chain is absent"), "{out}");
}

#[test]
fn only_the_key_holder_makes_a_keyed_seal_that_verifies() {
    let tmp = TempDir::new("seal-key");
    let (log, head) = finished_run(tmp.path(), Some(KEY));
    let all = lines(&log);
    assert!(all.last().unwrap().contains(r#""mac":""#), "{}", all.last().unwrap());
    assert!(!std::fs::read_to_string(&log).unwrap().contains(KEY), "the key is never written");
    let (code, out) = replay(&log, &["--require-seal", "--head", &head], Some(KEY));
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("keyed, verified"), "{out}");
    // Without the key the seal is reported, not checked.
    let (code, out) = replay(&log, &[], None);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("keyed, not checked"), "{out}");
    // Another key fails.
    let (code, out) = replay(&log, &[], Some("someone else's key, also long"));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("MAC does not verify"), "{out}");
    // A forger rewrites an event and recomputes the whole chain: the MAC no longer verifies.
    let mut forged = all.clone();
    let end = forged.len() - 2;
    forged[end] = forged[end].replace(r#""halt":"task_done""#, r#""halt":"answered_directly""#);
    rechain(&mut forged);
    let path = tmp.path().join("forged.jsonl");
    write(&path, &forged);
    let (code, out) = replay(&path, &[], Some(KEY));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("seal: invalid"), "{out}");
    // Dropping the MAC does not help: with a key, an unkeyed seal is refused.
    let last = forged.len() - 1;
    let at = forged[last].find(",\"mac\":").unwrap();
    forged[last] = format!("{}{}", &forged[last][..at], &forged[last][at + 73..]);
    write(&path, &forged);
    let (code, out) = replay(&path, &[], Some(KEY));
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("the seal carries no MAC"), "{out}");
    // A key too short to be safe is refused before anything runs.
    assert_eq!(replay(&log, &[], Some("short")).0, Some(2));
}

const CONTRACT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");

#[test]
fn an_action_that_does_not_follow_from_its_answers_is_a_mismatch_given_the_contract() {
    let tmp = TempDir::new("seal-policy");
    let (log, _) = finished_run(tmp.path(), None);
    let (code, out) = replay(&log, &["--contract", CONTRACT, "--verbose"], None);
    assert_eq!(code, Some(0), "every recorded action follows: {out}");
    assert!(
        out.contains("policy: pass — `continue` follows from the recorded answers (prob:ok >= 0.6 → continue)"),
        "{out}"
    );
    // The forger lowers step_ok's `ok` to 0.15, keeps `action: continue`, and rechains.
    let mut all = lines(&log);
    let at =
        all.iter().position(|l| l.contains(r#""id":"loop.stepOk""#) && l.contains(r#""action":"continue""#)).unwrap();
    let edited = all[at].replacen(
        r#""answers":{"ok":{"type":"noul","noul":0.85}}"#,
        r#""answers":{"ok":{"type":"noul","noul":0.15}}"#,
        1,
    );
    assert_ne!(edited, all[at], "the record's answer is as expected");
    all[at] = edited;
    rechain(&mut all);
    let forged = tmp.path().join("forged.jsonl");
    write(&forged, &all);
    // The digests cover what was asked, not what was answered: without the contract it verifies.
    let (code, out) = replay(&forged, &[], None);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = replay(&forged, &["--contract", CONTRACT], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("✗ mismatch             1"), "{out}");
    assert!(
        out.contains("policy: fail — the record says `continue`, and block `step_ok`'s policy gives `stop` on the recorded answers (else → stop)"),
        "{out}"
    );
    // An answer that does not validate must have escalated.
    let mut all = lines(&log);
    all[at] = all[at].replacen(r#""noul":0.85"#, r#""noul":1.85"#, 1);
    rechain(&mut all);
    write(&forged, &all);
    let (code, out) = replay(&forged, &["--contract", CONTRACT, "--format", "json"], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("gives `escalate` on the recorded answers (invalid answer"), "{out}");
    // A contract that cannot be read is a usage error.
    assert_eq!(replay(&log, &["--contract", "/nonexistent/DECISION.md"], None).0, Some(2));
}

#[test]
fn a_recorded_gate_is_the_policy_replay_evaluates() {
    let tmp = TempDir::new("seal-gates");
    let state = tmp.file("state.json", r#"{"task": "t", "lastTool": "read_file", "lastResult": "x"}"#);
    let script = tmp.file("script.json", r#"{"ok": [{"type": "noul", "noul": 0.85}]}"#);
    let log = tmp.path().join("ask.jsonl");
    let provider = format!("script:{}", s(&script));
    let out = decision(
        &[
            "ask",
            CONTRACT,
            "--block",
            "step_ok",
            "--state",
            s(&state),
            "--provider",
            &provider,
            "--gate",
            "step_ok.ok=0.9",
            "--log",
            s(&log),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains(r#""action":"stop""#) && written.contains(r#""gates":{"step_ok.ok":0.9}"#), "{written}");
    let (code, out) = replay(&log, &["--contract", CONTRACT, "--verbose"], None);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("policy: pass — `stop` follows"), "{out}");
    // Without its gate the same answer gives `continue`: the record no longer follows.
    let mut all = lines(&log);
    all[1] = all[1].replace(r#","gates":{"step_ok.ok":0.9}"#, "");
    rechain(&mut all);
    write(&log, &all);
    let (code, out) = replay(&log, &["--contract", CONTRACT], None);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("policy gives `continue`"), "{out}");
}
