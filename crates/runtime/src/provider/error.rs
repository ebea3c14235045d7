//! Classified provider errors (runtime.md §1.6).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use thiserror::Error;

/// What went wrong, as a retry policy needs to know it. More codes may come: match with a
/// wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// HTTP 401 or 403.
    Auth,
    /// HTTP 413, or a 400 that is not a context overflow.
    InvalidRequest,
    /// The body speaks of quota, balance, billing or credit (checked before 429).
    Quota,
    /// HTTP 429.
    RateLimit,
    /// HTTP 400 whose body says the context is too long.
    ContextWindowExceeded,
    /// Any status ≥ 500.
    Server,
    /// Our own timeout fired.
    Timeout,
    /// The connection failed, was dropped, or the reply was not valid JSON.
    Transport,
    /// The reply had no usable `answers`.
    EmptyResponse,
    /// The reply was larger than the configured cap (not retried: it would be again).
    ResponseTooLarge,
    /// The provider was misconfigured (e.g. a required key is not set); nothing was sent.
    Config,
    /// Any other HTTP status.
    Http(u16),
}

impl ErrorCode {
    /// Only these are worth another attempt.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::RateLimit
                | ErrorCode::Server
                | ErrorCode::Timeout
                | ErrorCode::Transport
                | ErrorCode::EmptyResponse
        )
    }

    /// The code as logs and messages write it: `AUTH`, `RATE_LIMIT`, …, `HTTP_404`.
    pub fn as_string(self) -> String {
        match self {
            ErrorCode::Auth => "AUTH".into(),
            ErrorCode::InvalidRequest => "INVALID_REQUEST".into(),
            ErrorCode::Quota => "QUOTA".into(),
            ErrorCode::RateLimit => "RATE_LIMIT".into(),
            ErrorCode::ContextWindowExceeded => "CONTEXT_WINDOW_EXCEEDED".into(),
            ErrorCode::Server => "SERVER".into(),
            ErrorCode::Timeout => "TIMEOUT".into(),
            ErrorCode::Transport => "TRANSPORT".into(),
            ErrorCode::EmptyResponse => "EMPTY_RESPONSE".into(),
            ErrorCode::ResponseTooLarge => "RESPONSE_TOO_LARGE".into(),
            ErrorCode::Config => "CONFIG".into(),
            ErrorCode::Http(status) => format!("HTTP_{status}"),
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_string())
    }
}

/// A provider failure. The message never contains an API key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ProviderError {
    /// The provider's name.
    pub who: String,
    /// What kind of failure it is (decides whether it is retried).
    pub code: ErrorCode,
    /// The HTTP status, when a reply came.
    pub status: Option<u16>,
    /// The whole message, `who` and the start of the body included.
    pub message: String,
    /// The server's `Retry-After`, when it sent a usable one.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    /// An error of `who` with no HTTP status and no `Retry-After`.
    pub fn new(who: &str, code: ErrorCode, message: impl Into<String>) -> Self {
        ProviderError { who: who.to_string(), code, status: None, message: message.into(), retry_after: None }
    }
}

/// How many characters of a body are examined and quoted.
const BODY_PREFIX_CHARS: usize = 200;

/// Classify a non-2xx reply: `<who> HTTP <status> (<code>): <body[0:200]>`.
pub fn classify_status(who: &str, status: u16, body: &str, retry_after: Option<Duration>) -> ProviderError {
    let prefix: String = body.chars().take(BODY_PREFIX_CHARS).collect();
    let lower = prefix.to_lowercase();
    let code = if ["insufficient", "quota", "balance", "billing", "credit"].iter().any(|w| lower.contains(w)) {
        ErrorCode::Quota
    } else {
        match status {
            401 | 403 => ErrorCode::Auth,
            413 => ErrorCode::InvalidRequest,
            400 if is_context_overflow(&lower) => ErrorCode::ContextWindowExceeded,
            400 => ErrorCode::InvalidRequest,
            429 => ErrorCode::RateLimit,
            s if s >= 500 => ErrorCode::Server,
            s => ErrorCode::Http(s),
        }
    };
    ProviderError {
        who: who.to_string(),
        code,
        status: Some(status),
        message: format!("{who} HTTP {status} ({code}): {prefix}"),
        retry_after,
    }
}

/// `context[\s_-]*(length|window)|too\s+(large|long)\s+for|maximum\s+context`, on lower-case text.
fn is_context_overflow(lower: &str) -> bool {
    let after = |word: &str| -> Vec<&str> {
        lower.match_indices(word).filter_map(|(i, _)| lower.get(i + word.len()..)).collect()
    };
    let skip_ws = |s: &str| -> Option<String> {
        let rest = s.trim_start_matches(char::is_whitespace);
        (rest.len() < s.len()).then(|| rest.to_string())
    };
    let context = after("context").into_iter().any(|rest| {
        let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '_' || c == '-');
        rest.starts_with("length") || rest.starts_with("window")
    });
    let too = after("too").into_iter().any(|rest| {
        skip_ws(rest).is_some_and(|rest| {
            ["large", "long"]
                .iter()
                .any(|w| rest.strip_prefix(w).and_then(skip_ws).is_some_and(|rest| rest.starts_with("for")))
        })
    });
    let maximum = after("maximum").into_iter().any(|rest| skip_ws(rest).is_some_and(|r| r.starts_with("context")));
    context || too || maximum
}

/// `Retry-After` as whole seconds (`^\d+$`) or an HTTP-date; zero, negative or unreadable
/// values are ignored.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = value.parse().ok()?;
        return (secs > 0).then(|| Duration::from_secs(secs));
    }
    let at = parse_http_date(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    let wait = at.checked_sub(now)?;
    (wait > 0).then(|| Duration::from_secs(wait))
}

/// IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, as seconds since the epoch.
fn parse_http_date(value: &str) -> Option<u64> {
    let (_, rest) = value.split_once(", ")?;
    let mut parts = rest.split(' ');
    let day: u64 = parts.next()?.parse().ok()?;
    let month_name = parts.next()?;
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .iter()
        .position(|m| *m == month_name)? as u64
        + 1;
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next() != Some("GMT") || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day)?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u64, day: u64) -> Option<u64> {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    u64::try_from(era * 146_097 + doe - 719_468).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_classify_as_the_reference_does() {
        let code = |status, body| classify_status("jev", status, body, None).code;
        assert_eq!(code(401, ""), ErrorCode::Auth);
        assert_eq!(code(403, "nope"), ErrorCode::Auth);
        assert_eq!(code(413, ""), ErrorCode::InvalidRequest);
        assert_eq!(code(400, "bad field"), ErrorCode::InvalidRequest);
        assert_eq!(code(400, "This model's maximum context length is 8192"), ErrorCode::ContextWindowExceeded);
        assert_eq!(code(400, "Context_Window exceeded"), ErrorCode::ContextWindowExceeded);
        assert_eq!(code(400, "input too  long for model"), ErrorCode::ContextWindowExceeded);
        assert_eq!(code(400, "too long"), ErrorCode::InvalidRequest);
        assert_eq!(code(429, "slow down"), ErrorCode::RateLimit);
        assert_eq!(code(429, "Insufficient balance"), ErrorCode::Quota);
        assert_eq!(code(402, "billing"), ErrorCode::Quota);
        assert_eq!(code(500, ""), ErrorCode::Server);
        assert_eq!(code(529, "system_overloaded"), ErrorCode::Server);
        assert_eq!(code(418, ""), ErrorCode::Http(418));
        // Only the first 200 characters are examined and quoted.
        let late = format!("{}quota", "x".repeat(200));
        let err = classify_status("jev", 429, &late, None);
        assert_eq!(err.code, ErrorCode::RateLimit);
        assert_eq!(err.message, format!("jev HTTP 429 (RATE_LIMIT): {}", "x".repeat(200)));
    }

    #[test]
    fn retryable_codes_are_exactly_the_transient_ones() {
        let retryable = [
            ErrorCode::RateLimit,
            ErrorCode::Server,
            ErrorCode::Timeout,
            ErrorCode::Transport,
            ErrorCode::EmptyResponse,
        ];
        for code in retryable {
            assert!(code.is_retryable(), "{code}");
        }
        for code in [
            ErrorCode::Auth,
            ErrorCode::Quota,
            ErrorCode::InvalidRequest,
            ErrorCode::ContextWindowExceeded,
            ErrorCode::ResponseTooLarge,
            ErrorCode::Config,
            ErrorCode::Http(404),
        ] {
            assert!(!code.is_retryable(), "{code}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0"), None);
        assert_eq!(parse_retry_after("-3"), None);
        assert_eq!(parse_retry_after("1.5"), None);
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), None, "in the past");
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert!(parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT").is_some());
        assert_eq!(parse_retry_after("soon"), None);
    }
}
