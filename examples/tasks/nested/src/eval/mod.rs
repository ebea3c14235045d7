//! Evaluating an expression tree.

mod env;

pub use env::Env;

use crate::parser::Expr;

/// The largest magnitude a result may have before it is refused as an overflow.
pub const MAX_MAGNITUDE: f64 = 1e300;

/// Evaluate `expr`; variables are looked up in `env`, `let` binds one.
pub fn evaluate(expr: &Expr, env: &mut Env) -> Result<f64, String> {
    let value = match expr {
        Expr::Number(n) => *n,
        Expr::Variable(name) => env.lookup(name).ok_or_else(|| format!("unknown variable {name}"))?,
        Expr::Binary(left, op, right) => {
            let (a, b) = (evaluate(left, env)?, evaluate(right, env)?);
            apply_operator(*op, a, b)?
        }
        Expr::Let(name, value) => {
            let v = evaluate(value, env)?;
            env.bind(name, v);
            v
        }
    };
    if value.abs() > MAX_MAGNITUDE {
        return Err("overflow".into());
    }
    Ok(value)
}

/// One arithmetic operator on two numbers; division by zero is an error, not infinity.
fn apply_operator(op: char, a: f64, b: f64) -> Result<f64, String> {
    match op {
        '+' => Ok(a + b),
        '-' => Ok(a - b),
        '*' => Ok(a * b),
        '/' if b == 0.0 => Err("division by zero".into()),
        '/' => Ok(a / b),
        other => Err(format!("unknown operator {other}")),
    }
}
