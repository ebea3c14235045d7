//! Human rendering of diagnostics with the source line and the span underlined (miette).
//!
//! Each diagnostic is rendered from a small window of the source — its line, one line
//! before and one after — cut out with bounded searches around the span, so rendering N
//! diagnostics of a file costs O(N) whatever the file's size, and no diagnostic copies the
//! whole source. A source line longer than [`MAX_LINE_BYTES`] is shown clipped around the
//! span, with `…` where text was left out. Control characters, bidirectional-text controls
//! and invalid UTF-8 in the window are shown as one visible character each (a control
//! picture such as `␛`, or `�`), so a file cannot drive the terminal and columns still count
//! one character per source character.
//!
//! The location in the message and the one in miette's header are both the diagnostic's own
//! `line:column`: the line counts `\n`s, the column counts Unicode scalar values from the
//! start of the line (each invalid UTF-8 byte counting as one), as [`decision::Span`]
//! documents.

use std::ops::Range;

use decision::diag::{Diagnostic, MAX_DIAGNOSTICS, Omitted, Severity, Span};
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError, MietteSpanContents, SourceCode,
    SourceSpan, SpanContents,
};

/// A source line longer than this (in bytes) is clipped around the span.
pub const MAX_LINE_BYTES: usize = 1_000;

/// A message, help line or block id longer than this (in bytes) is shown clipped, with `…`
/// at the end: only a hostile file quotes that much of itself, and a terminal shows none of
/// it usefully.
pub const MAX_TEXT_BYTES: usize = 10_000;

/// How much of a clipped line is shown before the point it is clipped around.
const CLIPPED_BEFORE: usize = MAX_LINE_BYTES / 2;

const ELLIPSIS: char = '…';

/// Renders diagnostics with one miette handler (its theme chosen once).
pub struct Renderer {
    handler: GraphicalReportHandler,
}

impl Renderer {
    /// A renderer with colours when stdout is a terminal and `NO_COLOR` is unset.
    pub fn for_stdout() -> Self {
        Self::with_theme(theme())
    }

    pub fn with_theme(theme: GraphicalTheme) -> Self {
        Self { handler: GraphicalReportHandler::new_themed(theme) }
    }

    /// Render one diagnostic like rustc: code, message, `path:line:column`, the source line
    /// with the span underlined, and the help line. `source` is the file's bytes, as checked.
    pub fn diagnostic(&self, path: &str, source: &[u8], d: &Diagnostic) -> String {
        let severity = match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        };
        let path = visible(path);
        let window = Window::around(source, &d.span);
        let label = match &d.block {
            Some(block) => format!("{} layer, block `{}`", d.layer.as_str(), shown(block)),
            None => format!("{} layer", d.layer.as_str()),
        };
        let message = format!("{} ({path}:{}:{})", shown(&d.message), d.span.line, d.span.column);
        let mut diagnostic = MietteDiagnostic::new(message)
            .with_code(d.code)
            .with_severity(severity)
            .with_label(LabeledSpan::at(window.label.clone(), label));
        if let Some(help) = &d.help {
            diagnostic = diagnostic.with_help(shown(help));
        }
        let source = WindowSource {
            name: &path,
            window: &window,
            // miette counts lines and columns from 0.
            header: (d.span.line.saturating_sub(1) as usize, d.span.column.saturating_sub(1) as usize),
        };
        let mut out = String::new();
        if self.handler.render_report(&mut out, &WithSource { diagnostic: &diagnostic, source: &source }).is_err() {
            out = format!(
                "{}[{}]: {} at {path}:{}:{}\n",
                if d.is_error() { "error" } else { "warning" },
                d.code,
                visible(&d.message),
                d.span.line,
                d.span.column
            );
        }
        out
    }
}

/// The line after a file's diagnostics when the report left some out (at most
/// [`MAX_DIAGNOSTICS`] are kept): how many, and how many of each code, most frequent first.
/// `None` when nothing was left out.
pub fn omitted_line(path: &str, omitted: &Omitted) -> Option<String> {
    if omitted.is_empty() {
        return None;
    }
    let codes: Vec<String> = omitted.most_frequent().iter().map(|(code, n)| format!("{code} ×{n}")).collect();
    Some(format!(
        "{path}: {} more not shown (at most {MAX_DIAGNOSTICS} are shown per file): {}",
        count(omitted.total(), "diagnostic"),
        codes.join(", ")
    ))
}

/// `1 error`, `2 errors`, `0 warnings`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

fn theme() -> GraphicalTheme {
    if std::env::var_os("NO_COLOR").is_some() || !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        GraphicalTheme::unicode_nocolor()
    } else {
        GraphicalTheme::unicode()
    }
}

/// The lines shown for one diagnostic, made visible, and where its span falls in them.
#[derive(Debug)]
struct Window {
    text: String,
    /// The span, in bytes of `text`.
    label: Range<usize>,
    /// The 0-based number of the first line of `text`.
    first_line: usize,
}

impl Window {
    fn around(source: &[u8], span: &Span) -> Window {
        let start = span.start.min(source.len());
        let end = span.end.clamp(start, source.len());
        let line = LineAround::find(source, start);
        let mut text = String::new();
        let mut first_line = (span.line as usize).saturating_sub(1);
        // The line before, when this line's start is known.
        if let Some(line_start) = line.start.filter(|s| *s > 0) {
            let before = LineAround::find(source, line_start - 1);
            push_clipped(&mut text, source, &before, line_start - 1, None);
            text.push('\n');
            first_line = first_line.saturating_sub(1);
        }
        let label = push_clipped(&mut text, source, &line, start, Some(start..end)).unwrap_or(0..0);
        // The two lines after, when there are (a final `\n` ends the last line, it starts
        // none): miette shows one, and a second after an empty span at the start of an empty
        // first line; it chooses within the window as it would within the file.
        let mut last_newline = line.newline;
        for _ in 0..2 {
            let Some(newline) = last_newline.filter(|n| n + 1 < source.len()) else { break };
            let after = LineAround::find(source, newline + 1);
            text.push('\n');
            push_clipped(&mut text, source, &after, newline + 1, None);
            last_newline = after.newline;
        }
        if last_newline.is_some() {
            text.push('\n');
        }
        Window { text, label, first_line }
    }
}

/// The bounds of the line around a byte offset, each found by searching at most
/// [`MAX_LINE_BYTES`] from it: `None` when the line goes on beyond that.
#[derive(Debug)]
struct LineAround {
    /// The line's first byte.
    start: Option<usize>,
    /// The line's end, before a `\r\n` or `\n` (or the end of the file).
    end: Option<usize>,
    /// The `\n` ending the line, if it is found and there is one.
    newline: Option<usize>,
}

impl LineAround {
    fn find(source: &[u8], at: usize) -> LineAround {
        let lowest = at.saturating_sub(MAX_LINE_BYTES + 1);
        let behind = source.get(lowest..at).unwrap_or_default();
        let start = match behind.iter().rposition(|b| *b == b'\n') {
            Some(p) => Some(lowest + p + 1),
            None if lowest == 0 => Some(0),
            None => None,
        };
        let highest = at.saturating_add(MAX_LINE_BYTES + 1).min(source.len());
        let ahead = source.get(at..highest).unwrap_or_default();
        let (end, newline) = match ahead.iter().position(|b| *b == b'\n') {
            Some(p) => {
                let newline = at + p;
                let end = if newline > 0 && source.get(newline - 1) == Some(&b'\r') { newline - 1 } else { newline };
                (Some(end), Some(newline))
            }
            None if highest == source.len() => (Some(source.len()), None),
            None => (None, None),
        };
        LineAround { start, end, newline }
    }
}

/// Append the visible part of `line` (clipped around `focus` when it is too long) to `text`;
/// return where `span` falls in `text`, if given.
fn push_clipped(
    text: &mut String,
    source: &[u8],
    line: &LineAround,
    focus: usize,
    span: Option<Range<usize>>,
) -> Option<Range<usize>> {
    let (from, to) = match (line.start, line.end) {
        (Some(s), Some(e)) if e.saturating_sub(s) <= MAX_LINE_BYTES => (s, e),
        (start, end) => {
            let from = match start {
                Some(s) if focus.saturating_sub(s) <= CLIPPED_BEFORE => s,
                _ => char_start(source, focus.saturating_sub(CLIPPED_BEFORE), true),
            };
            let to = match end {
                Some(e) if e.saturating_sub(from) <= MAX_LINE_BYTES => e,
                _ => char_start(source, from + MAX_LINE_BYTES, false),
            };
            (from, to.max(from))
        }
    };
    if line.start.is_none_or(|s| from > s) {
        text.push(ELLIPSIS);
    }
    let label = span.map(|span| {
        let label_start = span.start.clamp(from, to);
        let label_end = span.end.clamp(label_start, to);
        push_visible(text, source.get(from..label_start).unwrap_or_default());
        let at = text.len();
        push_visible(text, source.get(label_start..label_end).unwrap_or_default());
        let label = at..text.len();
        push_visible(text, source.get(label_end..to).unwrap_or_default());
        label
    });
    if label.is_none() {
        push_visible(text, source.get(from..to).unwrap_or_default());
    }
    if line.end.is_none_or(|e| to < e) {
        text.push(ELLIPSIS);
    }
    label
}

/// The nearest offset at or after (`forward`) or at or before `at` that does not fall inside
/// a UTF-8 sequence (at most three continuation bytes away).
fn char_start(source: &[u8], at: usize, forward: bool) -> usize {
    let mut at = at.min(source.len());
    for _ in 0..3 {
        match source.get(at) {
            Some(b) if (0x80..0xC0).contains(b) => {
                if forward {
                    at += 1;
                } else {
                    at = at.saturating_sub(1);
                }
            }
            _ => break,
        }
    }
    at
}

/// Append `bytes` as text, each character that could act on a terminal or reorder the line
/// replaced by one visible character, and each invalid UTF-8 byte by `�`.
fn push_visible(text: &mut String, bytes: &[u8]) {
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        if valid.chars().all(is_plain) {
            text.push_str(valid);
        } else {
            text.extend(valid.chars().map(visible_char));
        }
        text.extend(std::iter::repeat_n(char::REPLACEMENT_CHARACTER, chunk.invalid().len()));
    }
}

/// `text` with every character that could act on a terminal made visible (see [`push_visible`]).
/// `text` made [`visible`], clipped to [`MAX_TEXT_BYTES`] (at a character boundary).
fn shown(text: &str) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return visible(text);
    }
    let end = (0..=MAX_TEXT_BYTES).rev().find(|at| text.is_char_boundary(*at)).unwrap_or(0);
    let mut out = visible(text.get(..end).unwrap_or_default());
    out.push(ELLIPSIS);
    out
}

fn visible(text: &str) -> String {
    if text.chars().all(|c| is_plain(c) || c == '\n') {
        return text.to_string();
    }
    text.chars().map(|c| if c == '\n' { c } else { visible_char(c) }).collect()
}

fn is_plain(c: char) -> bool {
    visible_char(c) == c
}

fn visible_char(c: char) -> char {
    match c {
        '\t' => c,
        // C0 controls: their control pictures, U+2400 onwards.
        '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or(char::REPLACEMENT_CHARACTER),
        '\x7f' => '\u{2421}',
        // C1 controls and the bidirectional embeddings, overrides and isolates.
        '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => char::REPLACEMENT_CHARACTER,
        _ => c,
    }
}

/// The window as miette's source: the line numbers of the file, and the diagnostic's own
/// `line:column` in the header.
struct WindowSource<'a> {
    name: &'a str,
    window: &'a Window,
    /// 0-based line and column of the diagnostic.
    header: (usize, usize),
}

impl SourceCode for WindowSource<'_> {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents = self.window.text.as_str().read_span(span, context_lines_before, context_lines_after)?;
        // The header reads the label's own span with no context around it.
        let is_header = context_lines_before == 0
            && context_lines_after == 0
            && span.offset() == self.window.label.start
            && span.len() == self.window.label.len();
        let (line, column) =
            if is_header { self.header } else { (contents.line() + self.window.first_line, contents.column()) };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_string(),
            contents.data(),
            *contents.span(),
            line,
            column,
            contents.line_count(),
        )))
    }
}

/// A diagnostic with its source attached, by reference.
struct WithSource<'a> {
    diagnostic: &'a MietteDiagnostic,
    source: &'a dyn SourceCode,
}

impl std::fmt::Debug for WithSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.diagnostic, f)
    }
}

impl std::fmt::Display for WithSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.diagnostic, f)
    }
}

impl std::error::Error for WithSource<'_> {}

impl miette::Diagnostic for WithSource<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        miette::Diagnostic::code(self.diagnostic)
    }
    fn severity(&self) -> Option<miette::Severity> {
        miette::Diagnostic::severity(self.diagnostic)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        miette::Diagnostic::help(self.diagnostic)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        miette::Diagnostic::labels(self.diagnostic)
    }
}

#[cfg(test)]
mod tests {
    use decision::diag::Layer;
    use miette::{NamedSource, Report};
    use proptest::prelude::*;

    use super::*;

    fn renderer() -> Renderer {
        Renderer::with_theme(GraphicalTheme::unicode_nocolor())
    }

    /// The rendering before windows: miette over a copy of the whole source (and miette's own
    /// column, which counts bytes). The windowed rendering must match it on ASCII text.
    fn whole_source_rendering(path: &str, source: &str, d: &Diagnostic) -> String {
        let len = d.span.end.saturating_sub(d.span.start);
        let start = d.span.start.min(source.len());
        let label = match &d.block {
            Some(block) => format!("{} layer, block `{block}`", d.layer.as_str()),
            None => format!("{} layer", d.layer.as_str()),
        };
        let mut diagnostic = MietteDiagnostic::new(format!("{} ({path}:{}:{})", d.message, d.span.line, d.span.column))
            .with_code(d.code)
            .with_severity(miette::Severity::Error)
            .with_label(LabeledSpan::at(start..start + len.min(source.len() - start), label));
        if let Some(help) = &d.help {
            diagnostic = diagnostic.with_help(help.clone());
        }
        let report = Report::new(diagnostic).with_source_code(NamedSource::new(path, source.to_string()));
        let mut out = String::new();
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, report.as_ref())
            .unwrap();
        out
    }

    /// A diagnostic at bytes `start..end` of `source`, with the line and column the parser
    /// would give it (`\n`-counted lines, columns in characters).
    fn diagnostic_at(source: &str, start: usize, end: usize) -> Diagnostic {
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        let column = source[line_start..start].chars().count() + 1;
        Diagnostic {
            code: "DC0108",
            severity: Severity::Error,
            layer: Layer::Parse,
            message: "unknown action `x`".into(),
            span: Span { line: line as u32, column: column as u32, start, end },
            block: Some("b".into()),
            help: Some("did you mean `y`?".into()),
        }
    }

    /// Sources of a few short lines (`\n` or `\r\n`), and a span inside one line.
    fn source_and_span(alphabet: &'static str) -> impl Strategy<Value = (String, usize, usize)> {
        let line = proptest::string::string_regex(alphabet).unwrap();
        (proptest::collection::vec((line, any::<bool>()), 1..7), any::<bool>(), any::<prop::sample::Index>())
            .prop_flat_map(|(lines, final_newline, pick)| {
                let mut source = String::new();
                let mut bounds = Vec::new();
                let count = lines.len();
                for (i, (text, crlf)) in lines.into_iter().enumerate() {
                    bounds.push((source.len(), source.len() + text.len()));
                    source.push_str(&text);
                    if i + 1 < count || final_newline {
                        source.push_str(if crlf { "\r\n" } else { "\n" });
                    }
                }
                let (from, to) = bounds[pick.index(bounds.len())];
                let chars: Vec<usize> =
                    source[from..to].char_indices().map(|(i, _)| from + i).chain(std::iter::once(to)).collect();
                let n = chars.len();
                (Just(source), Just(chars), 0..n, 0..n)
            })
            .prop_map(|(source, chars, a, b)| (source, chars[a.min(b)], chars[a.max(b)]))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn the_window_renders_as_miette_renders_the_whole_ascii_source(
            (source, start, end) in source_and_span("[a-z #:>=.\\-\t]{0,12}")
        ) {
            let d = diagnostic_at(&source, start, end);
            let windowed = renderer().diagnostic("f.md", source.as_bytes(), &d);
            prop_assert_eq!(windowed, whole_source_rendering("f.md", &source, &d));
        }

        #[test]
        fn the_header_shows_the_location_of_the_message(
            (source, start, end) in source_and_span("[a-z #—→é😀\t]{0,12}")
        ) {
            let d = diagnostic_at(&source, start, end);
            let out = renderer().diagnostic("f.md", source.as_bytes(), &d);
            let location = format!("f.md:{}:{}", d.span.line, d.span.column);
            prop_assert!(out.contains(&format!("({location})")), "{}", out);
            prop_assert!(out.contains(&format!("[{location}]")), "{}", out);
        }
    }

    /// Bytes of any kind in runs long enough to be clipped, with newlines among them.
    fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
        let run = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..40),
            (any::<u8>(), 0..2_500usize).prop_map(|(b, n)| vec![b; n]),
            Just(b"\r\n".to_vec()),
            Just(b"\n".to_vec()),
            Just("—→é".as_bytes().to_vec()),
        ];
        proptest::collection::vec(run, 0..12).prop_map(|runs| runs.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn any_bytes_and_any_span_render_without_panic_or_terminal_controls(
            source in hostile_bytes(),
            start in any::<prop::sample::Index>(),
            len in 0..3_000usize,
            line in any::<u32>(),
            column in any::<u32>(),
        ) {
            let start = start.index(source.len() + 1);
            let d = Diagnostic {
                span: Span { line, column, start, end: start.saturating_add(len) },
                ..diagnostic_at("", 0, 0)
            };
            let window = Window::around(&source, &d.span);
            // At most four lines; a shown byte is at most three bytes of text (`�`, `␛`).
            prop_assert!(window.text.len() <= 4 * (3 * MAX_LINE_BYTES + 2 * ELLIPSIS.len_utf8() + 1));
            prop_assert!(window.label.start <= window.label.end && window.label.end <= window.text.len());
            let out = renderer().diagnostic("f.md", &source, &d);
            prop_assert!(!out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{:?}", out);
            prop_assert!(out.contains(&format!("(f.md:{line}:{column})")), "{}", out);
        }
    }

    #[test]
    fn a_long_line_is_clipped_around_the_span() {
        let mut source = "x".repeat(100_000);
        source.push_str(" bad ");
        source.push_str(&"y".repeat(100_000));
        source.push('\n');
        let start = 100_001;
        let d = diagnostic_at(&source, start, start + 3);
        let window = Window::around(source.as_bytes(), &d.span);
        assert!(window.text.len() <= MAX_LINE_BYTES + 2 * ELLIPSIS.len_utf8() + 1, "{}", window.text.len());
        assert_eq!(&window.text[window.label.clone()], "bad");
        assert!(window.text.starts_with('…') && window.text.ends_with('…'), "{}", window.text);
        let out = renderer().diagnostic("f.md", source.as_bytes(), &d);
        assert!(out.contains("[f.md:1:100002]"), "{out}");
        assert!(out.len() < 2 * MAX_LINE_BYTES + 1_000, "{}", out.len());
    }

    #[test]
    fn a_window_is_bounded_whatever_the_file() {
        // Long lines around the span's line, a span at the very end, and a file of one line.
        let long = "z".repeat(50_000);
        let source = format!("{long}\n{long}bad{long}\n{long}");
        for (start, end) in [(50_001 + 50_000, 50_001 + 50_003), (source.len(), source.len()), (0, source.len())] {
            let d = diagnostic_at(&source, start, end);
            let window = Window::around(source.as_bytes(), &d.span);
            assert!(window.text.len() <= 3 * (MAX_LINE_BYTES + 2 * ELLIPSIS.len_utf8() + 1), "{}", window.text.len());
            assert!(window.label.end <= window.text.len());
        }
    }

    #[test]
    fn terminal_controls_and_invalid_utf8_are_shown_one_character_each() {
        let source = b"## a\x1b[2Jb\xff\x9b\n- q \xe2\x80\xae\x07 \n";
        let start = 3;
        let d = Diagnostic {
            block: Some("a\u{1b}[2J".into()),
            message: "block \u{1b}]0;x\u{7}".into(),
            ..diagnostic_at("## a", start, start + 1)
        };
        let out = renderer().diagnostic("f.md", source, &d);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert!(out.contains("## a␛[2Jb��"), "{out}");
        assert!(out.contains("- q �␇"), "{out}");
        assert!(out.contains("block `a␛[2J`"), "{out}");
    }

    #[test]
    fn a_long_message_help_and_block_are_shown_clipped() {
        // `q` and `w` appear nowhere else in the rendering (miette wraps long lines, so the
        // text is counted, not searched for).
        let qs = |out: &str| out.chars().filter(|c| *c == 'q').count();
        let long = format!("{}é{}", "q".repeat(MAX_TEXT_BYTES - 1), "w".repeat(MAX_TEXT_BYTES));
        let d = Diagnostic {
            block: Some(long.clone()),
            message: long.clone(),
            help: Some(long.clone()),
            ..diagnostic_at("## a", 3, 4)
        };
        let out = renderer().diagnostic("f.md", b"## a\n", &d);
        // Clipped before the `é` that would cross the limit, three times.
        assert_eq!(qs(&out), 3 * (MAX_TEXT_BYTES - 1));
        assert_eq!(out.matches('…').count(), 3);
        assert!(!out.contains('w') && !out.contains('é'));
        // Up to the limit, the text is shown whole.
        let d = Diagnostic { message: "q".repeat(MAX_TEXT_BYTES), ..diagnostic_at("## a", 3, 4) };
        let out = renderer().diagnostic("f.md", b"## a\n", &d);
        assert_eq!((qs(&out), out.matches('…').count()), (MAX_TEXT_BYTES, 0));
    }

    #[test]
    fn the_omitted_line_counts_each_code_most_frequent_first() {
        let mut omitted = Omitted::default();
        assert_eq!(omitted_line("f.md", &omitted), None);
        omitted.by_code.insert("DC0113", 2);
        omitted.by_code.insert("DC0501", 1);
        omitted.by_code.insert("DC0112", 2);
        (omitted.errors, omitted.warnings) = (4, 1);
        assert_eq!(
            omitted_line("f.md", &omitted).as_deref(),
            Some(
                "f.md: 5 diagnostics more not shown (at most 1000 are shown per file): DC0112 ×2, DC0113 ×2, DC0501 ×1"
            )
        );
    }

    #[test]
    fn counts_are_pluralised() {
        assert_eq!(count(0, "error"), "0 errors");
        assert_eq!(count(1, "error"), "1 error");
        assert_eq!(count(2, "warning"), "2 warnings");
    }
}
