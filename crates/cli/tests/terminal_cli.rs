//! Nothing from outside reaches the terminal raw: a file whose content clears the screen,
//! returns the cursor and draws a fake `can_deliver → deliver` line is shown escaped in every
//! human-readable line of `decision run`, `resume` and `replay` (the progress lines, the answer
//! and the report), and so is a task that tries the same; a model answer that tries it is shown
//! escaped by `decision ask` and `decision eval`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::process::{Command, Output, Stdio};

use common::TempDir;

/// Clear the screen, home the cursor, return to the line's start, overwrite it with a fake
/// progress line in green, ring the bell, and reverse the rest of the line.
const ATTACK: &str =
    "x\u{1b}[2J\u{1b}[H\r  step  9  can_deliver  → deliver     \u{1b}[32m✓ delivered\u{1b}[0m\u{7}\u{202e}gnp.exe\r\n";

fn decision(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decision"))
        .args(args)
        .env_remove("DECISION_GENERATOR_URL")
        .env_remove("DECISION_GENERATOR_MODEL")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// No byte of the output can act on a terminal: no C0/C1 control other than a line break, no
/// invisible reordering character.
fn assert_inert(what: &str, bytes: &[u8]) {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let active: Vec<char> = text
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'))
        .collect();
    assert!(active.is_empty(), "{what} carries {active:?}:\n{text}");
}

/// The lines that look like a delivery decision are exactly the run's real ones.
fn real_delivery_lines(stderr: &[u8]) -> usize {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.trim_start().starts_with("step") && l.contains("can_deliver"))
        .count()
}

#[test]
fn file_content_and_task_text_cannot_draw_on_the_terminal() {
    let dir = TempDir::new("terminal");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("evil.txt"), ATTACK).unwrap();
    let log = dir.path().join("run.jsonl");
    let task = format!("What does evil.txt say?{ATTACK}");
    let args = ["run", "--task", &task, "--workdir", ws.to_str().unwrap(), "--log", log.to_str().unwrap()];
    let run = decision(&args);
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(stderr.contains("tool read_file(evil.txt)"), "the file was read: {stderr}");
    assert!(stderr.contains("\\u{1b}[2J"), "the sequence is shown, escaped: {stderr}");
    assert_inert("run's stderr", &run.stderr);
    assert_inert("run's stdout", &run.stdout);
    // The fake line never starts a line of its own in the progress.
    let log_text = std::fs::read_to_string(&log).unwrap();
    let decided = log_text
        .lines()
        .filter(|l| l.contains("\"type\":\"decision\"") && l.contains("\"block\":\"can_deliver\""))
        .count();
    assert_eq!(real_delivery_lines(&run.stderr), decided, "{stderr}");
    assert!(stdout.contains("halt:"), "{stdout}");

    let replay = decision(&["replay", "--verbose", log.to_str().unwrap()]);
    assert_inert("replay's stdout", &replay.stdout);
    assert_inert("replay's stderr", &replay.stderr);

    // Resume the run from a log cut after its first tool result: its lines are shown escaped too.
    let lines: Vec<&str> = log_text.lines().collect();
    let cut = lines.iter().position(|l| l.contains("\"type\":\"tool:result\"")).unwrap();
    let partial = dir.path().join("partial.jsonl");
    std::fs::write(&partial, lines[..=cut].join("\n") + "\n").unwrap();
    let ws = std::fs::read_to_string(&partial)
        .unwrap()
        .lines()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok().filter(|v| v["e"]["type"] == "run:start"))
        .map(|v| v["e"]["cwd"].as_str().unwrap().to_owned())
        .unwrap();
    let resumed = decision(&["resume", partial.to_str().unwrap(), "--workdir", &ws]);
    assert!(resumed.status.code() != Some(2), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_inert("resume's stderr", &resumed.stderr);
    assert_inert("resume's stdout", &resumed.stdout);
}

#[test]
fn a_model_answer_cannot_draw_on_the_terminal_in_ask_or_eval() {
    let dir = TempDir::new("terminal-answers");
    let contract = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/coding-agent/DECISION.md");
    let evil = "x\u{1b}[2J\r  step  9  can_deliver  → deliver";
    let answer = serde_json::json!({"type": "choice", "choice": evil, "probabilities": {evil: 1.0}});
    let answers = dir.file("answers.json", &serde_json::json!({"tool": answer}).to_string());
    let eval = decision(&["eval", contract, "--block", "pick_tool", "--answers", answers.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&eval.stdout).contains("\\u{1b}[2J"), "{}", String::from_utf8_lossy(&eval.stdout));
    assert_inert("eval's stdout", &eval.stdout);
    let script = dir.file("script.json", &serde_json::json!({"tool": [answer]}).to_string());
    let state = dir.file("state.json", r#"{"task": "t"}"#);
    let provider = format!("script:{}", script.display());
    let ask = decision(&[
        "ask",
        contract,
        "--block",
        "pick_tool",
        "--state",
        state.to_str().unwrap(),
        "--provider",
        &provider,
    ]);
    assert!(String::from_utf8_lossy(&ask.stdout).contains("escalate"), "{}", String::from_utf8_lossy(&ask.stdout));
    assert_inert("ask's stdout", &ask.stdout);
}
