//! Who authorises a call the `grade_risk` gate sends to a person. With no one to ask, the
//! answer is **deny**: a gate that cannot reach a human fails closed.
//!
//! [`PromptHuman`] is the question itself, over any reader and writer; [`TerminalHuman`] puts
//! it on stdin and stderr, and only when both are terminals.

use std::io::{BufRead, ErrorKind, IsTerminal, Write};

use decision_protocol::digest::stringify;
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

/// A call the risk gate sends to a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GatedCall {
    /// The step of the run whose call waits.
    pub step: u64,
    /// The tool the model picked.
    pub tool: String,
    /// Its input, exactly as it would run (untrusted: it comes from the task and the model).
    pub input: String,
    /// The rule that fired (`predicate → action`).
    pub rule: String,
    /// The gate's reason, as the person is shown it.
    pub reason: String,
    /// The request digest of the gate's decision.
    pub request_digest: String,
}

impl GatedCall {
    /// The call's [`fingerprint`], which binds an approval to this tool and input.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.tool, &self.input)
    }
}

/// What a person (or the queue standing in for one) answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateAnswer {
    /// Run the call; `approval` names the recorded approval that allowed it, if any.
    Approve {
        /// The id of the [`super::approvals::Approval`] used (`None`: answered at once).
        approval: Option<String>,
    },
    /// Do not run it.
    Deny {
        /// Why, in words, for the run's answer (`denied` when answered at once).
        reason: String,
        /// The id of the [`super::approvals::Approval`] that denied it (`None`: answered at
        /// once).
        approval: Option<String>,
    },
    /// Nobody can answer now: record the call as a pending approval and halt.
    Pending,
}

/// SHA-256 (hex) of `JSON.stringify({"tool": tool, "input": input})`.
pub fn fingerprint(tool: &str, input: &str) -> String {
    let text = stringify(&json!({"tool": tool, "input": input}));
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Decides whether a gated tool call may run.
pub trait Human: Send {
    /// Answer at once: may `tool` run on `target` (the tool's input: for `write_file` the path,
    /// a line break and the whole content), given the gate's `reason`? `false` denies.
    fn authorize(&mut self, tool: &str, target: &str, reason: &str) -> bool;

    /// The human gate of an `ask_human` decision: approve, deny, or
    /// [`GateAnswer::Pending`] — nobody can answer now, so the host records the call as a
    /// pending approval and halts (see [`super::approvals`]). By default, [`Human::authorize`]
    /// answers at once.
    fn gate(&mut self, call: &GatedCall) -> GateAnswer {
        match self.authorize(&call.tool, &call.input, &call.reason) {
            true => GateAnswer::Approve { approval: None },
            false => GateAnswer::Deny { reason: "denied".into(), approval: None },
        }
    }
}

/// Denies everything (the default when nobody can be asked).
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Human for DenyAll {
    fn authorize(&mut self, _tool: &str, _target: &str, _reason: &str) -> bool {
        false
    }
}

/// Approves everything (tests, and callers that authorised in advance).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

impl Human for ApproveAll {
    fn authorize(&mut self, _tool: &str, _target: &str, _reason: &str) -> bool {
        true
    }
}

/// The longest answer line read, newline included. A longer line is not an answer: it is
/// read to its end (so it cannot spill into the next question) and denied.
pub const MAX_ANSWER_BYTES: usize = 64;

/// How many characters of the target and of the reason a prompt shows. A `write_file`
/// target holds the whole content; the rest is summarised by its length.
pub const MAX_SHOWN_CHARS: usize = 2000;

/// Asks a person through `input` and `output`: the prompt names the tool, its target and the
/// gate's reason, and one line is read as the answer. Only `y` or `yes` (any case, surrounding
/// whitespace ignored) approves; anything else denies — an empty line, end of input, an
/// over-long or non-UTF-8 line, a read error, and a prompt that could not be written (nobody
/// can approve what they were not shown).
#[derive(Debug)]
pub struct PromptHuman<R, W> {
    input: R,
    output: W,
}

impl<R: BufRead, W: Write> PromptHuman<R, W> {
    /// A person who reads prompts on `output` and answers on `input`.
    pub fn new(input: R, output: W) -> Self {
        PromptHuman { input, output }
    }

    /// The reader and writer back (to inspect what was written).
    pub fn into_parts(self) -> (R, W) {
        (self.input, self.output)
    }

    /// Show the prompt and read one answer.
    pub fn ask(&mut self, tool: &str, target: &str, reason: &str) -> bool {
        let shown = prompt_text(tool, target, reason);
        if self.output.write_all(shown.as_bytes()).and_then(|()| self.output.flush()).is_err() {
            return false;
        }
        read_answer(&mut self.input).is_some_and(|answer| is_approval(&answer))
    }
}

impl<R: BufRead + Send, W: Write + Send> Human for PromptHuman<R, W> {
    fn authorize(&mut self, tool: &str, target: &str, reason: &str) -> bool {
        self.ask(tool, target, reason)
    }
}

/// The prompt: `authorise tool(target)?`, the gate's reason, and `[y/N]` (deny is the
/// default). The target and the reason come from the task and the model, so control and
/// invisible characters are shown escaped: they cannot redraw or hide part of the prompt.
pub fn prompt_text(tool: &str, target: &str, reason: &str) -> String {
    format!("\n  authorise {}({})?\n  gate: {}\n  [y/N] ", shown(tool), shown(target), shown(reason))
}

/// Whether an answer line approves.
fn is_approval(answer: &str) -> bool {
    let answer = answer.trim();
    answer.eq_ignore_ascii_case("y") || answer.eq_ignore_ascii_case("yes")
}

/// One line (the last one may end without a newline); `None` for a read error, a line longer
/// than [`MAX_ANSWER_BYTES`] or one that is not UTF-8.
fn read_answer(input: &mut impl BufRead) -> Option<String> {
    let mut kept = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if buffer.is_empty() {
            break;
        }
        let (line, ended) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (buffer.split_at(at + 1).0, true),
            None => (buffer, false),
        };
        if kept.len() + line.len() > MAX_ANSWER_BYTES {
            too_long = true;
        } else {
            kept.extend_from_slice(line);
        }
        let used = line.len();
        input.consume(used);
        if ended {
            break;
        }
    }
    if too_long {
        return None;
    }
    String::from_utf8(kept).ok()
}

/// `text` clipped to [`MAX_SHOWN_CHARS`], with control and invisible characters escaped
/// ([`decision_runtime::terminal::one_line`]).
fn shown(text: &str) -> String {
    let total = text.chars().count();
    let clipped: String = text.chars().take(MAX_SHOWN_CHARS).collect();
    let mut out = decision_runtime::terminal::one_line(&clipped).into_owned();
    if total > MAX_SHOWN_CHARS {
        out.push_str(&format!("… ({} more characters)", total - MAX_SHOWN_CHARS));
    }
    out
}

/// Asks on the terminal when both stdin and stderr are terminals; denies otherwise.
#[derive(Debug, Clone, Copy, Default)]
pub struct TerminalHuman;

impl TerminalHuman {
    /// Whether a person can be asked at all.
    pub fn available() -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}

impl Human for TerminalHuman {
    fn authorize(&mut self, tool: &str, target: &str, reason: &str) -> bool {
        // Checked on every call: a redirected stream must never be read as a person's answer.
        if !TerminalHuman::available() {
            return false;
        }
        PromptHuman::new(std::io::stdin().lock(), std::io::stderr()).ask(tool, target, reason)
    }
}

/// How much of the target a denial notice shows: its first line, to this many characters.
const NOTICE_TARGET_CHARS: usize = 120;

/// Denies every call, as [`DenyAll`], and says why on `out`: nobody can be asked, because
/// there is no terminal to ask on. The notice names the tool and its target (escaped and
/// clipped) and the gate's reason, so a run in a pipe or a script does not end in a silent
/// "denied".
pub struct NoTerminal<W: Write + Send> {
    out: W,
}

impl<W: Write + Send> NoTerminal<W> {
    /// Denial notices go to `out`, one line each.
    pub fn new(out: W) -> Self {
        NoTerminal { out }
    }
}

impl NoTerminal<std::io::Stderr> {
    /// The notice on stderr.
    pub fn stderr() -> Self {
        NoTerminal::new(std::io::stderr())
    }
}

/// The denial notice for one gated call.
pub fn no_terminal_notice(tool: &str, target: &str, reason: &str) -> String {
    let first = target.lines().next().unwrap_or_default();
    let mut clipped: String = first.chars().take(NOTICE_TARGET_CHARS).collect();
    if target.chars().count() > clipped.chars().count() {
        clipped.push('…');
    }
    format!(
        "authorisation denied for {} {}: nobody can be asked, since stdin and stderr are not both a terminal (gate: {}); run in a terminal to approve or deny it",
        shown(tool),
        shown(&clipped),
        shown(reason)
    )
}

impl<W: Write + Send> Human for NoTerminal<W> {
    fn authorize(&mut self, tool: &str, target: &str, reason: &str) -> bool {
        let _ = writeln!(self.out, "{}", no_terminal_notice(tool, target, reason));
        false
    }
}
