//! calc: parse and evaluate arithmetic expressions with variables.

pub mod eval;
pub mod parser;

pub use eval::{evaluate, Env};
pub use parser::{parse, Expr};

/// Parse `source` and evaluate it in `env`.
pub fn run(source: &str, env: &mut Env) -> Result<f64, String> {
    let expr = parse(source)?;
    evaluate(&expr, env)
}
