//! The seal: the line that ends a finished run, and the head that names a log's last line.
//!
//! A run ends with `{"kind":"seal","run":R,"lines":N,…,"seq":N,"prev":H}`: `lines` counts the
//! lines before it, and `prev` — the SHA-256 of the line before it — commits to everything
//! before it, since every chained line carries the hash of its predecessor. A log whose last
//! line is a valid seal was finished by its writer; a chained log that ends any other way is
//! *unfinished* (the process stopped, or lines were cut from the end).
//!
//! The **head** of a log is its last line's `seq` and SHA-256, written `SEQ:HASH`. Whoever
//! keeps the head printed at the end of a run can later check that the log is exactly the one
//! that was written: no line changed, added or removed anywhere, the last one included.
//!
//! The **keyed seal** adds `"mac"`: HMAC-SHA256, under a key only the writer and the auditor
//! hold, of `decision-seal/v1`, the line count and `prev`. Without the key nobody can produce
//! a seal that verifies, so a log rewritten from its first line on (chain and all) is caught
//! even without a head kept aside. The key is read from [`SEAL_KEY_VARIABLE`] and is never
//! written anywhere.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::str::FromStr;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::envelope::{LineKind, hex32, parse_hex32, parse_line};

/// The environment variable holding the key of the keyed seal.
pub const SEAL_KEY_VARIABLE: &str = "DECISION_LOG_KEY";

/// The shortest key accepted, in bytes (a shorter one is guessable).
pub const MIN_KEY_BYTES: usize = 16;

/// What the keyed seal's MAC is taken over, before the line count and `prev`.
const MAC_CONTEXT: &str = "decision-seal/v1";

/// A log's last line: its `seq` and the SHA-256 of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogHead {
    /// The last line's `seq` (the header is 0).
    pub seq: u64,
    /// The SHA-256 of the last line's bytes, without its `\n`.
    pub sha256: [u8; 32],
}

impl fmt::Display for LogHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.seq, hex32(&self.sha256))
    }
}

impl serde::Serialize for LogHead {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a head could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a head: expected SEQ:HASH (a line number from 0, a colon, 64 hex digits)")]
pub struct BadHead(pub String);

impl FromStr for LogHead {
    type Err = BadHead;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadHead(text.chars().take(80).collect());
        let (seq, hash) = text.trim().split_once(':').ok_or_else(bad)?;
        if seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let seq = seq.parse().map_err(|_| bad())?;
        let sha256 = parse_hex32(hash).ok_or_else(bad)?;
        Ok(LogHead { seq, sha256 })
    }
}

/// How much of a log's end [`read_head`] reads to find its last line.
const TAIL_BYTES: u64 = 64 << 10;

/// The head of the log at `path`, read from its last line: `None` when that line is not a
/// complete chained line (a torn tail, an unchained log, or a last line over 64 KiB).
pub fn read_head(path: &Path) -> io::Result<Option<LogHead>> {
    use sha2::Digest;
    let Some(line) = last_line(path)? else { return Ok(None) };
    let seq = parse_line(&line).ok().and_then(|parsed| parsed.chain.seq);
    Ok(seq.map(|seq| LogHead { seq, sha256: Sha256::digest(&line).into() }))
}

/// The run index a writer appending to the log at `path` stamps on its events: one more than
/// the run of the log's last line (its seal, or an event of a run that never finished), 0 when
/// the log has only its header or its last line cannot be read.
pub fn next_run(path: &Path) -> io::Result<u64> {
    let last = last_line(path)?.and_then(|line| parse_line(&line).ok());
    Ok(match last.map(|parsed| parsed.kind) {
        Some(LineKind::Seal(seal)) => seal.run.map_or(0, |run| run.saturating_add(1)),
        Some(LineKind::Event { run, .. }) => run.saturating_add(1),
        _ => 0,
    })
}

/// The log's last complete line, without its `\n`, read from the last 64 KiB of the file:
/// `None` for a torn tail or a last line longer than that.
fn last_line(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut file = File::open(path)?;
    let length = file.seek(SeekFrom::End(0))?;
    let start = length.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut tail)?;
    let Some(body) = tail.strip_suffix(b"\n") else { return Ok(None) };
    let line = match memchr::memrchr(b'\n', body) {
        Some(at) => body.get(at + 1..).unwrap_or_default(),
        None if start == 0 => body,
        None => return Ok(None),
    };
    Ok(Some(line.to_vec()))
}

/// The key of the keyed seal, held as the HMAC state it keys. Its bytes are never printed
/// (`Debug` shows its length only).
#[derive(Clone)]
pub struct SealKey {
    keyed: Hmac<Sha256>,
    len: usize,
}

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key has fewer than [`MIN_KEY_BYTES`] bytes.
    #[error("${SEAL_KEY_VARIABLE} is too short: a seal key needs at least {MIN_KEY_BYTES} bytes")]
    TooShort,
    /// The variable holds bytes that are not UTF-8.
    #[error("${SEAL_KEY_VARIABLE} is not valid UTF-8")]
    NotUnicode,
    /// The variable is set and empty: a key was meant and none was given (an empty key never
    /// silently means "no key").
    #[error("${SEAL_KEY_VARIABLE} is set and empty: give a key of at least {MIN_KEY_BYTES} bytes, or unset it")]
    Empty,
}

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SealKey({} bytes)", self.len)
    }
}

impl SealKey {
    /// A key from its bytes (at least [`MIN_KEY_BYTES`]).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Self, KeyError> {
        let bytes = bytes.into();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(KeyError::TooShort);
        }
        // HMAC takes keys of any length; the error cannot happen.
        let keyed = <Hmac<Sha256> as Mac>::new_from_slice(&bytes).map_err(|_| KeyError::TooShort)?;
        Ok(SealKey { keyed, len: bytes.len() })
    }

    /// The key in [`SEAL_KEY_VARIABLE`]; `Ok(None)` when it is unset. A variable set to the
    /// empty string is an error ([`KeyError::Empty`]), not "no key".
    pub fn from_env() -> Result<Option<Self>, KeyError> {
        match std::env::var(SEAL_KEY_VARIABLE) {
            Ok(value) if value.is_empty() => Err(KeyError::Empty),
            Ok(value) => SealKey::new(value.into_bytes()).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(KeyError::NotUnicode),
        }
    }

    /// The seal's MAC over the line count and the hash of the line before the seal.
    pub fn mac(&self, lines: u64, prev: &[u8; 32]) -> [u8; 32] {
        let mut mac = self.keyed.clone();
        update(&mut mac, lines, prev);
        mac.finalize().into_bytes().into()
    }

    /// HMAC-SHA256 of `context`, a line break and `parts`, each part preceded by its length
    /// in decimal and a colon and followed by a line break, so no two lists of parts share a
    /// message. Used for the MACs of other lines than the seal (an approval's answer).
    pub fn mac_parts(&self, context: &str, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = self.keyed.clone();
        mac.update(&framed(context, parts));
        mac.finalize().into_bytes().into()
    }

    /// Whether `mac` is [`SealKey::mac_parts`] of `context` and `parts` (constant time).
    pub fn verify_parts(&self, context: &str, parts: &[&[u8]], mac: &[u8; 32]) -> bool {
        let mut hmac = self.keyed.clone();
        hmac.update(&framed(context, parts));
        hmac.verify_slice(mac).is_ok()
    }

    /// Whether `mac` is the seal's MAC (compared in constant time).
    pub fn verify(&self, lines: u64, prev: &[u8; 32], mac: &[u8; 32]) -> bool {
        let mut hmac = self.keyed.clone();
        update(&mut hmac, lines, prev);
        hmac.verify_slice(mac).is_ok()
    }
}

/// The message [`SealKey::mac_parts`] authenticates (and that an unkeyed binding hashes).
pub(crate) fn framed(context: &str, parts: &[&[u8]]) -> Vec<u8> {
    let mut message = Vec::with_capacity(context.len() + 1 + parts.iter().map(|p| p.len() + 24).sum::<usize>());
    message.extend_from_slice(context.as_bytes());
    message.push(b'\n');
    for part in parts {
        message.extend_from_slice(itoa::Buffer::new().format(part.len()).as_bytes());
        message.push(b':');
        message.extend_from_slice(part);
        message.push(b'\n');
    }
    message
}

fn update(mac: &mut Hmac<Sha256>, lines: u64, prev: &[u8; 32]) {
    mac.update(MAC_CONTEXT.as_bytes());
    mac.update(b"\n");
    mac.update(itoa::Buffer::new().format(lines).as_bytes());
    mac.update(b"\n");
    mac.update(hex32(prev).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_run_follows_the_last_lines_run() {
        #[allow(clippy::disallowed_methods)]
        fn run_after(text: &str) -> u64 {
            let path = std::env::temp_dir().join(format!("decision-next-run-{}-{}", std::process::id(), text.len()));
            std::fs::write(&path, text).unwrap();
            let run = next_run(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            run
        }
        let header = "{\"kind\":\"header\",\"v\":2,\"id\":\"a\",\"createdAt\":0,\"seq\":0}\n";
        let event = "{\"kind\":\"event\",\"run\":3,\"at\":0,\"e\":{\"type\":\"x\"},\"seq\":1,\"prev\":\"00\"}\n";
        let seal = "{\"kind\":\"seal\",\"run\":1,\"lines\":2,\"seq\":2,\"prev\":\"00\"}\n";
        assert_eq!(run_after(header), 0, "a log with only its header starts run 0");
        assert_eq!(run_after(&format!("{header}{seal}")), 2, "after the seal of run 1 comes run 2");
        assert_eq!(run_after(&format!("{header}{event}")), 4, "an unfinished run 3 is followed by run 4");
        assert_eq!(run_after(&format!("{header}{{\"kind\":\"seal\",\"ru")), 0, "a torn last line names no run");
    }

    #[test]
    fn heads_are_read_back_as_written() {
        let head = LogHead { seq: 57, sha256: [0xab; 32] };
        let text = head.to_string();
        assert_eq!(text, format!("57:{}", "ab".repeat(32)));
        assert_eq!(text.parse::<LogHead>(), Ok(head));
        for bad in
            ["", "57", ":ab", "x:ab", "-1:ab", &format!("57:{}", "ab".repeat(31)), &format!("5 7:{}", "a".repeat(64))]
        {
            assert!(bad.parse::<LogHead>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_mac_verifies_only_under_its_key_count_and_hash() {
        let key = SealKey::new(b"0123456789abcdef".to_vec()).unwrap();
        let other = SealKey::new(b"0123456789abcdeF".to_vec()).unwrap();
        let mac = key.mac(9, &[1; 32]);
        assert!(key.verify(9, &[1; 32], &mac));
        assert!(!other.verify(9, &[1; 32], &mac));
        assert!(!key.verify(10, &[1; 32], &mac));
        assert!(!key.verify(9, &[2; 32], &mac));
        assert_eq!(SealKey::new(b"short".to_vec()).unwrap_err(), KeyError::TooShort);
        assert_eq!(format!("{key:?}"), "SealKey(16 bytes)");
    }
}
