//! The protocol's framing on a byte stream: `Content-Length: N\r\n\r\n` then N bytes of JSON.
//!
//! `lsp-server` has its own reader, but it stops at the first malformed message; an editor
//! whose server dies on one bad byte loses every later diagnostic. This reader answers a
//! malformed message with a JSON-RPC error and reads on: a body that is not JSON (or not
//! UTF-8) is skipped by its length, a body that is JSON but not a message is answered with
//! its `id` when it has one, and a broken header is skipped up to the next
//! `Content-Length`.

use std::io::{self, BufRead, Read, Write};

use lsp_server::{ErrorCode, Message};
use serde_json::{Value, json};

/// The largest message body read (64 MiB): larger ones are skipped and answered with an
/// error, so a runaway client cannot make the server allocate without bound.
pub const MAX_BODY_BYTES: usize = 64 << 20;

/// The longest header line read; a longer one is malformed.
const MAX_HEADER_LINE_BYTES: u64 = 8 << 10;

/// What one frame held.
#[derive(Debug)]
pub enum Frame {
    /// A well-formed message.
    Message(Message),
    /// A frame that could not be read as a message: the JSON-RPC error to answer, and the
    /// request id to answer it with (`null` when none could be read).
    Malformed {
        /// The request's id, or `null`.
        id: Value,
        /// A JSON-RPC error code (`ParseError` or `InvalidRequest`).
        code: ErrorCode,
        /// What was wrong, for the client's log.
        message: String,
    },
}

/// Reads the next frame; `None` at the end of the input (or when it ends inside a frame:
/// the client has gone).
pub fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Frame>> {
    let mut length: Option<usize> = None;
    let mut problem: Option<String> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = input.by_ref().take(MAX_HEADER_LINE_BYTES).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_some() || problem.is_some() {
                break;
            }
            // Blank lines between frames are harmless.
            continue;
        }
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("Content-Length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => problem = Some(format!("malformed Content-Length header `{}`", clip(text))),
                }
            }
            Some(_) => {}
            None => problem = Some(format!("malformed header line `{}`", clip(text))),
        }
    }
    let Some(length) = length else {
        let message = problem.unwrap_or_else(|| "a frame without a Content-Length header".into());
        return Ok(Some(malformed(Value::Null, ErrorCode::ParseError, message)));
    };
    if length > MAX_BODY_BYTES {
        let skipped = io::copy(&mut input.by_ref().take(length as u64), &mut io::sink())?;
        if skipped < length as u64 {
            return Ok(None);
        }
        let message = format!("a message of {length} bytes is larger than the {MAX_BODY_BYTES} bytes read");
        return Ok(Some(malformed(Value::Null, ErrorCode::InvalidRequest, message)));
    }
    let mut body = vec![0; length];
    if let Err(e) = input.read_exact(&mut body) {
        return if e.kind() == io::ErrorKind::UnexpectedEof { Ok(None) } else { Err(e) };
    }
    Ok(Some(parse_body(&body)))
}

/// A frame's body as a message, or the error to answer it with.
fn parse_body(body: &[u8]) -> Frame {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return malformed(Value::Null, ErrorCode::ParseError, format!("the message is not JSON: {e}")),
    };
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    match serde_json::from_value::<Message>(value) {
        Ok(message) => Frame::Message(message),
        Err(e) => malformed(id, ErrorCode::InvalidRequest, format!("the JSON is not a JSON-RPC message: {e}")),
    }
}

fn malformed(id: Value, code: ErrorCode, message: String) -> Frame {
    Frame::Malformed { id, code, message }
}

/// At most 100 characters of a header line, for an error message.
fn clip(text: &str) -> String {
    text.chars().take(100).collect()
}

/// Writes one message.
pub fn write_message(output: &mut impl Write, message: &Message) -> io::Result<()> {
    message.write(output)
}

/// Writes the error answer to a malformed frame (its `id` may be `null`, which
/// `lsp-server`'s own response type cannot carry).
pub fn write_error(output: &mut impl Write, id: &Value, code: ErrorCode, message: &str) -> io::Result<()> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code as i32, "message": message}}).to_string();
    write!(output, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    output.flush()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    }

    fn read_all(bytes: &[u8]) -> Vec<Frame> {
        let mut input = bytes;
        let mut frames = Vec::new();
        while let Some(f) = read_frame(&mut input).unwrap() {
            frames.push(f);
        }
        frames
    }

    fn is_message(f: &Frame) -> bool {
        matches!(f, Frame::Message(_))
    }

    #[test]
    fn well_formed_frames_are_read_in_order() {
        let mut bytes = frame(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
        bytes.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        let frames = read_all(&bytes);
        assert_eq!(frames.len(), 2);
        assert!(frames.iter().all(is_message));
    }

    #[test]
    fn a_bad_body_is_answered_and_the_next_frame_is_read() {
        let mut bytes = frame(b"{not json");
        bytes.extend(frame(b"\xff\xfe"));
        bytes.extend(frame(br#"{"id":7,"params":1}"#));
        bytes.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        let frames = read_all(&bytes);
        assert_eq!(frames.len(), 4);
        assert!(matches!(&frames[0], Frame::Malformed { code: ErrorCode::ParseError, id: Value::Null, .. }));
        assert!(matches!(&frames[1], Frame::Malformed { code: ErrorCode::ParseError, .. }));
        match &frames[2] {
            Frame::Malformed { code: ErrorCode::InvalidRequest, id, .. } => assert_eq!(id, &json!(7)),
            other => panic!("{other:?}"),
        }
        assert!(is_message(&frames[3]));
    }

    #[test]
    fn a_broken_header_is_skipped_up_to_the_next_frame() {
        let mut bytes = b"garbage line\r\n\r\n".to_vec();
        bytes.extend(b"Content-Length: x\r\n\r\n");
        bytes.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        let frames = read_all(&bytes);
        assert_eq!(frames.len(), 3);
        assert!(!is_message(&frames[0]) && !is_message(&frames[1]) && is_message(&frames[2]));
    }

    #[test]
    fn a_frame_cut_short_ends_the_input() {
        assert!(read_all(b"Content-Length: 50\r\n\r\n{\"a\"").is_empty());
        assert!(read_all(b"").is_empty());
    }

    #[test]
    fn an_oversized_frame_is_skipped_without_being_held() {
        let mut bytes = format!("Content-Length: {}\r\n\r\n", MAX_BODY_BYTES + 1).into_bytes();
        bytes.resize(bytes.len() + MAX_BODY_BYTES + 1, b' ');
        bytes.extend(frame(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        let frames = read_all(&bytes);
        assert_eq!(frames.len(), 2);
        assert!(matches!(&frames[0], Frame::Malformed { code: ErrorCode::InvalidRequest, .. }));
    }
}
