//! The package's functions in plain Rust: text and JSON options in, the `decision`
//! command's JSON documents out (built by `decision::api`, so the CLI, Python and
//! JavaScript print the same bytes), or an [`Error`] (the one refusal every entrance reports). Nothing here reads a file, the
//! network or the clock; a `path` only names the input in documents and messages.

use decision::api;
use decision::api::check::CheckRequest;
use decision::api::eval::EvalRequest;
use decision::api::frame::FrameRequest;
use decision::api::replay::ReplayRequest;
use decision::api::{Code, Error};
use decision::digest::{
    digest_bytes, frame_digest, frame_digest_of_json, request_digest, request_digest_of_json, stringify,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// What a contract is called when the caller gives it no name.
pub const DEFAULT_CONTRACT_PATH: &str = "DECISION.md";

fn options<T: DeserializeOwned + Default>(what: &str, text: &str) -> Result<T, Error> {
    if text.trim().is_empty() {
        return Ok(T::default());
    }
    serde_json::from_str(text).map_err(|e| Error::usage(format!("{what} options: {e}")))
}

/// A command's request from its options object, and the inputs beside it (`inputs`: the
/// names this entrance reads itself, such as `path` and `state`), taken out first. Options
/// are named in JavaScript's camelCase (`denyWarnings`); the request's fields are the
/// snake_case names every entrance shares (`deny_warnings`).
fn request_and_inputs<T: DeserializeOwned + Default>(
    command: &str,
    options_json: &str,
    inputs: &[&str],
) -> Result<(T, Map<String, Value>), Error> {
    let options: Map<String, Value> = options(command, options_json)?;
    let mut taken = Map::new();
    let mut rest = Map::new();
    for (name, value) in options {
        if inputs.contains(&name.as_str()) {
            taken.insert(name, value);
        } else {
            rest.insert(api::snake_case(&name), value);
        }
    }
    Ok((api::request(command, Value::Object(rest))?, taken))
}

/// The contract's name among the inputs (`path`), if one was given.
fn path_input(command: &str, inputs: &mut Map<String, Value>) -> Result<Option<String>, Error> {
    match inputs.remove("path") {
        Some(Value::String(path)) => Ok(Some(path)),
        None | Some(Value::Null) => Ok(None),
        Some(_) => Err(Error::usage(format!("{command} options: `path` must be a string"))),
    }
}

/// A JSON object given as an object, or as its text (whose key order is then kept exactly).
fn object(what: &str, value: Value) -> Result<Map<String, Value>, Error> {
    let value = match value {
        Value::String(text) => {
            serde_json::from_str(&text).map_err(|e| Error::usage(format!("{what}: not JSON: {e}")))?
        }
        other => other,
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Error::usage(format!("{what}: expected a JSON object"))),
    }
}

/// `decision check --format json`'s object for one file (`path` is `null` when unnamed). The
/// options are [`CheckRequest`]'s, with the inputs beside them: `path` and `capabilities` (a
/// host report, as an object or its JSON text).
pub fn check(text: &[u8], options_json: &str) -> Result<Value, Error> {
    let (request, mut inputs): (CheckRequest, _) =
        request_and_inputs("check", options_json, &["path", "capabilities"])?;
    let path = path_input("check", &mut inputs)?;
    let report_text = inputs.remove("capabilities").filter(|report| !report.is_null()).map(|report| match report {
        Value::String(text) => text,
        other => other.to_string(),
    });
    let capabilities = request.host(report_text.as_deref().map(|text| ("capabilities", text)))?;
    let report = request.check(text, capabilities.as_ref());
    Ok(api::check::file_json(path.as_deref(), &report))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct ExplainArgs {
    path: Option<String>,
}

/// The explain table as data, with `text` exactly what `decision explain` prints.
pub fn explain(text: &[u8], options_json: &str) -> Result<Value, Error> {
    let args: ExplainArgs = options("explain", options_json)?;
    let path = args.path.as_deref().unwrap_or(DEFAULT_CONTRACT_PATH);
    Ok(api::explain::document(path, text))
}

/// `decision frame --format json`: the frame artifact, the questions and both digests. The
/// options are [`FrameRequest`]'s, with the inputs beside them: `path` (the contract's name)
/// and `state` (an object, or its JSON text).
pub fn frame(text: &[u8], options_json: &str) -> Result<Value, Error> {
    let (request, mut inputs): (FrameRequest, _) = request_and_inputs("frame", options_json, &["path", "state"])?;
    let path = path_input("frame", &mut inputs)?.unwrap_or_else(|| DEFAULT_CONTRACT_PATH.to_owned());
    let state = inputs.remove("state").filter(|state| !state.is_null());
    let block_id = request.block()?;
    let state = object("state", state.ok_or_else(|| Error::usage("frame: `state` is required"))?)?;
    let contract = api::parse_contract(&path, text)?;
    let block = api::find_block(&path, &contract, block_id)?;
    api::frame::respond(&path, block, &state, &request)
}

/// `decision eval --format json`: the answers validated and the block's policy evaluated. The
/// options are [`EvalRequest`]'s, with the inputs beside them: `path`, `answers` and
/// `candidates` (each an object, or its JSON text).
pub fn evaluate(text: &[u8], options_json: &str) -> Result<Value, Error> {
    let inputs = ["path", "answers", "candidates"];
    let (request, mut inputs): (EvalRequest, _) = request_and_inputs("evaluate", options_json, &inputs)?;
    let path = path_input("evaluate", &mut inputs)?.unwrap_or_else(|| DEFAULT_CONTRACT_PATH.to_owned());
    let block_id = request.block()?;
    let answers = inputs.remove("answers").filter(|answers| !answers.is_null());
    let answers = object("answers", answers.ok_or_else(|| Error::usage("evaluate: `answers` is required"))?)?;
    let contract = api::parse_contract(&path, text)?;
    let block = api::find_block(&path, &contract, block_id)?;
    let policy = api::eval::gated_policy(&contract, block, &request.gates)?;
    let candidates = match inputs.remove("candidates").filter(|candidates| !candidates.is_null()) {
        None => api::eval::Candidates::new(),
        Some(value) => api::eval::candidates_from_value("candidates", Value::Object(object("candidates", value)?))?,
    };
    let questions = api::eval::block_questions(block, &candidates)?;
    Ok(api::eval::evaluate(block, &policy, &questions, &answers).to_json())
}

/// One decision event verified on its own: `{"schema", "node", "step", "status", "checks"}`.
pub fn verify_record(event: &[u8]) -> Result<Value, Error> {
    api::replay::verify_record(event).map_err(Error::from)
}

/// What the log is called in the document when the caller gives it no name.
pub const DEFAULT_LOG_PATH: &str = "session.jsonl";

/// `decision replay --format json` for one log given as text. The options are
/// [`ReplayRequest`]'s (`verbose`, `maxLine`; `jobs` is accepted, and the log is verified on
/// one thread), with the log's name, `path`, beside them.
pub fn verify_log(text: &[u8], options_json: &str) -> Result<Value, Error> {
    let (request, mut inputs): (ReplayRequest, _) = request_and_inputs("verifyLog", options_json, &["path"])?;
    let path = path_input("verifyLog", &mut inputs)?;
    Ok(api::replay::verify_text(path.as_deref().unwrap_or(DEFAULT_LOG_PATH), text, &request).0)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct OutcomeArgs {
    path: Option<String>,
    tool: Option<String>,
    method: Option<String>,
    outcome: Option<Value>,
}

/// What the contracts file is called when the caller gives it no name.
pub const DEFAULT_CONTRACTS_PATH: &str = "contracts.json";

/// Lints a contracts file: `decision outcomes check --format json`.
pub fn outcomes_check(contracts: &str, options_json: &str) -> Result<Value, Error> {
    let args: OutcomeArgs = options("outcomes.check", options_json)?;
    Ok(api::outcomes::check_document(args.path.as_deref().unwrap_or(DEFAULT_CONTRACTS_PATH), contracts))
}

/// Validates one outcome against its tool and method's contract: `{"outcome", "verdict"}`,
/// where `outcome` is exactly what `decision outcomes validate --format json` prints and
/// `verdict` is `held`, `violated`, `no_deliverable` or `not_validated` (an error outcome).
pub fn outcomes_validate(contracts: &str, options_json: &str) -> Result<Value, Error> {
    use decision::outcomes::ValidationVerdict;
    let args: OutcomeArgs = options("outcomes.validate", options_json)?;
    let path = args.path.as_deref().unwrap_or(DEFAULT_CONTRACTS_PATH);
    let required = |field: &str| Error::usage(format!("outcomes.validate: `{field}` is required"));
    let tool = args.tool.ok_or_else(|| required("tool"))?;
    let method = args.method.ok_or_else(|| required("method"))?;
    let document = match args.outcome.ok_or_else(|| required("outcome"))? {
        Value::String(text) => {
            serde_json::from_str(&text).map_err(|e| Error::new(Code::Outcome, format!("outcome: invalid JSON: {e}")))?
        }
        other => other,
    };
    let set = api::outcomes::load_contracts(path, contracts)?;
    let contract = api::outcomes::contract_for(&set, path, &tool, &method)?;
    let validation = api::outcomes::validate(contract, &tool, &method, "outcome", &document)?;
    let verdict = match validation.verdict {
        ValidationVerdict::Held { .. } => "held",
        ValidationVerdict::Violated(_) => "violated",
        ValidationVerdict::NoDeliverable => "no_deliverable",
        _ => "not_validated",
    };
    Ok(json!({"outcome": validation.document, "verdict": verdict}))
}

/// The advisory report over outcome events given as text: `decision outcomes report --format json`.
pub fn outcomes_report(log: &str) -> Result<Value, Error> {
    api::outcomes::report("log", log.as_bytes())
}

/// `{"version", "contract_schemas", "record_schema"}`.
pub fn engine_info() -> Value {
    api::engine_info()
}

/// `frameDigest(node, state)` of a state given as JSON text, as its UTF-8 bytes (its key
/// order is kept).
pub fn digest_frame(node: &str, state_json: &[u8]) -> Result<Value, Error> {
    // Hashed from the text as it is read, as replay reads a record (which checks its UTF-8
    // once); text that does not read that way is read into a value, which says what is
    // wrong with it.
    if let Ok(digest) = frame_digest_of_json(node, state_json) {
        return Ok(Value::String(digest));
    }
    let state: Value = serde_json::from_slice(state_json).map_err(|e| Error::usage(format!("state: not JSON: {e}")))?;
    let state = object("state", state)?;
    Ok(Value::String(frame_digest(node, &state)))
}

/// `requestDigest(frameDigest, questions)` of questions given as JSON text (its UTF-8 bytes).
pub fn digest_request(frame: &str, questions_json: &[u8]) -> Result<Value, Error> {
    if let Ok(digest) = request_digest_of_json(frame, questions_json) {
        return Ok(Value::String(digest));
    }
    let questions: Value =
        serde_json::from_slice(questions_json).map_err(|e| Error::usage(format!("questions: not JSON: {e}")))?;
    Ok(Value::String(request_digest(frame, &questions)))
}

/// The digest of any bytes, as the reference takes it of a pre-image: the first 16 lowercase
/// hex characters of their SHA-256.
pub fn digest_of_bytes(bytes: &[u8]) -> Value {
    Value::String(digest_bytes(bytes))
}

/// `JSON.stringify` of a value given as JSON text, byte for byte as the reference writes it.
pub fn digest_stringify(json_text: &str) -> Result<Value, Error> {
    let value: Value = serde_json::from_str(json_text).map_err(|e| Error::usage(format!("not JSON: {e}")))?;
    Ok(Value::String(stringify(&value)))
}
