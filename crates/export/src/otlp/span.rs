//! One exported row as one OpenTelemetry span: ids derived from the log, times from the
//! envelope, the GenAI semantic conventions where they apply and `decision.*` attributes for
//! the rest (`docs/export.md` lists them).

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::{Span, Status, span, status};
use sha2::{Digest, Sha256};

use crate::row::Row;

/// The trace of one run: the first 16 bytes of SHA-256 over `run_id@created/run` (the
/// header's session id and `createdAt`, else the log's path). Every span of a run shares it,
/// and exporting the same log twice gives the same ids, so a backend can drop the copies.
pub fn trace_id(row: &Row) -> [u8; 16] {
    prefix(&Sha256::digest(format!("{}/{}", run_of(row), row.run.unwrap_or(0))))
}

/// The span of one row: the first 8 bytes of SHA-256 over `run_id@created/run/line`.
pub fn span_id(row: &Row) -> [u8; 8] {
    prefix(&Sha256::digest(format!("{}/{}/{}", run_of(row), row.run.unwrap_or(0), row.line)))
}

/// What names the log's runs: its session id and when its header was written (`id@createdAt`;
/// a session id alone is often a file's name, which another log reuses), else the log's name.
fn run_of(row: &Row) -> String {
    match (&row.run_id, row.run_created_at) {
        (Some(id), Some(created)) => format!("{id}@{created}"),
        _ => run_id_or_log(row).to_owned(),
    }
}

/// The first `N` bytes of a digest (N ≤ 32).
fn prefix<const N: usize>(digest: &[u8]) -> [u8; N] {
    let mut id = [0u8; N];
    for (to, from) in id.iter_mut().zip(digest) {
        *to = *from;
    }
    id
}

/// A log without a header has no session id: its file name stands in.
fn run_id_or_log(row: &Row) -> &str {
    row.run_id.as_deref().unwrap_or(&row.log)
}

/// The span of `row`. Its name is `decision BLOCK` (or `approval ID` for an answer); it ends
/// at the envelope's `at` (else when its log was created) and starts `latency_ms` before. A span whose record mismatches, or
/// whose log does not verify, has status ERROR with the reason.
pub fn span_of(row: &Row) -> Span {
    let name = match row.kind.as_str() {
        "approval:answer" => format!("approval {}", row.approval_id.as_deref().unwrap_or("?")),
        _ => format!("decision {}", row.block.as_deref().unwrap_or("?")),
    };
    // A line without its own time takes its log's (the header's `createdAt`): a span at the
    // epoch would be dropped or misplaced by a collector.
    let at_ms = row.ts.and_then(|ms| u64::try_from(ms).ok()).or(row.run_created_at).unwrap_or(0);
    let end = at_ms.saturating_mul(1_000_000);
    let latency_ns = row.latency_ms.filter(|l| l.is_finite() && *l > 0.0).map_or(0, |l| (l * 1e6) as u64);
    // A model answered: the span covers a call to it (GenAI `chat`), seen from the host.
    let kind = if row.model.is_some() { span::SpanKind::Client } else { span::SpanKind::Internal };
    Span {
        trace_id: trace_id(row).to_vec(),
        span_id: span_id(row).to_vec(),
        name,
        kind: kind as i32,
        start_time_unix_nano: end.saturating_sub(latency_ns),
        end_time_unix_nano: end,
        attributes: attributes(row),
        status: Some(status_of(row)),
        ..Span::default()
    }
}

fn status_of(row: &Row) -> Status {
    let problem = if row.verdict.as_deref() == Some("mismatch") {
        Some("the record does not replay (verdict mismatch)".to_owned())
    } else if row.log_verdict == "failed" {
        Some(format!("the log does not verify (chain {}, seal {})", row.chain, row.seal))
    } else {
        None
    };
    match problem {
        Some(message) => Status { message, code: status::StatusCode::Error as i32 },
        None => Status { message: String::new(), code: status::StatusCode::Unset as i32 },
    }
}

/// The attributes, in a fixed order; an absent value is left out, not sent empty.
fn attributes(row: &Row) -> Vec<KeyValue> {
    let mut out = Attributes(Vec::with_capacity(32));
    if let Some(model) = &row.model {
        out.text("gen_ai.operation.name", "chat");
        out.text("gen_ai.request.model", model);
        out.text("gen_ai.response.model", model);
        out.maybe_text("gen_ai.provider.name", row.provider.as_deref());
    }
    out.text("decision.kind", &row.kind);
    out.text("decision.log", &row.log);
    out.maybe_text("decision.run_id", row.run_id.as_deref());
    out.maybe_int("decision.run", row.run);
    out.maybe_int("decision.line", Some(row.line));
    out.maybe_int("decision.seq", row.seq);
    out.maybe_double("decision.step", row.step);
    out.maybe_text("decision.block", row.block.as_deref());
    out.maybe_text("decision.position", row.position.as_deref());
    out.maybe_text("decision.action", row.action.as_deref());
    out.maybe_text("decision.rule", row.rule.as_deref());
    out.maybe_double("decision.margin", row.margin);
    out.maybe_text("decision.margin_question", row.margin_question.as_deref());
    out.maybe_text("decision.answers", row.answers.as_deref());
    out.maybe_text("decision.frame_digest", row.frame_digest.as_deref());
    out.maybe_text("decision.request_digest", row.request_digest.as_deref());
    out.maybe_text("decision.provider", row.provider.as_deref());
    out.maybe_text("decision.model", row.model.as_deref());
    out.maybe_double("decision.latency_ms", row.latency_ms);
    out.maybe_bool("decision.degraded", row.degraded);
    out.maybe_bool("decision.escalate", row.escalate);
    out.maybe_text("decision.verdict", row.verdict.as_deref());
    out.maybe_text("decision.approval", row.approval.as_deref());
    out.maybe_text("decision.approval_id", row.approval_id.as_deref());
    out.maybe_text("decision.approval_by", row.approval_by.as_deref());
    out.maybe_text("decision.floor", row.floor.as_deref());
    out.maybe_text("decision.host", row.host.as_deref());
    // A followed log (run, mcp) is not verified yet: these three are empty and left out.
    out.maybe_text("decision.chain", Some(row.chain.as_str()).filter(|s| !s.is_empty()));
    out.maybe_text("decision.seal", Some(row.seal.as_str()).filter(|s| !s.is_empty()));
    out.maybe_text("decision.log_verdict", Some(row.log_verdict.as_str()).filter(|s| !s.is_empty()));
    out.0
}

struct Attributes(Vec<KeyValue>);

impl Attributes {
    fn push(&mut self, key: &str, value: any_value::Value) {
        self.0.push(KeyValue {
            key: key.to_owned(),
            value: Some(AnyValue { value: Some(value) }),
            ..KeyValue::default()
        });
    }

    fn text(&mut self, key: &str, value: &str) {
        self.push(key, any_value::Value::StringValue(value.to_owned()));
    }

    fn maybe_text(&mut self, key: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.text(key, value);
        }
    }

    fn maybe_int(&mut self, key: &str, value: Option<u64>) {
        if let Some(value) = value.and_then(|v| i64::try_from(v).ok()) {
            self.push(key, any_value::Value::IntValue(value));
        }
    }

    fn maybe_double(&mut self, key: &str, value: Option<f64>) {
        if let Some(value) = value {
            self.push(key, any_value::Value::DoubleValue(value));
        }
    }

    fn maybe_bool(&mut self, key: &str, value: Option<bool>) {
        if let Some(value) = value {
            self.push(key, any_value::Value::BoolValue(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision_row() -> Row {
        Row {
            log: "a.jsonl".into(),
            run_id: Some("s-1".into()),
            run: Some(0),
            line: 4,
            ts: Some(1_700_000_000_000),
            kind: "decision".into(),
            block: Some("route".into()),
            action: Some("deny".into()),
            provider: Some("openai".into()),
            model: Some("gpt-x".into()),
            latency_ms: Some(12.5),
            verdict: Some("verified".into()),
            chain: "intact".into(),
            seal: "sealed".into(),
            log_verdict: "ok".into(),
            ..Row::default()
        }
    }

    fn text_of<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
        span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
    }

    #[test]
    fn a_model_decision_is_a_client_span_with_gen_ai_attributes_and_its_latency() {
        let span = span_of(&decision_row());
        assert_eq!(span.name, "decision route");
        assert_eq!(span.kind, span::SpanKind::Client as i32);
        assert_eq!(span.end_time_unix_nano, 1_700_000_000_000_000_000);
        assert_eq!(span.end_time_unix_nano - span.start_time_unix_nano, 12_500_000);
        assert_eq!(text_of(&span, "gen_ai.request.model"), Some("gpt-x"));
        assert_eq!(text_of(&span, "gen_ai.provider.name"), Some("openai"));
        assert_eq!(text_of(&span, "decision.action"), Some("deny"));
        assert_eq!(span.status.map(|s| s.code), Some(status::StatusCode::Unset as i32));
    }

    #[test]
    fn a_line_without_its_own_time_takes_its_logs() {
        let undated = Row { ts: None, run_created_at: Some(1_690_000_000_000), ..decision_row() };
        assert_eq!(span_of(&undated).end_time_unix_nano, 1_690_000_000_000_000_000);
        let dated = Row { run_created_at: Some(1_690_000_000_000), ..decision_row() };
        assert_eq!(span_of(&dated).end_time_unix_nano, 1_700_000_000_000_000_000, "its own time wins");
    }

    #[test]
    fn a_code_decision_has_no_gen_ai_attributes_and_leaves_absent_values_out() {
        let row = Row { model: None, provider: Some("heuristic".into()), latency_ms: None, ..decision_row() };
        let span = span_of(&row);
        assert_eq!(span.kind, span::SpanKind::Internal as i32);
        assert_eq!(span.start_time_unix_nano, span.end_time_unix_nano);
        assert!(span.attributes.iter().all(|kv| !kv.key.starts_with("gen_ai.")));
        assert!(text_of(&span, "decision.rule").is_none());
        let unverified = Row { chain: String::new(), seal: String::new(), log_verdict: String::new(), ..row };
        assert!(text_of(&span_of(&unverified), "decision.chain").is_none());
    }

    #[test]
    fn spans_of_one_run_share_a_trace_and_never_a_span_id() {
        let a = decision_row();
        let b = Row { line: 5, ..decision_row() };
        let other_run = Row { run: Some(1), ..decision_row() };
        assert_eq!(trace_id(&a), trace_id(&b));
        assert_ne!(span_id(&a), span_id(&b));
        assert_ne!(trace_id(&a), trace_id(&other_run));
        assert_eq!(span_of(&a), span_of(&a.clone()), "the same log exports the same ids");
    }

    #[test]
    fn two_runs_that_reuse_a_session_id_never_share_a_trace_or_a_span() {
        let first = Row { run_created_at: Some(1_700_000_000_000), ..decision_row() };
        let second = Row { run_created_at: Some(1_700_000_360_000), ..decision_row() };
        assert_ne!(trace_id(&first), trace_id(&second));
        assert_ne!(span_id(&first), span_id(&second));
        assert_eq!(trace_id(&first), trace_id(&first.clone()));
    }

    #[test]
    fn a_mismatch_or_a_failed_log_is_an_error_status_and_an_answer_is_named_by_its_approval() {
        let mismatch = Row { verdict: Some("mismatch".into()), ..decision_row() };
        assert_eq!(span_of(&mismatch).status.map(|s| s.code), Some(status::StatusCode::Error as i32));
        let failed = Row { log_verdict: "failed".into(), chain: "broken".into(), ..decision_row() };
        let status = span_of(&failed).status.unwrap_or_default();
        assert_eq!(status.code, status::StatusCode::Error as i32);
        assert!(status.message.contains("chain broken"));
        let answer = Row { kind: "approval:answer".into(), approval_id: Some("ap-1".into()), ..decision_row() };
        assert_eq!(span_of(&answer).name, "approval ap-1");
    }
}
