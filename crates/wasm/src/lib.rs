//! `decision-wasm`: the engine for JavaScript hosts, as one `wasm-bindgen` module.
//!
//! Every export takes text (the contract, a log, a record) and its options as JSON text,
//! and returns one JSON text: `{"value": …}` with the document the `decision` command prints
//! for the same input, or `{"error": {"code", "message", "path", "line", "column",
//! "diagnostics"}}`. The `decision-contract` npm package (`js/`) parses it and throws the
//! error as an `Error`. Passing JSON text both ways keeps every document byte-identical to
//! the CLI's (key order, number spelling) and the boundary small. Nothing here reads a file,
//! the network or the clock.

pub mod failure;
pub mod surface;

use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::failure::Failure;

/// The envelope every export returns.
pub fn envelope(result: Result<Value, Failure>) -> String {
    let mut out = String::new();
    match result {
        Ok(value) => {
            out.push_str("{\"value\":");
            out.push_str(&value.to_string());
        }
        Err(failure) => {
            out.push_str("{\"error\":");
            out.push_str(&failure.to_json().to_string());
        }
    }
    out.push('}');
    out
}

/// `check(text, options)`: see [`surface::check`].
#[wasm_bindgen]
pub fn check(text: &[u8], options: &str) -> String {
    envelope(surface::check(text, options))
}

/// `explain(text, options)`: see [`surface::explain`].
#[wasm_bindgen]
pub fn explain(text: &[u8], options: &str) -> String {
    envelope(surface::explain(text, options))
}

/// `frame(text, options)`: see [`surface::frame`].
#[wasm_bindgen]
pub fn frame(text: &[u8], options: &str) -> String {
    envelope(surface::frame(text, options))
}

/// `evaluate(text, options)`: see [`surface::evaluate`].
#[wasm_bindgen]
pub fn evaluate(text: &[u8], options: &str) -> String {
    envelope(surface::evaluate(text, options))
}

/// `verifyRecord(event)`: see [`surface::verify_record`].
#[wasm_bindgen(js_name = verifyRecord)]
pub fn verify_record(event: &[u8]) -> String {
    envelope(surface::verify_record(event))
}

/// `verifyLog(text, options)`: see [`surface::verify_log`].
#[wasm_bindgen(js_name = verifyLog)]
pub fn verify_log(text: &[u8], options: &str) -> String {
    envelope(surface::verify_log(text, options))
}

/// `outcomesCheck(contracts, options)`: see [`surface::outcomes_check`].
#[wasm_bindgen(js_name = outcomesCheck)]
pub fn outcomes_check(contracts: &str, options: &str) -> String {
    envelope(surface::outcomes_check(contracts, options))
}

/// `outcomesValidate(contracts, options)`: see [`surface::outcomes_validate`].
#[wasm_bindgen(js_name = outcomesValidate)]
pub fn outcomes_validate(contracts: &str, options: &str) -> String {
    envelope(surface::outcomes_validate(contracts, options))
}

/// `outcomesReport(log)`: see [`surface::outcomes_report`].
#[wasm_bindgen(js_name = outcomesReport)]
pub fn outcomes_report(log: &str) -> String {
    envelope(surface::outcomes_report(log))
}

/// `engineInfo()`: see [`surface::engine_info`].
#[wasm_bindgen(js_name = engineInfo)]
pub fn engine_info() -> String {
    envelope(Ok(surface::engine_info()))
}

/// `digestFrame(node, stateJson)`: see [`surface::digest_frame`].
#[wasm_bindgen(js_name = digestFrame)]
pub fn digest_frame(node: &str, state_json: &str) -> String {
    envelope(surface::digest_frame(node, state_json))
}

/// `digestRequest(frameDigest, questionsJson)`: see [`surface::digest_request`].
#[wasm_bindgen(js_name = digestRequest)]
pub fn digest_request(frame_digest: &str, questions_json: &str) -> String {
    envelope(surface::digest_request(frame_digest, questions_json))
}

/// `digestStringify(json)`: see [`surface::digest_stringify`].
#[wasm_bindgen(js_name = digestStringify)]
pub fn digest_stringify(json: &str) -> String {
    envelope(surface::digest_stringify(json))
}
