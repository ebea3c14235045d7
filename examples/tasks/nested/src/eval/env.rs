//! Variables and their values.

use std::collections::HashMap;

/// The variables of one evaluation.
#[derive(Debug, Default, Clone)]
pub struct Env {
    values: HashMap<String, f64>,
}

impl Env {
    /// An environment with `pi` and `e` bound.
    pub fn with_constants() -> Env {
        let mut env = Env::default();
        env.bind("pi", std::f64::consts::PI);
        env.bind("e", std::f64::consts::E);
        env
    }

    /// The value of `name`, if bound.
    pub fn lookup(&self, name: &str) -> Option<f64> {
        self.values.get(name).copied()
    }

    /// Bind `name` to `value`, replacing an earlier binding.
    pub fn bind(&mut self, name: &str, value: f64) {
        self.values.insert(name.to_owned(), value);
    }
}
