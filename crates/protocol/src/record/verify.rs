//! `verifyRecord`: four checks, four outcomes (`runtime.md` §4.4), with the project's fix
//! for the single-node `sent-frame` check.

use std::borrow::Cow;

use serde::Serialize;

use super::{DecisionRecord, RecordView, text_of};
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

/// The checks a verdict can hold (`runtime.md` §4.4), serialised by their spec names. More
/// may be added (as `policy` was), so match with a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum CheckName {
    /// `frame-solo`: the node's own frame digest recomputes from the stored state (skipped
    /// for a merged decision).
    #[serde(rename = "frame-solo")]
    FrameSolo,
    /// `questions-solo`: a single node sent exactly its own questions (not run when merged).
    #[serde(rename = "questions-solo")]
    QuestionsSolo,
    /// `sent-frame`: the sent frame digest is the digest of what was sent.
    #[serde(rename = "sent-frame")]
    SentFrame,
    /// `request`: the request digest recomputes from the sent frame digest and questions.
    #[serde(rename = "request")]
    Request,
    /// The recorded action follows from the recorded answers under the contract's policy
    /// (run by replay when it is given the contract).
    #[serde(rename = "policy")]
    Policy,
}

impl CheckName {
    /// The spec name, as serialised (`"frame-solo"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckName::FrameSolo => "frame-solo",
            CheckName::QuestionsSolo => "questions-solo",
            CheckName::SentFrame => "sent-frame",
            CheckName::Request => "request",
            CheckName::Policy => "policy",
        }
    }
}

/// How one check came out, serialised in lower case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// The check ran and the record agrees with itself.
    Pass,
    /// The check ran and the record contradicts itself.
    Fail,
    /// The check could not run: the record lacks what it needs (the detail says what).
    Skip,
}

impl CheckStatus {
    /// `"pass"`, `"fail"` or `"skip"`, as serialised.
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
    /// Which check.
    pub name: CheckName,
    /// Its result.
    pub status: CheckStatus,
    /// One sentence for a reader: what was compared, or why the check was skipped.
    /// Fixed sentences are not copied: most records only ever skip or pass.
    pub detail: Cow<'static, str>,
}

/// What verifying a record concluded, from its checks (`runtime.md` §4.4): `mismatch` if
/// any failed, else `unverifiable` if none passed, else `partial` if any was skipped, else
/// `verified`. Serialised in lower case. Replay fails only on `mismatch`.
///
/// Named apart from the tool outcomes of decision-outcomes: this is a record's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyOutcome {
    /// Every applicable check ran and passed.
    Verified,
    /// Some checks passed; the others say why they cannot run (normal for merged decisions).
    Partial,
    /// No check could run: fields needed for replay are missing.
    Unverifiable,
    /// A check failed: the record is inconsistent.
    Mismatch,
}

impl VerifyOutcome {
    /// `"verified"`, `"partial"`, `"unverifiable"` or `"mismatch"`, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyOutcome::Verified => "verified",
            VerifyOutcome::Partial => "partial",
            VerifyOutcome::Unverifiable => "unverifiable",
            VerifyOutcome::Mismatch => "mismatch",
        }
    }
}

/// A record's verdict: the outcome and the checks in the order they ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordVerdict {
    /// The conclusion drawn from `checks`.
    pub outcome: VerifyOutcome,
    /// frame-solo, questions-solo (single node only), sent-frame, request, in that order.
    pub checks: Vec<Check>,
}

impl RecordVerdict {
    /// The check called `name`; `None` when it did not run (questions-solo of a merged
    /// decision).
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

fn check(name: CheckName, status: CheckStatus, detail: impl Into<Cow<'static, str>>) -> Check {
    Check { name, status, detail: detail.into() }
}

/// Concatenates detail text in one allocation.
fn detail(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for part in parts {
        out.push_str(part);
    }
    out
}

/// Verifies a record with the project's rules.
pub fn verify_record(record: &DecisionRecord) -> RecordVerdict {
    verify_record_with(record, Rules::Project)
}

/// Verifies a record with the given rules.
pub fn verify_record_with(record: &DecisionRecord, rules: Rules) -> RecordVerdict {
    verify_view(&record.view(), rules)
}

/// Verifies a record read in place (or any record, through [`DecisionRecord::view`]).
pub fn verify_view(record: &RecordView<'_>, rules: Rules) -> RecordVerdict {
    verify_view_with(record, rules, &mut MergedDigests::default())
}

/// The digests computed for the last merged record. Every node of a merged request is
/// logged with the same state, batch and sent questions, one record after the other, so
/// the next record's digests are known once its text is seen to be the same.
#[derive(Debug, Default)]
pub struct MergedDigests {
    batch: Vec<u8>,
    state: Vec<u8>,
    sent_frame: Option<raw::Hex>,
    sent_frame_digest: Vec<u8>,
    sent_questions: Vec<u8>,
    request: Option<raw::Hex>,
    /// The current record's batch ids, joined (quoted canonical strings join unambiguously).
    scratch: Vec<u8>,
}

impl MergedDigests {
    /// `frameDigest(batchIds.join("+"), state)` of a merged record.
    fn sent_frame(&mut self, record: &RecordView<'_>) -> raw::Hex {
        self.scratch.clear();
        for id in record.batch_ids() {
            self.scratch.extend_from_slice(id);
        }
        if let Some(hex) = self.sent_frame
            && self.batch == self.scratch
            && self.state == record.state
        {
            return hex;
        }
        let hex = raw::frame_digest_hex(record.batch_ids(), record.state_entries());
        std::mem::swap(&mut self.batch, &mut self.scratch);
        self.state.clear();
        self.state.extend_from_slice(record.state);
        self.sent_frame = Some(hex);
        hex
    }

    /// `requestDigest(sentFrameDigest, sentQuestions)`, remembered for merged records only.
    fn request(&mut self, record: &RecordView<'_>, sent: &[u8]) -> raw::Hex {
        if let Some(hex) = self.request
            && self.sent_frame_digest == sent
            && self.sent_questions == record.sent_questions
        {
            return hex;
        }
        let hex = raw::request_digest_hex(sent, record.sent_questions);
        if record.is_merged() {
            self.sent_frame_digest.clear();
            self.sent_frame_digest.extend_from_slice(sent);
            self.sent_questions.clear();
            self.sent_questions.extend_from_slice(record.sent_questions);
            self.request = Some(hex);
        }
        hex
    }
}

/// Verifies a record, reusing the digests of the previous merged record where its text is
/// the same (see [`MergedDigests`]); the verdict is the one [`verify_view`] gives.
pub fn verify_view_with(record: &RecordView<'_>, rules: Rules, memo: &mut MergedDigests) -> RecordVerdict {
    use CheckStatus::{Fail, Pass, Skip};
    let merged = record.is_merged();
    let mut checks = Vec::with_capacity(4);

    // 1. frame-solo: the node's own frame digest over the stored state.
    checks.push(if merged {
        check(
            CheckName::FrameSolo,
            Skip,
            detail(&[
                "merged decision (",
                &batch_names(record, " + "),
                "): the stored state is the merged frame, so this node's own frame cannot be recomputed",
            ]),
        )
    } else if let Some(recorded) = record.frame_digest {
        let computed = raw::frame_digest_hex(std::iter::once(record.node), record.state_entries());
        if computed.is_quoted(recorded) {
            check(CheckName::FrameSolo, Pass, detail(&["state recomputes to ", computed.as_str()]))
        } else {
            check(
                CheckName::FrameSolo,
                Fail,
                detail(&[
                    "the record says ",
                    &text_of(recorded),
                    ", the state recomputes to ",
                    computed.as_str(),
                    ": the record is inconsistent",
                ]),
            )
        }
    } else {
        check(CheckName::FrameSolo, Skip, "the record has no frameDigest")
    });

    // 2. questions-solo: a single node sends exactly its own questions.
    if !merged {
        checks.push(if record.questions == b"{}" && record.sent_questions == b"{}" {
            check(CheckName::QuestionsSolo, Skip, "the record has no questions")
        } else if record.questions == record.sent_questions {
            check(CheckName::QuestionsSolo, Pass, "questions are exactly the sent questions")
        } else {
            check(
                CheckName::QuestionsSolo,
                Fail,
                "questions differ from sentQuestions although the decision was not merged: the record is inconsistent",
            )
        });
    }

    // 3. sent-frame: the digest of what was actually sent.
    checks.push(match record.sent_frame_digest {
        None => check(CheckName::SentFrame, Skip, "the record has no sentFrameDigest"),
        Some(sent) if merged => {
            // `batchIds.join("+")`: canonical escapes do not depend on their neighbours, so
            // the joined name is the ids' canonical text joined.
            let computed = memo.sent_frame(record);
            let batch = batch_names(record, "+");
            if computed.is_quoted(sent) {
                check(
                    CheckName::SentFrame,
                    Pass,
                    detail(&["merged state recomputes to ", computed.as_str(), " under ", &batch]),
                )
            } else {
                check(
                    CheckName::SentFrame,
                    Fail,
                    detail(&[
                        "the record says ",
                        &text_of(sent),
                        ", the merged state recomputes to ",
                        computed.as_str(),
                        " under ",
                        &batch,
                        ": the record is inconsistent",
                    ]),
                )
            }
        }
        Some(sent) => match record.frame_digest {
            Some(own) if own == sent => {
                check(CheckName::SentFrame, Pass, detail(&["sentFrameDigest equals the frame digest ", &text_of(own)]))
            }
            Some(own) => check(
                CheckName::SentFrame,
                Fail,
                detail(&[
                    "a single-node decision sent frame ",
                    &text_of(sent),
                    " but its own frame is ",
                    &text_of(own),
                    ": the record is inconsistent",
                ]),
            ),
            None if rules == Rules::Reference => check(
                CheckName::SentFrame,
                Pass,
                "no frameDigest to compare with (counted as a pass by the reference rules)",
            ),
            None => check(CheckName::SentFrame, Skip, "the record has no frameDigest to compare sentFrameDigest with"),
        },
    });

    // 4. request: the fingerprint of the sent frame and the sent questions.
    checks.push(match (record.sent_frame_digest, record.request_digest) {
        (Some(sent), Some(recorded)) => {
            let computed = memo.request(record, sent);
            if computed.is_quoted(recorded) {
                check(
                    CheckName::Request,
                    Pass,
                    detail(&["sent frame and sent questions recompute to ", computed.as_str()]),
                )
            } else {
                check(
                    CheckName::Request,
                    Fail,
                    detail(&[
                        "the record says ",
                        &text_of(recorded),
                        ", the sent frame and sent questions recompute to ",
                        computed.as_str(),
                        ": the record is inconsistent",
                    ]),
                )
            }
        }
        _ => check(CheckName::Request, Skip, "the record needs both sentFrameDigest and requestDigest"),
    });

    let outcome = if checks.iter().any(|c| c.status == Fail) {
        VerifyOutcome::Mismatch
    } else if !checks.iter().any(|c| c.status == Pass) {
        VerifyOutcome::Unverifiable
    } else if checks.iter().any(|c| c.status == Skip) {
        VerifyOutcome::Partial
    } else {
        VerifyOutcome::Verified
    };
    RecordVerdict { outcome, checks }
}

fn batch_names(record: &RecordView<'_>, separator: &str) -> String {
    let mut out = String::new();
    for (index, id) in record.batch_ids().enumerate() {
        if index > 0 {
            out.push_str(separator);
        }
        out.push_str(&text_of(id));
    }
    out
}
