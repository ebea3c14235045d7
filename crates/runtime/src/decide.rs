//! The decider (runtime.md §1.5): one request per step for every node that shares it, then,
//! per node, validation of its own answers and policy evaluation.
//!
//! An invalid or missing answer yields no action: the node escalates with the typed problems
//! as its reason, and the raw answers stay on the result for audit. A decision is never
//! retried because of what the model said (transport retries live in the provider). A
//! provider failure never throws either: every node escalates. Only wiring errors (two
//! frames disagreeing on a key, a question asked twice) are errors, before anything is sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use decision_core::policy::{Answers, CompiledPolicy, Margin, evaluate};
use decision_protocol::digest::{frame_digest, request_digest_of_text, stringify};
use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::clock::Instant;
use crate::provider::{DEFAULT_TIMEOUT, DecisionProvider, Request, Response, Usage};
use decision_protocol::ask::{QuestionProblem, Questions, invalid_reason, validate_answers};
use decision_protocol::frame::SharedState;

/// The provider name on a decision host code made (the model was not asked).
pub const CODE_PROVIDER: &str = "code";

/// One node's part of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// The decision spec id (the node), as it appears in the `decision` event's `id` and in
    /// `batch_ids`; several ids in one request are joined by `+` for the merged frame digest.
    pub id: String,
    /// The node's frame state: the object the questions are asked of (`runtime.md` §1.1).
    pub state: Map<String, Value>,
    /// The node's closed questions, in the order they are sent.
    pub questions: Questions,
    /// The block's compiled policy, evaluated on the validated answers.
    pub policy: CompiledPolicy,
    /// The digest of the node's frame artifact, when it has one. `None`: the decider computes
    /// `frame_digest(id, state)` itself (`runtime.md` §2.11).
    pub frame_digest: Option<String>,
    /// The model this node asks for; `None` falls back to [`Decider::with_model`], then to the
    /// provider's own default.
    pub model: Option<String>,
}

impl NodeSpec {
    /// The spec as [`Decider::decide_refs`] takes it (the questions are copied once).
    pub fn borrowed(&self) -> NodeSpecRef<'_> {
        NodeSpecRef {
            frame_digest: self.frame_digest.as_deref(),
            model: self.model.as_deref(),
            ..NodeSpecRef::new(&self.id, &self.state, Arc::new(self.questions.clone()), &self.policy)
        }
    }
}

/// Questions in wire form with the text `JSON.stringify` writes for them, made together
/// once: the request digest hashes the text and the decision record copies it, instead of
/// each writing the value again. Neither can be changed once made, so the text always
/// matches the value. A performance detail of the decider and the graph executor, not part
/// of the host interface.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WireJson {
    value: Arc<Value>,
    text: Arc<str>,
}

impl WireJson {
    pub(crate) fn new(value: Value) -> WireJson {
        let text = Arc::from(stringify(&value));
        WireJson { value: Arc::new(value), text }
    }

    /// `JSON.stringify` of the value.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

/// The text of a decision's sent questions, kept with the value it was written from. It is
/// a cache, not part of the decision: it never makes two decisions differ.
#[derive(Debug, Clone, Default)]
struct SentText(Option<WireJson>);

impl PartialEq for SentText {
    fn eq(&self, _: &SentText) -> bool {
        true
    }
}

/// One node's part of a step, borrowed from where the host keeps it: a host that compiles
/// its frames and questions every step lends them instead of copying them into a
/// [`NodeSpec`]. The questions are shared, so a node alone in its request sends its own.
#[derive(Debug, Clone)]
pub struct NodeSpecRef<'a> {
    /// The decision spec id (the node); see [`NodeSpec::id`].
    pub id: &'a str,
    /// The node's frame state: the object the questions are asked of.
    pub state: &'a Map<String, Value>,
    /// The same state, shared, when the host keeps it so: a node alone in its request sends
    /// it without a copy. When given, it is the state this node sends (alone or merged).
    pub shared_state: Option<SharedState>,
    /// The node's closed questions, shared so a node alone in its request sends them
    /// without a copy.
    pub questions: Arc<Questions>,
    /// The block's compiled policy, evaluated on the validated answers.
    pub policy: &'a CompiledPolicy,
    /// The digest of the node's frame artifact, when it has one; `None`: computed from `id`
    /// and the sent state.
    pub frame_digest: Option<&'a str>,
    /// The model this node asks for; `None` falls back to the decider's, then the provider's.
    pub model: Option<&'a str>,
    /// `questions.to_json()` and its text, when the graph executor keeps them built (a cache:
    /// `None` builds them from `questions`).
    pub(crate) questions_json: Option<WireJson>,
}

impl<'a> NodeSpecRef<'a> {
    /// A node's part of a step, borrowed: no frame digest (the decider computes it), no model
    /// of its own and no shared state.
    pub fn new(
        id: &'a str,
        state: &'a Map<String, Value>,
        questions: Arc<Questions>,
        policy: &'a CompiledPolicy,
    ) -> Self {
        NodeSpecRef {
            id,
            state,
            shared_state: None,
            questions,
            policy,
            frame_digest: None,
            model: None,
            questions_json: None,
        }
    }

    /// The same spec sending `state` (the host's shared copy of this node's state) in place of
    /// the borrowed `state`: a node alone in its request then sends it without a copy.
    pub fn with_shared_state(mut self, state: SharedState) -> Self {
        self.shared_state = Some(state);
        self
    }

    /// The state this node sends: the shared one when given.
    fn state(&self) -> &Map<String, Value> {
        self.shared_state.as_deref().unwrap_or(self.state)
    }

    /// The node's questions as JSON: the one kept, or built now.
    fn questions_json(&self) -> Arc<Value> {
        match &self.questions_json {
            Some(json) => Arc::clone(&json.value),
            None => Arc::new(self.questions.to_json()),
        }
    }

    /// The node's questions as JSON with their text: the ones kept, or made now.
    fn wire_json(&self) -> WireJson {
        match &self.questions_json {
            Some(json) => json.clone(),
            None => WireJson::new(self.questions.to_json()),
        }
    }
}

/// Wiring errors: the nodes given cannot share one request, and nothing was sent. What the
/// model answers is never an error (it escalates the node instead).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecideError {
    /// No node was given.
    #[error("nothing to decide: no nodes")]
    NoNodes,
    /// Two nodes of one request carry different values for the same state key, so there is
    /// no single merged state to send.
    #[error("nodes `{first}` and `{second}` send different values for state key `{key}`")]
    StateConflict {
        /// The state key the nodes disagree on.
        key: String,
        /// The first node (in request order) that sent the key.
        first: String,
        /// The node whose value differs.
        second: String,
    },
    /// Two nodes of one request ask a question with the same id: its answer could not be
    /// told apart.
    #[error("question `{question}` is asked by both `{first}` and `{second}`")]
    DuplicateQuestion {
        /// The question id asked twice.
        question: String,
        /// The first node that asks it.
        first: String,
        /// The later node that asks it again.
        second: String,
    },
}

/// What one node decided, with everything needed to audit it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeDecision {
    /// The decision spec id (the node) this decision is for.
    pub id: String,
    /// The step the decider was at ([`Decider::set_step`]) when the request was sent.
    pub step: u64,
    /// Every node id of the shared request, in order.
    pub batch_ids: Vec<String>,
    /// The digest of the frame actually sent (`runtime.md` §2.11): this node's own frame
    /// digest when it was asked alone, the merged frame's (ids joined by `+`) when batched.
    /// Empty for a decision made by code.
    pub sent_frame_digest: String,
    /// The request digest over the sent frame digest and the sent questions' text, as a
    /// `decision-record/v1` records it. Empty for a decision made by code.
    pub request_digest: String,
    /// The state actually sent (the merged one when batched), shared by every node of the
    /// request.
    #[serde(serialize_with = "shared_map")]
    pub state: SharedState,
    /// The questions actually sent (the merged set), shared by every node of the request.
    #[serde(serialize_with = "shared_value")]
    pub sent_questions: Arc<Value>,
    /// This node's own questions: for a node alone in its request, the same value as
    /// `sent_questions`.
    #[serde(serialize_with = "shared_value")]
    pub questions: Arc<Value>,
    /// This node's answers exactly as received (for audit), whether valid or not.
    pub raw_answers: Map<String, Value>,
    /// The validated answers (empty when any answer was invalid).
    pub answers: Answers,
    /// Every validation problem; empty when all answers are valid.
    pub problems: Vec<QuestionProblem>,
    /// Every answer was present and valid, so the policy ran.
    pub valid: bool,
    /// The action taken: the policy's, or `escalate` when an answer was invalid or the
    /// provider failed.
    pub action: String,
    /// Why: the policy's reason, the validation problems, or the provider failure.
    pub reason: String,
    /// The index of the rule that fired; `None` when nothing matched or no policy ran.
    pub rule: Option<usize>,
    /// How far the deciding value was from the fired rule's threshold; `None` when the rule
    /// compares no threshold or no rule fired.
    pub margin: Option<Margin>,
    /// `action == "escalate"`: a host hands the node to a human or stops.
    pub escalate: bool,
    /// The provider that actually served the request (after fallbacks), or
    /// [`CODE_PROVIDER`].
    pub provider: String,
    /// The model that answered, as the provider reports it; else the one requested; `None`
    /// when neither is known.
    pub model: Option<String>,
    /// Wall-clock milliseconds of the provider call, retries included (0 for code).
    pub latency_ms: u64,
    /// Token usage, when the provider reported any.
    pub usage: Option<Usage>,
    /// A fallback was taken, answers were missing or dropped, or the provider failed.
    pub degraded: bool,
    /// The provider's warnings, or the failure message when it failed.
    pub warnings: Vec<String>,
    #[serde(skip)]
    sent_text: SentText,
}

impl NodeDecision {
    /// `JSON.stringify(sent_questions)` as the decider wrote it for the request digest, while
    /// `sent_questions` is still the value it was written from.
    pub fn sent_questions_text(&self) -> Option<&str> {
        match &self.sent_text.0 {
            Some(json) if Arc::ptr_eq(&json.value, &self.sent_questions) => Some(json.text()),
            _ => None,
        }
    }

    /// A decision host code made: nothing was sent, no model answered ([`CODE_PROVIDER`]).
    pub fn by_code(id: &str, step: u64, action: &str, reason: &str) -> NodeDecision {
        NodeDecision {
            id: id.to_owned(),
            step,
            batch_ids: vec![id.to_owned()],
            sent_frame_digest: String::new(),
            request_digest: String::new(),
            state: Arc::new(Map::new()),
            sent_questions: Arc::new(Value::Object(Map::new())),
            questions: Arc::new(Value::Object(Map::new())),
            raw_answers: Map::new(),
            answers: Answers::new(),
            problems: Vec::new(),
            valid: true,
            action: action.to_owned(),
            reason: reason.to_owned(),
            rule: None,
            margin: None,
            escalate: action == "escalate",
            provider: CODE_PROVIDER.to_owned(),
            model: None,
            latency_ms: 0,
            usage: None,
            degraded: false,
            warnings: Vec::new(),
            sent_text: SentText::default(),
        }
    }
}

/// Serialises a shared object as the object itself.
fn shared_map<S: serde::Serializer>(map: &SharedState, serializer: S) -> Result<S::Ok, S::Error> {
    Map::serialize(map, serializer)
}

/// Serialises a shared JSON value as the value itself.
fn shared_value<S: serde::Serializer>(value: &Arc<Value>, serializer: S) -> Result<S::Ok, S::Error> {
    Value::serialize(value, serializer)
}

/// What every node of one request shares: the last node takes it, the others copy it.
#[derive(Clone)]
struct Shared {
    state: SharedState,
    sent_questions: WireJson,
    batch_ids: Vec<String>,
    sent_frame_digest: String,
    request_digest: String,
}

/// Asks a provider and applies policies.
pub struct Decider {
    provider: Arc<dyn DecisionProvider>,
    timeout: Duration,
    model: Option<String>,
    step: AtomicU64,
}

impl Decider {
    /// A decider over `provider`, with the [`DEFAULT_TIMEOUT`], no default model and step 0.
    pub fn new(provider: Arc<dyn DecisionProvider>) -> Decider {
        Decider { provider, timeout: DEFAULT_TIMEOUT, model: None, step: AtomicU64::new(0) }
    }

    /// The timeout every request carries.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The model every request names unless a node names its own.
    pub fn with_model(mut self, model: Option<String>) -> Self {
        self.model = model;
        self
    }

    /// The step number the following decisions record ([`NodeDecision::step`]); the host
    /// advances it, the decider never does.
    pub fn set_step(&self, step: u64) {
        self.step.store(step, Ordering::Relaxed);
    }

    /// The provider's name ([`DecisionProvider::name`]), for messages and logs.
    pub fn provider_name(&self) -> &str {
        self.provider.name()
    }

    /// Decide one node.
    pub fn decide(&self, spec: &NodeSpec) -> Result<NodeDecision, DecideError> {
        let mut out = self.decide_many(std::slice::from_ref(spec))?;
        out.pop().ok_or(DecideError::NoNodes)
    }

    /// Decide several nodes with one request: the state is the key union of their states
    /// (equal values required), the questions the union of their questions (no id twice).
    pub fn decide_many(&self, specs: &[NodeSpec]) -> Result<Vec<NodeDecision>, DecideError> {
        let specs: Vec<NodeSpecRef<'_>> = specs.iter().map(NodeSpec::borrowed).collect();
        self.decide_refs(&specs)
    }

    /// [`Decider::decide_many`] on borrowed specs.
    pub fn decide_refs(&self, specs: &[NodeSpecRef<'_>]) -> Result<Vec<NodeDecision>, DecideError> {
        let (state, questions) = merge(specs)?;
        let batch_ids: Vec<String> = specs.iter().map(|s| s.id.to_owned()).collect();
        let sent_frame_digest = match specs {
            [only] => only.frame_digest.map_or_else(|| frame_digest(only.id, &state), str::to_owned),
            _ => frame_digest(&batch_ids.join("+"), &state),
        };
        let sent_questions = match specs {
            [only] => only.wire_json(),
            _ => WireJson::new(questions.to_json()),
        };
        let request_digest = request_digest_of_text(&sent_frame_digest, sent_questions.text());
        let model = specs.first().and_then(|s| s.model.map(str::to_owned)).or_else(|| self.model.clone());
        let request = Request { state, questions, model, timeout: self.timeout, deadline: None };
        let step = self.step.load(Ordering::Relaxed);
        let started = Instant::now();
        let outcome = self.provider.decide(&request);
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let Request { state, model, .. } = request;
        // What the nodes of the request share: the last node takes it, the others copy it
        // (no copy for a single node).
        let mut shared = Some(Shared { state, sent_questions, batch_ids, sent_frame_digest, request_digest });
        let last = specs.len().saturating_sub(1);
        let single = specs.len() == 1;
        let mut shared_for = |index: usize| match index == last {
            true => shared.take(),
            false => shared.clone(),
        };
        let base = |spec: &NodeSpecRef<'_>, shared: Option<Shared>, provider: String, model: Option<String>| {
            let Shared { state, sent_questions, batch_ids, sent_frame_digest, request_digest } =
                shared.unwrap_or_else(|| Shared {
                    state: Arc::new(Map::new()),
                    sent_questions: WireJson::new(Value::Null),
                    batch_ids: Vec::new(),
                    sent_frame_digest: String::new(),
                    request_digest: String::new(),
                });
            NodeDecision {
                id: spec.id.to_owned(),
                step,
                batch_ids,
                sent_frame_digest,
                request_digest,
                state,
                // A node alone in its request sent exactly its own questions.
                questions: match single {
                    true => Arc::clone(&sent_questions.value),
                    false => spec.questions_json(),
                },
                sent_questions: Arc::clone(&sent_questions.value),
                sent_text: SentText(Some(sent_questions)),
                raw_answers: Map::new(),
                answers: Answers::new(),
                problems: Vec::new(),
                valid: false,
                action: String::new(),
                reason: String::new(),
                rule: None,
                margin: None,
                escalate: true,
                provider,
                model,
                latency_ms,
                usage: None,
                degraded: true,
                warnings: Vec::new(),
            }
        };
        let response = match outcome {
            Ok(response) => response,
            Err(error) => {
                let reason = format!("{} unavailable: {}", self.provider.name(), error.message);
                return Ok(specs
                    .iter()
                    .enumerate()
                    .map(|(index, spec)| NodeDecision {
                        action: "escalate".into(),
                        reason: reason.clone(),
                        warnings: vec![reason.clone()],
                        ..base(spec, shared_for(index), self.provider.name().to_string(), model.clone())
                    })
                    .collect());
            }
        };
        let Response {
            answers: mut response_answers, provider, model: response_model, usage, degraded, warnings, ..
        } = response;
        let model = response_model.or(model);
        let mut owned = Some((provider, model, warnings));
        Ok(specs
            .iter()
            .enumerate()
            .map(|(index, spec)| {
                let raw: Map<String, Value> = spec
                    .questions
                    .ids()
                    // No question id is asked twice in one request, so each answer moves
                    // to the one node that asked it.
                    .filter_map(|id| Some((id.to_string(), response_answers.remove(id)?)))
                    .collect();
                let (provider, model, warnings) = match index == last {
                    true => owned.take(),
                    false => owned.clone(),
                }
                .unwrap_or_default();
                let mut node =
                    NodeDecision { usage, degraded, warnings, ..base(spec, shared_for(index), provider, model) };
                match validate_answers(&spec.questions, &raw) {
                    Ok(answers) => {
                        let decision = evaluate(spec.policy, &answers);
                        node.valid = true;
                        node.escalate = decision.action == "escalate";
                        node.action = decision.action;
                        node.reason = decision.reason;
                        node.rule = decision.rule;
                        node.margin = decision.margin;
                        node.answers = answers;
                    }
                    Err(problems) => {
                        node.action = "escalate".into();
                        node.reason = invalid_reason(&problems);
                        node.problems = problems;
                    }
                }
                node.raw_answers = raw;
                node
            })
            .collect())
    }
}

fn merge(specs: &[NodeSpecRef<'_>]) -> Result<(SharedState, Arc<Questions>), DecideError> {
    let (first, rest) = specs.split_first().ok_or(DecideError::NoNodes)?;
    if rest.is_empty() {
        // A node alone sends its own state: shared when the host keeps it shared.
        let state = first.shared_state.clone().unwrap_or_else(|| Arc::new(first.state().clone()));
        return Ok((state, Arc::clone(&first.questions)));
    }
    let mut state = first.state().clone();
    let mut owner: Vec<(&str, &str)> = first.state().keys().map(|k| (k.as_str(), first.id)).collect();
    let mut questions = Questions::clone(&first.questions);
    for spec in rest {
        for (key, value) in spec.state() {
            match state.get(key) {
                Some(existing) if existing != value => {
                    let first = owner.iter().find(|(k, _)| k == key).map(|(_, n)| n.to_string()).unwrap_or_default();
                    return Err(DecideError::StateConflict { key: key.clone(), first, second: spec.id.to_owned() });
                }
                Some(_) => {}
                None => {
                    state.insert(key.clone(), value.clone());
                    owner.push((key.as_str(), spec.id));
                }
            }
        }
        for (id, question) in spec.questions.iter() {
            if !questions.insert(id, question.clone()) {
                let first =
                    specs.iter().find(|s| s.questions.get(id).is_some()).map(|s| s.id.to_owned()).unwrap_or_default();
                return Err(DecideError::DuplicateQuestion {
                    question: id.to_string(),
                    first,
                    second: spec.id.to_owned(),
                });
            }
        }
    }
    Ok((Arc::new(state), Arc::new(questions)))
}
