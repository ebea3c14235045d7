//! Server-sent events, as the Streamable HTTP transport carries JSON-RPC messages in them, read
//! in bounded memory: each event's `data` is one message. Comments, `id` and `retry` are read
//! past (the gateway does not resume streams), and events of a type other than `message` are
//! skipped. An event whose data grows past the limit is skipped to its end and reported as
//! [`Line::TooLong`], never held.

use std::io::{self, BufRead};

use crate::framing::{Line, read_any_line};

/// The events of one stream.
pub struct EventStream<R> {
    reader: R,
    max: usize,
}

impl<R: BufRead> EventStream<R> {
    /// The events of `reader`, each holding at most `max` bytes of data.
    pub fn new(reader: R, max: usize) -> EventStream<R> {
        EventStream { reader, max }
    }

    /// The next message: its data (lines joined by a space: a JSON text means the same with
    /// any whitespace between its tokens, and the gateway relays one message a line),
    /// [`Line::TooLong`] for one past the limit, or [`Line::End`] when the stream ends (an
    /// event the stream ended inside is dropped, as the specification says).
    pub fn next_message(&mut self) -> io::Result<Line> {
        let mut data: Vec<u8> = Vec::new();
        let mut lines = 0usize;
        let mut too_long: Option<usize> = None;
        let mut other_type = false;
        loop {
            let line = match read_any_line(&mut self.reader, self.max)? {
                Line::End => return Ok(Line::End),
                Line::TooLong { bytes } => {
                    // A line too long to read is taken for data: what else would be that long.
                    too_long = Some(too_long.unwrap_or(data.len()) + bytes);
                    lines += 1;
                    continue;
                }
                Line::Message(line) => line,
            };
            if line.is_empty() {
                let message = std::mem::take(&mut data);
                let skip = other_type || lines == 0;
                (lines, other_type) = (0, false);
                match too_long.take() {
                    Some(bytes) if !skip => return Ok(Line::TooLong { bytes }),
                    _ if skip => continue,
                    _ => return Ok(Line::Message(message)),
                }
            }
            let (field, value) = split_field(&line);
            match field {
                b"data" => {
                    if let Some(bytes) = too_long.as_mut() {
                        *bytes += value.len() + 1;
                    } else if data.len() + value.len() + 1 > self.max {
                        too_long = Some(data.len() + value.len() + 1);
                        data.clear();
                    } else {
                        if lines > 0 {
                            data.push(b' ');
                        }
                        data.extend_from_slice(value);
                    }
                    lines += 1;
                }
                // An empty type is the default one, `message`.
                b"event" => other_type = !value.is_empty() && value != b"message",
                // Comments (an empty field name), `id`, `retry` and unknown fields.
                _ => {}
            }
        }
    }
}

/// A line's field name and value (one space after the colon is not part of the value; a line
/// without a colon is a field with an empty value).
fn split_field(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(at) => {
            let (field, rest) = line.split_at(at);
            let value = rest.get(1..).unwrap_or_default();
            (field, value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn messages(stream: &str, max: usize) -> Vec<Line> {
        // A tiny buffer makes lines cross buffer boundaries.
        let mut events = EventStream::new(io::BufReader::with_capacity(3, stream.as_bytes()), max);
        let mut out = Vec::new();
        loop {
            let line = events.next_message().unwrap();
            if line == Line::End {
                return out;
            }
            out.push(line);
        }
    }

    fn message(text: &str) -> Line {
        Line::Message(text.as_bytes().to_vec())
    }

    #[test]
    fn each_event_is_a_message_and_comments_ids_and_other_types_are_read_past() {
        let stream = ": keep-alive\n\nid: 1\ndata: {\"a\":1}\n\nevent: message\ndata:{\"b\":\ndata: 2}\r\n\r\n\
                      event: ping\ndata: {}\n\nretry: 10\n\ndata: {\"c\":3}\n\nevent:\ndata: {\"d\":4}\n\ndata: {\"torn\"";
        let read = messages(stream, 100);
        assert_eq!(read, [message("{\"a\":1}"), message("{\"b\": 2}"), message("{\"c\":3}"), message("{\"d\":4}")]);
    }

    #[test]
    fn an_event_past_the_limit_is_skipped_and_reported_and_the_next_one_is_read() {
        let long = "x".repeat(50);
        let stream = format!("data: {long}\ndata: {long}\n\ndata: {{}}\n\n");
        let read = messages(&stream, 60);
        assert!(matches!(read.first(), Some(Line::TooLong { bytes }) if *bytes > 60), "{read:?}");
        assert_eq!(read.get(1), Some(&message("{}")));
        // One data line longer than the limit on its own.
        let read = messages(&format!("data: {}\n\ndata: 1\n\n", "y".repeat(200)), 60);
        assert!(matches!(read.as_slice(), [Line::TooLong { .. }, Line::Message(m)] if m == b"1"), "{read:?}");
    }
}
