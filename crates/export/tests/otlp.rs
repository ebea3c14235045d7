//! Decisions as spans, received as a collector receives them: a loopback OTLP/HTTP receiver
//! decoding the official protobuf messages. Every wait is bounded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use decision_export::otlp::{Endpoint, LogFollower, OtlpExporter, OtlpOptions, span_of};
use decision_export::{ExportOptions, Row, export_rows};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

fn example(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

/// How the loopback collector answers.
#[derive(Clone)]
enum Behaviour {
    Accept,
    /// HTTP 503 for the first N requests, then accept.
    Unavailable(usize),
    /// Wait this long before accepting.
    Slow(Duration),
    /// Answer every request with a redirect to another collector.
    Redirect(String),
}

struct Collector {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
    requests: Arc<AtomicUsize>,
    content_types: Arc<Mutex<BTreeSet<String>>>,
    server: Arc<tiny_http::Server>,
}

impl Collector {
    fn start(behaviour: Behaviour) -> Collector {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::new(AtomicUsize::new(0));
        let content_types = Arc::new(Mutex::new(BTreeSet::new()));
        let (s, r, c, srv) = (spans.clone(), requests.clone(), content_types.clone(), server.clone());
        thread::spawn(move || {
            for mut request in srv.incoming_requests() {
                let n = r.fetch_add(1, Ordering::SeqCst);
                assert_eq!(request.url(), "/v1/traces");
                for header in request.headers() {
                    if header.field.equiv("content-type") {
                        c.lock().unwrap().insert(header.value.to_string());
                    }
                }
                let mut body = Vec::new();
                request.as_reader().read_to_end(&mut body).unwrap();
                let status = match &behaviour {
                    Behaviour::Unavailable(first) if n < *first => 503,
                    Behaviour::Slow(wait) => {
                        thread::sleep(*wait);
                        200
                    }
                    Behaviour::Redirect(to) => {
                        let location = tiny_http::Header::from_bytes("location", to.as_bytes()).unwrap();
                        let _ = request.respond(tiny_http::Response::empty(302).with_header(location));
                        continue;
                    }
                    _ => 200,
                };
                if status == 200 {
                    let decoded = ExportTraceServiceRequest::decode(&body[..]).unwrap();
                    let mut spans = s.lock().unwrap();
                    for resource in decoded.resource_spans {
                        for scope in resource.scope_spans {
                            spans.extend(scope.spans);
                        }
                    }
                }
                let _ = request.respond(tiny_http::Response::empty(status));
            }
        });
        Collector { url, spans, requests, content_types, server }
    }

    fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn options() -> OtlpOptions {
    OtlpOptions { linger: Duration::from_millis(20), timeout: Duration::from_secs(2), ..OtlpOptions::default() }
}

fn text<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.as_str()),
        _ => None,
    })
}

fn rows_of(logs: &[PathBuf]) -> Vec<Row> {
    let mut rows = Vec::new();
    export_rows(logs, &ExportOptions::default(), &mut |_| {}, &mut |row| {
        rows.push(row);
        Ok(())
    })
    .unwrap();
    rows
}

#[test]
fn every_row_of_an_export_arrives_as_one_span_with_its_attributes() {
    let collector = Collector::start(Behaviour::Accept);
    let logs = [example("examples/support-triage/session.jsonl"), example("examples/broken/session-edited.jsonl")];
    let rows = rows_of(&logs);
    let exporter = OtlpExporter::start(Endpoint::new(&collector.url).unwrap(), options());
    for row in &rows {
        exporter.send(span_of(row));
    }
    let report = exporter.finish(Duration::from_secs(10));
    assert!(report.complete(), "{report:?}");
    assert_eq!(report.sent, rows.len() as u64);
    let spans = collector.spans();
    assert_eq!(spans.len(), rows.len());
    assert_eq!(*collector.content_types.lock().unwrap(), BTreeSet::from(["application/x-protobuf".to_owned()]));
    let route = spans.iter().find(|s| text(s, "decision.block") == Some("route")).unwrap();
    assert_eq!(route.name, "decision route");
    assert_eq!(text(route, "decision.action"), Some("use"));
    assert_eq!(text(route, "decision.verdict"), Some("verified"));
    assert_eq!(text(route, "decision.log_verdict"), Some("ok"));
    assert_eq!(text(route, "decision.run_id"), Some("ask-1796140765353"));
    // The edited log's spans say it does not verify.
    let edited: Vec<&Span> = spans.iter().filter(|s| text(s, "decision.log_verdict") == Some("failed")).collect();
    assert!(!edited.is_empty());
    assert!(edited.iter().all(|s| s.status.as_ref().is_some_and(|st| st.code == 2)));
    // One run, one trace; one row, one span.
    let ids: BTreeSet<&Vec<u8>> = spans.iter().map(|s| &s.span_id).collect();
    assert_eq!(ids.len(), spans.len());
}

#[test]
fn a_collector_that_answers_503_is_tried_again_and_gets_every_span() {
    let collector = Collector::start(Behaviour::Unavailable(2));
    let rows = rows_of(&[example("examples/support-triage/session.jsonl")]);
    let exporter = OtlpExporter::start(Endpoint::new(&collector.url).unwrap(), options());
    for row in &rows {
        exporter.send(span_of(row));
    }
    let report = exporter.finish(Duration::from_secs(10));
    assert!(report.complete(), "{report:?}");
    assert_eq!(collector.spans().len(), rows.len());
    assert_eq!(collector.requests.load(Ordering::SeqCst), 3, "two refusals, then the batch");
}

#[test]
fn a_collector_that_is_down_costs_spans_counted_as_failed_never_a_wait() {
    // A port that was open a moment ago and is closed now: connections are refused.
    let url = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let exporter = OtlpExporter::start(Endpoint::new(&url).unwrap(), OtlpOptions { batch: 10, ..options() });
    let span = span_of(&rows_of(&[example("examples/support-triage/session.jsonl")])[0]);
    for _ in 0..100 {
        exporter.send(span.clone());
    }
    let report = exporter.finish(Duration::from_secs(10));
    assert!(!report.complete());
    assert_eq!(report.sent, 0);
    assert_eq!(report.failed + report.dropped, 100, "{report:?}");
    assert_eq!(report.last_error.as_deref(), Some("the collector could not be reached"));
}

#[test]
fn a_slow_collector_fills_the_bounded_queue_and_the_sender_drops_instead_of_waiting() {
    let collector = Collector::start(Behaviour::Slow(Duration::from_millis(400)));
    let options = OtlpOptions { capacity: 50, batch: 10, ..options() };
    let exporter = OtlpExporter::start(Endpoint::new(&collector.url).unwrap(), options);
    let span = span_of(&rows_of(&[example("examples/support-triage/session.jsonl")])[0]);
    for _ in 0..10_000 {
        exporter.send(span.clone());
    }
    // A sender that waited for room would have dropped nothing (and taken 400 s).
    let report = exporter.finish(Duration::from_millis(300));
    assert!(report.dropped >= 10_000 - 60, "{report:?}");
    assert!(report.unsent > 0, "the worker was still busy when the grace ran out: {report:?}");
    assert_eq!(report.sent + report.dropped + report.unsent, 10_000, "{report:?}");
}

#[test]
fn logs_whose_headers_share_a_session_id_but_not_a_time_get_different_traces() {
    // `decision run` names its session after the log file: two `run.jsonl` share an id.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example("examples/support-triage/session.jsonl")).unwrap();
    let created = text.split("\"createdAt\":").nth(1).unwrap().split(',').next().unwrap().to_owned();
    let later = text.replacen(&format!("\"createdAt\":{created}"), "\"createdAt\":1", 1);
    let logs: Vec<PathBuf> = [("a.jsonl", &text), ("b.jsonl", &text), ("c.jsonl", &later)]
        .iter()
        .map(|(name, body)| {
            let path = dir.path().join(name);
            std::fs::write(&path, body).unwrap();
            path
        })
        .collect();
    let trace_of = |log: &PathBuf| span_of(&rows_of(std::slice::from_ref(log))[0]).trace_id;
    assert_eq!(trace_of(&logs[0]), trace_of(&logs[1]), "the same run, wherever its file lies");
    assert_ne!(trace_of(&logs[0]), trace_of(&logs[2]), "another run that reused the session id");
}

#[test]
fn a_sender_that_waits_for_room_gets_every_span_through_a_slow_collector() {
    // What `decision export` does: its rows come faster than the collector takes them.
    let collector = Collector::start(Behaviour::Slow(Duration::from_millis(20)));
    let options = OtlpOptions { capacity: 20, batch: 10, ..options() };
    let exporter = OtlpExporter::start(Endpoint::new(&collector.url).unwrap(), options);
    let span = span_of(&rows_of(&[example("examples/support-triage/session.jsonl")])[0]);
    for _ in 0..200 {
        exporter.send_waiting(span.clone(), Duration::from_secs(10));
    }
    let report = exporter.finish(Duration::from_secs(10));
    assert!(report.complete(), "{report:?}");
    assert_eq!((report.sent, collector.spans().len()), (200, 200));
}

#[test]
fn a_sender_that_waits_for_room_does_not_wait_for_a_collector_that_is_down() {
    let url = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let options = OtlpOptions { capacity: 10, batch: 10, retries: 0, ..options() };
    let exporter = OtlpExporter::start(Endpoint::new(&url).unwrap(), options);
    let span = span_of(&rows_of(&[example("examples/support-triage/session.jsonl")])[0]);
    let started = std::time::Instant::now();
    for _ in 0..5_000 {
        exporter.send_waiting(span.clone(), Duration::from_secs(60));
    }
    // Waiting for room on every span would take 5,000 × 60 s; once the collector is down,
    // each span is dropped at once.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let report = exporter.finish(Duration::from_secs(10));
    assert_eq!(report.sent, 0);
    assert!(report.dropped > 4_000, "{report:?}");
}

#[test]
fn a_redirect_is_refused_and_never_followed() {
    // The place the redirect points to would get the request (and its headers) if it were
    // followed: it counts what reaches it.
    let elsewhere = Collector::start(Behaviour::Slow(Duration::ZERO));
    let collector = Collector::start(Behaviour::Redirect(format!("{}/v1/traces", elsewhere.url)));
    let exporter = OtlpExporter::start(Endpoint::new(&collector.url).unwrap(), options());
    exporter.send(span_of(&rows_of(&[example("examples/support-triage/session.jsonl")])[0]));
    let report = exporter.finish(Duration::from_secs(10));
    assert_eq!((report.sent, report.failed), (0, 1), "{report:?}");
    assert!(
        report.last_error.as_deref().is_some_and(|e| e.contains("302") && e.contains("not followed")),
        "{report:?}"
    );
    assert_eq!(elsewhere.requests.load(Ordering::SeqCst), 0, "the redirect was followed");
}

#[test]
fn a_followed_log_hands_over_the_rows_of_new_lines_only() {
    let source = std::fs::read_to_string(example("examples/support-triage/session.jsonl")).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.jsonl");
    // The header and the first decision are there before the follower starts.
    let first_decision = lines.iter().position(|l| l.contains("\"type\":\"decision\"")).unwrap();
    let mut file = std::fs::File::create(&path).unwrap();
    for line in &lines[..=first_decision] {
        writeln!(file, "{line}").unwrap();
    }
    let rows = Arc::new(Mutex::new(Vec::new()));
    let seen = rows.clone();
    let follower = LogFollower::start(path.clone(), move |row| seen.lock().unwrap().push(row));
    for line in &lines[first_decision + 1..] {
        // Written in two pieces, as a reader may find a line half written.
        let (a, b) = line.split_at(line.len() / 2);
        file.write_all(a.as_bytes()).unwrap();
        file.flush().unwrap();
        thread::sleep(Duration::from_millis(5));
        writeln!(file, "{b}").unwrap();
    }
    assert_eq!(follower.finish(), 2);
    let rows = rows.lock().unwrap();
    let all = rows_of(&[example("examples/support-triage/session.jsonl")]);
    let blocks: Vec<_> = rows.iter().map(|r| (r.line, r.block.clone(), r.action.clone())).collect();
    let expected: Vec<_> = all[1..].iter().map(|r| (r.line, r.block.clone(), r.action.clone())).collect();
    assert_eq!(blocks, expected);
    assert!(rows.iter().all(|r| r.run_id.as_deref() == Some("ask-1796140765353")), "the header was read");
    assert!(rows.iter().all(|r| r.verdict.is_none() && r.log_verdict.is_empty()), "a live log is not verified");
}
