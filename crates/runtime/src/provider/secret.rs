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
    /// The `authorization` header value: `Bearer <key>`. Never log it.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// `text` with every occurrence of the key, and every `Bearer …` credential, replaced
    /// by `***`.
    pub fn redact(&self, text: &str) -> String {
        redact_bearer(&text.replace(&self.0, "***"))
    }
}

/// The shortest run of token characters after `Bearer` that is taken for a credential (so
/// prose such as "the bearer of the news" is left alone).
const MIN_CREDENTIAL: usize = 8;

/// `text` with every `Bearer <credential>` (any case; the credential a run of at least eight
/// token characters, RFC 6750's `b64token`) turned into `Bearer ***`: a server that echoes
/// request headers may echo a credential this process does not hold as its key.
pub fn redact_bearer(text: &str) -> String {
    const WORD: &[u8] = b"bearer";
    let bytes = text.as_bytes();
    let is_token = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=');
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut at) = (0, 0);
    while at + WORD.len() <= bytes.len() {
        let word = bytes.get(at..at + WORD.len()).unwrap_or_default();
        let starts_word = at == 0 || bytes.get(at - 1).is_some_and(|b| !b.is_ascii_alphanumeric());
        if !(starts_word && word.eq_ignore_ascii_case(WORD)) {
            at += 1;
            continue;
        }
        let after = at + WORD.len();
        let spaces = bytes.get(after..).unwrap_or_default().iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
        let start = after + spaces;
        let length = bytes.get(start..).unwrap_or_default().iter().take_while(|b| is_token(**b)).count();
        if spaces > 0 && length >= MIN_CREDENTIAL {
            out.push_str(text.get(copied..start).unwrap_or_default());
            out.push_str("***");
            copied = start + length;
        }
        at = start + length.max(1);
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}

#[cfg(feature = "http")]
/// Redacts every string of `value` — object keys too — of `key` and of `Bearer …` forms.
pub fn redact_value(value: &mut serde_json::Value, key: Option<&ApiKey>) {
    use serde_json::Value;
    let scrub = |text: &str| match key {
        Some(key) => key.redact(text),
        None => redact_bearer(text),
    };
    let needs = |text: &str| key.is_some_and(|k| text.contains(&k.0)) || text.to_ascii_lowercase().contains("bearer");
    match value {
        Value::String(text) if needs(text) => *text = scrub(text),
        Value::Array(items) => items.iter_mut().for_each(|item| redact_value(item, key)),
        Value::Object(map) => {
            if map.keys().any(|k| needs(k)) {
                let entries = std::mem::take(map);
                for (k, mut v) in entries {
                    redact_value(&mut v, key);
                    map.insert(if needs(&k) { scrub(&k) } else { k }, v);
                }
            } else {
                map.values_mut().for_each(|v| redact_value(v, key));
            }
        }
        _ => {}
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
        assert_eq!(key.redact("key=sk-secret-123"), "key=***");
        assert!(ApiKey::new("  ").is_none());
    }

    #[test]
    fn bearer_credentials_are_redacted_whatever_they_are() {
        assert_eq!(redact_bearer("authorization: Bearer abc.def-ghi"), "authorization: Bearer ***");
        assert_eq!(redact_bearer(r#"{"h":"bearer  xyz12345678","n":1}"#), r#"{"h":"bearer  ***","n":1}"#);
        assert_eq!(redact_bearer("BEARER t1234567890, Bearer t2/+=abcdef"), "BEARER ***, Bearer ***");
        for untouched in [
            "no credential here",
            "Bearer",
            "Bearer ",
            "bearers abcdefghijk",
            "the bearer of the news",
            "ünïcode Bearer",
            "xbearer abcdefghijk",
        ] {
            assert_eq!(redact_bearer(untouched), untouched, "{untouched}");
        }
    }

    #[test]
    fn every_string_of_a_reply_is_redacted() {
        let key = ApiKey::new("sk-secret-123").unwrap();
        let mut reply = serde_json::json!({
            "answers": {"ok": {"noul": 0.9, "note": "you sent sk-secret-123"}},
            "echo": ["Authorization: Bearer sk-secret-123"],
            "sk-secret-123": "as a key",
            "model": "m",
        });
        redact_value(&mut reply, Some(&key));
        let text = reply.to_string();
        assert!(!text.contains("sk-secret-123"), "{text}");
        assert_eq!(reply["echo"][0], "Authorization: Bearer ***");
        assert_eq!(reply["***"], "as a key");
        assert_eq!(reply["model"], "m");
    }
}
