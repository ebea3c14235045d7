//! The line scanner: the only place that knows the text. Turns source bytes into a
//! [`Contract`](crate::Contract) and the parse-layer diagnostics, never stopping at the first
//! problem and never panicking.

pub mod text;
