//! Who authorises a call the `grade_risk` gate sends to a person. With no one to ask, the
//! answer is **deny**: a gate that cannot reach a human fails closed.

use std::io::{BufRead, IsTerminal, Write};

/// Decides whether a gated tool call may run.
pub trait Human: Send {
    fn authorize(&mut self, tool: &str, target: &str, reason: &str) -> bool;
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
        if !TerminalHuman::available() {
            return false;
        }
        let mut err = std::io::stderr();
        let _ = write!(err, "\n  authorise {tool}({target})?\n  gate: {reason}\n  [y/N] ");
        let _ = err.flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(_) => matches!(line.trim().to_lowercase().as_str(), "y" | "yes"),
            Err(_) => false,
        }
    }
}
