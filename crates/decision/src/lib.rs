#![doc = include_str!("../GUIDE.md")]
#![deny(missing_docs)]

pub use decision_core::{check, contract, diag, policy, syntax, vocab};
pub use decision_outcomes as outcomes;
pub use decision_protocol::{ask, digest, frame, record, space};
pub use decision_runtime::{api, contract_tests, decide, graph, lines, log, provider, terminal};

pub use decision_core::{Contract, Diagnostic, Severity, Span};
