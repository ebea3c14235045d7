//! Decisions as OpenTelemetry spans over OTLP/HTTP (protobuf): one span per exported row,
//! the spans of a run sharing its trace (`docs/export.md` lists the attributes).
//!
//! Sending never holds up what produces the spans: [`OtlpExporter`] queues them, bounded,
//! and one worker thread sends batches, retrying what may succeed later; a collector that is
//! down or slow costs dropped spans (counted in the [`OtlpReport`]), never a blocked caller.
//! [`LogFollower`] reads a log while it is written, so `decision run` and `decision mcp` send
//! their decisions as they happen; `decision export` sends the rows of finished logs, with
//! their verdicts.

mod endpoint;
mod exporter;
mod follow;
mod span;

pub use endpoint::{Endpoint, EndpointError, HEADER_VARIABLES};
pub use exporter::{OtlpExporter, OtlpOptions, OtlpReport, SpanQueue};
pub use follow::LogFollower;
pub use span::{span_id, span_of, trace_id};
