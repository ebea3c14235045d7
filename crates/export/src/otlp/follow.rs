//! A log followed while it is written (`decision run`, `decision mcp`): its lines are read as
//! they reach the file, on a thread of their own, and each row is handed over as soon as it is
//! complete. The writer never waits for it.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::PathBuf;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::log_rows::LogRows;
use crate::row::Row;

/// How often the file is looked at.
const POLL: Duration = Duration::from_millis(100);
/// A line longer than this is skipped (replay skips it too).
const MAX_LINE: usize = decision::lines::DEFAULT_MAX_LINE;

/// A follower of one log.
pub struct LogFollower {
    stop: Sender<()>,
    thread: JoinHandle<u64>,
}

impl LogFollower {
    /// Follows the log at `path`, calling `on_row` for every row of a line written from now on
    /// (lines already in the file are read for the session id and the host, not handed over).
    /// The file need not exist yet.
    pub fn start(path: PathBuf, mut on_row: impl FnMut(Row) + Send + 'static) -> LogFollower {
        let existing = std::fs::metadata(&path).map_or(0, |m| m.len());
        let (stop, stopped) = channel();
        let thread = thread::spawn(move || {
            let display = path.display().to_string();
            let mut rows_out = 0u64;
            let mut hand_over = |row: Row| {
                rows_out += 1;
                on_row(row);
                Ok(())
            };
            let mut rows = LogRows::live(&display, &mut hand_over);
            let mut reader = LineSplitter::new(existing);
            let mut file: Option<File> = None;
            loop {
                let stopping = match stopped.recv_timeout(POLL) {
                    Err(RecvTimeoutError::Timeout) => false,
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                };
                if file.is_none() {
                    file = File::open(&path).ok();
                }
                let read = file.as_mut().map_or(0, |f| reader.read_from(f, &mut rows));
                if read == 0 || stopping {
                    rows.release();
                }
                if stopping {
                    break;
                }
            }
            drop(rows);
            rows_out
        });
        LogFollower { stop, thread }
    }

    /// Reads what is left of the file, hands over the last row, and returns how many rows
    /// were handed over.
    pub fn finish(self) -> u64 {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or(0)
    }
}

/// Cuts the bytes of a growing file into whole lines.
struct LineSplitter {
    /// Bytes of the line not yet ended.
    partial: Vec<u8>,
    /// The current line is too long: its bytes are skipped up to its end.
    skipping: bool,
    /// Lines ended so far.
    lines: u64,
    /// Bytes read so far.
    offset: u64,
    /// Lines ending at or before this offset were in the file before it was followed.
    existing: u64,
}

impl LineSplitter {
    fn new(existing: u64) -> Self {
        LineSplitter { partial: Vec::new(), skipping: false, lines: 0, offset: 0, existing }
    }

    /// Reads what the file has gained; returns how many bytes.
    fn read_from(&mut self, file: &mut File, rows: &mut LogRows<'_>) -> usize {
        let mut chunk = [0u8; 64 << 10];
        let mut total = 0;
        loop {
            match file.read(&mut chunk) {
                Ok(0) => return total,
                Ok(n) => {
                    total += n;
                    self.take(chunk.get(..n).unwrap_or_default(), rows);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return total,
            }
        }
    }

    fn take(&mut self, mut bytes: &[u8], rows: &mut LogRows<'_>) {
        while let Some(end) = bytes.iter().position(|b| *b == b'\n') {
            let (head, rest) = bytes.split_at(end);
            self.offset += head.len() as u64 + 1;
            self.lines += 1;
            if !self.skipping && self.partial.len() + head.len() <= MAX_LINE {
                self.partial.extend_from_slice(head);
                // Lines already there are read for the session id and the host only: a row
                // of theirs would be handed over once more.
                let old = self.offset <= self.existing;
                if !old || is_context(&self.partial) {
                    rows.read_line(self.lines, &self.partial);
                }
            }
            self.partial.clear();
            self.skipping = false;
            bytes = rest.get(1..).unwrap_or_default();
        }
        self.offset += bytes.len() as u64;
        if self.skipping || self.partial.len() + bytes.len() > MAX_LINE {
            self.partial.clear();
            self.skipping = true;
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }
}

/// A line that says whose the rows are: the header, a run's start, a gateway's event.
fn is_context(line: &[u8]) -> bool {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    has(b"\"kind\":\"header\"") || has(b"\"type\":\"run:start\"") || has(b"\"type\":\"mcp:")
}
