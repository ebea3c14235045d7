//! Diagnostics kept in memory bounded by a constant: the first [`MAX_DIAGNOSTICS`] in report
//! order (fewer when their text passes [`MAX_DIAGNOSTIC_BYTES`]), and the rest only counted,
//! per code and per severity. A hostile file can have a problem on every line, or a block id
//! of megabytes that every diagnostic of the block names; the checker's memory must grow
//! with neither.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Diagnostic, Problem, Severity, Span};

/// How many diagnostics of one file are kept: the first this many in report order (parse,
/// schema, policy, adapter layer; within a layer, as found). A file with more is almost
/// always one mistake repeated; the count of the rest says which.
pub const MAX_DIAGNOSTICS: usize = 1_000;

/// How many bytes the diagnostics kept may hold together, text (message, help, block id)
/// included. A thousand ordinary diagnostics hold about 300 KB; only diagnostics that quote
/// megabytes of the file reach this. The first diagnostic is kept whatever its size.
pub const MAX_DIAGNOSTIC_BYTES: usize = 4 * 1024 * 1024;

/// Where diagnostics go as they are found: a `Vec` keeps every one, [`Diagnostics`] the
/// first [`MAX_DIAGNOSTICS`].
pub trait Sink {
    /// Adds a diagnostic after those already added.
    fn push(&mut self, diagnostic: Diagnostic);

    /// Whether a diagnostic of `severity` added now would be kept (or kept aside as the
    /// first error left out). When it would not, only its code and severity are counted, and
    /// a caller leaves out text it would have to copy, such as the block id: a heading of
    /// megabytes copied into every diagnostic of its block made checking quadratic.
    fn keeps(&self, severity: Severity) -> bool {
        let _ = severity;
        true
    }

    /// Adds `problem` at `span`, in `block` (the block id copied only when the diagnostic is
    /// kept: see [`Sink::keeps`]).
    fn report(&mut self, problem: &dyn Problem, span: Span, block: Option<&str>) {
        let block = block.filter(|_| self.keeps(problem.severity())).map(str::to_owned);
        self.push(problem.at(span, block));
    }
}

impl Sink for Vec<Diagnostic> {
    fn push(&mut self, diagnostic: Diagnostic) {
        Vec::push(self, diagnostic);
    }
}

/// The diagnostics left out: how many, of which code, of which severity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Omitted {
    /// How many of each code, by code.
    pub by_code: BTreeMap<&'static str, usize>,
    /// How many of those left out are errors: a host refuses the contract when this is not 0,
    /// even if no kept diagnostic is an error.
    pub errors: usize,
    /// How many of those left out are warnings.
    pub warnings: usize,
}

impl Omitted {
    /// How many were left out.
    pub fn total(&self) -> usize {
        self.errors + self.warnings
    }

    /// Whether nothing was left out.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The codes, most frequent first (ties by code), with their counts.
    pub fn most_frequent(&self) -> Vec<(&'static str, usize)> {
        let mut codes: Vec<(&'static str, usize)> = self.by_code.iter().map(|(c, n)| (*c, *n)).collect();
        codes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        codes
    }

    /// Every omitted warning counted as an error (`--deny warnings`).
    pub fn deny_warnings(&mut self) {
        self.errors += self.warnings;
        self.warnings = 0;
    }

    fn count(&mut self, d: &Diagnostic) {
        *self.by_code.entry(d.code).or_insert(0) += 1;
        match d.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
    }

    /// Takes back one [`Omitted::count`] of a diagnostic like `d`.
    fn uncount(&mut self, d: &Diagnostic) {
        if let Some(n) = self.by_code.get_mut(d.code) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_code.remove(d.code);
            }
        }
        match d.severity {
            Severity::Error => self.errors = self.errors.saturating_sub(1),
            Severity::Warning => self.warnings = self.warnings.saturating_sub(1),
        }
    }

    fn add(&mut self, other: Omitted) {
        for (code, n) in other.by_code {
            *self.by_code.entry(code).or_insert(0) += n;
        }
        self.errors += other.errors;
        self.warnings += other.warnings;
    }
}

/// Collects diagnostics in report order, keeping the first [`MAX_DIAGNOSTICS`] (at most
/// [`MAX_DIAGNOSTIC_BYTES`] of text) and counting the rest. One more is kept aside: the first
/// error left out, so that a file with an error always shows one (see
/// [`Diagnostics::finish`]).
#[derive(Debug, Default)]
pub struct Diagnostics {
    kept: Vec<Diagnostic>,
    /// The bytes the kept diagnostics hold (see [`held_bytes`]).
    bytes: usize,
    /// What was left out: `None` until something is (the usual case, kept small because a
    /// collector is made for every block). Once one is left out, so is every later one, so
    /// that the kept ones are always the first.
    left_out: Option<Box<LeftOut>>,
}

#[derive(Debug, Default)]
struct LeftOut {
    omitted: Omitted,
    first_error: Option<Diagnostic>,
}

impl LeftOut {
    fn add(&mut self, diagnostic: Diagnostic) {
        self.omitted.count(&diagnostic);
        if diagnostic.is_error() && self.first_error.is_none() {
            self.first_error = Some(diagnostic);
        }
    }
}

/// The bytes a diagnostic holds: itself and its text.
fn held_bytes(d: &Diagnostic) -> usize {
    std::mem::size_of::<Diagnostic>()
        + d.message.len()
        + d.help.as_ref().map_or(0, String::len)
        + d.block.as_ref().map_or(0, String::len)
}

impl Sink for Diagnostics {
    fn push(&mut self, diagnostic: Diagnostic) {
        let bytes = held_bytes(&diagnostic);
        let fits = self.kept.is_empty() || self.bytes.saturating_add(bytes) <= MAX_DIAGNOSTIC_BYTES;
        if self.left_out.is_none() && self.kept.len() < MAX_DIAGNOSTICS && fits {
            self.bytes += bytes;
            self.kept.push(diagnostic);
        } else {
            self.left_out().add(diagnostic);
        }
    }

    fn keeps(&self, severity: Severity) -> bool {
        match &self.left_out {
            None => self.kept.len() < MAX_DIAGNOSTICS && self.bytes < MAX_DIAGNOSTIC_BYTES,
            Some(left_out) => severity == Severity::Error && left_out.first_error.is_none(),
        }
    }
}

impl Diagnostics {
    /// An empty collector, keeping up to [`MAX_DIAGNOSTICS`] diagnostics.
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    /// Adds a diagnostic before every one added so far: for a problem of the whole file
    /// that is found late and explains the rest (the file was not read to its end).
    pub fn push_first(&mut self, diagnostic: Diagnostic) {
        self.bytes += held_bytes(&diagnostic);
        self.kept.insert(0, diagnostic);
        while self.kept.len() > 1 && (self.kept.len() > MAX_DIAGNOSTICS || self.bytes > MAX_DIAGNOSTIC_BYTES) {
            let Some(last) = self.kept.pop() else { break };
            self.bytes -= held_bytes(&last);
            let left_out = self.left_out();
            left_out.omitted.count(&last);
            // It comes before everything left out so far, so it is the first error left out.
            if last.is_error() {
                left_out.first_error = Some(last);
            }
        }
    }

    /// Adds `other`'s diagnostics after these, as if each had been pushed here.
    pub fn append(&mut self, other: Diagnostics) {
        for d in other.kept {
            self.push(d);
        }
        // What `other` left out comes after all it kept: nothing later may be kept here.
        if let Some(theirs) = other.left_out {
            let ours = self.left_out();
            ours.omitted.add(theirs.omitted);
            if ours.first_error.is_none() {
                ours.first_error = theirs.first_error;
            }
        }
    }

    /// Whether any error has been added, kept or not.
    pub fn has_errors(&self) -> bool {
        self.left_out.as_ref().is_some_and(|l| l.omitted.errors > 0) || self.kept.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics kept, in order, and the count of the rest. When errors were left out
    /// and none was kept (the first [`MAX_DIAGNOSTICS`] are all warnings), the first error
    /// left out takes the last place, and that warning is counted instead: a caller that
    /// looks only at the kept diagnostics still sees that the file has an error.
    pub fn finish(self) -> (Vec<Diagnostic>, Omitted) {
        let Diagnostics { mut kept, left_out, .. } = self;
        let Some(left_out) = left_out else { return (kept, Omitted::default()) };
        let LeftOut { mut omitted, first_error } = *left_out;
        if let Some(error) = first_error
            && !kept.iter().any(Diagnostic::is_error)
        {
            omitted.uncount(&error);
            if let Some(warning) = kept.pop() {
                omitted.count(&warning);
            }
            kept.push(error);
        }
        (kept, omitted)
    }

    fn left_out(&mut self) -> &mut LeftOut {
        self.left_out.get_or_insert_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Layer, Span};

    fn diagnostic(code: &'static str, severity: Severity, line: u32) -> Diagnostic {
        Diagnostic {
            code,
            severity,
            layer: Layer::Parse,
            message: String::new(),
            span: Span { line, ..Span::default() },
            block: None,
            help: None,
        }
    }

    /// A collector of `n` diagnostics of one code, on lines from 0.
    fn pushed(n: usize, code: &'static str, severity: Severity) -> Diagnostics {
        let mut sink = Diagnostics::new();
        for line in 0..n as u32 {
            sink.push(diagnostic(code, severity, line));
        }
        sink
    }

    fn lines(kept: &[Diagnostic]) -> Vec<u32> {
        kept.iter().map(|d| d.span.line).collect()
    }

    #[test]
    fn up_to_the_cap_everything_is_kept() {
        let sink = pushed(MAX_DIAGNOSTICS, "DC0112", Severity::Error);
        let (kept, omitted) = sink.finish();
        assert_eq!(kept.len(), MAX_DIAGNOSTICS);
        assert!(omitted.is_empty());
        assert!(omitted.by_code.is_empty());
    }

    #[test]
    fn past_the_cap_the_rest_is_counted_per_code() {
        let mut sink = pushed(MAX_DIAGNOSTICS + 3, "DC0112", Severity::Error);
        sink.push(diagnostic("DC0501", Severity::Warning, 0));
        let (kept, omitted) = sink.finish();
        assert_eq!(kept.len(), MAX_DIAGNOSTICS);
        assert_eq!(kept.last().map(|d| d.span.line), Some(MAX_DIAGNOSTICS as u32 - 1));
        assert_eq!((omitted.total(), omitted.errors, omitted.warnings), (4, 3, 1));
        assert_eq!(omitted.most_frequent(), [("DC0112", 3), ("DC0501", 1)]);
    }

    /// A diagnostic whose block id is `bytes` long.
    fn large(bytes: usize, line: u32) -> Diagnostic {
        Diagnostic { block: Some("x".repeat(bytes)), ..diagnostic("DC0111", Severity::Error, line) }
    }

    #[test]
    fn past_the_bytes_the_rest_is_counted_even_when_small() {
        let mut sink = Diagnostics::new();
        for line in 0..4 {
            // Three fit, with room to spare for the diagnostics themselves.
            sink.push(large(MAX_DIAGNOSTIC_BYTES / 3 - 1_000, line));
        }
        sink.push(diagnostic("DC0112", Severity::Error, 9));
        let (kept, omitted) = sink.finish();
        assert_eq!(lines(&kept), [0, 1, 2]);
        assert_eq!(omitted.most_frequent(), [("DC0111", 1), ("DC0112", 1)]);
    }

    #[test]
    fn the_first_is_kept_whatever_its_size() {
        let mut sink = Diagnostics::new();
        sink.push(large(MAX_DIAGNOSTIC_BYTES * 2, 0));
        sink.push(diagnostic("DC0112", Severity::Error, 1));
        let (kept, omitted) = sink.finish();
        assert_eq!(lines(&kept), [0]);
        assert_eq!(omitted.total(), 1);
        // Pushed first, a large one pushes the others out.
        let mut sink = Diagnostics::new();
        sink.push(diagnostic("DC0112", Severity::Error, 1));
        sink.push(diagnostic("DC0112", Severity::Error, 2));
        sink.push_first(large(MAX_DIAGNOSTIC_BYTES, 0));
        sink.push(diagnostic("DC0112", Severity::Error, 3));
        let (kept, omitted) = sink.finish();
        assert_eq!(lines(&kept), [0]);
        assert_eq!(omitted.most_frequent(), [("DC0112", 3)]);
    }

    #[test]
    fn an_error_past_a_cap_of_warnings_takes_the_last_place() {
        let mut sink = pushed(MAX_DIAGNOSTICS + 5, "DC0501", Severity::Warning);
        sink.push(diagnostic("DC0112", Severity::Error, 7_000));
        sink.push(diagnostic("DC0113", Severity::Error, 8_000));
        assert!(sink.has_errors());
        let (kept, omitted) = sink.finish();
        assert_eq!(kept.len(), MAX_DIAGNOSTICS);
        assert_eq!(kept.last().map(|d| (d.code, d.span.line)), Some(("DC0112", 7_000)));
        assert_eq!((omitted.errors, omitted.warnings), (1, 6));
        assert_eq!(omitted.most_frequent(), [("DC0501", 6), ("DC0113", 1)]);
    }

    #[test]
    fn warnings_alone_stay_warnings() {
        let sink = pushed(MAX_DIAGNOSTICS + 1, "DC0501", Severity::Warning);
        assert!(!sink.has_errors());
        let (kept, omitted) = sink.finish();
        assert!(kept.iter().all(|d| !d.is_error()));
        assert_eq!((omitted.errors, omitted.warnings), (0, 1));
    }

    #[test]
    fn push_first_goes_before_everything_and_pushes_the_last_out() {
        let mut sink = Diagnostics::new();
        for line in 1..=MAX_DIAGNOSTICS as u32 {
            sink.push(diagnostic("DC0112", Severity::Error, line));
        }
        sink.push_first(diagnostic("DC0137", Severity::Error, 0));
        let (kept, omitted) = sink.finish();
        assert_eq!(kept.len(), MAX_DIAGNOSTICS);
        assert_eq!(lines(&kept).first(), Some(&0));
        assert_eq!(lines(&kept).last(), Some(&(MAX_DIAGNOSTICS as u32 - 1)));
        assert_eq!(omitted.most_frequent(), [("DC0112", 1)]);
    }

    #[test]
    fn appending_is_pushing_one_by_one() {
        let make = |codes: &[(&'static str, Severity)], from: u32| {
            let mut sink = Diagnostics::new();
            for (at, (code, severity)) in codes.iter().cycle().take(MAX_DIAGNOSTICS + 10).enumerate() {
                sink.push(diagnostic(code, *severity, from + at as u32));
            }
            sink
        };
        let a = [("DC0501", Severity::Warning)];
        let b = [("DC0502", Severity::Warning), ("DC0112", Severity::Error)];
        let mut appended = make(&a, 0);
        appended.append(make(&b, 10_000));
        let mut pushed = make(&a, 0);
        for (at, (code, severity)) in b.iter().cycle().take(MAX_DIAGNOSTICS + 10).enumerate() {
            pushed.push(diagnostic(code, *severity, 10_000 + at as u32));
        }
        assert_eq!(appended.finish(), pushed.finish());
    }
}
