//! API keys that cannot leak: no `Display`, a redacted `Debug`, and a way to scrub a key
//! out of text that came back from a server (a server may echo request headers).

/// A bearer key. Only the HTTP layer ever reads it, to build the `authorization` header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty key.
    pub fn new(key: impl Into<String>) -> Option<ApiKey> {
        let key = key.into();
        (!key.trim().is_empty()).then_some(ApiKey(key))
    }

    /// The key from an environment variable; `None` when unset or empty.
    pub fn from_env(variable: &str) -> Option<ApiKey> {
        std::env::var(variable).ok().and_then(ApiKey::new)
    }

    #[cfg(feature = "http")]
    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_prints() {
        let key = ApiKey::new("sk-secret-123").unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(key.redact("echo: Bearer sk-secret-123!"), "echo: Bearer ***!");
        assert!(ApiKey::new("  ").is_none());
    }
}
