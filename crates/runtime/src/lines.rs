//! Splitting a byte stream into lines with bounded memory: lines longer than the cap are
//! consumed without being kept (their length and SHA-256 are still known, so the hash
//! chain can step over them), and a last line without its `\n` is flagged.

use std::io::{self, Read};

use sha2::{Digest, Sha256};

/// The default cap on one line: far above any real record, far below the memory budget.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

const READ_CHUNK: usize = 256 * 1024;

/// The buffer's first size; it doubles up to [`READ_CHUNK`] as the stream turns out longer.
/// Why: a whole `READ_CHUNK` was zeroed up front, and for a short log (the npm package's
/// `verifyLog` of a session) zeroing it took a twentieth of the call.
const FIRST_CHUNK: usize = 8 * 1024;

/// One line of the stream (without its `\n`).
#[derive(Debug)]
pub(crate) enum Line<'a> {
    Text {
        /// 1-based line number.
        number: u64,
        bytes: &'a [u8],
        /// `false` only for a last line that lacks its `\n`.
        terminated: bool,
    },
    /// A line longer than the cap; its bytes were not kept.
    TooLong { number: u64, length: u64, sha256: [u8; 32], terminated: bool },
}

/// A streaming line splitter over any reader.
pub(crate) struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    max_line: usize,
    number: u64,
}

impl<R: Read> LineReader<R> {
    pub fn new(inner: R, max_line: usize) -> Self {
        LineReader { inner, buf: Vec::new(), start: 0, end: 0, eof: false, max_line: max_line.max(1), number: 0 }
    }

    /// Reads more bytes after the current window, moving or growing the buffer as needed.
    fn fill(&mut self) -> io::Result<usize> {
        if self.start > 0 && self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.end == self.buf.len() {
            if self.buf.len() < READ_CHUNK {
                let grown = (self.buf.len() * 2).clamp(FIRST_CHUNK, READ_CHUNK);
                self.buf.resize(grown, 0);
            } else if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let grown = (self.buf.len() * 2).min(self.max_line + READ_CHUNK);
                self.buf.resize(grown.max(self.buf.len() + 1), 0);
            }
        }
        let window = self.buf.get_mut(self.end..).unwrap_or(&mut []);
        let read = loop {
            match self.inner.read(window) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if read == 0 {
            self.eof = true;
        }
        self.end += read;
        Ok(read)
    }

    /// The next line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        let mut searched = 0;
        loop {
            let window = self.buf.get(self.start + searched..self.end).unwrap_or(&[]);
            if let Some(at) = memchr::memchr(b'\n', window) {
                let line_end = self.start + searched + at;
                if line_end - self.start > self.max_line {
                    // A long line that still fitted the buffer's slack: report it as too long.
                    let bytes = self.buf.get(self.start..line_end).unwrap_or(&[]);
                    let (length, sha256) = (bytes.len() as u64, Sha256::digest(bytes).into());
                    self.start = line_end + 1;
                    self.number += 1;
                    return Ok(Some(Line::TooLong { number: self.number, length, sha256, terminated: true }));
                }
                let line_start = self.start;
                self.start = line_end + 1;
                self.number += 1;
                let bytes = self.buf.get(line_start..line_end).unwrap_or(&[]);
                return Ok(Some(Line::Text { number: self.number, bytes, terminated: true }));
            }
            searched = self.end - self.start;
            if searched > self.max_line {
                return self.discard_long_line().map(Some);
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line_start = self.start;
                self.start = self.end;
                self.number += 1;
                let bytes = self.buf.get(line_start..self.end).unwrap_or(&[]);
                return Ok(Some(Line::Text { number: self.number, bytes, terminated: false }));
            }
            self.fill()?;
        }
    }

    /// Consumes the rest of an over-long line, hashing it as it goes.
    fn discard_long_line(&mut self) -> io::Result<Line<'static>> {
        let mut hasher = Sha256::new();
        let mut length = 0u64;
        loop {
            let window = self.buf.get(self.start..self.end).unwrap_or(&[]);
            if let Some(at) = memchr::memchr(b'\n', window) {
                hasher.update(window.get(..at).unwrap_or(&[]));
                length += at as u64;
                self.start += at + 1;
                self.number += 1;
                return Ok(Line::TooLong {
                    number: self.number,
                    length,
                    sha256: hasher.finalize().into(),
                    terminated: true,
                });
            }
            hasher.update(window);
            length += window.len() as u64;
            self.start = self.end;
            if self.eof {
                self.number += 1;
                return Ok(Line::TooLong {
                    number: self.number,
                    length,
                    sha256: hasher.finalize().into(),
                    terminated: false,
                });
            }
            self.fill()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push(match line {
                Line::Text { number, bytes, terminated } => {
                    format!("{number}:{}:{terminated}", String::from_utf8_lossy(bytes))
                }
                Line::TooLong { number, length, terminated, .. } => format!("{number}:long {length}:{terminated}"),
            });
        }
        out
    }

    #[test]
    fn splits_and_flags_the_unterminated_tail() {
        assert_eq!(collect(b"a\n\nbc\nd", 100), ["1:a:true", "2::true", "3:bc:true", "4:d:false"]);
        assert_eq!(collect(b"a\n", 100), ["1:a:true"]);
        assert!(collect(b"", 100).is_empty());
    }

    #[test]
    fn caps_long_lines_and_keeps_going() {
        let mut input = vec![b'x'; 700_000];
        input.extend_from_slice(b"\nok\n");
        input.extend(vec![b'y'; 10]);
        assert_eq!(collect(&input, 1000), ["1:long 700000:true", "2:ok:true", "3:yyyyyyyyyy:false"]);
        assert_eq!(collect(&input, 5), ["1:long 700000:true", "2:ok:true", "3:long 10:false"]);
    }

    #[test]
    fn a_short_stream_keeps_a_small_buffer_and_a_long_one_splits_alike_across_its_growth() {
        let mut reader = LineReader::new(&b"a\nb\n"[..], 100);
        while reader.next_line().unwrap().is_some() {}
        assert_eq!(reader.buf.len(), FIRST_CHUNK);
        // Lines of every length from 0 to 3000 bytes, about 4.5 MB: they cross each size the
        // buffer passes through and many chunk boundaries after it.
        let lines: Vec<Vec<u8>> = (0..3000).map(|n| vec![b'a' + (n % 26) as u8; n]).collect();
        let input = lines.join(&b'\n');
        let expected: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{}:{}:{}", i + 1, String::from_utf8_lossy(l), i + 1 < lines.len()))
            .collect();
        assert_eq!(collect(&input, 100_000), expected);
    }

    #[test]
    fn too_long_lines_hash_like_their_bytes() {
        let input = [vec![b'z'; 300_000], b"\n".to_vec()].concat();
        let mut reader = LineReader::new(&input[..], 10);
        let Some(Line::TooLong { sha256, .. }) = reader.next_line().unwrap() else { panic!() };
        assert_eq!(sha256, <[u8; 32]>::from(Sha256::digest(&input[..300_000])));
    }
}
