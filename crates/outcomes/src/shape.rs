//! Small JSON helpers shared by the loader, the validator and the report: kind names, JSON
//! pointers (RFC 6901) and mathematical equality of numbers.

use serde_json::{Number, Value};

/// The shape name of a JSON value. Integral numbers (including `1.0`) are `integer`, other
/// numbers `number`, matching the deliverable `type` names.
pub fn shape_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if is_integral(number) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a number has no fractional part (JSON Schema's notion of `integer`).
pub fn is_integral(number: &Number) -> bool {
    if number.is_i64() || number.is_u64() {
        return true;
    }
    number.as_f64().is_some_and(|float| float.is_finite() && float.fract() == 0.0)
}

/// `parent` + `/` + escaped `token`.
pub fn pointer_child(parent: &str, token: &str) -> String {
    let mut pointer = String::with_capacity(parent.len() + token.len() + 1);
    pointer.push_str(parent);
    push_pointer_child(&mut pointer, token);
    pointer
}

/// Append `/` + escaped `token` to a pointer, without a temporary string.
pub fn push_pointer_child(pointer: &mut String, token: &str) {
    pointer.push('/');
    for (index, part) in token.split('~').enumerate() {
        if index > 0 {
            pointer.push_str("~0");
        }
        for (index, piece) in part.split('/').enumerate() {
            if index > 0 {
                pointer.push_str("~1");
            }
            pointer.push_str(piece);
        }
    }
}

/// Equality in which numbers compare by mathematical value (`1` equals `1.0`) and object
/// member order does not matter.
pub fn json_equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_equal(x, y)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(key, x)| b.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => left == right,
    }
}

fn numbers_equal(a: &Number, b: &Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    // One side is a float, or the integers have different signs and ranges: i64 and u64
    // values that are not representable in the other type can only equal a float.
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y && (a.is_f64() || b.is_f64()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        assert_eq!(shape_of(&json!(1)), "integer");
        assert_eq!(shape_of(&json!(1.0)), "integer");
        assert_eq!(shape_of(&json!(1.5)), "number");
        assert_eq!(shape_of(&json!(null)), "null");
        assert_eq!(shape_of(&json!({})), "object");
    }

    #[test]
    fn pointers_escape() {
        assert_eq!(pointer_child("", "a/b~c"), "/a~1b~0c");
        assert_eq!(pointer_child("/x", "0"), "/x/0");
        assert_eq!(pointer_child("", "~/~~//"), "/~0~1~0~0~1~1");
        assert_eq!(pointer_child("", ""), "/");
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(!json_equal(&json!(1), &json!(2)));
        assert!(!json_equal(&json!(-1), &json!(u64::MAX)));
        assert!(json_equal(&json!({"a":1,"b":2}), &json!({"b":2,"a":1.0})));
        assert!(!json_equal(&json!("1"), &json!(1)));
    }
}
