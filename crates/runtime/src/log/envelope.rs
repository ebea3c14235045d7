//! One session-log line: the header, an event envelope, or a legacy turn, with the hash
//! chain fields this implementation adds (`seq`, `prev`), which the reference ignores.

use decision_protocol::digest::{ScanError, Scanner, ValueKind};
use decision_protocol::record::{EventRead, EventView, RecordReader, read_event_at};

/// The chain fields of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChainFields {
    /// `seq`: 0 on the header, then one more on each line.
    pub seq: Option<u64>,
    /// `prev`: the SHA-256 of the previous line's bytes.
    pub prev: Option<[u8; 32]>,
}

impl ChainFields {
    /// The line carries `seq`, so it was written chained (by this crate, not the reference).
    pub fn is_chained(&self) -> bool {
        self.seq.is_some()
    }
}

/// What a line holds.
#[derive(Debug, Clone, PartialEq)]
pub enum LineKind {
    /// `{"kind":"header","v":…,"id":…}`; `chain` is the header's `chain` claim (`"sha256"`
    /// when this crate wrote the log chained).
    Header {
        /// The session id; `None` when absent or not a string.
        id: Option<String>,
        /// The header's `chain` claim; `None` when the log was not written chained.
        chain: Option<String>,
    },
    /// `{"kind":"seal","run":…,"lines":…}`: the last line of a finished run (see
    /// [`super::seal`]).
    Seal(SealFields),
    /// `{"kind":"event","run":…,"at":…,"e":…}`.
    Event {
        /// The 0-based run index.
        run: u64,
        /// The event `e`, read as far as replay needs it (a `decision` event as its record).
        event: EventRead,
    },
    /// A legacy v1 `{"kind":"turn",…}` line: valid, but it carries no event.
    Turn,
    /// Valid JSON that is none of the above (counted as skipped, like the reference does).
    Unknown(&'static str),
}

/// The fields of a seal line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SealFields {
    /// The run it ends.
    pub run: Option<u64>,
    /// How many lines precede it (the header included).
    pub lines: Option<u64>,
    /// The keyed seal (`mac`), present when the writer held a key.
    pub mac: Option<[u8; 32]>,
}

/// A parsed line.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLine {
    /// What the line holds.
    pub kind: LineKind,
    /// Its chain fields, when it carries them.
    pub chain: ChainFields,
}

/// Parses one line. Errors are JSON syntax errors, located by byte offset.
pub fn parse_line(bytes: &[u8]) -> Result<ParsedLine, ScanError> {
    let mut scanner = Scanner::new(bytes)?;
    if scanner.peek_kind()? != ValueKind::Object {
        scanner.skip_value()?;
        scanner.finish()?;
        return Ok(ParsedLine { kind: LineKind::Unknown("not a JSON object"), chain: ChainFields::default() });
    }
    let mut kind: Option<Vec<u8>> = None;
    let mut run: Option<f64> = None;
    let mut event: Option<EventRead> = None;
    let mut id: Option<String> = None;
    let mut claim: Option<String> = None;
    let mut lines: Option<f64> = None;
    let mut mac: Option<[u8; 32]> = None;
    let mut chain = ChainFields::default();
    let mut key = Vec::with_capacity(16);
    if scanner.begin_object()? {
        loop {
            scanner.member_key(&mut key)?;
            match key.as_slice() {
                b"kind" => kind = string(&mut scanner)?.map(String::into_bytes),
                b"run" => run = number(&mut scanner)?,
                b"e" => event = Some(read_event_at(&mut scanner)?),
                b"id" => id = string(&mut scanner)?,
                b"chain" => claim = string(&mut scanner)?,
                b"lines" => lines = number(&mut scanner)?,
                b"mac" => mac = string(&mut scanner)?.and_then(|s| parse_hex32(&s)),
                b"seq" => chain.seq = number(&mut scanner)?.and_then(as_index),
                b"prev" => chain.prev = string(&mut scanner)?.and_then(|s| parse_hex32(&s)),
                _ => scanner.skip_value()?,
            }
            if !scanner.next_member()? {
                break;
            }
        }
    }
    scanner.finish()?;
    let kind = match kind.as_deref() {
        Some(b"header") => LineKind::Header { id, chain: claim },
        Some(b"seal") => {
            LineKind::Seal(SealFields { run: run.and_then(as_index), lines: lines.and_then(as_index), mac })
        }
        Some(b"turn") => LineKind::Turn,
        Some(b"event") => match (run.and_then(as_index), event) {
            (Some(run), Some(event)) => LineKind::Event { run, event },
            (None, _) => LineKind::Unknown("event without a valid `run` index"),
            (_, None) => LineKind::Unknown("event without `e`"),
        },
        Some(_) => LineKind::Unknown("unknown `kind`"),
        None => LineKind::Unknown("no `kind`"),
    };
    Ok(ParsedLine { kind, chain })
}

/// An event line read in place by [`LineParser`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventLine<'a> {
    pub run: u64,
    pub event: EventView<'a>,
    pub chain: ChainFields,
}

/// Reads event lines in place, reusing its buffers from line to line. It handles the lines
/// a log is made of (canonical `event` envelopes) and hands anything else back to
/// [`parse_line`], which gives the same answer for every line it is given.
#[derive(Debug, Default)]
pub(crate) struct LineParser {
    records: RecordReader,
}

impl LineParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The line as an event, or `None` when it must go to [`parse_line`]: it is not an
    /// `event` envelope, not JSON, or some text the checks need is not canonical.
    pub fn event<'a>(&'a mut self, bytes: &'a [u8]) -> Option<EventLine<'a>> {
        let mut scanner = Scanner::new(bytes).ok()?;
        if scanner.peek_kind().ok()? != ValueKind::Object {
            return None;
        }
        let (mut is_event, mut run, mut has_event) = (false, None, false);
        let mut chain = ChainFields::default();
        if scanner.begin_object().ok()? {
            loop {
                let key = scanner.key_span().ok()?;
                match scanner.text(key) {
                    br#""kind""# => is_event = plain_string(&mut scanner)? == Some(&br#""event""#[..]),
                    br#""run""# => run = number(&mut scanner).ok()?,
                    br#""e""# => {
                        self.records.read_at(&mut scanner).ok()?;
                        has_event = true;
                    }
                    br#""seq""# => chain.seq = number(&mut scanner).ok()?.and_then(as_index),
                    br#""prev""# => {
                        chain.prev = plain_string(&mut scanner)?.and_then(|quoted| {
                            parse_hex32_bytes(quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or(&[]))
                        });
                    }
                    // Keys with escapes might name one of the above.
                    quoted if memchr::memchr(b'\\', quoted).is_some() => return None,
                    _ => scanner.skip_value().ok()?,
                }
                if !scanner.next_member().ok()? {
                    break;
                }
            }
        }
        scanner.finish().ok()?;
        let run = run.and_then(as_index)?;
        if !(is_event && has_event) {
            return None;
        }
        Some(EventLine { run, event: self.records.event(bytes), chain })
    }
}

/// A string's canonical quoted text, `Some(None)` for another type, `None` when the string
/// is not canonical (or not JSON).
fn plain_string<'a>(scanner: &mut Scanner<'a>) -> Option<Option<&'a [u8]>> {
    if scanner.peek_kind().ok()? != ValueKind::String {
        scanner.skip_value().ok()?;
        return Some(None);
    }
    let span = scanner.span().ok()?;
    span.canonical.then(|| Some(scanner.text(span.range)))
}

fn string(scanner: &mut Scanner<'_>) -> Result<Option<String>, ScanError> {
    if scanner.peek_kind()? != ValueKind::String {
        scanner.skip_value()?;
        return Ok(None);
    }
    let mut quoted = Vec::new();
    scanner.string_value(&mut quoted)?;
    Ok(serde_json::from_slice::<String>(&quoted).ok())
}

fn number(scanner: &mut Scanner<'_>) -> Result<Option<f64>, ScanError> {
    if scanner.peek_kind()? != ValueKind::Number {
        scanner.skip_value()?;
        return Ok(None);
    }
    scanner.number_value().map(Some)
}

/// A non-negative integer index.
fn as_index(n: f64) -> Option<u64> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (n >= 0.0 && n.fract() == 0.0 && n < 9.007_199_254_740_992e15).then_some(n as u64)
}

/// 64 lowercase or uppercase hex digits.
pub(crate) fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    parse_hex32_bytes(text.as_bytes())
}

fn parse_hex32_bytes(bytes: &[u8]) -> Option<[u8; 32]> {
    // Every line of a chained log carries one: a table lookup per digit, and one test for
    // an invalid digit at the end instead of a branch per digit.
    const INVALID: u8 = 0xFF;
    // Built at compile time: an index out of bounds would fail the build, not a run.
    #[allow(clippy::indexing_slicing)]
    const VALUES: [u8; 256] = {
        let mut table = [INVALID; 256];
        let mut i = 0;
        while i < 10 {
            table[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            table[b'a' as usize + i] = 10 + i as u8;
            table[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        table
    };
    let digits: &[u8; 64] = bytes.try_into().ok()?;
    let mut out = [0u8; 32];
    let mut invalid = 0u8;
    for (slot, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let [high, low] = [pair.first(), pair.last()]
            .map(|d| d.and_then(|&d| VALUES.get(usize::from(d))).copied().unwrap_or(INVALID));
        invalid |= (high | low) & 0xF0;
        *slot = (high << 4) | (low & 0x0F);
    }
    (invalid == 0).then_some(out)
}

/// Lowercase hex of a SHA-256.
pub(crate) fn hex32(hash: &[u8; 32]) -> String {
    const_hex::encode(hash)
}

/// Appends the 64 lowercase hex characters of `hash` to `out`.
pub(crate) fn push_hex32(hash: &[u8; 32], out: &mut String) {
    out.push_str(const_hex::Buffer::<32>::new().format(hash));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_written_as_lowercase_hex() {
        let hash: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xa5);
        let mut out = String::from("x");
        push_hex32(&hash, &mut out);
        let expected: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(out, format!("x{expected}"));
        assert!(expected.contains('f') && expected.contains('0') && expected.contains('a'));
    }

    #[test]
    fn reads_headers_events_and_turns() {
        let header = parse_line(br#"{"kind":"header","v":2,"id":"s1","createdAt":1,"seq":0}"#).unwrap();
        assert_eq!(header.kind, LineKind::Header { id: Some("s1".into()), chain: None });
        let claimed = parse_line(br#"{"kind":"header","v":2,"id":"s1","chain":"sha256","seq":0}"#).unwrap();
        assert_eq!(claimed.kind, LineKind::Header { id: Some("s1".into()), chain: Some("sha256".into()) });
        let seal = parse_line(br#"{"kind":"seal","run":1,"lines":9,"seq":9,"prev":"00"}"#).unwrap();
        assert_eq!(seal.kind, LineKind::Seal(SealFields { run: Some(1), lines: Some(9), mac: None }));
        assert_eq!(header.chain, ChainFields { seq: Some(0), prev: None });
        let prev = "ab".repeat(32);
        let event = parse_line(
            format!(r#"{{"kind":"event","run":2,"at":5,"e":{{"type":"phase"}},"seq":3,"prev":"{prev}"}}"#).as_bytes(),
        )
        .unwrap();
        assert_eq!(
            event.kind,
            LineKind::Event { run: 2, event: EventRead::Other { event_type: Some("phase".into()) } }
        );
        assert_eq!(event.chain, ChainFields { seq: Some(3), prev: Some([0xab; 32]) });
        assert_eq!(parse_line(br#"{"kind":"turn","task":"t"}"#).unwrap().kind, LineKind::Turn);
    }

    #[test]
    fn odd_lines_are_unknown_or_errors() {
        for line in [
            &br#"{"kind":"event","run":-1,"e":{}}"#[..],
            br#"{"kind":"event","run":0}"#,
            br#"{"kind":"x"}"#,
            b"[]",
            b"{}",
        ] {
            assert!(
                matches!(parse_line(line).unwrap().kind, LineKind::Unknown(_)),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert!(parse_line(br#"{"kind":"event","run":0,"e":{"#).is_err());
        assert!(parse_line(b"").is_err());
        let mixed: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37));
        assert_eq!(hex32(&mixed), mixed.iter().map(|b| format!("{b:02x}")).collect::<String>());
        assert_eq!(parse_hex32(&hex32(&mixed)), Some(mixed));
        assert_eq!(parse_hex32(&"0".repeat(63)), None);
        assert_eq!(parse_hex32(&"g".repeat(64)), None);
        assert_eq!(hex32(&[0xab; 32]), "ab".repeat(32));
    }

    /// An event line as the log writer writes it (a merged pickTool decision, shortened).
    const LINE: &str = concat!(
        r#"{"kind":"event","run":3,"at":1700000000123,"e":{"type":"decision","step":2,"id":"loop.pickTool","#,
        r#""state":{"task":"list the files","files_known":["a.ts","b.ts"],"last":"⟨untrusted tool output⟩\nok\n⟨/untrusted tool output⟩","n":12},"#,
        r#""frame":{"node":"loop.pickTool","digest":"08d6c0e2653ca72c","fields":{"task":{"chars":14}},"untrusted":["last"],"truncated":[]},"#,
        r#""requestDigest":"7e5e6a0bf48a62bc","sentFrameDigest":"c988b648263876e2","#,
        r#""sentQuestions":{"needs_tool":{"type":"noul"},"tool":{"type":"choice","criteria":{"list_dir":"list","done":"stop"}}},"#,
        r#""batchIds":["loop.needsTool","loop.pickTool"],"margin":{"id":"tool","kind":"top","threshold":0.6,"value":0.95,"margin":0.9},"#,
        r#""questions":{"tool":{"type":"choice","criteria":{"list_dir":"list","done":"stop"}}},"#,
        r#""answers":{"tool":{"type":"choice","choice":"list_dir","probabilities":{"list_dir":0.95,"done":0.05},"confidence":0.9}},"#,
        r#""action":"call","reason":"top >= 0.6 → call","latencyMs":312,"provider":"jev"},"#,
        r#""seq":7,"prev":"ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01"}"#
    );

    /// Reading a line in place agrees with the careful reader: the same run, chain fields
    /// and event, or a hand-over to `parse_line` (always safe: it reads every line exactly).
    fn readers_agree(bytes: &[u8]) {
        let mut parser = LineParser::new();
        let Some(line) = parser.event(bytes) else { return };
        let careful = parse_line(bytes).expect("text read in place is JSON");
        let LineKind::Event { run, event } = careful.kind else { panic!("read in place as an event: {careful:?}") };
        let careful_view = match &event {
            EventRead::Decision(Ok(record)) => EventView::Decision(Ok(record.view())),
            EventRead::Decision(Err(why)) => EventView::Decision(Err(*why)),
            EventRead::Other { .. } => EventView::Other,
            EventRead::NotAnObject => EventView::NotAnObject,
        };
        assert_eq!((line.run, line.chain), (run, careful.chain), "{}", String::from_utf8_lossy(bytes));
        assert_eq!(line.event.describe(), careful_view.describe(), "{}", String::from_utf8_lossy(bytes));
    }

    #[test]
    fn a_written_line_is_read_in_place() {
        let mut parser = LineParser::new();
        let line = parser.event(LINE.as_bytes()).expect("read in place");
        assert_eq!((line.run, line.chain.seq), (3, Some(7)));
        assert!(matches!(line.event, EventView::Decision(Ok(v)) if v.is_merged()));
        readers_agree(LINE.as_bytes());
    }

    proptest::proptest! {
        /// A written line with one byte changed, inserted or removed.
        #[test]
        fn readers_agree_on_damaged_lines(at in 0usize..2000, byte in proptest::sample::select(
            b"{}[]:,\"\\ 0-1.eEtfn\x01x".to_vec()), how in 0u8..3) {
            let mut text = LINE.as_bytes().to_vec();
            let at = at % (text.len() + 1);
            match how {
                0 if at < text.len() => text[at] = byte,
                1 => text.insert(at, byte),
                _ if at < text.len() => { text.remove(at); }
                _ => {}
            }
            readers_agree(&text);
        }
    }
}
