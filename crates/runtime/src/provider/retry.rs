//! Transport retries (runtime.md §1.6). Only rate limits, server errors, timeouts, transport
//! failures and empty replies are retried; a decision is never retried because of what it
//! said. Backoff doubles from `initial` up to `max`, with jitter; a server's `Retry-After` is
//! used as given, and one longer than `max` ends the attempts at once. No retry starts when
//! the request's deadline (the run's time budget) would pass before it could: a timeout that
//! used up the budget is final.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use super::error::ProviderError;
use super::{DecisionProvider, Request, Response};

/// When to retry a failed request (`runtime.md` §1.6): only retryable error codes, with
/// exponential backoff from `initial` up to `max`, jittered, or the server's `Retry-After`
/// when it asks for no more than `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// The delay before the first retry; each later one doubles it.
    pub initial: Duration,
    /// The longest delay; a server asking for more is not waited for (the error stands).
    pub max: Duration,
    /// 0.2 spreads each delay over ±20 %.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 3, initial: Duration::from_millis(300), max: Duration::from_secs(5), jitter: 0.2 }
    }
}

/// One retry about to happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The provider retried.
    pub who: String,
    /// The error code of the failed attempt (`RATE_LIMIT`, `SERVER`, …).
    pub code: String,
    /// 1-based retry number.
    pub attempt: u32,
    /// How long it waits before the retry.
    pub delay: Duration,
    /// The delay is the server's `Retry-After`.
    pub from_server: bool,
}

impl std::fmt::Display for RetryNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, retrying in {}ms", self.code, self.delay.as_millis())?;
        if self.from_server {
            f.write_str(" (the server asked for it)")?;
        }
        Ok(())
    }
}

impl RetryPolicy {
    /// The delay before retry `attempt` (1-based), or `None` to give up now.
    pub fn delay(&self, attempt: u32, error: &ProviderError, random: f64) -> Option<(Duration, bool)> {
        if attempt > self.max_retries || !error.code.is_retryable() {
            return None;
        }
        if let Some(wait) = error.retry_after {
            return (wait <= self.max).then_some((wait, true));
        }
        let base = self.initial.saturating_mul(1u32 << (attempt.saturating_sub(1)).min(16)).min(self.max);
        let spread = (1.0 - self.jitter + 2.0 * self.jitter * random.clamp(0.0, 1.0)).max(0.0);
        Some((base.mul_f64(spread).min(self.max), false))
    }
}

/// A provider with transport retries.
pub struct Retrying<P> {
    inner: P,
    policy: RetryPolicy,
}

impl<P: DecisionProvider> Retrying<P> {
    /// `inner`, retried under `policy`.
    pub fn new(inner: P, policy: RetryPolicy) -> Self {
        Retrying { inner, policy }
    }
}

/// A uniform number in [0, 1) without a random-number crate: `RandomState` is seeded from
/// the operating system's randomness.
fn uniform() -> f64 {
    let bits = RandomState::new().hash_one(0u8) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

impl<P: DecisionProvider> DecisionProvider for Retrying<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let mut notices = Vec::new();
        let mut attempt = 0;
        loop {
            match self.inner.decide(request) {
                Ok(mut response) => {
                    if !notices.is_empty() {
                        notices.append(&mut response.warnings);
                        response.warnings = notices;
                    }
                    return Ok(response);
                }
                Err(error) => {
                    attempt += 1;
                    let Some((delay, from_server)) = self.policy.delay(attempt, &error, uniform()) else {
                        return Err(error);
                    };
                    if request.deadline.is_some_and(|deadline| Instant::now() + delay >= deadline) {
                        let mut error = error;
                        error.message.push_str(" (not retried: the run's time budget ends first)");
                        return Err(error);
                    }
                    let notice = RetryNotice {
                        who: error.who.clone(),
                        code: error.code.as_string(),
                        attempt,
                        delay,
                        from_server,
                    };
                    notices.push(notice.to_string());
                    std::thread::sleep(delay);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ErrorCode;
    use decision_protocol::ask::Questions;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Times out every time, counting its attempts.
    struct AlwaysTimesOut(AtomicU32);

    impl DecisionProvider for AlwaysTimesOut {
        fn name(&self) -> &str {
            "slow"
        }
        fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            request.time_left_for("slow")?;
            Err(ProviderError::new("slow", ErrorCode::Timeout, "slow timed out"))
        }
    }

    #[test]
    fn no_retry_starts_that_would_end_after_the_deadline() {
        let policy = RetryPolicy { max_retries: 3, initial: Duration::from_millis(200), ..RetryPolicy::default() };
        let provider = Retrying::new(AlwaysTimesOut(AtomicU32::new(0)), policy);
        let mut request = Request::new(serde_json::Map::new(), Questions::new());
        request.deadline = Some(Instant::now() + Duration::from_millis(100));
        let started = Instant::now();
        let error = provider.decide(&request).unwrap_err();
        assert!(started.elapsed() < Duration::from_millis(100), "no backoff was slept: {:?}", started.elapsed());
        assert_eq!(provider.inner.0.load(Ordering::SeqCst), 1);
        assert!(error.message.contains("not retried: the run's time budget ends first"), "{}", error.message);
        // Without a deadline the same policy retries.
        let provider = Retrying::new(
            AlwaysTimesOut(AtomicU32::new(0)),
            RetryPolicy { max_retries: 1, initial: Duration::from_millis(1), ..policy },
        );
        request.deadline = None;
        provider.decide(&request).unwrap_err();
        assert_eq!(provider.inner.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_request_past_its_deadline_has_no_time_left() {
        let mut request = Request::new(serde_json::Map::new(), Questions::new());
        assert_eq!(request.time_left(), Some(request.timeout));
        request.deadline = Some(Instant::now() + Duration::from_secs(2));
        assert!(request.time_left().is_some_and(|left| left <= Duration::from_secs(2)));
        request.deadline = Some(Instant::now());
        assert_eq!(request.time_left(), None);
        let error = request.time_left_for("x").unwrap_err();
        assert_eq!(
            (error.code, error.message.as_str()),
            (ErrorCode::Timeout, "x: not sent: the run's time budget is spent")
        );
    }

    #[test]
    fn delays_double_up_to_the_cap_and_honour_retry_after() {
        let policy = RetryPolicy {
            max_retries: 5,
            initial: Duration::from_millis(100),
            max: Duration::from_millis(350),
            jitter: 0.0,
        };
        let server = ProviderError::new("x", ErrorCode::Server, "boom");
        let delays: Vec<_> = (1..=6).map(|a| policy.delay(a, &server, 0.5).map(|d| d.0.as_millis())).collect();
        assert_eq!(delays, [Some(100), Some(200), Some(350), Some(350), Some(350), None]);
        let mut limited = ProviderError::new("x", ErrorCode::RateLimit, "429");
        limited.retry_after = Some(Duration::from_millis(300));
        assert_eq!(policy.delay(1, &limited, 0.5), Some((Duration::from_millis(300), true)));
        limited.retry_after = Some(Duration::from_secs(1));
        assert_eq!(policy.delay(1, &limited, 0.5), None, "a Retry-After beyond the cap gives up");
        assert_eq!(policy.delay(1, &ProviderError::new("x", ErrorCode::Auth, "401"), 0.5), None);
        let jittered = RetryPolicy { jitter: 0.2, ..policy };
        assert_eq!(jittered.delay(1, &server, 0.0).unwrap().0, Duration::from_millis(80));
        assert_eq!(jittered.delay(1, &server, 1.0).unwrap().0, Duration::from_millis(120));
        assert!((0.0..1.0).contains(&uniform()));
    }
}
