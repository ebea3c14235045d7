//! A tool's `outputSchema` checked on its results. The MCP specification has a server that
//! declares an output schema return `structuredContent` conforming to it, and its clients
//! validate it; the gateway does so for the agent. The schema is the server's (untrusted):
//! it is compiled without any resolver, so a `$ref` to a URL or a file is a schema that cannot
//! be used, never a fetch. What it may cost is bounded too: a schema over [`MAX_SCHEMA_BYTES`]
//! or with more than [`MAX_PATTERNS`] regular expressions is not compiled, and its patterns
//! run on the `regex` engine (linear time, no look-around or back-references, each compiled
//! within [`MAX_PATTERN_BYTES`]), so no schema a server sends can make checking a result take
//! exponential time or unbounded memory. A schema past these bounds is one that cannot be
//! used: its results are relayed unchecked, and the gateway says so.

use std::collections::HashMap;
use std::sync::Arc;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

/// The longest a schema error's text, or the path it names, may be in a message.
const MAX_WHY: usize = 300;

/// The largest `outputSchema` compiled, in bytes of its compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// The most regular expressions (`pattern` values and `patternProperties` keys) a compiled
/// `outputSchema` may hold.
pub const MAX_PATTERNS: usize = 64;

/// The most memory one compiled pattern may take (and its lazy DFA's cache), in bytes.
pub const MAX_PATTERN_BYTES: usize = 256 * 1024;

/// What checking one result against its tool's `outputSchema` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaCheck {
    /// The tool declares no `outputSchema`, or the call failed: nothing to check.
    NotDeclared,
    /// `structuredContent` conforms.
    Conforms,
    /// It does not, or is missing: where and why (the failing value itself is not quoted).
    Violated {
        /// JSON pointer to the failing value in `structuredContent` (`""`: the whole).
        path: String,
        /// Why, in the validator's words (values masked), clipped.
        why: String,
    },
    /// The schema itself cannot be used (not a schema, or a reference it would have to fetch):
    /// the result is relayed unchecked, and this says why.
    Unusable(String),
}

/// Compiled output schemas, one per tool, recompiled when the tool's schema changes.
#[derive(Default)]
pub struct OutputSchemas {
    compiled: HashMap<String, (Value, Result<Arc<Validator>, String>)>,
}

impl OutputSchemas {
    /// Checks a `tools/call` response of `tool`, whose listing declared `schema`.
    pub fn check(&mut self, tool: &str, schema: Option<&Value>, response: &Value) -> SchemaCheck {
        let Some(schema) = schema else { return SchemaCheck::NotDeclared };
        let result = response.get("result");
        let failed = response.get("error").is_some()
            || result.and_then(|r| r.get("isError")).and_then(Value::as_bool) == Some(true);
        if failed {
            return SchemaCheck::NotDeclared;
        }
        let validator = match self.validator(tool, schema) {
            Ok(validator) => validator,
            Err(why) => return SchemaCheck::Unusable(why),
        };
        let Some(structured) = result.and_then(|r| r.get("structuredContent")) else {
            return SchemaCheck::Violated {
                path: String::new(),
                why: "the tool declares an outputSchema and returned no structuredContent".to_owned(),
            };
        };
        match validator.validate(structured) {
            Ok(()) => SchemaCheck::Conforms,
            Err(error) => SchemaCheck::Violated {
                path: clip(error.instance_path().as_str()),
                why: clip(&error.masked().to_string()),
            },
        }
    }

    fn validator(&mut self, tool: &str, schema: &Value) -> Result<Arc<Validator>, String> {
        if let Some((compiled_for, validator)) = self.compiled.get(tool)
            && compiled_for == schema
        {
            return validator.clone();
        }
        let validator = compile(schema).map(Arc::new);
        self.compiled.insert(tool.to_owned(), (schema.clone(), validator.clone()));
        validator
    }
}

/// Compiles a server's schema within the bounds above, or says why it cannot be used.
fn compile(schema: &Value) -> Result<Validator, String> {
    let bytes = serde_json::to_vec(schema).map_or(usize::MAX, |text| text.len());
    if bytes > MAX_SCHEMA_BYTES {
        return Err(format!("it is {bytes} bytes, over the {MAX_SCHEMA_BYTES} the gateway compiles"));
    }
    let patterns = count_patterns(schema);
    if patterns > MAX_PATTERNS {
        return Err(format!("it has {patterns} patterns, over the {MAX_PATTERNS} the gateway compiles"));
    }
    let patterns = PatternOptions::regex().size_limit(MAX_PATTERN_BYTES).dfa_size_limit(MAX_PATTERN_BYTES);
    jsonschema::options().with_pattern_options(patterns).build(schema).map_err(|e| clip(&e.masked().to_string()))
}

/// The regular expressions a schema holds: every string `pattern` and every key of every
/// `patternProperties`, wherever they are (a count of keys, so it may over-count a `pattern`
/// that is a property's name; never under-count).
fn count_patterns(value: &Value) -> usize {
    match value {
        Value::Object(members) => members
            .iter()
            .map(|(key, member)| {
                let own = match (key.as_str(), member) {
                    ("pattern", Value::String(_)) => 1,
                    ("patternProperties", Value::Object(keys)) => keys.len(),
                    _ => 0,
                };
                own + count_patterns(member)
            })
            .sum(),
        Value::Array(items) => items.iter().map(count_patterns).sum(),
        _ => 0,
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_WHY) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or_default()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "required": ["datetime"], "properties": {"datetime": {"type": "string"}}})
    }

    fn response(result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": result})
    }

    #[test]
    fn conforming_structured_content_passes_and_a_wrong_one_is_located() {
        let mut schemas = OutputSchemas::default();
        let good = response(json!({"content": [], "structuredContent": {"datetime": "now"}}));
        assert_eq!(schemas.check("t", Some(&schema()), &good), SchemaCheck::Conforms);
        let bad = response(json!({"content": [], "structuredContent": {"datetime": 42}}));
        let SchemaCheck::Violated { path, why } = schemas.check("t", Some(&schema()), &bad) else { panic!() };
        assert_eq!(path, "/datetime");
        assert!(!why.contains("42"), "the server's value is not quoted: {why}");
        let missing = response(json!({"content": [{"type": "text", "text": "now"}]}));
        assert!(matches!(schemas.check("t", Some(&schema()), &missing), SchemaCheck::Violated { .. }));
    }

    #[test]
    fn no_schema_a_failed_call_and_an_unusable_schema_are_not_checked() {
        let mut schemas = OutputSchemas::default();
        let any = response(json!({"content": []}));
        assert_eq!(schemas.check("t", None, &any), SchemaCheck::NotDeclared);
        let failed = response(json!({"content": [], "isError": true}));
        assert_eq!(schemas.check("t", Some(&schema()), &failed), SchemaCheck::NotDeclared);
        // A reference the gateway would have to fetch is never fetched.
        let remote = json!({"$ref": "http://127.0.0.1:9/schema.json"});
        assert!(matches!(schemas.check("r", Some(&remote), &any), SchemaCheck::Unusable(_)));
        let not_a_schema = json!({"type": 12});
        assert!(matches!(schemas.check("n", Some(&not_a_schema), &any), SchemaCheck::Unusable(_)));
    }

    #[test]
    fn patterns_run_in_linear_time_and_a_pattern_that_would_backtrack_is_not_compiled() {
        let mut schemas = OutputSchemas::default();
        let word = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}}});
        let ok = response(json!({"content": [], "structuredContent": {"id": "abc"}}));
        assert_eq!(schemas.check("w", Some(&word), &ok), SchemaCheck::Conforms);
        let bad = response(json!({"content": [], "structuredContent": {"id": "ABC"}}));
        assert!(matches!(schemas.check("w", Some(&word), &bad), SchemaCheck::Violated { .. }));
        // Nested repetition costs the `regex` engine linear time on a string made to backtrack.
        let nested = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^(a+)+$"}}});
        let evil = response(json!({"content": [], "structuredContent": {"id": format!("{}!", "a".repeat(100_000))}}));
        assert!(matches!(schemas.check("n", Some(&nested), &evil), SchemaCheck::Violated { .. }));
        // Back-references and look-around need a backtracking engine: not compiled.
        for pattern in ["^(a+)+\\1$", "^(?=(a+)+b)"] {
            let schema = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": pattern}}});
            assert!(matches!(schemas.check(pattern, Some(&schema), &ok), SchemaCheck::Unusable(_)), "{pattern}");
        }
    }

    #[test]
    fn a_schema_too_large_to_compile_cheaply_is_unusable_and_one_within_the_bounds_is_used() {
        let mut schemas = OutputSchemas::default();
        let any = response(json!({"content": [], "structuredContent": {"id": "a"}}));
        // A pattern whose compiled form would take megabytes (under the `regex` default of 10 MiB).
        let huge = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "a{300}{300}"}}});
        assert!(matches!(schemas.check("huge", Some(&huge), &any), SchemaCheck::Unusable(_)));
        let properties = |count: usize| -> Value {
            let members: serde_json::Map<String, Value> =
                (0..count).map(|i| (format!("p{i}"), json!({"type": "string", "pattern": "^a"}))).collect();
            json!({"type": "object", "properties": members})
        };
        assert_eq!(schemas.check("within", Some(&properties(MAX_PATTERNS)), &any), SchemaCheck::Conforms);
        let SchemaCheck::Unusable(why) = schemas.check("many", Some(&properties(MAX_PATTERNS + 1)), &any) else {
            panic!()
        };
        assert!(why.contains("65 patterns"), "{why}");
        let long = json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)});
        let SchemaCheck::Unusable(why) = schemas.check("long", Some(&long), &any) else { panic!() };
        assert!(why.contains("over the 65536"), "{why}");
    }

    #[test]
    fn a_long_failing_path_is_clipped() {
        let mut schemas = OutputSchemas::default();
        let key = "k".repeat(5_000);
        let schema = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let bad = response(json!({"content": [], "structuredContent": {key: 1}}));
        let SchemaCheck::Violated { path, .. } = schemas.check("t", Some(&schema), &bad) else { panic!() };
        assert!(path.chars().count() <= MAX_WHY + 1 && path.ends_with('…'), "{}", path.len());
    }

    #[test]
    fn a_changed_schema_is_compiled_again() {
        let mut schemas = OutputSchemas::default();
        let value = response(json!({"content": [], "structuredContent": {"datetime": "now"}}));
        assert_eq!(schemas.check("t", Some(&schema()), &value), SchemaCheck::Conforms);
        let stricter = json!({"type": "object", "required": ["zone"]});
        assert!(matches!(schemas.check("t", Some(&stricter), &value), SchemaCheck::Violated { .. }));
    }
}
