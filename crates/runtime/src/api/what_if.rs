//! `decision what-if` as typed calls: the recorded decisions of logs re-evaluated under
//! another contract (or other thresholds) on their recorded answers, no model asked. The CLI
//! and the Python package (`decision_contract.what_if`, and on a cluster
//! `decision_contract.fleet.what_if_fleet`) make the same report through these.

use std::io::Read;

use decision_core::Contract;
use serde::Deserialize;

use super::{Code, Error};
use crate::log::what_if::{WhatIf, WhatIfError, WhatIfReport, what_if_reader};
use decision_core::policy::parse_gates;

/// What `what-if` is asked, by the names every entrance takes (the command line's `--gate`,
/// Python's keywords). The logs and the contract each entrance reads its own way.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct WhatIfRequest {
    /// Threshold overrides, all or nothing: `block.question=value` (or
    /// `block.question[i]=value`), each given to `--gate` on the command line, or as a list
    /// of those or an object of `block.question` → value in Python.
    #[cfg_attr(feature = "cli", arg(long = "gate", value_name = "block.question=value"))]
    #[serde(deserialize_with = "super::eval::gate_list")]
    pub gates: Vec<String>,
}

impl WhatIfRequest {
    /// The comparison asked for under `contract` (named `label` in messages): see [`prepare`].
    pub fn prepare(&self, contract: &Contract, label: &str) -> Result<WhatIf, Error> {
        prepare(contract, label, &self.gates.join("\n"))
    }
}

/// The comparison to run: `contract` (named `label` in messages) with the threshold
/// overrides `gates` (`block.question=value` lines, as `--gate` takes them; empty for none).
pub fn prepare(contract: &Contract, label: &str, gates: &str) -> Result<WhatIf, Error> {
    let gates = parse_gates(gates).map_err(|e| Error::usage(e.to_string()))?;
    WhatIf::new(contract, &gates).map_err(|e| {
        let code = if matches!(e, WhatIfError::Policy { .. }) { Code::Policy } else { Code::Usage };
        Error::new(code, format!("{label}: {e}"))
    })
}

/// Adds the decisions of one log, read from `reader` and named `shown`, to `report`.
pub fn read_log(what_if: &WhatIf, shown: &str, reader: impl Read, report: &mut WhatIfReport) -> Result<(), Error> {
    what_if_reader(what_if, shown, reader, report).map_err(|e| Error::io(shown, format!("cannot read {shown}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::parse_contract;

    const CONTRACT: &str = include_str!("../../../../examples/support-triage/DECISION.md");
    const LOG: &str = include_str!("../../../../examples/support-triage/session.jsonl");

    #[test]
    fn the_same_contract_changes_nothing_and_a_stricter_threshold_changes_a_decision() {
        let contract = parse_contract("DECISION.md", CONTRACT.as_bytes()).unwrap();
        let same = prepare(&contract, "DECISION.md", "").unwrap();
        let mut report = WhatIfReport::default();
        read_log(&same, "session.jsonl", LOG.as_bytes(), &mut report).unwrap();
        assert_eq!((report.decisions, report.changed), (3, 0));
        let stricter = prepare(&contract, "DECISION.md", "route.queue=0.99").unwrap();
        let mut report = WhatIfReport::default();
        read_log(&stricter, "session.jsonl", LOG.as_bytes(), &mut report).unwrap();
        assert!(report.changed >= 1, "{report:?}");
    }

    #[test]
    fn a_bad_gate_is_a_usage_error_and_an_unreadable_log_an_io_error() {
        let contract = parse_contract("DECISION.md", CONTRACT.as_bytes()).unwrap();
        assert_eq!(prepare(&contract, "DECISION.md", "not a gate").unwrap_err().code, Code::Usage);
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk gone"))
            }
        }
        let what_if = prepare(&contract, "DECISION.md", "").unwrap();
        let error = read_log(&what_if, "gone.jsonl", Broken, &mut WhatIfReport::default()).unwrap_err();
        assert_eq!(error.code, Code::Io);
        assert!(error.message.contains("cannot read gone.jsonl"));
    }
}
