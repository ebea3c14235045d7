//! `decision-wasm`: the engine for JavaScript hosts, as one `wasm-bindgen` module.
//!
//! Every export takes text (the contract, a log, a record) and its options as JSON text,
//! each as its UTF-8 bytes (short names as strings), and returns one JSON text:
//! `{"value": …}` with the document the `decision` command prints for the same input, or
//! `{"error": {"code", "message", "path", "line", "column", "diagnostics"}}`. The
//! `decision-contract` npm package (`js/`) parses it and throws the error as an `Error`.
//! Passing JSON text both ways keeps every document byte-identical to the CLI's (key order,
//! number spelling) and the boundary small. Nothing here reads a file, the network or the
//! clock.

pub mod surface;

use serde_json::Value;
use wasm_bindgen::prelude::wasm_bindgen;

use decision::api::Error;

/// How many bytes of working memory a call is given up front for each byte of its input: a
/// parsed JSON value takes up to about this much more than its text.
const RESERVED_PER_INPUT_BYTE: usize = 24;

/// Inputs below this size are served by the memory the module already has.
const RESERVED_FROM_INPUT_BYTES: usize = 1 << 20;

/// The most a call reserves up front (wasm32 memory ends at 4 GiB).
const RESERVED_AT_MOST: usize = 1 << 30;

/// The working memory reserved up front for a call whose inputs are `input_bytes` long
/// (0 for a small input).
pub fn reservation(input_bytes: usize) -> usize {
    if input_bytes < RESERVED_FROM_INPUT_BYTES {
        return 0;
    }
    input_bytes.saturating_mul(RESERVED_PER_INPUT_BYTE).min(RESERVED_AT_MOST)
}

/// Grows the module's memory once, before a large call, to what the call will need.
///
/// Why: the allocator grows wasm memory a little at a time as a call allocates, and an
/// engine may copy the whole memory on each growth, so a first large call in a fresh module
/// was quadratic (a million answers: 40 s, against 1 s once memory had grown). One block
/// allocated and freed here grows it once; the allocator keeps the freed block and serves
/// the call's allocations from it. When that much cannot be had, nothing is reserved and the
/// call runs as before.
fn reserve_for(input_bytes: usize) {
    let wanted = reservation(input_bytes);
    if wanted > 0 {
        let mut block: Vec<u8> = Vec::new();
        let _ = block.try_reserve_exact(wanted);
    }
}

/// The envelope every export returns.
pub fn envelope(result: Result<Value, Error>) -> String {
    let (opening, document) = match result {
        Ok(value) => ("{\"value\":", value),
        Err(failure) => ("{\"error\":", failure.to_json()),
    };
    let text = json_text(&document);
    let mut out = String::with_capacity(opening.len() + text.len() + 1);
    out.push_str(opening);
    out.push_str(&text);
    out.push('}');
    out
}

/// `document` as compact JSON text, written by serde_json's writer: the same text as its
/// `Display`, which goes through `fmt` a piece at a time and took a tenth of a `frame` call
/// in wasm. (Writing a `Value` cannot fail: its keys are strings; `Display` stays the
/// fallback all the same.)
fn json_text(document: &Value) -> String {
    serde_json::to_string(document).unwrap_or_else(|_| document.to_string())
}

/// A text argument, which the package passes as its UTF-8 bytes.
///
/// Why bytes: wasm-bindgen copies a string argument into the module one UTF-16 unit at a
/// time in a JavaScript loop up to its first non-ASCII character, while the package encodes
/// with `TextEncoder.encodeInto` into a reused buffer and bytes are copied in one block.
/// Bytes that are not UTF-8 (only a caller of the raw module can give them) are refused as a
/// usage error.
fn utf8<'a>(what: &str, bytes: &'a [u8]) -> Result<&'a str, Error> {
    // The SIMD check is the fast path (the standard one is scalar in wasm); the standard
    // one only locates the error.
    simdutf8::basic::from_utf8(bytes).or_else(|_| {
        std::str::from_utf8(bytes).map_err(|e| Error::usage(format!("{what}: not UTF-8 (byte {})", e.valid_up_to())))
    })
}

/// `check(text, options)`: see [`surface::check`].
#[wasm_bindgen]
pub fn check(text: &[u8], options: &[u8]) -> String {
    reserve_for(text.len() + options.len());
    envelope(utf8("check options", options).and_then(|options| surface::check(text, options)))
}

/// `explain(text, options)`: see [`surface::explain`].
#[wasm_bindgen]
pub fn explain(text: &[u8], options: &[u8]) -> String {
    reserve_for(text.len() + options.len());
    envelope(utf8("explain options", options).and_then(|options| surface::explain(text, options)))
}

/// `frame(text, options)`: see [`surface::frame`].
#[wasm_bindgen]
pub fn frame(text: &[u8], options: &[u8]) -> String {
    reserve_for(text.len() + options.len());
    envelope(utf8("frame options", options).and_then(|options| surface::frame(text, options)))
}

/// `evaluate(text, options)`: see [`surface::evaluate`].
#[wasm_bindgen]
pub fn evaluate(text: &[u8], options: &[u8]) -> String {
    reserve_for(text.len() + options.len());
    envelope(utf8("evaluate options", options).and_then(|options| surface::evaluate(text, options)))
}

/// `verifyRecord(event)`: see [`surface::verify_record`].
#[wasm_bindgen(js_name = verifyRecord)]
pub fn verify_record(event: &[u8]) -> String {
    reserve_for(event.len());
    envelope(surface::verify_record(event))
}

/// `verifyLog(text, options)`: see [`surface::verify_log`].
#[wasm_bindgen(js_name = verifyLog)]
pub fn verify_log(text: &[u8], options: &[u8]) -> String {
    reserve_for(text.len() + options.len());
    envelope(utf8("verifyLog options", options).and_then(|options| surface::verify_log(text, options)))
}

/// `outcomesCheck(contracts, options)`: see [`surface::outcomes_check`].
#[wasm_bindgen(js_name = outcomesCheck)]
pub fn outcomes_check(contracts: &[u8], options: &[u8]) -> String {
    reserve_for(contracts.len() + options.len());
    envelope(utf8("outcomesCheck: the contracts", contracts).and_then(|contracts| {
        utf8("outcomesCheck options", options).and_then(|options| surface::outcomes_check(contracts, options))
    }))
}

/// `outcomesValidate(contracts, options)`: see [`surface::outcomes_validate`].
#[wasm_bindgen(js_name = outcomesValidate)]
pub fn outcomes_validate(contracts: &[u8], options: &[u8]) -> String {
    reserve_for(contracts.len() + options.len());
    envelope(utf8("outcomesValidate: the contracts", contracts).and_then(|contracts| {
        utf8("outcomesValidate options", options).and_then(|options| surface::outcomes_validate(contracts, options))
    }))
}

/// `outcomesReport(log)`: see [`surface::outcomes_report`].
#[wasm_bindgen(js_name = outcomesReport)]
pub fn outcomes_report(log: &[u8]) -> String {
    reserve_for(log.len());
    envelope(utf8("outcomesReport: the log", log).and_then(surface::outcomes_report))
}

/// `engineInfo()`: see [`surface::engine_info`].
#[wasm_bindgen(js_name = engineInfo)]
pub fn engine_info() -> String {
    envelope(Ok(surface::engine_info()))
}

/// `digestFrame(node, stateJson)`: see [`surface::digest_frame`].
#[wasm_bindgen(js_name = digestFrame)]
pub fn digest_frame(node: &str, state_json: &[u8]) -> String {
    reserve_for(node.len() + state_json.len());
    envelope(surface::digest_frame(node, state_json))
}

/// `digestRequest(frameDigest, questionsJson)`: see [`surface::digest_request`].
#[wasm_bindgen(js_name = digestRequest)]
pub fn digest_request(frame_digest: &str, questions_json: &[u8]) -> String {
    reserve_for(frame_digest.len() + questions_json.len());
    envelope(surface::digest_request(frame_digest, questions_json))
}

/// `digestBytes(bytes)`: see [`surface::digest_of_bytes`].
#[wasm_bindgen(js_name = digestBytes)]
pub fn digest_bytes(bytes: &[u8]) -> String {
    reserve_for(bytes.len());
    envelope(Ok(surface::digest_of_bytes(bytes)))
}

/// `digestStringify(json)`: see [`surface::digest_stringify`].
#[wasm_bindgen(js_name = digestStringify)]
pub fn digest_stringify(json: &[u8]) -> String {
    reserve_for(json.len());
    envelope(utf8("digestStringify: the value", json).and_then(surface::digest_stringify))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_call_reserves_in_proportion_to_its_input_and_a_small_one_nothing() {
        assert_eq!(reservation(0), 0);
        assert_eq!(reservation(RESERVED_FROM_INPUT_BYTES - 1), 0);
        assert_eq!(reservation(8 << 20), (8 * RESERVED_PER_INPUT_BYTE) << 20);
        assert_eq!(reservation(usize::MAX), RESERVED_AT_MOST);
        // Reserving what cannot be had is not an error: the call runs as before.
        reserve_for(usize::MAX);
    }

    #[test]
    fn the_envelope_writes_a_document_as_its_display_does() {
        let document = serde_json::json!({
            "text": "quote \" backslash \\ newline \n tab \t control \u{1} é 😀 \u{2028}",
            "numbers": [0, -0.0, 1.5, -2, 1e300, 18446744073709551615u64, -9223372036854775808i64],
            "nested": {"empty": {}, "list": [], "null": null, "flags": [true, false]},
        });
        assert_eq!(json_text(&document), document.to_string());
        assert_eq!(envelope(Ok(document.clone())), format!("{{\"value\":{document}}}"));
        let refused = Error::usage("frame: `state` is required");
        let expected = format!("{{\"error\":{}}}", refused.to_json());
        assert_eq!(envelope(Err(refused)), expected);
    }
}
