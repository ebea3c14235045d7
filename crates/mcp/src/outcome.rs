//! What a tool returned, as a tool outcome checked against the deliverable contract the
//! gateway was given for it (`decision mcp --outcome-contracts FILE`, tool [`TOOL_ROLE`],
//! method the tool's name) and recorded as `tool:outcome` for `decision outcomes report`.
//!
//! The record keeps what the report reads and no more ([`recorded_event`]): what a tool
//! returned may be large and may hold secrets, and the log is an audit of decisions, not a
//! copy of the server's data.

use decision::digest::stringify;
use decision::outcomes::report::OUTCOME_EVENT_TYPE;
use decision::outcomes::{ContractSet, EventContext, Outcome, ToolError, Validated, error_type, outcome_event};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::tools::hex;

/// The tool role gateway outcomes are reported under.
pub const TOOL_ROLE: &str = "mcp";

/// The outcome of a `tools/call` response: a JSON-RPC error or a result with `isError` is the
/// tool's failure (never validated); otherwise the value is `structuredContent`, else the text
/// content read as JSON when it is JSON, else the text itself.
pub fn outcome_of(tool: &str, response: &Value) -> Outcome {
    let result = response.get("result");
    let text = result.map(content_text).unwrap_or_default();
    let failed =
        response.get("error").is_some() || result.and_then(|r| r.get("isError")).and_then(Value::as_bool) == Some(true);
    let outcome = if failed {
        let message =
            response.pointer("/error/message").and_then(Value::as_str).map_or_else(|| text.clone(), str::to_owned);
        Outcome::error(ToolError {
            error_type: error_type::EXECUTION.to_owned(),
            message,
            retriable: false,
            metadata: Map::new(),
        })
    } else {
        match result.and_then(|r| r.get("structuredContent")) {
            Some(structured) => Outcome::ok(structured.clone()),
            None => Outcome::ok(serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text))),
        }
    };
    outcome.with_identity(TOOL_ROLE, tool)
}

/// The text items of a result's `content`, joined by newlines.
fn content_text(result: &Value) -> String {
    let items = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let texts: Vec<&str> = items
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|item| item.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

/// Validates the outcome of one call of `tool` against `contracts`.
pub fn validate(contracts: &ContractSet, tool: &str, response: &Value) -> Validated {
    contracts.validate(TOOL_ROLE, tool, outcome_of(tool, response))
}

/// The response the agent gets instead of a result that broke its contract: a tool result
/// with `isError: true`, the violation in words, then the typed `contract_violation` outcome
/// (`outcome`) as JSON, under the request's `id`.
pub fn violation_response(id: &Value, outcome: &Outcome) -> Value {
    let message = outcome.tool_error().map(|e| e.message.as_str()).unwrap_or_default();
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "content": [
                {"type": "text", "text": format!("contract_violation: {message}")},
                {"type": "text", "text": outcome.to_json().to_string()},
            ],
            "isError": true,
        },
    })
}

/// What stands for an elided string, array item or member value in a recorded outcome.
pub const ELIDED: &str = "…";

/// The most members of an object result a recorded outcome names.
const RECORDED_MEMBERS: usize = 16;

/// The longest `status` string, error message or metadata string a recorded outcome keeps,
/// in characters.
const RECORDED_TEXT: usize = 300;

/// The `tool:outcome` event of call `step` (without its `type`, which the session writes):
/// [`outcome_event`]'s, with the value a tool returned reduced to what `decision outcomes
/// report` reads ([`recorded_value`]) and described by `result`: `{"sha256", "bytes"}` of
/// `JSON.stringify` of the whole value, so a copy kept elsewhere can be matched to the call.
/// Error messages and metadata strings are clipped. `contract` overrides the verdict's name
/// (a result that broke the tool's `outputSchema` is `violated` though no deliverable was
/// checked).
pub fn recorded_event(step: u64, validated: &Validated, contract: Option<&str>) -> Map<String, Value> {
    let call_id = format!("step-{step}");
    let context =
        EventContext { trace_id: None, call_id: Some(&call_id), at_ms: Some(decision::log::now_ms()), depth: Some(0) };
    let tool = validated.outcome.method.as_deref().unwrap_or_default();
    let mut event = match outcome_event(TOOL_ROLE, tool, validated, &context) {
        Value::Object(event) => event,
        _ => Map::new(),
    };
    debug_assert_eq!(event.get("type").and_then(Value::as_str), Some(OUTCOME_EVENT_TYPE));
    event.remove("type");
    event.insert("step".into(), json!(step));
    if let Some(contract) = contract {
        event.insert("contract".into(), json!(contract));
    }
    let mut digest = None;
    if let Some(Value::Object(outcome)) = event.get_mut("outcome") {
        if let Some(value) = outcome.get_mut("value") {
            let text = stringify(value);
            digest = Some(json!({"sha256": hex(&Sha256::digest(text.as_bytes())), "bytes": text.len()}));
            *value = recorded_value(value);
        }
        if let Some(Value::String(message)) = outcome.get_mut("error_message") {
            *message = clip(message);
        }
        if let Some(Value::Object(metadata)) = outcome.get_mut("metadata") {
            for member in metadata.values_mut() {
                if let Value::String(text) = member {
                    *text = clip(text);
                }
            }
        }
    }
    if let Some(digest) = digest {
        event.insert("result".into(), digest);
    }
    event
}

/// What a recorded outcome keeps of the value a tool returned: the shape the outcome report
/// reads for weak-success evidence and nothing the tool wrote. Scalars, a blank string and an
/// empty array stay; any other string is [`ELIDED`], any other array `["…"]`; an object keeps
/// its first 16 members' names, its `status` string (clipped), its empty arrays, and [`ELIDED`]
/// for every other member's value.
pub fn recorded_value(value: &Value) -> Value {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        Value::String(text) if text.trim().is_empty() => value.clone(),
        Value::String(_) => json!(ELIDED),
        Value::Array(items) if items.is_empty() => json!([]),
        Value::Array(_) => json!([ELIDED]),
        Value::Object(members) => {
            let kept = members.iter().take(RECORDED_MEMBERS).map(|(name, member)| {
                let shown = match (name.as_str(), member) {
                    ("status", Value::String(status)) => json!(clip(status)),
                    (_, Value::Array(items)) if items.is_empty() => json!([]),
                    _ => json!(ELIDED),
                };
                (name.clone(), shown)
            });
            Value::Object(kept.collect())
        }
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(RECORDED_TEXT) {
        Some((at, _)) => format!("{}{ELIDED}", text.get(..at).unwrap_or_default()),
        None => text.to_owned(),
    }
}

/// The outcome of a call the server never answered (it exited, or the time budget ran out):
/// the tool's failure of type `kind` ([`error_type::TIMEOUT`] or [`error_type::EXECUTION`]).
pub fn unanswered(tool: &str, kind: &str, why: &str) -> Outcome {
    Outcome::error(ToolError {
        error_type: kind.to_owned(),
        message: why.to_owned(),
        retriable: true,
        metadata: Map::new(),
    })
    .with_identity(TOOL_ROLE, tool)
}

/// The typed `contract_violation` of a result of `tool` whose `structuredContent` does not
/// match the tool's `outputSchema` at `path` (why: `why`).
pub fn schema_violation(tool: &str, path: &str, why: &str) -> Outcome {
    let mut metadata = Map::new();
    metadata.insert("source".into(), json!("outputSchema"));
    metadata.insert("path".into(), json!(path));
    Outcome::error(ToolError {
        error_type: error_type::CONTRACT_VIOLATION.to_owned(),
        message: format!(
            "the structured result of {TOOL_ROLE}.{tool} does not match its outputSchema at `{path}`: {why}"
        ),
        retriable: false,
        metadata,
    })
    .with_identity(TOOL_ROLE, tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use decision::outcomes::{ValidationVerdict, load_contracts};

    fn contracts() -> ContractSet {
        load_contracts(
            r#"{"contracts": [{"tool": "mcp", "method": "get_time", "purpose": "The time.",
                "deliverable": {"type": "object", "required": ["datetime"],
                                "properties": {"datetime": {"type": "string", "non_empty": true}}},
                "acceptance": "An ISO datetime."}]}"#,
        )
        .unwrap()
    }

    fn result(value: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": value})
    }

    #[test]
    fn structured_content_is_the_value_and_text_is_read_as_json_when_it_is() {
        let structured = result(json!({"content": [], "structuredContent": {"datetime": "2026-12-02T10:00:00Z"}}));
        assert!(matches!(validate(&contracts(), "get_time", &structured).verdict, ValidationVerdict::Held { .. }));
        let text = result(json!({"content": [{"type": "text", "text": "{\"datetime\": \"2026-12-02\"}"}]}));
        assert!(matches!(validate(&contracts(), "get_time", &text).verdict, ValidationVerdict::Held { .. }));
    }

    #[test]
    fn a_result_missing_what_it_must_deliver_is_a_contract_violation_and_the_agent_is_told() {
        let empty = result(json!({"content": [{"type": "text", "text": "{\"timezone\": \"UTC\"}"}]}));
        let validated = validate(&contracts(), "get_time", &empty);
        assert!(matches!(validated.verdict, ValidationVerdict::Violated(_)), "{:?}", validated.verdict);
        let response = violation_response(&json!(7), &validated.outcome);
        assert_eq!(response["id"], 7);
        assert_eq!(response["result"]["isError"], true);
        let text = response["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("contract_violation: outcome of mcp.get_time"), "{text}");
        let typed: Value = serde_json::from_str(response["result"]["content"][1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(typed["error_type"], "contract_violation", "{typed}");
        let schema = violation_response(&json!(8), &schema_violation("get_time", "/datetime", "not a string"));
        let text = schema["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("mcp.get_time does not match its outputSchema at `/datetime`: not a string"), "{text}");
    }

    #[test]
    fn a_tools_own_failure_and_a_tool_without_a_contract_are_not_validated() {
        let failed = result(json!({"content": [{"type": "text", "text": "no clock"}], "isError": true}));
        assert!(matches!(validate(&contracts(), "get_time", &failed).verdict, ValidationVerdict::ErrorNotValidated));
        let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "gone"}});
        assert_eq!(outcome_of("get_time", &error).tool_error().map(|e| e.message.as_str()), Some("gone"));
        let other = result(json!({"content": [{"type": "text", "text": "hello"}]}));
        assert!(matches!(validate(&contracts(), "other", &other).verdict, ValidationVerdict::NoDeliverable));
    }

    #[test]
    fn a_recorded_value_keeps_what_the_report_reads_and_nothing_the_tool_wrote() {
        let value = json!({"status": "partial", "items": [], "token": "sk-secret", "rows": [1, 2], "n": 3});
        assert_eq!(
            recorded_value(&value),
            json!({"status": "partial", "items": [], "token": "…", "rows": "…", "n": "…"})
        );
        assert_eq!(recorded_value(&json!("sk-secret")), json!("…"));
        assert_eq!(recorded_value(&json!(" ")), json!(" "));
        assert_eq!(recorded_value(&json!([])), json!([]));
        assert_eq!(recorded_value(&json!(["sk-secret"])), json!(["…"]));
        assert_eq!(recorded_value(&json!(7)), json!(7));
        let wide: Map<String, Value> = (0..40).map(|i| (format!("m{i:02}"), json!(i))).collect();
        assert_eq!(recorded_value(&Value::Object(wide)).as_object().map(Map::len), Some(16));
    }

    #[test]
    fn a_recorded_event_has_the_digest_of_the_whole_value_and_the_flags_it_raised() {
        let response = result(json!({"content": [], "structuredContent": {"status": "ok", "items": [], "key": "sk"}}));
        let validated = validate(&contracts(), "other", &response);
        let event = recorded_event(4, &validated, None);
        assert_eq!(event["step"], 4);
        assert_eq!(event["contract"], "not_applied");
        assert_eq!(event["outcome"]["value"], json!({"status": "ok", "items": [], "key": "…"}));
        let whole = stringify(&json!({"status": "ok", "items": [], "key": "sk"}));
        assert_eq!(event["result"]["bytes"], whole.len());
        assert_eq!(event["result"]["sha256"], hex(&Sha256::digest(whole.as_bytes())));
        assert_eq!(event["weak_success"], json!(["empty_array_success"]), "flags come from the whole value");
        let failed = Validated {
            outcome: unanswered("slow", error_type::TIMEOUT, &"x".repeat(1_000)),
            verdict: decision::outcomes::ValidationVerdict::ErrorNotValidated,
        };
        let event = recorded_event(5, &failed, None);
        assert_eq!(event["outcome"]["error_type"], "timeout");
        assert_eq!(event["outcome"]["error_message"].as_str().map(|m| m.chars().count()), Some(301));
        assert!(event.get("result").is_none());
    }
}
