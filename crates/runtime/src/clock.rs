//! The one clock the decision paths read: how long a provider took to answer.
//!
//! `std::time::Instant::now()` panics on `wasm32-unknown-unknown` (that target has no clock),
//! so there [`Instant`] reads no clock at all and every elapsed time is zero; latency is
//! observational only (recorded, never decided on), so nothing else changes. Everywhere else
//! it is `std::time::Instant`.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use std::time::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use self::no_clock::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod no_clock {
    use std::time::Duration;

    /// A point in time on a target without a clock: every instant is the same one.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub struct Instant;

    impl Instant {
        /// Reads no clock.
        pub fn now() -> Instant {
            Instant
        }

        /// Always zero: there is no clock to measure with.
        pub fn elapsed(&self) -> Duration {
            Duration::ZERO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Instant;

    #[test]
    fn elapsed_never_goes_backwards() {
        let started = Instant::now();
        let first = started.elapsed();
        assert!(started.elapsed() >= first);
    }
}
