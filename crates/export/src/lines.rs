//! A bounded line reader: a line longer than the cap is consumed without being kept.

use std::io::{self, BufRead};

/// One line read by [`read_line`].
pub(crate) enum LineRead {
    /// The line's bytes are in the buffer (without the `\n`).
    Text,
    /// The line was longer than the cap; its bytes were dropped.
    TooLong,
}

/// Reads the next line into `buf` (cleared first); `None` at the end of the input.
pub(crate) fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<Option<LineRead>> {
    buf.clear();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        read_any = true;
        let (chunk, found, used) = match memchr(available) {
            Some(at) => (available.get(..at).unwrap_or(&[]), true, at + 1),
            None => (available, false, available.len()),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if found {
            break;
        }
    }
    Ok(match (read_any, too_long) {
        (false, _) => None,
        (true, true) => Some(LineRead::TooLong),
        (true, false) => Some(LineRead::Text),
    })
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Option<String>> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut reader, &mut buf, max).unwrap() {
            out.push(match line {
                LineRead::Text => Some(String::from_utf8(buf.clone()).unwrap()),
                LineRead::TooLong => None,
            });
        }
        out
    }

    #[test]
    fn splits_lines_and_drops_the_ones_over_the_cap() {
        assert_eq!(lines(b"ab\ncdefgh\nij", 4), [Some("ab".into()), None, Some("ij".into())]);
        assert_eq!(lines(b"ab\n\n", 4), [Some("ab".into()), Some(String::new())]);
        assert!(lines(b"", 4).is_empty());
    }
}
