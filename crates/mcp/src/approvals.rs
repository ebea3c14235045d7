//! Approvals of held calls, through the runtime's approval API
//! ([`decision::log::approval`]): the gateway is the log's one writer, so it records the held
//! call (`approval:pending`), the answer bound to it (`approval:answer`, a MAC under the log
//! key on a keyed log, a digest otherwise) and the use of an approval (`approval:used`)
//! itself. `decision approvals LOG` lists the held calls and `decision replay` audits them
//! exactly as it audits the coding host's.
//!
//! An approval is bound to the exact call: its id carries the step and the start of the
//! call's fingerprint (SHA-256 of `JSON.stringify({"tool", "input"})`, the input being
//! `JSON.stringify` of the call's arguments, recorded as that string), the pending line
//! carries the decision's request digest, and an answer's binding covers the session, the
//! approval, the fingerprint, the request digest and the pending line. A person answers in one
//! of two ways: through the client's own elicitation capability (the gateway builds and binds
//! the answer), or with `decision approve LOG ID` from another process, which builds the bound
//! answer there and hands it to the gateway through the inbox beside the log ([`crate::inbox`]);
//! the gateway checks that answer before it appends it.

use decision::log::approval::{PendingCall, Verdict};
use serde_json::{Map, Value, json};

/// What a held call's id is made of: `ap-RUN-STEP-` and the first 12 hex digits of the call's
/// fingerprint.
pub fn approval_id(run: u64, step: u64, tool: &str, input: &str) -> String {
    let fingerprint = decision::log::approval::call_fingerprint(tool, &json!(input));
    format!("ap-{run}-{step}-{}", fingerprint.get(..12).unwrap_or(&fingerprint))
}

/// The held call of step `step` as [`decision::log::approval::append_pending`] records it:
/// its input is `input` (`JSON.stringify` of the arguments) as a string, and the gateway's
/// own fields are `step`, `rule` and `reason` (the rule that asked for a person).
pub fn pending_call(run: u64, step: u64, tool: &str, input: &str, request_digest: &str, rule: &str) -> PendingCall {
    let mut extra = Map::new();
    extra.insert("step".into(), json!(step));
    extra.insert("rule".into(), json!(rule));
    extra.insert("reason".into(), json!(rule));
    PendingCall {
        id: approval_id(run, step, tool, input),
        tool: tool.to_string(),
        input: json!(input),
        request_digest: request_digest.to_string(),
        extra,
    }
}

/// The `elicitation/create` request (id `request_id`) that asks the person at the client
/// whether the held call of `tool` with `input` may run: one required boolean, `approve`.
/// What the server wrote is shown on one line, without control characters.
pub fn elicitation_request(request_id: &str, tool: &str, input: &str, rule: &str) -> Value {
    let message = format!(
        "The decision gateway holds a call of the tool `{}` for your approval ({}). Arguments: {}",
        decision::terminal::one_line(tool),
        rule,
        decision::terminal::one_line(input)
    );
    json!({"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": {
        "message": message,
        "requestedSchema": {"type": "object", "required": ["approve"], "properties": {
            "approve": {"type": "boolean", "title": "Run this call?"}}}}})
}

/// What a client's response to [`elicitation_request`] answers: an approval only when the
/// person accepted with `approve: true`; anything else (decline, cancel, an error, another
/// shape) is a denial.
pub fn elicited_verdict(response: &Value) -> Verdict {
    let result = response.get("result");
    let action = result.and_then(|r| r.get("action")).and_then(Value::as_str);
    let approve = result.and_then(|r| r.get("content")).and_then(|c| c.get("approve")).and_then(Value::as_bool);
    match (action, approve) {
        (Some("accept"), Some(true)) => Verdict::Approve,
        (Some("accept"), _) => Verdict::Deny("the person did not approve it at the client".into()),
        (Some("cancel"), _) => Verdict::Deny("the person cancelled the question at the client".into()),
        (Some("decline"), _) => Verdict::Deny("the person declined it at the client".into()),
        _ if response.get("error").is_some() => {
            Verdict::Deny("the client could not ask the person (its elicitation failed)".into())
        }
        _ => Verdict::Deny("the client's answer was not an approval".into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_held_call_is_recorded_with_its_step_rule_and_input_as_a_string() {
        let call = pending_call(0, 3, "write_file", "{\"path\":\"a.txt\"}", "rd", "score:harm >= 2 → ask_human");
        assert_eq!(call.id.len(), "ap-0-3-".len() + 12);
        assert!(call.id.starts_with("ap-0-3-"));
        assert_eq!(call.input, json!("{\"path\":\"a.txt\"}"));
        assert_eq!(call.extra["step"], json!(3));
        assert_ne!(call.id, pending_call(0, 3, "write_file", "{\"path\":\"b.txt\"}", "rd", "r").id);
    }

    #[test]
    fn only_an_accepted_elicitation_with_approve_true_approves() {
        let accept =
            |approve: Value| json!({"id": "e", "result": {"action": "accept", "content": {"approve": approve}}});
        assert_eq!(elicited_verdict(&accept(json!(true))), Verdict::Approve);
        for refused in [
            accept(json!(false)),
            accept(json!("true")),
            json!({"id": "e", "result": {"action": "decline"}}),
            json!({"id": "e", "result": {"action": "cancel"}}),
            json!({"id": "e", "result": {}}),
            json!({"id": "e", "error": {"code": -1, "message": "x"}}),
        ] {
            assert!(matches!(elicited_verdict(&refused), Verdict::Deny(_)), "{refused}");
        }
        let request = elicitation_request("decision-mcp-1", "write\u{1b}[2J", "{}", "rule");
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["requestedSchema"]["required"], json!(["approve"]));
        assert!(!request["params"]["message"].as_str().unwrap().contains('\u{1b}'));
    }
}
