//! `decision approve`: a person's answer to a pending approval, as every entrance asks for it.
//! Recording it is the session log's (`log::approval::record_answer`); this module reads the
//! request and refuses what does not make an answer.

use serde::Deserialize;

use super::Error;

/// What `approve` is asked, by the names every entrance takes (the command line's `--deny`,
/// `--reason` and `--input`, Python's keywords). The log and the approval id each entrance
/// reads its own way.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ApproveRequest {
    /// Deny the call instead of approving it.
    #[cfg_attr(feature = "cli", arg(long))]
    pub deny: bool,
    /// Why it is denied (recorded, and shown to the run); only with a denial.
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT", requires = "deny"))]
    pub reason: Option<String>,
    /// Approve a modified input instead; it is validated now and put through the risk gate
    /// again when the run resumes. On the command line it is written as a JSON string
    /// (`--input '"notes.md"'`), so that any text can be given.
    #[cfg_attr(feature = "cli", arg(long, value_name = "JSON", conflicts_with = "deny", value_parser = json_string))]
    pub input: Option<String>,
}

/// The answer a request makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The denial's reason, for a denial.
    pub denial: Option<String>,
    /// The modified input approved instead, if any.
    pub input: Option<String>,
}

impl ApproveRequest {
    /// The answer asked for: approve, deny (with its reason, or "denied by a person"), or
    /// approve a modified input. A reason without a denial, or a denial with an input, is a
    /// usage error.
    pub fn answer(&self) -> Result<Answer, Error> {
        if self.reason.is_some() && !self.deny {
            return Err(Error::usage("`reason` is the reason of a denial: give it with `deny`").at_path("reason"));
        }
        if self.input.is_some() && self.deny {
            return Err(Error::usage("give `deny` or a modified `input`, not both").at_path("input"));
        }
        let denial = self.deny.then(|| self.reason.clone().unwrap_or_else(|| "denied by a person".into()));
        Ok(Answer { denial, input: self.input.clone() })
    }
}

/// `--input`: a JSON string, whose value is the input.
#[cfg(feature = "cli")]
fn json_string(text: &str) -> Result<String, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::String(input)) => Ok(input),
        _ => Err(format!(
            "--input must be a JSON string (for example '\"notes.md\"'), got {}",
            crate::terminal::one_line(text)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_approves_denies_or_approves_another_input() {
        let read = |options| super::super::request::<ApproveRequest>("approve", options).unwrap().answer();
        assert_eq!(read(json!(null)).unwrap(), Answer { denial: None, input: None });
        let denied = read(json!({"deny": true, "reason": "too wide"})).unwrap();
        assert_eq!(denied.denial.as_deref(), Some("too wide"));
        assert_eq!(read(json!({"deny": true})).unwrap().denial.as_deref(), Some("denied by a person"));
        assert_eq!(read(json!({"input": "notes.md"})).unwrap().input.as_deref(), Some("notes.md"));
        let reason_alone = read(json!({"reason": "why"})).unwrap_err();
        assert_eq!((reason_alone.code.as_str(), reason_alone.path.as_deref()), ("E_USAGE", Some("reason")));
        assert!(read(json!({"deny": true, "input": "x"})).is_err());
    }

    #[cfg(feature = "cli")]
    #[test]
    fn the_command_line_reads_the_input_as_a_json_string() {
        let parse = super::super::command_line::<ApproveRequest>;
        let parsed = parse(&["approve", "--input", "\"notes.md\""]).unwrap();
        assert_eq!(parsed.input.as_deref(), Some("notes.md"));
        assert!(parse(&["approve", "--input", "notes.md"]).is_err());
        assert!(parse(&["approve", "--reason", "why"]).is_err(), "--reason needs --deny");
        assert!(parse(&["approve", "--deny", "--input", "\"x\""]).is_err());
    }
}
