//! The stdio transport's framing (newline-delimited JSON-RPC, one message a line) read in
//! bounded memory, and the few JSON-RPC messages the gateway writes itself.
//!
//! Messages the gateway does not judge are relayed as the bytes that arrived; only the ones it
//! answers itself (a parse error, an oversized message, a refused call, an upstream failure)
//! are written here.

use std::io::{self, BufRead};

use serde_json::{Value, json};

/// The largest message the gateway accepts by default: 16 MiB.
pub const DEFAULT_MAX_MESSAGE: usize = 16 << 20;

/// JSON-RPC: the text is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request (a batch, an oversized message).
pub const INVALID_REQUEST: i64 = -32600;
/// The gateway's own server error: the upstream server exited or did not answer in time.
pub const UPSTREAM_ERROR: i64 = -32000;

/// One line read from a stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its `\n` (and without a `\r` before it).
    Message(Vec<u8>),
    /// A line longer than the limit: its bytes were skipped, never held.
    TooLong {
        /// How many bytes it had (up to its `\n`).
        bytes: usize,
    },
    /// The stream ended (a last line without `\n` is still returned as a message first).
    End,
}

/// Reads the next line of `reader` holding at most `max` bytes of it in memory; a longer line
/// is skipped to its end and reported as [`Line::TooLong`]. Blank lines are skipped.
pub fn read_line(reader: &mut impl BufRead, max: usize) -> io::Result<Line> {
    loop {
        match read_any_line(reader, max)? {
            Line::Message(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
            line => return Ok(line),
        }
    }
}

/// As [`read_line`], blank lines included (as empty or whitespace [`Line::Message`]s): what
/// a reader of server-sent events needs, whose blank line ends an event. A last line without
/// `\n` that is blank is the end.
pub fn read_any_line(reader: &mut impl BufRead, max: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut skipped: Option<usize> = None;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match skipped {
                Some(bytes) => Line::TooLong { bytes },
                None if line.iter().all(u8::is_ascii_whitespace) => Line::End,
                None => Line::Message(line),
            });
        }
        let (chunk, newline) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (available.get(..at).unwrap_or_default(), true),
            None => (available, false),
        };
        let used = chunk.len() + usize::from(newline);
        match skipped.as_mut() {
            Some(bytes) => *bytes += chunk.len(),
            None if line.len() + chunk.len() > max => skipped = Some(line.len() + chunk.len()),
            None => line.extend_from_slice(chunk),
        }
        reader.consume(used);
        if newline {
            if let Some(bytes) = skipped {
                return Ok(Line::TooLong { bytes });
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Line::Message(line));
        }
    }
}

/// A JSON-RPC error response (`id` is `null` when the request's id is unknown).
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A `tools/call` result that refuses the call: `isError: true` and the reason in words, so
/// the agent can act on it (the protocol's tool errors, not a JSON-RPC error).
pub fn refusal(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}})
}

/// The kind of a JSON-RPC message, read from its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind<'a> {
    /// A request: `method` and `id`.
    Request(&'a str),
    /// A notification: `method`, no `id`.
    Notification(&'a str),
    /// A response: `id`, no `method`.
    Response,
    /// None of these (relayed as it is; the other side answers it).
    Other,
}

/// The kind of `message`.
pub fn kind(message: &Value) -> Kind<'_> {
    match (message.get("method").and_then(Value::as_str), message.get("id")) {
        (Some(method), Some(_)) => Kind::Request(method),
        (Some(method), None) => Kind::Notification(method),
        (None, Some(_)) => Kind::Response,
        (None, None) => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        // A tiny buffer makes lines cross buffer boundaries.
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader, max).unwrap();
            let end = line == Line::End;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn lines_are_split_blank_ones_skipped_and_a_last_line_without_newline_kept() {
        assert_eq!(
            lines(b"{\"a\":1}\r\n\n  \n{\"b\":2}", 100),
            [Line::Message(b"{\"a\":1}".to_vec()), Line::Message(b"{\"b\":2}".to_vec()), Line::End]
        );
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_and_the_next_one_read() {
        let long = [b'x'; 50];
        let mut input = long.to_vec();
        input.extend_from_slice(b"\n{}\n");
        assert_eq!(lines(&input, 10), [Line::TooLong { bytes: 50 }, Line::Message(b"{}".to_vec()), Line::End]);
        assert_eq!(lines(&long, 10), [Line::TooLong { bytes: 50 }, Line::End]);
        assert_eq!(
            lines(b"0123456789\n", 10),
            [Line::Message(b"0123456789".to_vec()), Line::End],
            "the limit itself fits"
        );
    }

    #[test]
    fn kinds_are_read_from_members() {
        assert_eq!(kind(&json!({"method": "ping", "id": 1})), Kind::Request("ping"));
        assert_eq!(
            kind(&json!({"method": "notifications/initialized"})),
            Kind::Notification("notifications/initialized")
        );
        assert_eq!(kind(&json!({"id": 1, "result": {}})), Kind::Response);
        assert_eq!(kind(&json!({"x": 1})), Kind::Other);
    }
}
