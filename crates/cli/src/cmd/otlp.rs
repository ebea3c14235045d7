//! `--otlp URL` on `run`, `mcp` and `export`: each decision as an OpenTelemetry span, sent
//! over OTLP/HTTP to a collector (docs/export.md). A collector that is down or slow never
//! holds up the command: spans wait in a bounded queue, and what could not be sent is counted
//! and said on stderr.

use std::path::Path;
use std::time::Duration;

use decision::terminal;
use decision_export::otlp::{Endpoint, LogFollower, OtlpExporter, OtlpOptions, OtlpReport, span_of};

/// How long a command waits at its end for the spans still queued.
pub const GRACE: Duration = Duration::from_secs(5);

/// How long `export` waits for room in the queue for one span while the collector takes
/// spans: longer than a batch that fails every try takes (4 tries of at most 5 s), so a
/// slow collector is waited for and a collector that is down is given up on.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The collector at `url`, with the headers the OpenTelemetry environment names.
pub fn endpoint(url: &str) -> Result<Endpoint, String> {
    Endpoint::from_env(url).map_err(|e| e.to_string())
}

/// An exporter to `endpoint`, its resource named by `OTEL_SERVICE_NAME` (default `decision`).
pub fn exporter(endpoint: Endpoint) -> OtlpExporter {
    let service_name = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "decision".to_owned());
    OtlpExporter::start(endpoint, OtlpOptions { service_name, ..OtlpOptions::default() })
}

/// A log followed while a command writes it, its rows sent as spans.
pub struct Telemetry {
    follower: LogFollower,
    exporter: OtlpExporter,
    shown: String,
}

/// Starts following `log` when `endpoint` is given.
pub fn follow(endpoint: Option<Endpoint>, log: &Path) -> Option<Telemetry> {
    let endpoint = endpoint?;
    let shown = endpoint.to_string();
    let exporter = exporter(endpoint);
    let queue = exporter.queue();
    let follower = LogFollower::start(log.to_path_buf(), move |row| queue.send(span_of(&row)));
    Some(Telemetry { follower, exporter, shown })
}

impl Telemetry {
    /// Sends what is left (waiting at most [`GRACE`]) and says on stderr what was sent.
    pub fn finish(self) -> OtlpReport {
        // The follower holds a queue handle: it ends first, so the exporter can drain.
        self.follower.finish();
        let report = self.exporter.finish(GRACE);
        eprintln!("{}", summary(&report, &self.shown));
        report
    }
}

/// One line on what became of the spans: how many reached `shown`, and, when not all did,
/// how many did not and why (in words that carry no credential).
pub fn summary(report: &OtlpReport, shown: &str) -> String {
    let mut line = format!("otlp: {} span(s) sent to {}", report.sent, terminal::one_line(shown));
    if !report.complete() {
        line.push_str(&format!(
            "; not sent: {} dropped (queue full), {} failed, {} rejected, {} still queued at exit",
            report.dropped, report.failed, report.rejected, report.unsent
        ));
        if let Some(why) = &report.last_error {
            line.push_str(&format!(" ({})", terminal::one_line(why)));
        }
    }
    line
}
