//! The authorisation prompt (`PromptHuman`): which answers approve, that everything else
//! denies, what the prompt shows, and a gated call in the running loop approved and refused
//! through it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::io::{BufRead, BufReader, Cursor, ErrorKind, Read, Write};
use std::sync::{Arc, Mutex};

use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::{
    Human, MAX_ANSWER_BYTES, MAX_SHOWN_CHARS, NoTerminal, PromptHuman, no_terminal_notice, prompt_text,
};
use host_common::{Options, TempDir, replay, run};

/// Ask once with `input` as what the person types; the answer and what the prompt wrote.
fn ask(input: &[u8]) -> (bool, String) {
    let mut human = PromptHuman::new(Cursor::new(input.to_vec()), Vec::new());
    let approved = human.ask("delete_file", "keep.txt", "risk 3 of 3");
    let (_, written) = human.into_parts();
    (approved, String::from_utf8(written).unwrap())
}

#[test]
fn without_a_terminal_a_gated_call_is_denied_with_a_notice_that_names_it() {
    let mut out = Vec::new();
    let approved = NoTerminal::new(&mut out).authorize("delete_file", "notes.md", "score:risk >= 2 → ask_human");
    assert!(!approved);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.trim_end(), no_terminal_notice("delete_file", "notes.md", "score:risk >= 2 → ask_human"));
    assert!(text.starts_with("authorisation denied for delete_file notes.md: nobody can be asked"), "{text}");
    assert!(text.contains("not both a terminal") && text.contains("(gate: score:risk >= 2 → ask_human)"), "{text}");
    // A long, multi-line target with control characters: its first line, clipped and escaped.
    let target = format!("\u{1b}[2J{}\nsecond line", "x".repeat(500));
    let notice = no_terminal_notice("write_file", &target, "r");
    assert!(notice.contains("\\u{1b}[2Jxxx") && !notice.contains('\u{1b}'), "{notice}");
    assert!(!notice.contains("second line") && notice.contains('…') && notice.len() < 400, "{notice}");
}

#[test]
fn y_and_yes_in_any_case_and_with_surrounding_space_approve() {
    for typed in ["y\n", "yes\n", "Y\n", " yes \n", "YES\n", "Yes\r\n", "\ty\t\n", "y"] {
        assert!(ask(typed.as_bytes()).0, "{typed:?} approves");
    }
}

#[test]
fn every_other_answer_denies() {
    let long_yes = format!("{}yes\n", " ".repeat(MAX_ANSWER_BYTES));
    let denied: [&[u8]; 11] = [
        b"n\n",
        b"no\n",
        b"\n",
        b"",
        b"garbage\n",
        b"yes please\n",
        b"yy\n",
        b"y es\n",
        // Not UTF-8.
        b"\xffy\n",
        // A line longer than any answer, even if it trims to `yes`.
        long_yes.as_bytes(),
        // Only the first line is the answer.
        b"\ny\n",
    ];
    for typed in denied {
        assert!(!ask(typed).0, "{:?} denies", String::from_utf8_lossy(typed));
    }
}

/// A reader that fails.
struct Broken(ErrorKind);

impl Read for Broken {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(self.0, "the terminal went away"))
    }
}

#[test]
fn a_read_error_denies() {
    let mut human = PromptHuman::new(BufReader::new(Broken(ErrorKind::BrokenPipe)), Vec::new());
    assert!(!human.ask("delete_file", "keep.txt", "risk 3 of 3"));
    // The prompt was shown before the failed read.
    assert!(String::from_utf8(human.into_parts().1).unwrap().contains("delete_file(keep.txt)"));
}

/// A reader that is interrupted once before it yields `then`.
struct InterruptedOnce {
    interrupted: bool,
    then: Cursor<Vec<u8>>,
}

impl Read for InterruptedOnce {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.interrupted {
            self.interrupted = true;
            return Err(std::io::Error::new(ErrorKind::Interrupted, "signal"));
        }
        self.then.read(buf)
    }
}

#[test]
fn an_interrupted_read_is_retried_not_taken_as_an_answer() {
    let reader = InterruptedOnce { interrupted: false, then: Cursor::new(b"y\n".to_vec()) };
    assert!(PromptHuman::new(BufReader::new(reader), Vec::new()).ask("delete_file", "keep.txt", "risk"));
    let reader = InterruptedOnce { interrupted: false, then: Cursor::new(b"n\n".to_vec()) };
    assert!(!PromptHuman::new(BufReader::new(reader), Vec::new()).ask("delete_file", "keep.txt", "risk"));
}

/// A writer that fails.
struct Unwritable;

impl Write for Unwritable {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::new(ErrorKind::BrokenPipe, "closed"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_prompt_that_cannot_be_shown_denies_without_reading_an_answer() {
    let mut human = PromptHuman::new(Cursor::new(b"y\n".to_vec()), Unwritable);
    assert!(!human.ask("delete_file", "keep.txt", "risk 3 of 3"));
    let (mut input, _) = human.into_parts();
    let mut left = String::new();
    input.read_line(&mut left).unwrap();
    assert_eq!(left, "y\n", "the answer meant for a prompt nobody saw is not consumed");
}

#[test]
fn each_question_reads_exactly_one_line() {
    let too_long = "a".repeat(MAX_ANSWER_BYTES * 3);
    let typed = format!("y\nn\n{too_long}\nyes\n");
    let mut human = PromptHuman::new(Cursor::new(typed.into_bytes()), Vec::new());
    let answers: Vec<bool> = (0..5).map(|_| human.ask("read_file", "a.txt", "r")).collect();
    // The over-long line is read to its end and denied: none of it spills into the next answer.
    assert_eq!(answers, [true, false, false, true, false]);
    let written = String::from_utf8(human.into_parts().1).unwrap();
    assert_eq!(written.matches("[y/N]").count(), 5, "one prompt per question");
}

#[test]
fn the_prompt_names_the_tool_the_target_and_the_gate_reason() {
    let (_, written) = ask(b"n\n");
    assert_eq!(written, "\n  authorise delete_file(keep.txt)?\n  gate: risk 3 of 3\n  [y/N] ");
    assert_eq!(written, prompt_text("delete_file", "keep.txt", "risk 3 of 3"));
    // Another call names its own tool, target and reason.
    let other = prompt_text("move_file", "a.txt\nb.txt", "moves a file out of sight");
    assert!(other.contains("authorise move_file(a.txt\\nb.txt)?"), "{other}");
    assert!(other.contains("gate: moves a file out of sight"), "{other}");
    assert!(!other.contains("delete_file") && !other.contains("keep.txt"), "{other}");
}

#[test]
fn control_and_invisible_characters_in_the_prompt_are_shown_escaped() {
    // An escape sequence that would erase the line, a carriage return that would overwrite
    // it, and a right-to-left override that would reverse what follows.
    let target = "evil.txt\u{1b}[2K\rauthorise read_file(harmless.txt)\u{202E}txt.exe";
    let text = prompt_text("write_file", target, "reason\u{7}");
    assert!(!text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{202E}') && !text.contains('\u{7}'));
    assert!(text.contains("evil.txt\\u{1b}[2K\\rauthorise read_file(harmless.txt)\\u{202e}txt.exe"), "{text}");
    assert!(text.contains("gate: reason\\u{7}"), "{text}");
    // Ordinary non-ASCII text is shown as it is.
    assert!(prompt_text("write_file", "café.txt", "überschreibt").contains("write_file(café.txt)"));
}

#[test]
fn a_long_target_is_clipped_and_says_how_much_was_left_out() {
    let content = "x".repeat(MAX_SHOWN_CHARS + 25);
    let text = prompt_text("write_file", &content, "r");
    assert!(text.contains(&format!("{}… (25 more characters))?", "x".repeat(MAX_SHOWN_CHARS))), "{}", text.len());
    let fits = "x".repeat(MAX_SHOWN_CHARS);
    assert!(!prompt_text("write_file", &fits, "r").contains("more characters"));
}

/// What the prompt wrote, readable after the human has moved into the run.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Vec<u8>>>);

impl Write for Screen {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Screen {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// `Delete keep.txt`: the heuristic gate sends the delete to a person, who types `typed`.
fn gated_delete(tag: &str, typed: &str) -> (TempDir, host_common::Outcome, std::path::PathBuf, Screen) {
    let dir = TempDir::new(tag);
    let ws = dir.workspace(&[("keep.txt", "precious"), ("other.txt", "also precious")]);
    let screen = Screen::default();
    let human: Box<dyn Human> = Box::new(PromptHuman::new(Cursor::new(typed.as_bytes().to_vec()), screen.clone()));
    let options = Options { allow_delete: true, human, ..Options::default() };
    let out = run(&dir, "Delete keep.txt", &ws, Arc::new(HeuristicProvider), options);
    (dir, out, ws, screen)
}

#[test]
fn in_the_loop_an_approving_answer_runs_the_gated_call() {
    let (_dir, out, ws, screen) = gated_delete("prompt-yes", "yes\n");
    let s = out.summary();
    assert!(s.delivered, "{s:?}");
    assert!(!ws.join("keep.txt").exists(), "the approved delete ran");
    assert_eq!(std::fs::read_to_string(ws.join("other.txt")).unwrap(), "also precious");
    let auth = out.of_type("authorize");
    assert_eq!(auth.len(), 1);
    assert_eq!(auth[0]["approved"], true);
    assert!(out.of_type("tool:call").iter().any(|c| c["tool"] == "delete_file" && c["input"] == "keep.txt"));
    // The person was shown the call and the gate's reason, as recorded.
    let reason = auth[0]["reason"].as_str().unwrap();
    assert!(!reason.is_empty());
    assert_eq!(screen.text(), prompt_text("delete_file", "keep.txt", reason));
    let (mismatch, _, intact) = replay(&out.log);
    assert_eq!((mismatch, intact), (0, true));
}

#[test]
fn in_the_loop_a_refusal_or_no_answer_leaves_the_files_untouched() {
    for (tag, typed) in [("prompt-no", "n\n"), ("prompt-eof", ""), ("prompt-garbage", "sure, why not\n")] {
        let (_dir, out, ws, screen) = gated_delete(tag, typed);
        let s = out.summary();
        assert_eq!(s.halt.split('+').next(), Some("denied"), "{typed:?}: {s:?}");
        assert_eq!(std::fs::read_to_string(ws.join("keep.txt")).unwrap(), "precious", "{typed:?}");
        assert_eq!(std::fs::read_to_string(ws.join("other.txt")).unwrap(), "also precious", "{typed:?}");
        assert!(out.of_type("tool:call").iter().all(|c| c["tool"] != "delete_file"), "{typed:?}: never ran");
        assert_eq!(out.of_type("authorize")[0]["approved"], false, "{typed:?}");
        assert!(screen.text().contains("authorise delete_file(keep.txt)?"), "{typed:?}: the person was asked");
        assert!(s.answer.contains("not authorised"), "{typed:?}: the report says why: {}", s.answer);
    }
}
