//! A progress display on stderr for a person watching a long read (`replay`, `what-if`): a
//! bar of the bytes read out of each file, only when stderr is a terminal, and cleared when
//! the file is done. A redirect or a pipe gets nothing, so scripts and logs stay clean.

use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

/// Files smaller than this are read too quickly for a bar to help; none is drawn.
const SHOWN_FROM_BYTES: u64 = 8 << 20;

/// A file being read, with its bar (hidden when nobody watches).
pub struct Watched {
    file: File,
    bar: ProgressBar,
}

impl Watched {
    /// Opens `path` for reading; `verb` says what is done with it (`replaying`, …). `quiet`
    /// hides the bar, e.g. when stdout shows results as they come on the same terminal.
    pub fn open(path: &Path, verb: &str, quiet: bool) -> io::Result<Watched> {
        let file = File::open(path)?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let bar = if quiet || len < SHOWN_FROM_BYTES || !io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::new(len);
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} · {msg} · {elapsed}") {
                bar.set_style(style);
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            bar.set_message(format!("{verb} {}", decision::terminal::one_line(&name)));
            bar
        };
        Ok(Watched { file, bar })
    }

    /// Whether a bar is drawn.
    #[cfg(test)]
    fn shown(&self) -> bool {
        !self.bar.is_hidden()
    }
}

impl Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_read_through_and_no_bar_is_drawn_without_a_terminal_or_for_a_small_file() {
        let dir = std::env::temp_dir().join(format!("progress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.jsonl");
        let bytes: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut watched = Watched::open(&path, "replaying", false).unwrap();
        // Test runs capture stderr, and the file is small: either way no bar.
        assert!(!watched.shown());
        let mut read = Vec::new();
        watched.read_to_end(&mut read).unwrap();
        assert_eq!(read, bytes);
        assert!(Watched::open(&dir.join("missing"), "replaying", false).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
