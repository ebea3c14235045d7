//! `verifyRecord`: four checks, four outcomes (`runtime.md` §4.4), with the project's fix
//! for the single-node `sent-frame` check.

use serde::Serialize;

use super::{DecisionRecord, JsonString};
use crate::digest::raw;

/// The three things replay does not verify, printed with every verdict.
pub const REPLAY_NOTES: [&str; 3] = [
    "Replay does not check that the frame was compiled correctly from the original context: \
     by design only the bounded frame is written, never the original context, and checking it \
     would need that context and the contract version in force at the time. This is the \
     boundary of the record, not unfinished work.",
    "Replay does not check whether the decision was right: that needs an external oracle \
     (test results, file state, an exit code), which a record cannot supply.",
    "Replay does not compare answers: asking the same record again may legitimately give \
     different answers, especially close to a threshold. That would be model-level \
     reproduction, a different problem.",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CheckName {
    #[serde(rename = "frame-solo")]
    FrameSolo,
    #[serde(rename = "questions-solo")]
    QuestionsSolo,
    #[serde(rename = "sent-frame")]
    SentFrame,
    #[serde(rename = "request")]
    Request,
}

impl CheckName {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckName::FrameSolo => "frame-solo",
            CheckName::QuestionsSolo => "questions-solo",
            CheckName::SentFrame => "sent-frame",
            CheckName::Request => "request",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Pass,
    Fail,
    Skip,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::Skip => "skip",
        }
    }
}

/// One check's result with a human detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: CheckName,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every applicable check ran and passed.
    Verified,
    /// Some checks passed; the others say why they cannot run (normal for merged decisions).
    Partial,
    /// No check could run: fields needed for replay are missing.
    Unverifiable,
    /// A check failed: the record is inconsistent.
    Mismatch,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Partial => "partial",
            Outcome::Unverifiable => "unverifiable",
            Outcome::Mismatch => "mismatch",
        }
    }
}

/// A record's verdict: the outcome and the checks in the order they ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub outcome: Outcome,
    pub checks: Vec<Check>,
}

impl Verdict {
    pub fn check(&self, name: CheckName) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }
}

/// Which verifier rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rules {
    /// The project's rules: a single-node record without `frameDigest` skips `sent-frame`.
    #[default]
    Project,
    /// The reference's rules, which count that case as a pass (for interoperability tests).
    Reference,
}

fn check(name: CheckName, status: CheckStatus, detail: String) -> Check {
    Check { name, status, detail }
}

/// Verifies a record with the project's rules.
pub fn verify_record(record: &DecisionRecord) -> Verdict {
    verify_record_with(record, Rules::Project)
}

/// Verifies a record with the given rules.
pub fn verify_record_with(record: &DecisionRecord, rules: Rules) -> Verdict {
    use CheckStatus::{Fail, Pass, Skip};
    let merged = record.is_merged();
    let mut checks = Vec::with_capacity(4);

    // 1. frame-solo: the node's own frame digest over the stored state.
    checks.push(if merged {
        check(
            CheckName::FrameSolo,
            Skip,
            format!(
                "merged decision ({}): the stored state is the merged frame, so this node's own frame cannot be recomputed",
                batch_names(record, " + ")
            ),
        )
    } else if let Some(recorded) = &record.frame_digest {
        let computed = node_frame_digest(record.node.quoted(), record);
        if recorded.is(&computed) {
            check(CheckName::FrameSolo, Pass, format!("state recomputes to {computed}"))
        } else {
            check(
                CheckName::FrameSolo,
                Fail,
                format!("the record says {}, the state recomputes to {computed}: the record is inconsistent", recorded.text()),
            )
        }
    } else {
        check(CheckName::FrameSolo, Skip, "the record has no frameDigest".to_owned())
    });

    // 2. questions-solo: a single node sends exactly its own questions.
    if !merged {
        checks.push(if record.questions.is_empty_object() && record.sent_questions.is_empty_object() {
            check(CheckName::QuestionsSolo, Skip, "the record has no questions".to_owned())
        } else if record.questions == record.sent_questions {
            check(CheckName::QuestionsSolo, Pass, "questions are exactly the sent questions".to_owned())
        } else {
            check(
                CheckName::QuestionsSolo,
                Fail,
                "questions differ from sentQuestions although the decision was not merged: the record is inconsistent"
                    .to_owned(),
            )
        });
    }

    // 3. sent-frame: the digest of what was actually sent.
    checks.push(match &record.sent_frame_digest {
        None => check(CheckName::SentFrame, Skip, "the record has no sentFrameDigest".to_owned()),
        Some(sent) if merged => {
            let batch = JsonString::new(&batch_names(record, "+"));
            let computed = node_frame_digest(batch.quoted(), record);
            if sent.is(&computed) {
                check(CheckName::SentFrame, Pass, format!("merged state recomputes to {computed} under {}", batch.text()))
            } else {
                check(
                    CheckName::SentFrame,
                    Fail,
                    format!(
                        "the record says {}, the merged state recomputes to {computed} under {}: the record is inconsistent",
                        sent.text(),
                        batch.text()
                    ),
                )
            }
        }
        Some(sent) => match &record.frame_digest {
            Some(own) if own == sent => {
                check(CheckName::SentFrame, Pass, format!("sentFrameDigest equals the frame digest {}", own.text()))
            }
            Some(own) => check(
                CheckName::SentFrame,
                Fail,
                format!(
                    "a single-node decision sent frame {} but its own frame is {}: the record is inconsistent",
                    sent.text(),
                    own.text()
                ),
            ),
            None if rules == Rules::Reference => {
                check(CheckName::SentFrame, Pass, "no frameDigest to compare with (counted as a pass by the reference rules)".to_owned())
            }
            None => check(CheckName::SentFrame, Skip, "the record has no frameDigest to compare sentFrameDigest with".to_owned()),
        },
    });

    // 4. request: the fingerprint of the sent frame and the sent questions.
    checks.push(match (&record.sent_frame_digest, &record.request_digest) {
        (Some(sent), Some(recorded)) => {
            let computed = raw::request_digest(sent.quoted().as_bytes(), record.sent_questions.as_bytes());
            if recorded.is(&computed) {
                check(CheckName::Request, Pass, format!("sent frame and sent questions recompute to {computed}"))
            } else {
                check(
                    CheckName::Request,
                    Fail,
                    format!(
                        "the record says {}, the sent frame and sent questions recompute to {computed}: the record is inconsistent",
                        recorded.text()
                    ),
                )
            }
        }
        _ => check(CheckName::Request, Skip, "the record needs both sentFrameDigest and requestDigest".to_owned()),
    });

    let outcome = if checks.iter().any(|c| c.status == Fail) {
        Outcome::Mismatch
    } else if !checks.iter().any(|c| c.status == Pass) {
        Outcome::Unverifiable
    } else if checks.iter().any(|c| c.status == Skip) {
        Outcome::Partial
    } else {
        Outcome::Verified
    };
    Verdict { outcome, checks }
}

fn node_frame_digest(node_quoted: &str, record: &DecisionRecord) -> String {
    raw::frame_digest(node_quoted.as_bytes(), record.state.as_bytes(), record.state.members())
}

fn batch_names(record: &DecisionRecord, separator: &str) -> String {
    record.batch_ids.iter().map(JsonString::text).collect::<Vec<_>>().join(separator)
}
