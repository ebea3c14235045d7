//! Where spans go: an OTLP/HTTP traces URL, and the headers the collector wants (read from
//! the standard OpenTelemetry environment variables, never printed).

use std::fmt;

/// The environment variables read for headers, the traces-specific one first.
pub const HEADER_VARIABLES: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"];

/// The path a base URL gets (the OTLP/HTTP default for traces).
const TRACES_PATH: &str = "/v1/traces";

/// A collector's traces endpoint.
#[derive(Clone)]
pub struct Endpoint {
    url: String,
    display: String,
    headers: Vec<(String, String)>,
}

/// Why an endpoint cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Not an `http://` or `https://` URL with a host.
    #[error("--otlp wants an http:// or https:// URL with a host, e.g. http://127.0.0.1:4318")]
    Url,
    /// A header entry that is not `name=value`.
    #[error("{variable}: entry {index} is not name=value (entries are comma-separated)")]
    Header {
        /// The variable.
        variable: &'static str,
        /// The 1-based entry.
        index: usize,
    },
    /// A header variable that is not valid Unicode.
    #[error("{0} is not valid UTF-8")]
    NotUnicode(&'static str),
}

impl Endpoint {
    /// The endpoint at `url`. A URL with no path (or `/`) is a collector's base URL and gets
    /// `/v1/traces`; any other path is used as given. Headers come from
    /// [`HEADER_VARIABLES`] as the OpenTelemetry specification writes them
    /// (`name=value,name2=value2`, values percent-encoded).
    pub fn from_env(url: &str) -> Result<Endpoint, EndpointError> {
        Endpoint::from_variables(url, |name| std::env::var_os(name))
    }

    /// [`Endpoint::from_env`], reading the variables through `variable`.
    fn from_variables(
        url: &str,
        variable: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Endpoint, EndpointError> {
        let mut endpoint = Endpoint::new(url)?;
        // A variable set to nothing counts as unset (as the specification says), so an empty
        // traces variable does not hide the general one.
        for name in HEADER_VARIABLES {
            if let Some(value) = variable(name).filter(|v| !v.is_empty()) {
                let value = value.into_string().map_err(|_| EndpointError::NotUnicode(name))?;
                endpoint.headers = parse_headers(name, &value)?;
                break;
            }
        }
        Ok(endpoint)
    }

    /// The endpoint at `url`, without headers.
    pub fn new(url: &str) -> Result<Endpoint, EndpointError> {
        let uri: ureq::http::Uri = url.trim().parse().map_err(|_| EndpointError::Url)?;
        let scheme = uri.scheme_str().filter(|s| *s == "http" || *s == "https").ok_or(EndpointError::Url)?;
        let host = uri.host().filter(|h| !h.is_empty()).ok_or(EndpointError::Url)?;
        let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
        let path = match uri.path() {
            "" | "/" => TRACES_PATH,
            path => path,
        };
        // What is shown leaves out credentials in the URL and its query.
        let display = format!("{scheme}://{host}{port}{path}");
        let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or(host);
        Ok(Endpoint { url: format!("{scheme}://{authority}{path}{query}"), display, headers: Vec::new() })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers sent with each request.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
}

/// The URL without credentials or query: safe to print.
impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

/// Only the printable URL: headers may hold credentials.
impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Endpoint({}, {} header(s))", self.display, self.headers.len())
    }
}

fn parse_headers(variable: &'static str, value: &str) -> Result<Vec<(String, String)>, EndpointError> {
    let mut headers = Vec::new();
    for (index, entry) in value.split(',').enumerate() {
        if entry.trim().is_empty() {
            continue;
        }
        let error = || EndpointError::Header { variable, index: index + 1 };
        let (name, value) = entry.split_once('=').ok_or_else(error)?;
        let name = percent_decode(name.trim()).ok_or_else(error)?;
        let value = percent_decode(value.trim()).ok_or_else(error)?;
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) || value.chars().any(|c| c.is_control()) {
            return Err(error());
        }
        headers.push((name, value));
    }
    Ok(headers)
}

/// `%XX` escapes decoded; `None` for a broken escape or text that is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes.get(i) == Some(&b'%') {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(*bytes.get(i)?);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_traces_path_and_a_full_one_is_kept() {
        assert_eq!(Endpoint::new("http://127.0.0.1:4318").unwrap().url(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(Endpoint::new("http://127.0.0.1:4318/").unwrap().url(), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(Endpoint::new("https://otel.example/api/traces").unwrap().url(), "https://otel.example/api/traces");
    }

    #[test]
    fn what_is_shown_leaves_out_credentials_and_the_query() {
        let endpoint = Endpoint::new("https://user:secret@otel.example:4318/v1/traces?token=abc").unwrap();
        assert_eq!(endpoint.to_string(), "https://otel.example:4318/v1/traces");
        assert!(!format!("{endpoint:?}").contains("secret"));
        assert!(endpoint.url().contains("token=abc"), "the request keeps the query");
    }

    #[test]
    fn other_schemes_and_hostless_urls_are_refused() {
        for url in ["ftp://127.0.0.1", "127.0.0.1:4318", "", "http://"] {
            assert_eq!(Endpoint::new(url).err(), Some(EndpointError::Url), "{url}");
        }
    }

    #[test]
    fn headers_are_read_as_the_specification_writes_them() {
        let headers = parse_headers("V", "api-key=a%20b, x-team = blue ,").unwrap();
        assert_eq!(headers, vec![("api-key".into(), "a b".into()), ("x-team".into(), "blue".into())]);
        assert_eq!(parse_headers("V", "ok=1,broken"), Err(EndpointError::Header { variable: "V", index: 2 }));
        assert_eq!(parse_headers("V", "bad%zz=1"), Err(EndpointError::Header { variable: "V", index: 1 }));
        assert_eq!(parse_headers("V", "x=a%0Ab"), Err(EndpointError::Header { variable: "V", index: 1 }));
        assert_eq!(parse_headers("V", "sp ace=1"), Err(EndpointError::Header { variable: "V", index: 1 }));
    }

    #[test]
    fn an_empty_traces_variable_does_not_hide_the_general_one() {
        let with = |traces: &str, general: &str| {
            let (traces, general) = (traces.to_owned(), general.to_owned());
            Endpoint::from_variables("http://127.0.0.1:4318", move |name| match name {
                "OTEL_EXPORTER_OTLP_TRACES_HEADERS" => Some(traces.clone().into()),
                _ => Some(general.clone().into()),
            })
        };
        let names = |e: Endpoint| e.headers().iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(with("", "api-key=1").unwrap()), ["api-key"]);
        assert_eq!(names(with("x-traces=2", "api-key=1").unwrap()), ["x-traces"]);
        assert!(names(with("", "").unwrap()).is_empty());
    }
}
