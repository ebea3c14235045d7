//! Property tests: the two serialisers agree on every value, and the record reader never
//! panics, whatever the bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_protocol::digest::{ObjectText, Scanner, canonicalize, frame_digest, raw, stringify};
use decision_protocol::record::{EventRead, read_event, verify_record};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,6}",
        (0u32..20).prop_map(|n| n.to_string()),
        Just("01".to_owned()),
        Just("-1".to_owned()),
        Just("4294967295".to_owned()),
        "\\PC{0,4}",
    ]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        prop_oneof![Just(1e21), Just(1e-7), Just(0.1 + 0.2), Just(5e-324), Just(-0.0), Just(123e-20)]
            .prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        "\\PC{0,12}".prop_map(Value::String),
        "[\\x00-\\x1f\"\\\\/\u{7f}\u{2028}]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6).prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Re-serialising any JSON text of a value gives exactly what stringify gives.
    #[test]
    fn canonical_text_equals_stringify(v in value()) {
        let expected = stringify(&v);
        let compact = serde_json::to_string(&v).unwrap();
        prop_assert_eq!(String::from_utf8(canonicalize(compact.as_bytes()).unwrap()).unwrap(), expected.clone());
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        prop_assert_eq!(String::from_utf8(canonicalize(pretty.as_bytes()).unwrap()).unwrap(), expected.clone());
        // Canonical output is a fixed point and a standard parser reads it back.
        prop_assert_eq!(canonicalize(expected.as_bytes()).unwrap(), expected.as_bytes().to_vec());
        prop_assert!(serde_json::from_str::<Value>(&expected).is_ok());
    }

    /// Frame digests from raw text equal frame digests from values.
    #[test]
    fn raw_frame_digest_equals_value_digest(pairs in prop::collection::vec((key(), value()), 0..8), node in "\\PC{0,8}") {
        let state: Map<String, Value> = pairs.into_iter().collect();
        let text = serde_json::to_string(&state).unwrap();
        let mut scanner = Scanner::new(text.as_bytes()).unwrap();
        let (mut out, mut members) = (Vec::new(), Vec::new());
        scanner.object(&mut out, &mut members).unwrap();
        let node_json = stringify(&Value::String(node.clone()));
        prop_assert_eq!(raw::frame_digest(node_json.as_bytes(), &out, &members), frame_digest(&node, &state));
    }

    /// An object written once as text gives its `JSON.stringify` text and its frame digest.
    #[test]
    fn object_text_gives_the_text_and_the_frame_digest(pairs in prop::collection::vec((key(), value()), 0..8), node in "\\PC{0,8}") {
        let state: Map<String, Value> = pairs.into_iter().collect();
        let text = ObjectText::new(&state);
        prop_assert_eq!(text.text(), stringify(&Value::Object(state.clone())));
        prop_assert_eq!(text.frame_digest(&node), frame_digest(&node, &state));
    }

    /// Arbitrary bytes never panic the reader.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = read_event(&bytes);
        let _ = canonicalize(&bytes);
    }

    /// A valid record with any one byte changed, dropped or cut never panics the reader or
    /// the verifier.
    #[test]
    fn mutated_records_never_panic(at in 0usize..400, byte in any::<u8>(), mode in 0u8..3) {
        let good = br#"{"type":"decision","step":2,"id":"grade_risk","state":{"tool":"Bash","base_risk":2,"task":"list \ud800 the files"},"frame":{"digest":"64a553646d6147af"},"requestDigest":"46be7920fb6250bb","sentFrameDigest":"64a553646d6147af","batchIds":["grade_risk"],"questions":{"risk":{"type":"score"}},"sentQuestions":{"risk":{"type":"score"}}}"#;
        let mut bytes = good.to_vec();
        let at = at % bytes.len();
        match mode {
            0 => bytes[at] = byte,
            1 => { bytes.remove(at); }
            _ => bytes.truncate(at),
        }
        if let Ok(EventRead::Decision(Ok(record))) = read_event(&bytes) {
            let _ = verify_record(&record);
        }
    }
}
