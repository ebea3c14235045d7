//! The contracts loader never panics on any input; a file that loads validates any JSON value
//! without panicking, and a value that holds comes back unchanged; the log reader never panics.
#![no_main]

use decision::outcomes::{Outcome, ValidationVerdict, load_contracts, report};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Split the input: a contracts file, then (after a NUL) a value to validate.
    let (contracts, value) = text.split_once('\0').unwrap_or((text, "null"));
    let _ = report(text.as_bytes());
    let Ok(set) = load_contracts(contracts) else { return };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(value) else { return };
    for contract in set.contracts() {
        let outcome = Outcome::ok(value.clone());
        let validated = contract.validate(outcome.clone());
        match validated.verdict {
            ValidationVerdict::Held { .. } | ValidationVerdict::NoDeliverable => assert_eq!(validated.outcome, outcome),
            ValidationVerdict::Violated(_) => assert_eq!(validated.outcome.error_type(), Some("contract_violation")),
            ValidationVerdict::ErrorNotValidated => unreachable!("an ok outcome is validated"),
        }
    }
});
