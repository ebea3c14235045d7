//! Decision providers behind one trait: System One over HTTP, OpenAI-compatible servers
//! scored by log-probabilities, the deterministic `mock` and `script:FILE`, retries and a
//! fallback chain. The HTTP providers need the `http` feature (on by default).

mod deadline;
mod error;
mod fallback;
#[cfg(feature = "http")]
mod http;
mod mock;
#[cfg(feature = "http")]
mod openai;
mod replay;
mod retry;
mod script;
mod secret;
#[cfg(feature = "http")]
mod strict;
#[cfg(feature = "http")]
mod systemone;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

pub use deadline::WithDeadline;
pub use error::{ErrorCode, ProviderError, classify_status, parse_retry_after};
pub use fallback::FallbackChain;
pub use mock::{MOCK_WARNING, MockProvider};
#[cfg(feature = "http")]
pub use openai::{OpenAiMode, OpenAiProvider};
pub use replay::{ReplayLogError, ReplayProvider};
pub use retry::{RetryNotice, RetryPolicy, Retrying};
pub use script::{ScriptError, ScriptProvider};
#[cfg(feature = "http")]
pub use secret::redact_value;
pub use secret::{ApiKey, redact_bearer};
#[cfg(feature = "http")]
pub use strict::{Duplicate, parse_strict};
#[cfg(feature = "http")]
pub use systemone::{DEFAULT_MAX_RESPONSE_BYTES, SystemOneProvider};

use decision_protocol::ask::Questions;
use decision_protocol::frame::SharedState;

/// The timeout a request carries when nobody says otherwise (runtime.md §1.4).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// One request: the shared state and every question asked of it, in one forward pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The state every question is asked of: an object, shared with the frame it was compiled
    /// as and the decisions that record it, so sending it copies nothing.
    pub state: SharedState,
    /// Shared, so a caller that keeps its questions (to validate the answers) need not copy them.
    pub questions: Arc<Questions>,
    /// The model to ask for; `None`: the provider's default (a System One provider's
    /// configured default model, or the server's).
    pub model: Option<String>,
    /// The longest one exchange with the provider may take.
    pub timeout: Duration,
    /// When the run's time budget (plus its grace) ends: no exchange runs past it, and no
    /// retry starts that would end after it. `None`: no budget.
    pub deadline: Option<Instant>,
}

impl Request {
    /// A request for `questions` about `state`, with no model, the [`DEFAULT_TIMEOUT`] and no
    /// deadline.
    pub fn new(state: Map<String, Value>, questions: impl Into<Arc<Questions>>) -> Self {
        Request {
            state: Arc::new(state),
            questions: questions.into(),
            model: None,
            timeout: DEFAULT_TIMEOUT,
            deadline: None,
        }
    }

    /// How long the next exchange may take: the timeout, cut to what is left before the
    /// deadline; `None` once the deadline has passed (nothing may be sent).
    pub fn time_left(&self) -> Option<Duration> {
        match self.deadline {
            None => Some(self.timeout),
            Some(deadline) => {
                let left = deadline.checked_duration_since(Instant::now()).filter(|left| !left.is_zero())?;
                Some(left.min(self.timeout))
            }
        }
    }

    /// [`Request::time_left`], or the error of a request the budget no longer allows.
    pub fn time_left_for(&self, who: &str) -> Result<Duration, ProviderError> {
        self.time_left().ok_or_else(|| {
            ProviderError::new(who, ErrorCode::Timeout, format!("{who}: not sent: the run's time budget is spent"))
        })
    }

    /// The System One body `{model, state, questions}` as a value; `model` is omitted when unset.
    pub fn body(&self, default_model: Option<&str>) -> Value {
        serde_json::to_value(self.wire_body(default_model)).unwrap_or(Value::Null)
    }

    /// The same body, borrowed: serialising it copies nothing.
    pub fn wire_body<'a>(&'a self, default_model: Option<&'a str>) -> WireBody<'a> {
        WireBody {
            model: self.model.as_deref().or(default_model),
            state: &self.state,
            questions: self.questions.as_ref(),
        }
    }
}

/// The System One request body `{model, state, questions}`, keys in that order, borrowed
/// from a [`Request`] ([`Request::wire_body`]).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WireBody<'a> {
    /// The request's model, else the provider's default; omitted when both are unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// The state the questions are asked of.
    pub state: &'a Map<String, Value>,
    /// The questions, in wire form (`{id: {type, instructions, criteria}}`).
    pub questions: &'a Questions,
}

/// Token usage, kept only where the server reported numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Usage {
    /// Tokens the model read; `None` when the server did not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens the model wrote; `None` when the server did not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Literally `true` on the wire means the counts are estimates.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl Usage {
    /// Read `{input_tokens?, output_tokens?, estimated?}`; `None` when it is not an object.
    pub fn from_json(value: Option<&Value>) -> Option<Usage> {
        let map = value?.as_object()?;
        Some(Usage {
            input_tokens: map.get("input_tokens").and_then(Value::as_u64),
            output_tokens: map.get("output_tokens").and_then(Value::as_u64),
            estimated: map.get("estimated") == Some(&Value::Bool(true)),
        })
    }
}

/// What came back. `answers` are raw (as received, after §1.3 normalisation); validation
/// happens in the decider, so the raw entries stay available for audit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Response {
    /// The answers by question id, normalised (`runtime.md` §1.3) but not validated; a
    /// question may be missing.
    pub answers: Map<String, Value>,
    /// The name of whoever actually served the request.
    pub provider: String,
    /// The model that answered, when the provider reports it.
    pub model: Option<String>,
    /// How long the provider took, retries and fallbacks included.
    pub latency: Duration,
    /// Token usage, when the server reported any.
    pub usage: Option<Usage>,
    /// A fallback was taken, or answers are missing or were dropped.
    pub degraded: bool,
    /// What a host should know about the answers (a fallback taken, answers dropped, a
    /// mock's warning), one sentence each.
    pub warnings: Vec<String>,
}

/// Something that answers closed questions about a state.
pub trait DecisionProvider: Send + Sync {
    /// A name for logs and records (never contains secrets).
    fn name(&self) -> &str;
    /// Answer every question of `request` against its state, in one call.
    fn decide(&self, request: &Request) -> Result<Response, ProviderError>;
}

impl<P: DecisionProvider + ?Sized> DecisionProvider for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        (**self).decide(request)
    }
}

impl<P: DecisionProvider + ?Sized> DecisionProvider for std::sync::Arc<P> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        (**self).decide(request)
    }
}
