//! The JSON-over-HTTP exchange shared by the HTTP providers: one `ureq` agent (so connections
//! are reused), a per-request timeout, a response-size cap, status classification and key
//! redaction.

use std::time::Duration;

use serde_json::Value;

use super::error::{ErrorCode, ProviderError, classify_status, parse_retry_after};
use super::secret::{ApiKey, redact_bearer, redact_value};
use super::strict::{Duplicate, parse_strict};

/// A reply read strictly, every string of it redacted of the key and of `Bearer …` forms.
#[derive(Debug)]
pub(crate) struct Reply {
    pub value: Value,
    /// Keys that appear twice in one object (the answers they touch are invalid).
    pub duplicates: Vec<Duplicate>,
}

/// The `user-agent` sent (some front ends reject library default agents).
const USER_AGENT: &str = concat!("decision-contract/", env!("CARGO_PKG_VERSION"));

#[derive(Debug, Clone)]
pub(crate) struct JsonClient {
    agent: ureq::Agent,
    max_response_bytes: u64,
}

impl JsonClient {
    /// `reuse_connections = false` closes every connection after one exchange.
    pub(crate) fn new(max_response_bytes: u64, reuse_connections: bool) -> JsonClient {
        let mut config = ureq::Agent::config_builder().http_status_as_error(false).user_agent(USER_AGENT);
        if !reuse_connections {
            config = config.max_idle_connections(0).max_idle_connections_per_host(0);
        }
        JsonClient { agent: config.build().into(), max_response_bytes }
    }

    /// POST `body` as JSON and read a JSON reply. Every failure is classified; no message,
    /// and no string of the reply, contains `key` or a `Bearer …` credential (a server may
    /// echo the request's headers).
    pub(crate) fn post(
        &self,
        who: &str,
        url: &str,
        key: Option<&ApiKey>,
        body: &impl serde::Serialize,
        timeout: Duration,
    ) -> Result<Reply, ProviderError> {
        let scrub = |text: String| match key {
            Some(key) => key.redact(&text),
            None => redact_bearer(&text),
        };
        let bytes = serde_json::to_vec(body).map_err(|e| {
            ProviderError::new(who, ErrorCode::InvalidRequest, format!("{who}: cannot encode request: {e}"))
        })?;
        let mut request = self
            .agent
            .post(url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("content-type", "application/json");
        if let Some(key) = key {
            request = request.header("authorization", key.bearer());
        }
        let mut response = request.send(&bytes[..]).map_err(|e| transport_error(who, &e, scrub))?;
        let status = response.status().as_u16();
        let retry_after =
            response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
        let body = response
            .body_mut()
            .with_config()
            .limit(self.max_response_bytes)
            .read_to_vec()
            .map_err(|e| transport_error(who, &e, scrub))?;
        if !(200..300).contains(&status) {
            let text = scrub(String::from_utf8_lossy(&body).into_owned());
            return Err(classify_status(who, status, &text, retry_after));
        }
        let (mut value, duplicates) = parse_strict(&body)
            .map_err(|e| ProviderError::new(who, ErrorCode::Transport, format!("{who} returned invalid JSON: {e}")))?;
        redact_value(&mut value, key);
        Ok(Reply { value, duplicates })
    }
}

fn transport_error(who: &str, error: &ureq::Error, scrub: impl Fn(String) -> String) -> ProviderError {
    let (code, what) = match error {
        ureq::Error::Timeout(_) => (ErrorCode::Timeout, "timed out"),
        ureq::Error::BodyExceedsLimit(_) => (ErrorCode::ResponseTooLarge, "reply exceeds the size cap"),
        _ => (ErrorCode::Transport, "connection failed"),
    };
    ProviderError::new(who, code, scrub(format!("{who} {what}: {error}")))
}
