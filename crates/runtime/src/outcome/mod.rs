//! Tool outcomes: deliverable contracts, typed violations, weak-success telemetry, reports.
