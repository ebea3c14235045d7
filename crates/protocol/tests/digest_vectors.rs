//! Reference conformance: every vector in the reference's `digests.json` reproduces, through both serialisers: the one
//! for values built in Rust and the one for JSON text read back from a log.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
// Tests read the shared vectors file at run time; the library itself stays pure.
#![allow(clippy::disallowed_methods)]

use decision_protocol::digest::{
    ObjectText, Scanner, canonicalize, digest_bytes, frame_digest, frame_preimage, raw, request_digest,
    request_digest_of_text, request_preimage, stringify,
};
use serde_json::Value;

#[path = "../../core/tests/reference/mod.rs"]
mod reference;

/// The reference digest vectors, or `None` (after a printed skip line) without the reference files.
fn vectors() -> Option<Value> {
    Some(serde_json::from_str(reference::text("vectors/digests.json")?).unwrap())
}

fn str_of<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key].as_str().unwrap_or_else(|| panic!("vector field {key} in {case}"))
}

#[test]
fn frame_vectors_reproduce() {
    let Some(vectors) = vectors() else { return };
    let cases = vectors["frame"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let name = str_of(case, "name");
        let node = str_of(case, "node");
        let state_json = str_of(case, "state_json");
        let state: Value = serde_json::from_str(state_json).unwrap();
        let state = state.as_object().unwrap();
        assert_eq!(frame_preimage(node, state), str_of(case, "preimage"), "{name}: pre-image");
        assert_eq!(frame_digest(node, state), str_of(case, "digest"), "{name}: digest");
        // Written once as the object's text, then hashed piece by piece.
        let text = ObjectText::new(state);
        assert_eq!(text.text(), stringify(&Value::Object(state.clone())), "{name}: object text");
        assert_eq!(text.frame_digest(node), str_of(case, "digest"), "{name}: digest from the text");

        // The same digest from the raw text, as a log reader computes it.
        let mut scanner = Scanner::new(state_json.as_bytes()).unwrap();
        let (mut text, mut members) = (Vec::new(), Vec::new());
        scanner.object(&mut text, &mut members).unwrap();
        let node_json = stringify(&Value::String(node.to_owned()));
        assert_eq!(raw::frame_digest(node_json.as_bytes(), &text, &members), str_of(case, "digest"), "{name}: raw");
    }
}

#[test]
fn request_vectors_reproduce() {
    let Some(vectors) = vectors() else { return };
    let cases = vectors["request"].as_array().unwrap();
    assert!(cases.len() >= 5);
    for case in cases {
        let name = str_of(case, "name");
        let frame = str_of(case, "frame_digest");
        let questions_json = str_of(case, "questions_json");
        let questions: Value = serde_json::from_str(questions_json).unwrap();
        assert_eq!(request_preimage(frame, &questions), str_of(case, "preimage"), "{name}: pre-image");
        assert_eq!(request_digest(frame, &questions), str_of(case, "digest"), "{name}: digest");
        let canonical = canonicalize(questions_json.as_bytes()).unwrap();
        let frame_json = format!("\"{frame}\"");
        assert_eq!(raw::request_digest(frame_json.as_bytes(), &canonical), str_of(case, "digest"), "{name}: raw");
        let text = stringify(&questions);
        assert_eq!(request_digest_of_text(frame, &text), str_of(case, "digest"), "{name}: of text");
    }
}

#[test]
fn stringify_vectors_reproduce() {
    let Some(vectors) = vectors() else { return };
    let cases = vectors["stringify"].as_array().unwrap();
    assert!(cases.len() >= 5);
    for case in cases {
        let name = str_of(case, "name");
        let input = str_of(case, "input_json");
        let expected = str_of(case, "expected");
        let canonical = String::from_utf8(canonicalize(input.as_bytes()).unwrap()).unwrap();
        assert_eq!(canonical, expected, "{name}: from text");
        assert_eq!(digest_bytes(canonical.as_bytes()), str_of(case, "sha256_16"), "{name}: digest");
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(stringify(&value), expected, "{name}: from value");
    }
}

#[test]
fn a_changed_byte_changes_the_digest() {
    let Some(vectors) = vectors() else { return };
    let case = &vectors["frame"][0];
    let mut state: Value = serde_json::from_str(str_of(case, "state_json")).unwrap();
    state["base_risk"] = Value::from(3);
    assert_ne!(frame_digest(str_of(case, "node"), state.as_object().unwrap()), str_of(case, "digest"));
}
