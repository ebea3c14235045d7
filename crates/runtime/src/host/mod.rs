//! The reference coding host and its sandboxed file tools.
