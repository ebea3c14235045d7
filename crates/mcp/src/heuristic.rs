//! The default provider of `decision mcp`: code rules over the tool's annotations, as the
//! frame shows them (not a model, offline, deterministic).
//!
//! It answers the bundled contract's two questions and nothing else:
//!
//! - `harm` (a score of three levels): 2 when the definition changed after it was pinned, or
//!   the tool is not read-only and destructive (the protocol's default); 1 when it is not
//!   read-only but says it is not destructive; 0 when it says it is read-only.
//! - `reaches_out` (a noul): 0.9 when the tool is open-world (the default), else 0.1.
//!
//! A question it has no rule for is left unanswered, which the decider turns into an
//! escalation: the gateway refuses the call (fail closed).

use std::time::Instant;

use decision::ask::WireQuestion;
use decision::provider::{DecisionProvider, ProviderError, Request, Response};
use serde_json::{Map, Value, json};

/// The provider name recorded on every decision it answers.
pub const NAME: &str = "heuristic";
/// The "model" recorded on every decision it answers.
pub const MODEL: &str = "mcp-annotation-rules/1";

/// The annotation rules; see the module documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotationHeuristic;

/// A boolean cell of the frame, whether it arrives plain or wrapped as untrusted
/// (`{"provenance": …, "value": b}`); `default` when absent or not a boolean.
fn flag(state: &Map<String, Value>, key: &str, default: bool) -> bool {
    let value = state.get(key);
    let value = value.and_then(|v| v.get("value")).or(value);
    value.and_then(Value::as_bool).unwrap_or(default)
}

/// The harm level the rules give a call whose frame is `state`.
pub fn harm_level(state: &Map<String, Value>) -> usize {
    if flag(state, "definition_changed", true) {
        2
    } else if flag(state, "read_only", false) {
        0
    } else if flag(state, "destructive", true) {
        2
    } else {
        1
    }
}

fn score(levels: usize, level: usize) -> Value {
    let level = level.min(levels.saturating_sub(1));
    let probabilities: Map<String, Value> =
        (0..levels).map(|k| (k.to_string(), json!(if k == level { 1.0 } else { 0.0 }))).collect();
    json!({"type": "score", "score": level, "probabilities": probabilities})
}

impl DecisionProvider for AnnotationHeuristic {
    fn name(&self) -> &str {
        NAME
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let started = Instant::now();
        let state = &request.state;
        let mut answers = Map::new();
        let mut unanswered = Vec::new();
        for (id, question) in request.questions.iter() {
            match (id, question) {
                ("harm", WireQuestion::Score { criteria, .. }) => {
                    answers.insert(id.to_string(), score(criteria.len(), harm_level(state)));
                }
                ("reaches_out", WireQuestion::Noul { .. }) => {
                    let p = if flag(state, "open_world", true) { 0.9 } else { 0.1 };
                    answers.insert(id.to_string(), json!({"type": "noul", "noul": p}));
                }
                _ => unanswered.push(id.to_string()),
            }
        }
        let warnings = if unanswered.is_empty() {
            Vec::new()
        } else {
            vec![format!("the annotation rules have no rule for: {}", unanswered.join(", "))]
        };
        Ok(Response {
            degraded: !unanswered.is_empty(),
            answers,
            provider: NAME.into(),
            model: Some(MODEL.into()),
            latency: started.elapsed(),
            usage: None,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn harm_follows_the_annotations_and_a_changed_definition_is_always_harmful() {
        let wrapped = |b: bool| json!({"provenance": "untrusted", "value": b});
        let read =
            state(json!({"read_only": wrapped(true), "destructive": wrapped(true), "definition_changed": false}));
        assert_eq!(harm_level(&read), 0);
        let additive = state(json!({"read_only": false, "destructive": false, "definition_changed": false}));
        assert_eq!(harm_level(&additive), 1);
        let destructive = state(json!({"read_only": false, "destructive": true, "definition_changed": false}));
        assert_eq!(harm_level(&destructive), 2);
        let pulled = state(json!({"read_only": true, "destructive": false, "definition_changed": true}));
        assert_eq!(harm_level(&pulled), 2);
        assert_eq!(harm_level(&Map::new()), 2, "a frame without the cells is read with the fail-closed defaults");
    }

    #[test]
    fn a_score_answer_puts_all_weight_on_its_level() {
        assert_eq!(score(3, 2)["score"], json!(2));
        assert_eq!(score(3, 7)["score"], json!(2), "clamped to the scale");
        assert_eq!(score(3, 0)["probabilities"]["0"], json!(1.0));
    }
}
