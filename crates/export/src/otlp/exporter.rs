//! Spans to an OTLP/HTTP collector, never in the way: a bounded queue a running command never
//! waits on (`decision export`, whose work is the sending, waits for room while the collector
//! takes spans), one worker thread that sends batches as protobuf, retries what may succeed
//! later, and gives up on a collector that stays down.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::thread;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;

use super::endpoint::Endpoint;

/// The `user-agent` sent.
const USER_AGENT: &str = concat!("decision-contract/", env!("CARGO_PKG_VERSION"));
/// The largest collector reply read (a reply only says how many spans it rejected).
const MAX_REPLY_BYTES: u64 = 64 << 10;

/// How the exporter queues and sends.
#[derive(Debug, Clone)]
pub struct OtlpOptions {
    /// Spans queued at most; a span that finds the queue full is dropped and counted.
    pub capacity: usize,
    /// Spans per request at most.
    pub batch: usize,
    /// How long a span waits for its batch to fill before the batch is sent anyway.
    pub linger: Duration,
    /// How long one request may take.
    pub timeout: Duration,
    /// How many times a request that may succeed later (no connection, a timeout, HTTP 429,
    /// 502, 503, 504) is tried again, 100 ms, 200 ms, 400 ms … apart. Once a batch has failed
    /// every try the collector counts as down, and later batches get one try each until one
    /// succeeds.
    pub retries: u32,
    /// The `service.name` of the spans' resource.
    pub service_name: String,
}

impl Default for OtlpOptions {
    fn default() -> Self {
        OtlpOptions {
            capacity: 4096,
            batch: 512,
            linger: Duration::from_millis(500),
            timeout: Duration::from_secs(5),
            retries: 3,
            service_name: "decision".to_owned(),
        }
    }
}

/// What became of the spans handed to an exporter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OtlpReport {
    /// Spans the collector accepted.
    pub sent: u64,
    /// Spans dropped because the queue was full (the collector too slow or down).
    pub dropped: u64,
    /// Spans in batches that failed every try.
    pub failed: u64,
    /// Spans the collector took in but rejected (its partial-success reply).
    pub rejected: u64,
    /// Spans still queued or in flight when the exporter stopped waiting.
    pub unsent: u64,
    /// Why the last failing batch failed, in words that carry no header or credential.
    pub last_error: Option<String>,
}

impl OtlpReport {
    /// Every span handed over reached the collector and was accepted.
    pub fn complete(&self) -> bool {
        self.dropped == 0 && self.failed == 0 && self.rejected == 0 && self.unsent == 0
    }
}

#[derive(Default)]
struct Counts {
    /// The worker counts the collector as down (a batch failed every try, and none has
    /// succeeded since).
    down: AtomicBool,
    queued: AtomicU64,
    sent: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
    rejected: AtomicU64,
}

/// Where spans are handed over; cloned freely, each clone feeding the same queue.
#[derive(Clone)]
pub struct SpanQueue {
    queue: SyncSender<Span>,
    counts: Arc<Counts>,
}

impl SpanQueue {
    /// Queues `span` without waiting: when the queue is full the span is dropped and counted.
    pub fn send(&self, span: Span) {
        match self.queue.try_send(span) {
            Ok(()) => {
                self.counts.queued.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Queues `span`, waiting for room while the collector takes spans: for a command whose
    /// work is the sending (`decision export`), which may read rows faster than a collector
    /// takes them. A span is dropped and counted, as by [`SpanQueue::send`], when the
    /// collector is down or the queue stays full for `patience`.
    pub fn send_waiting(&self, span: Span, patience: Duration) {
        let deadline = Instant::now() + patience;
        let mut span = span;
        loop {
            match self.queue.try_send(span) {
                Ok(()) => {
                    self.counts.queued.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Err(TrySendError::Full(back))
                    if !self.counts.down.load(Ordering::Relaxed) && Instant::now() < deadline =>
                {
                    span = back;
                    thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    self.counts.dropped.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }
    }
}

/// An exporter: a queue and the worker that empties it into the collector.
pub struct OtlpExporter {
    queue: SpanQueue,
    /// Closed by the worker when it ends.
    done: Receiver<Option<String>>,
}

impl OtlpExporter {
    /// Starts the worker for `endpoint`.
    pub fn start(endpoint: Endpoint, options: OtlpOptions) -> OtlpExporter {
        let (queue, spans) = sync_channel(options.capacity.max(1));
        let (finished, done) = sync_channel(1);
        let counts = Arc::new(Counts::default());
        let worker = Worker::new(endpoint, options, Arc::clone(&counts));
        thread::spawn(move || {
            let last_error = worker.run(&spans);
            let _ = finished.send(last_error);
        });
        OtlpExporter { queue: SpanQueue { queue, counts }, done }
    }

    /// A handle to queue spans through.
    pub fn queue(&self) -> SpanQueue {
        self.queue.clone()
    }

    /// Queues `span` without waiting (see [`SpanQueue::send`]).
    pub fn send(&self, span: Span) {
        self.queue.send(span);
    }

    /// Queues `span`, waiting for room while the collector takes spans (see
    /// [`SpanQueue::send_waiting`]).
    pub fn send_waiting(&self, span: Span, patience: Duration) {
        self.queue.send_waiting(span, patience);
    }

    /// Stops taking spans and waits up to `grace` for the queued ones to be sent. Every
    /// [`SpanQueue`] clone must be dropped first, or the worker waits for them until `grace`
    /// runs out. A worker still busy then is left to the process's exit; its spans count as
    /// unsent.
    pub fn finish(self, grace: Duration) -> OtlpReport {
        let OtlpExporter { queue: SpanQueue { queue, counts }, done } = self;
        drop(queue);
        let (last_error, finished) = match done.recv_timeout(grace) {
            Ok(last_error) => (last_error, true),
            Err(_) => (Some("the collector did not take every span in time".to_owned()), false),
        };
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (queued, sent, failed, rejected) =
            (count(&counts.queued), count(&counts.sent), count(&counts.failed), count(&counts.rejected));
        let settled = sent + failed + rejected;
        OtlpReport {
            sent,
            dropped: count(&counts.dropped),
            failed,
            rejected,
            unsent: if finished { 0 } else { queued.saturating_sub(settled) },
            last_error,
        }
    }
}

/// The worker's side.
struct Worker {
    endpoint: Endpoint,
    options: OtlpOptions,
    agent: ureq::Agent,
    counts: Arc<Counts>,
    resource: Resource,
    /// The last batch failed every try: later batches get one try each.
    down: bool,
    last_error: Option<String>,
}

impl Worker {
    fn new(endpoint: Endpoint, options: OtlpOptions, counts: Arc<Counts>) -> Worker {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(USER_AGENT)
            .timeout_global(Some(options.timeout))
            // A redirect is not followed: it would carry the collector's headers (an API
            // key) to wherever it points, as a GET that sends no spans. It is a refusal.
            .max_redirects(0)
            .build()
            .into();
        let resource = Resource {
            attributes: vec![text("service.name", &options.service_name), text("telemetry.sdk.name", "decision")],
            ..Resource::default()
        };
        Worker { endpoint, options, agent, counts, resource, down: false, last_error: None }
    }

    /// Sends batches until every queue handle is gone and the queue is empty; returns the
    /// last error.
    fn run(mut self, spans: &Receiver<Span>) -> Option<String> {
        let batch_size = self.options.batch.max(1);
        let mut batch = Vec::with_capacity(batch_size);
        let mut oldest: Option<Instant> = None;
        loop {
            let wait = oldest.map_or(Duration::from_secs(3600), |t| self.options.linger.saturating_sub(t.elapsed()));
            match spans.recv_timeout(wait) {
                Ok(span) => {
                    batch.push(span);
                    oldest.get_or_insert_with(Instant::now);
                    if batch.len() >= batch_size {
                        self.post(std::mem::take(&mut batch));
                        oldest = None;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !batch.is_empty() {
                        self.post(std::mem::take(&mut batch));
                    }
                    oldest = None;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    if !batch.is_empty() {
                        self.post(batch);
                    }
                    return self.last_error;
                }
            }
        }
    }

    /// Sends one batch, trying again as [`OtlpOptions::retries`] says.
    fn post(&mut self, spans: Vec<Span>) {
        let count = spans.len() as u64;
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(self.resource.clone()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "decision-contract".to_owned(),
                        version: env!("CARGO_PKG_VERSION").to_owned(),
                        ..InstrumentationScope::default()
                    }),
                    spans,
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        };
        let body = request.encode_to_vec();
        let tries = if self.down { 1 } else { 1 + self.options.retries };
        for attempt in 0..tries {
            match self.send(&body) {
                Sent::Accepted { rejected } => {
                    let rejected = rejected.min(count);
                    self.counts.sent.fetch_add(count - rejected, Ordering::Relaxed);
                    self.counts.rejected.fetch_add(rejected, Ordering::Relaxed);
                    if rejected > 0 {
                        self.last_error = Some(format!("the collector rejected {rejected} span(s)"));
                    }
                    self.down = false;
                    self.counts.down.store(false, Ordering::Relaxed);
                    return;
                }
                Sent::Refused(why) => {
                    self.counts.failed.fetch_add(count, Ordering::Relaxed);
                    self.last_error = Some(why);
                    return;
                }
                Sent::TryAgain(why) => {
                    self.last_error = Some(why);
                    if attempt + 1 < tries {
                        thread::sleep(Duration::from_millis(100u64 << attempt.min(4)));
                    }
                }
            }
        }
        self.counts.failed.fetch_add(count, Ordering::Relaxed);
        self.down = true;
        self.counts.down.store(true, Ordering::Relaxed);
    }

    fn send(&self, body: &[u8]) -> Sent {
        let mut request = self.agent.post(self.endpoint.url()).header("content-type", "application/x-protobuf");
        for (name, value) in self.endpoint.headers() {
            request = request.header(name.as_str(), value.as_str());
        }
        let mut response = match request.send(body) {
            Ok(response) => response,
            Err(ureq::Error::Timeout(_)) => return Sent::TryAgain("the collector timed out".to_owned()),
            Err(_) => return Sent::TryAgain("the collector could not be reached".to_owned()),
        };
        let status = response.status().as_u16();
        match status {
            200..=299 => {
                let reply = response.body_mut().with_config().limit(MAX_REPLY_BYTES).read_to_vec().unwrap_or_default();
                let rejected = ExportTraceServiceResponse::decode(&reply[..])
                    .ok()
                    .and_then(|r| r.partial_success)
                    .map_or(0, |p| u64::try_from(p.rejected_spans).unwrap_or(0));
                Sent::Accepted { rejected }
            }
            429 | 502 | 503 | 504 => Sent::TryAgain(format!("the collector answered HTTP {status}")),
            300..=399 => Sent::Refused(format!("the collector answered HTTP {status} (a redirect, not followed)")),
            _ => Sent::Refused(format!("the collector answered HTTP {status}")),
        }
    }
}

enum Sent {
    Accepted { rejected: u64 },
    Refused(String),
    TryAgain(String),
}

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.to_owned())) }),
        ..KeyValue::default()
    }
}
