//! Tool outcomes: deliverable contracts, typed violations, weak-success telemetry, reports.
//!
//! * [`types`]: the outcome of a call (`ok(value)` or a typed error) with its tool and method,
//!   the well-known error types and failure classes.
//! * [`contracts`]: the contracts file, loaded with a located lint.
//! * [`deliverable`]: the deliverable shape and the check producing typed violations.
//! * [`validate`]: validation that never rewrites a tool's intent.
//! * [`telemetry`]: weak-success flags and user-correction links, observational only.
//! * [`mod@report`]: the out-of-band report over a log of outcome events, with advisory
//!   recommendations.

#![deny(missing_docs)]

pub mod contracts;
pub mod deliverable;
mod events;
pub mod report;
mod shape;
mod spanned;
pub mod telemetry;
pub mod types;
pub mod validate;

pub use contracts::{ContractSet, LintError, LintErrors, ToolContract, load_contracts};
pub use deliverable::{AliasUse, Deliverable, JsonType, Mismatch, Shape, Violation};
pub use report::{
    EventContext, OutcomesReport, OutcomesReportBuilder, OutcomesReportError, Recommendation, RecommendationKind,
    Thresholds, outcome_event, report,
};
pub use telemetry::{CorrectionLinker, WeakSuccess, WeakSuccessFlag, observe};
pub use types::{FailureClass, Outcome, OutcomeFormatError, OutcomeResult, ToolError, error_type};
pub use validate::{Validated, ValidationVerdict, violation_outcome};
