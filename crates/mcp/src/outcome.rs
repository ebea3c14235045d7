//! What a tool returned, as a tool outcome checked against the deliverable contract the
//! gateway was given for it (`decision mcp --outcome-contracts FILE`, tool [`TOOL_ROLE`],
//! method the tool's name) and recorded as `tool:outcome` for `decision outcomes report`.

use decision::outcomes::{ContractSet, Outcome, ToolError, Validated, error_type};
use serde_json::{Map, Value, json};

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
}
