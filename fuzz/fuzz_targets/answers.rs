//! Answer normalisation and validation never panic, and whatever validation accepts obeys the
//! rules; the indexed decision state's interpretation never panics either.
#![no_main]

use decision::policy::Answer;
use decision::ask::{Questions, WireQuestion, normalize, validate_answers};
use decision::space::{Applicable, DecisionState, Evidence, HostObject, Operation, Snapshot, SpaceConfig};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn questions() -> Questions {
    let mut q = Questions::new();
    q.insert("n", WireQuestion::Noul { instructions: "?".into(), criteria: None });
    q.insert(
        "c",
        WireQuestion::Choice {
            instructions: "?".into(),
            criteria: vec![("a".into(), String::new()), ("b".into(), String::new())],
        },
    );
    q.insert("s", WireQuestion::Score { instructions: "?".into(), criteria: vec![String::new(); 3] });
    q
}

fn space() -> DecisionState<u32> {
    let objects = (0..4)
        .map(|i| HostObject {
            id: i,
            kind: "k".into(),
            label: format!("o{i}"),
            value: String::new(),
            state: vec![],
            applies: vec![Applicable::plain("CLICK")],
        })
        .collect();
    let ops = vec![Operation::new("CLICK", "c", true), Operation::new("WAIT", "w", false)];
    DecisionState::build(
        Snapshot { revision: "r".into(), objects },
        &ops,
        &SpaceConfig { cap: 3, ..SpaceConfig::default() },
    )
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    let questions = questions();
    let normalized = normalize(&questions, Some(&value), Vec::new());
    if let Ok(answers) = validate_answers(&questions, &normalized.answers) {
        for answer in answers.values() {
            match answer {
                Answer::Noul { noul } => assert!((0.0..=1.0).contains(noul)),
                Answer::Choice { probabilities, .. } | Answer::Score { probabilities, .. } => {
                    assert!(probabilities.values().all(|p| (0.0..=1.0).contains(p)));
                    assert!((probabilities.values().sum::<f64>() - 1.0).abs() <= 0.02 + 1e-9);
                }
            }
        }
    }
    if let Value::Object(map) = &value {
        let evidence =
            Evidence { request_digest: "d".into(), model: "m".into(), provider: "p".into(), policy: "x".into() };
        if let Ok(observation) = space().interpret("r", map, &evidence) {
            if let Some(target) = observation.target {
                assert!(target.row >= 1 && target.row <= 3, "never a truncated row");
            }
        }
    }
});
