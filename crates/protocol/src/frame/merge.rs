//! Several nodes sharing one request (`runtime.md` §1.5 steps 2–4, §2.10): which frames
//! may merge, the key union of their states, the union of their questions, and the digests
//! of what is actually sent.

use crate::digest::{frame_digest, request_digest, stringify};
use serde_json::{Map, Value};
use thiserror::Error;

use super::compile::FrameArtifact;

/// A cell one frame excludes while another reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConflict {
    /// The cell in question.
    pub cell: String,
    /// The node whose frame excludes the cell.
    pub excluded_by: String,
    /// That frame's `why` for excluding it.
    pub reason: String,
    /// The node whose frame reads the cell.
    pub read_by: String,
}

impl std::fmt::Display for MergeConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cell `{}` is excluded by {} ({}) but read by {}",
            self.cell, self.excluded_by, self.reason, self.read_by
        )
    }
}

/// Why [`merge_requests`] cannot send the given nodes as one request; the host then asks
/// them one by one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Some frame excludes a cell another reads ([`merge_conflicts`]), every such pair.
    #[error("these frames cannot share a request: {}", join(.0))]
    Conflicts(Vec<MergeConflict>),
    /// Two frames hold the same key with different values, so the key union is undefined.
    #[error("key `{key}` has different values in {first} and {second}; merged frames must agree")]
    Disagree {
        /// The state key.
        key: String,
        /// The node that put the key in the union first.
        first: String,
        /// The node whose value differs.
        second: String,
    },
    /// Two nodes ask a question with the same id, which would collide in the answers.
    #[error("question `{id}` is asked by both {first} and {second}")]
    DuplicateQuestion {
        /// The question id.
        id: String,
        /// The node that asks it first.
        first: String,
        /// The node that asks it again.
        second: String,
    },
    /// A node's questions were not a JSON object (wire form: id → question).
    #[error("the questions of {node} are not an object")]
    QuestionsNotObject {
        /// The node.
        node: String,
    },
    /// No frames were given.
    #[error("nothing to send: no frames")]
    Empty,
}

fn join(conflicts: &[MergeConflict]) -> String {
    conflicts.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// `mergeConflicts`: for each frame F and each cell c it excludes but does not itself read,
/// every other frame that reads c is a conflict.
pub fn merge_conflicts(frames: &[&FrameArtifact]) -> Vec<MergeConflict> {
    let reads = |frame: &FrameArtifact, cell: &str| frame.fields.iter().any(|f| f.from == cell);
    let mut conflicts = Vec::new();
    for (i, excluder) in frames.iter().enumerate() {
        for (cell, why) in excluder.excluded.iter() {
            if reads(excluder, cell) {
                continue;
            }
            for (j, reader) in frames.iter().enumerate() {
                if i != j && reads(reader, cell) {
                    conflicts.push(MergeConflict {
                        cell: cell.clone(),
                        excluded_by: excluder.node.clone(),
                        reason: why.clone(),
                        read_by: reader.node.clone(),
                    });
                }
            }
        }
    }
    conflicts
}

/// What one request sends, with its fingerprints (computed before sending).
#[derive(Debug, Clone, PartialEq)]
pub struct MergedRequest {
    /// The node ids that share the request, in the order given (the record's `batchIds`).
    pub batch_ids: Vec<String>,
    /// The sent state: a single frame's state unchanged, or the key union.
    pub state: Map<String, Value>,
    /// The sent questions: the union in node order.
    pub questions: Map<String, Value>,
    /// The digest of the sent state: the frame's own digest for a single node, else
    /// `frameDigest(batchIds.join("+"), state)` (`runtime.md` §3.4).
    pub sent_frame_digest: String,
    /// `requestDigest(sentFrameDigest, questions)`, the request's fingerprint.
    pub request_digest: String,
}

/// Merges nodes (each a frame artifact and its questions in wire form) into one request.
pub fn merge_requests(parts: &[(&FrameArtifact, &Value)]) -> Result<MergedRequest, MergeError> {
    let (first, _) = parts.first().ok_or(MergeError::Empty)?;
    let frames: Vec<&FrameArtifact> = parts.iter().map(|(f, _)| *f).collect();
    let batch_ids: Vec<String> = frames.iter().map(|f| f.node.clone()).collect();
    let state = if parts.len() == 1 {
        Map::clone(&first.state)
    } else {
        let conflicts = merge_conflicts(&frames);
        if !conflicts.is_empty() {
            return Err(MergeError::Conflicts(conflicts));
        }
        let mut state = Map::new();
        let mut owner: Map<String, Value> = Map::new();
        for frame in &frames {
            for (key, value) in frame.state.iter() {
                match state.get(key) {
                    Some(seen) if stringify(seen) != stringify(value) => {
                        return Err(MergeError::Disagree {
                            key: key.clone(),
                            first: owner.get(key).and_then(Value::as_str).unwrap_or_default().to_owned(),
                            second: frame.node.clone(),
                        });
                    }
                    Some(_) => {}
                    None => {
                        state.insert(key.clone(), value.clone());
                        owner.insert(key.clone(), Value::from(frame.node.as_str()));
                    }
                }
            }
        }
        state
    };
    let mut questions = Map::new();
    let mut asked_by: Map<String, Value> = Map::new();
    for (frame, node_questions) in parts {
        let map =
            node_questions.as_object().ok_or_else(|| MergeError::QuestionsNotObject { node: frame.node.clone() })?;
        for (id, question) in map {
            if questions.contains_key(id) {
                return Err(MergeError::DuplicateQuestion {
                    id: id.clone(),
                    first: asked_by.get(id).and_then(Value::as_str).unwrap_or_default().to_owned(),
                    second: frame.node.clone(),
                });
            }
            questions.insert(id.clone(), question.clone());
            asked_by.insert(id.clone(), Value::from(frame.node.as_str()));
        }
    }
    let sent_frame_digest =
        if parts.len() == 1 { first.digest.clone() } else { frame_digest(&batch_ids.join("+"), &state) };
    let request_digest = request_digest(&sent_frame_digest, &Value::Object(questions.clone()));
    Ok(MergedRequest { batch_ids, state, questions, sent_frame_digest, request_digest })
}
