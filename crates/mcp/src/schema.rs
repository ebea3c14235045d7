//! A tool's `outputSchema` checked on its results. The MCP specification has a server that
//! declares an output schema return `structuredContent` conforming to it, and its clients
//! validate it; the gateway does so for the agent. The schema is the server's (untrusted):
//! it is compiled without any resolver, so a `$ref` to a URL or a file is a schema that cannot
//! be used, never a fetch.

use std::collections::HashMap;
use std::sync::Arc;

use jsonschema::Validator;
use serde_json::Value;

/// The longest a schema error's text may be in a message.
const MAX_WHY: usize = 300;

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
                path: error.instance_path().as_str().to_owned(),
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
        let validator = jsonschema::validator_for(schema).map(Arc::new).map_err(|e| clip(&e.masked().to_string()));
        self.compiled.insert(tool.to_owned(), (schema.clone(), validator.clone()));
        validator
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
    fn a_changed_schema_is_compiled_again() {
        let mut schemas = OutputSchemas::default();
        let value = response(json!({"content": [], "structuredContent": {"datetime": "now"}}));
        assert_eq!(schemas.check("t", Some(&schema()), &value), SchemaCheck::Conforms);
        let stricter = json!({"type": "object", "required": ["zone"]});
        assert!(matches!(schemas.check("t", Some(&stricter), &value), SchemaCheck::Violated { .. }));
    }
}
