//! The outcome of one tool call: `ok(value)` or `error{error_type, message, retriable, metadata}`,
//! with the tool and method that produced it.
//!
//! The JSON form is `{"status":"ok","value":…}` or `{"status":"error","error_type":…,
//! "error_message":…,"retriable":bool,"metadata":{…}}`, optionally with `"tool"` and `"method"`.
//! Reading is strict: an ok outcome must carry `value` and nothing domain-specific beside it, so a
//! domain object such as `{"status":"ok","items":[…]}` is rejected rather than silently losing
//! its data.

use serde_json::{Map, Value};
use thiserror::Error;

/// Well-known `error_type` strings. `error_type` stays an open string: tools may author others.
pub mod error_type {
    /// The value does not satisfy the declared deliverable contract (runtime-authored).
    pub const CONTRACT_VIOLATION: &str = "contract_violation";
    /// Tool-authored: structurally valid but semantically weak for the caller's intent.
    pub const LOW_UTILITY: &str = "low_utility";
    /// Tool-authored: the request crosses capability boundaries the tool should not own.
    pub const WRONG_TOOL_BOUNDARY: &str = "wrong_tool_boundary";
    /// Runtime-authored: a guardrail kept refusing the call until its retries ran out (adaptive).
    pub const GUARDRAIL_RETRY_EXHAUSTED: &str = "guardrail_retry_exhausted";
    /// Runtime-authored: repairs of a failing outcome ran out of retries (adaptive).
    pub const OUTCOME_REPAIR_RETRY_EXHAUSTED: &str = "outcome_repair_retry_exhausted";
    /// The default for a runtime exception of no more specific type (intrinsic).
    pub const EXECUTION: &str = "execution";
    /// The call ran out of time (extrinsic; retriable by default).
    pub const TIMEOUT: &str = "timeout";
    /// An upstream provider failed (extrinsic; retriable by default).
    pub const PROVIDER: &str = "provider";
    /// Generated code could not be run as written (intrinsic; retriable by default).
    pub const INVALID_CODE: &str = "invalid_code";
    /// The call exceeded its budget (intrinsic).
    pub const BUDGET_EXCEEDED: &str = "budget_exceeded";
    /// A declared dependency manifest is malformed (intrinsic).
    pub const INVALID_DEPENDENCY_MANIFEST: &str = "invalid_dependency_manifest";
    /// A dependency manifest conflicts with the environment (intrinsic).
    pub const DEPENDENCY_MANIFEST_INCOMPATIBLE: &str = "dependency_manifest_incompatible";
    /// A dependency is not allowed by policy (intrinsic).
    pub const DEPENDENCY_POLICY_VIOLATION: &str = "dependency_policy_violation";
    /// Dependencies could not be resolved (extrinsic).
    pub const DEPENDENCY_RESOLUTION_FAILED: &str = "dependency_resolution_failed";
    /// Dependencies could not be installed (extrinsic; retriable by default).
    pub const DEPENDENCY_INSTALL_FAILED: &str = "dependency_install_failed";
    /// Installed dependencies could not be activated (extrinsic; retriable by default).
    pub const DEPENDENCY_ACTIVATION_FAILED: &str = "dependency_activation_failed";
    /// The execution environment is still being prepared (extrinsic; retriable by default).
    pub const ENVIRONMENT_PREPARING: &str = "environment_preparing";
    /// The call broke the tool registry's rules (intrinsic).
    pub const TOOL_REGISTRY_VIOLATION: &str = "tool_registry_violation";
    /// The worker running the call crashed (extrinsic; retriable by default).
    pub const WORKER_CRASH: &str = "worker_crash";
    /// The result could not be serialised (intrinsic).
    pub const NON_SERIALIZABLE_RESULT: &str = "non_serializable_result";
    /// A network failure (extrinsic).
    pub const NETWORK_ERROR: &str = "network_error";
    /// Refused by a rate limit (extrinsic); one of two spellings the reference classifies alike.
    pub const RATE_LIMIT: &str = "rate_limit";
    /// Refused by a rate limit (extrinsic); see [`RATE_LIMIT`].
    pub const RATE_LIMITED: &str = "rate_limited";
    /// The tool could not parse what it received (adaptive).
    pub const PARSE_ERROR: &str = "parse_error";
    /// The tool could not parse what it received (adaptive); the reference's other spelling of [`PARSE_ERROR`].
    pub const PARSE_FAILED: &str = "parse_failed";
    /// The call lacked an input it needs (adaptive).
    pub const MISSING_INPUT: &str = "missing_input";
    /// An input or output was not in the expected format (adaptive).
    pub const INVALID_FORMAT: &str = "invalid_format";
    /// A value did not match the schema the tool expected (adaptive).
    pub const SCHEMA_MISMATCH: &str = "schema_mismatch";
}

/// Error types whose runtime exceptions are retriable by default (outcomes.md §B2).
pub const RETRIABLE_BY_DEFAULT: &[&str] = &[
    error_type::TIMEOUT,
    error_type::PROVIDER,
    error_type::INVALID_CODE,
    error_type::DEPENDENCY_INSTALL_FAILED,
    error_type::DEPENDENCY_ACTIVATION_FAILED,
    error_type::ENVIRONMENT_PREPARING,
    error_type::WORKER_CRASH,
];

const EXTRINSIC: &[&str] = &[
    error_type::TIMEOUT,
    error_type::PROVIDER,
    error_type::NETWORK_ERROR,
    error_type::RATE_LIMIT,
    error_type::RATE_LIMITED,
    error_type::ENVIRONMENT_PREPARING,
    error_type::WORKER_CRASH,
    error_type::DEPENDENCY_RESOLUTION_FAILED,
    error_type::DEPENDENCY_INSTALL_FAILED,
    error_type::DEPENDENCY_ACTIVATION_FAILED,
];

const ADAPTIVE: &[&str] = &[
    error_type::PARSE_ERROR,
    error_type::PARSE_FAILED,
    error_type::LOW_UTILITY,
    error_type::WRONG_TOOL_BOUNDARY,
    error_type::MISSING_INPUT,
    error_type::INVALID_FORMAT,
    error_type::SCHEMA_MISMATCH,
    error_type::CONTRACT_VIOLATION,
    error_type::GUARDRAIL_RETRY_EXHAUSTED,
    error_type::OUTCOME_REPAIR_RETRY_EXHAUSTED,
];

/// Why a call failed, as used by repair, metrics and promotion (outcomes.md §B2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FailureClass {
    /// The world failed the tool: timeouts, providers, networks, environments.
    Extrinsic,
    /// The tool can adapt: parsing, utility, boundaries, contracts, exhausted repairs.
    Adaptive,
    /// Anything else: the implementation itself is wrong.
    Intrinsic,
}

impl FailureClass {
    /// Classify an `error_type` by the exact lists of §B2; any other type is intrinsic.
    pub fn of(error_type: &str) -> FailureClass {
        if EXTRINSIC.contains(&error_type) {
            FailureClass::Extrinsic
        } else if ADAPTIVE.contains(&error_type) {
            FailureClass::Adaptive
        } else {
            FailureClass::Intrinsic
        }
    }

    /// The lowercase name used in reports (`extrinsic`, `adaptive`, `intrinsic`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Extrinsic => "extrinsic",
            FailureClass::Adaptive => "adaptive",
            FailureClass::Intrinsic => "intrinsic",
        }
    }
}

/// A failed call, as the tool (or the contract check) authored it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// The error's type: one of [`error_type`]'s well-known strings or any other non-empty
    /// string a tool authors. Compared exactly (no case folding).
    pub error_type: String,
    /// The human explanation (`error_message`); empty when the document had none.
    pub message: String,
    /// Whether calling again may succeed; `false` unless the document says literally `true`.
    pub retriable: bool,
    /// Structured detail, as authored (for `contract_violation`, [`Violation::metadata`](crate::Violation::metadata));
    /// empty when there is none. Never validated or normalised.
    pub metadata: Map<String, Value>,
}

impl ToolError {
    /// The failure class of this error's type.
    pub fn failure_class(&self) -> FailureClass {
        FailureClass::of(&self.error_type)
    }
}

/// Success or failure of one call.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeResult {
    /// The call succeeded with this value (any JSON, `null` included).
    Ok(Value),
    /// The call failed.
    Error(ToolError),
}

/// One call's outcome with the identity of the tool and method that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The tool that produced it; `None` when the document does not say.
    pub tool: Option<String>,
    /// The tool's method; `None` when the document does not say.
    pub method: Option<String>,
    /// Success with a value, or a typed failure.
    pub result: OutcomeResult,
}

/// An outcome document that does not have the outcome shape.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct OutcomeFormatError {
    /// JSON pointer of the offending member inside the outcome document.
    pub pointer: String,
    /// What is wrong with the document, in one sentence.
    pub message: String,
}

fn format_error(pointer: &str, message: impl Into<String>) -> OutcomeFormatError {
    OutcomeFormatError { pointer: pointer.to_owned(), message: message.into() }
}

impl Outcome {
    /// A success with no tool or method.
    pub fn ok(value: Value) -> Outcome {
        Outcome { tool: None, method: None, result: OutcomeResult::Ok(value) }
    }

    /// A failure with no tool or method.
    pub fn error(error: ToolError) -> Outcome {
        Outcome { tool: None, method: None, result: OutcomeResult::Error(error) }
    }

    /// The same outcome, attributed to `tool` and `method`.
    pub fn with_identity(mut self, tool: impl Into<String>, method: impl Into<String>) -> Outcome {
        self.tool = Some(tool.into());
        self.method = Some(method.into());
        self
    }

    /// Whether this is a success.
    pub fn is_ok(&self) -> bool {
        matches!(self.result, OutcomeResult::Ok(_))
    }

    /// The ok value, if this is a success.
    pub fn value(&self) -> Option<&Value> {
        match &self.result {
            OutcomeResult::Ok(value) => Some(value),
            OutcomeResult::Error(_) => None,
        }
    }

    /// The error, if this is a failure.
    pub fn tool_error(&self) -> Option<&ToolError> {
        match &self.result {
            OutcomeResult::Ok(_) => None,
            OutcomeResult::Error(error) => Some(error),
        }
    }

    /// `error_type` of a failure, `None` for a success.
    pub fn error_type(&self) -> Option<&str> {
        self.tool_error().map(|error| error.error_type.as_str())
    }

    /// Read an outcome document. Unknown members are errors, never dropped.
    pub fn from_json(document: &Value) -> Result<Outcome, OutcomeFormatError> {
        Outcome::from_json_value(document.clone())
    }

    /// Read an outcome document, taking ownership (no copy of the value).
    pub fn from_json_value(document: Value) -> Result<Outcome, OutcomeFormatError> {
        let Value::Object(mut members) = document else {
            return Err(format_error("", "an outcome must be a JSON object"));
        };
        let status = match members.get("status") {
            Some(Value::String(status)) if status == "ok" => true,
            Some(Value::String(status)) if status == "error" => false,
            Some(Value::String(other)) => {
                return Err(format_error(
                    "/status",
                    format!("`status` must be \"ok\" or \"error\", not {}", Value::String(other.clone())),
                ));
            }
            Some(_) => return Err(format_error("/status", "`status` must be the string \"ok\" or \"error\"")),
            None => return Err(format_error("", "an outcome needs `status` (\"ok\" or \"error\")")),
        };
        let allowed: &[&str] = if status {
            &["status", "tool", "method", "value"]
        } else {
            &["status", "tool", "method", "error_type", "error_message", "retriable", "metadata"]
        };
        if let Some(unknown) = members.keys().find(|key| !allowed.contains(&key.as_str())) {
            return Err(format_error(
                &super::shape::pointer_child("", unknown),
                format!(
                    "unknown member `{unknown}` in {} outcome (allowed: {})",
                    if status { "an ok" } else { "an error" },
                    allowed.join(", ")
                ),
            ));
        }
        let tool = take_string(&mut members, "tool")?;
        let method = take_string(&mut members, "method")?;
        let result = if status {
            let value = members
                .remove("value")
                .ok_or_else(|| format_error("", "an ok outcome needs `value` (write `\"value\": null` for nothing)"))?;
            OutcomeResult::Ok(value)
        } else {
            let error_type = match members.remove("error_type") {
                Some(Value::String(kind)) if !kind.is_empty() => kind,
                Some(_) => return Err(format_error("/error_type", "`error_type` must be a non-empty string")),
                None => return Err(format_error("", "an error outcome needs `error_type`")),
            };
            let message = take_string(&mut members, "error_message")?.unwrap_or_default();
            let retriable = match members.remove("retriable") {
                None => false,
                Some(Value::Bool(flag)) => flag,
                Some(_) => return Err(format_error("/retriable", "`retriable` must be true or false")),
            };
            let metadata = match members.remove("metadata") {
                None => Map::new(),
                Some(Value::Object(metadata)) => metadata,
                Some(_) => return Err(format_error("/metadata", "`metadata` must be an object")),
            };
            OutcomeResult::Error(ToolError { error_type, message, retriable, metadata })
        };
        Ok(Outcome { tool, method, result })
    }

    /// The outcome document, members in a fixed order.
    pub fn to_json(&self) -> Value {
        let mut members = Map::new();
        match &self.result {
            OutcomeResult::Ok(value) => {
                members.insert("status".into(), Value::from("ok"));
                self.insert_identity(&mut members);
                members.insert("value".into(), value.clone());
            }
            OutcomeResult::Error(error) => {
                members.insert("status".into(), Value::from("error"));
                self.insert_identity(&mut members);
                members.insert("error_type".into(), Value::from(error.error_type.clone()));
                members.insert("error_message".into(), Value::from(error.message.clone()));
                members.insert("retriable".into(), Value::Bool(error.retriable));
                members.insert("metadata".into(), Value::Object(error.metadata.clone()));
            }
        }
        Value::Object(members)
    }

    fn insert_identity(&self, members: &mut Map<String, Value>) {
        if let Some(tool) = &self.tool {
            members.insert("tool".into(), Value::from(tool.clone()));
        }
        if let Some(method) = &self.method {
            members.insert("method".into(), Value::from(method.clone()));
        }
    }
}

fn take_string(members: &mut Map<String, Value>, key: &str) -> Result<Option<String>, OutcomeFormatError> {
    match members.remove(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format_error(&format!("/{key}"), format!("`{key}` must be a string"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failure_classes_follow_the_exact_lists() {
        assert_eq!(FailureClass::of("timeout"), FailureClass::Extrinsic);
        assert_eq!(FailureClass::of("rate_limited"), FailureClass::Extrinsic);
        assert_eq!(FailureClass::of("contract_violation"), FailureClass::Adaptive);
        assert_eq!(FailureClass::of("wrong_tool_boundary"), FailureClass::Adaptive);
        assert_eq!(FailureClass::of("execution"), FailureClass::Intrinsic);
        assert_eq!(FailureClass::of("Timeout"), FailureClass::Intrinsic, "no case folding");
    }

    #[test]
    fn round_trips_both_shapes() {
        let ok = json!({"status":"ok","tool":"search","method":"find","value":{"items":[1]}});
        assert_eq!(Outcome::from_json(&ok).unwrap().to_json(), ok);
        let error = json!({"status":"error","error_type":"low_utility","error_message":"thin",
            "retriable":false,"metadata":{"why":"no items"}});
        assert_eq!(Outcome::from_json(&error).unwrap().to_json(), error);
    }

    #[test]
    fn a_domain_object_is_not_an_outcome() {
        let err = Outcome::from_json(&json!({"status":"ok","items":[]})).unwrap_err();
        assert_eq!(err.pointer, "/items");
        let err = Outcome::from_json(&json!({"status":"success","value":1})).unwrap_err();
        assert_eq!(err.pointer, "/status");
        assert!(Outcome::from_json(&json!({"status":"ok"})).is_err());
        assert!(Outcome::from_json(&json!({"status":"error","error_type":"x","retriable":"true"})).is_err());
    }

    #[test]
    fn error_defaults() {
        let outcome = Outcome::from_json(&json!({"status":"error","error_type":"timeout"})).unwrap();
        let error = outcome.tool_error().unwrap();
        assert!(!error.retriable);
        assert_eq!(error.message, "");
        assert_eq!(error.failure_class(), FailureClass::Extrinsic);
    }
}
