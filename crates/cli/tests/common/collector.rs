//! A loopback OpenTelemetry collector: an OTLP/HTTP receiver that decodes each request with
//! the official protobuf messages and keeps the spans.

use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

pub struct Collector {
    pub url: String,
    spans: Arc<Mutex<Vec<(String, Span)>>>,
    server: Arc<tiny_http::Server>,
}

impl Collector {
    pub fn start() -> Collector {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let (kept, incoming) = (spans.clone(), server.clone());
        std::thread::spawn(move || {
            for mut request in incoming.incoming_requests() {
                let mut body = Vec::new();
                let read = request.as_reader().read_to_end(&mut body);
                let decoded = read.ok().and_then(|_| ExportTraceServiceRequest::decode(&body[..]).ok());
                let status = if request.url() == "/v1/traces" && decoded.is_some() { 200 } else { 400 };
                for resource in decoded.map(|d| d.resource_spans).unwrap_or_default() {
                    let service = resource
                        .resource
                        .iter()
                        .flat_map(|r| &r.attributes)
                        .find(|kv| kv.key == "service.name")
                        .and_then(|kv| string(kv.value.as_ref()?.value.as_ref()?))
                        .unwrap_or_default();
                    for scope in resource.scope_spans {
                        kept.lock().unwrap().extend(scope.spans.into_iter().map(|s| (service.clone(), s)));
                    }
                }
                let _ = request.respond(tiny_http::Response::empty(status));
            }
        });
        Collector { url, spans, server }
    }

    /// The spans received, with the `service.name` of their resource.
    pub fn spans(&self) -> Vec<(String, Span)> {
        self.spans.lock().unwrap().clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn string(value: &any_value::Value) -> Option<String> {
    match value {
        any_value::Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

/// A string attribute of `span`.
pub fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| string(kv.value.as_ref()?.value.as_ref()?))
}

/// A URL nobody listens at (a port bound a moment ago and closed).
pub fn closed_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}
