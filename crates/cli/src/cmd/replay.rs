//! `decision replay`: verify the decision records of session logs, and their hash chains.
//!
//! Glue over [`decision_runtime::log::replay_file`]; results stream through and only the
//! ones that are printed are kept (the JSON listing spills to a temporary file when large),
//! so memory does not grow with the log.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use decision_runtime::host::approvals::verify_approvals;

use decision_core::record::{Outcome, RECORD_SCHEMA, REPLAY_NOTES};
use decision_runtime::log::replay::ChainBreak;
use decision_runtime::log::{ChainStatus, LogReport, RecordResult, ReplayOptions, replay_file};
use serde_json::{Value, json};

use super::contract_input::Format;

/// How many unverifiable records are listed without `--verbose` (as the reference does).
const UNVERIFIABLE_LISTED: usize = 3;
/// How many mismatches are listed in human output.
const MISMATCH_LISTED: usize = 1000;
/// JSON results are kept in memory up to this size, then spilled to a temporary file.
const SPILL_BYTES: usize = 4 << 20;

#[derive(clap::Args)]
pub struct Args {
    /// Output format. JSON lists mismatched and unverifiable records (every record with
    /// `--verbose`).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// List every record with its checks.
    #[arg(long)]
    verbose: bool,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Lines longer than this many bytes are skipped and reported.
    #[arg(long, value_name = "BYTES", default_value_t = decision_runtime::log::lines::DEFAULT_MAX_LINE)]
    max_line: usize,
    /// Session logs (JSON Lines).
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let threads = if args.jobs == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { args.jobs };
    let options = ReplayOptions { max_line: args.max_line, threads, ..ReplayOptions::default() };
    let outcome = match args.format {
        Format::Human => human(&args, &options),
        Format::Json => json_document(&args, &options),
    };
    match outcome {
        Ok(Summary { unreadable: true, .. }) => ExitCode::from(super::EXIT_USAGE),
        Ok(Summary { failed: true, .. }) => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => super::usage_error(&format!("cannot write the output: {e}")),
    }
}

#[derive(Default)]
struct Summary {
    failed: bool,
    unreadable: bool,
}

fn status_mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Verified => "✓",
        Outcome::Partial => "~",
        Outcome::Unverifiable => "?",
        Outcome::Mismatch => "✗",
    }
}

fn format_step(step: Option<f64>) -> String {
    step.map_or_else(
        || "?".to_owned(),
        |s| {
            let mut text = String::new();
            decision_core::digest::write_f64(s, &mut text);
            text
        },
    )
}

fn result_line(result: &RecordResult) -> String {
    format!(
        "{} {} run {} · step {} · {} (line {})",
        status_mark(result.status),
        result.status.as_str(),
        result.run,
        format_step(result.step),
        result.node.as_deref().unwrap_or("?"),
        result.line
    )
}

fn write_result(out: &mut impl Write, result: &RecordResult, failing_only: bool) -> io::Result<()> {
    writeln!(out, "  {}", result_line(result))?;
    if let Some(problem) = &result.problem {
        writeln!(out, "      {problem}")?;
    }
    for check in &result.checks {
        if failing_only && check.status != decision_core::record::CheckStatus::Fail {
            continue;
        }
        writeln!(out, "      {}: {} — {}", check.name.as_str(), check.status.as_str(), check.detail)?;
    }
    Ok(())
}

fn human(args: &Args, options: &ReplayOptions) -> io::Result<Summary> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut summary = Summary::default();
    writeln!(out, "decision replay · decision records")?;
    for path in &args.logs {
        writeln!(out)?;
        writeln!(out, "file: {}", path.display())?;
        writeln!(out, "schema: {RECORD_SCHEMA}")?;
        let mut mismatches: Vec<RecordResult> = Vec::new();
        let mut unverifiable: Vec<RecordResult> = Vec::new();
        let mut write_error: Option<io::Error> = None;
        let report = replay_file(path, options, &mut |result| {
            if args.verbose {
                if let Err(e) = write_result(&mut out, result, false) {
                    write_error.get_or_insert(e);
                }
                return;
            }
            match result.status {
                Outcome::Mismatch if mismatches.len() < MISMATCH_LISTED => mismatches.push(result.clone()),
                Outcome::Unverifiable if unverifiable.len() <= UNVERIFIABLE_LISTED => {
                    unverifiable.push(result.clone());
                }
                _ => {}
            }
        });
        if let Some(e) = write_error {
            return Err(e);
        }
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                summary.unreadable = true;
                continue;
            }
        };
        write_counts(&mut out, &report)?;
        // Logs with approvals also have their approvals checked (other logs print as before).
        match verify_approvals(path) {
            Ok(audit) if audit.approvals > 0 => {
                let mark = if audit.problems.is_empty() { "✓" } else { "✗" };
                writeln!(
                    out,
                    "  {mark} approvals: {} requested · {} answered · {} used",
                    audit.approvals, audit.answered, audit.used
                )?;
                for problem in &audit.problems {
                    writeln!(out, "      {}", super::safe_text::safe(problem))?;
                }
                summary.failed |= !audit.problems.is_empty();
            }
            _ => {}
        }
        for result in &mismatches {
            write_result(&mut out, result, true)?;
        }
        if report.mismatch > mismatches.len() as u64 && !args.verbose {
            writeln!(out, "  … and {} more mismatches", report.mismatch - mismatches.len() as u64)?;
        }
        if unverifiable.len() <= UNVERIFIABLE_LISTED {
            for result in &unverifiable {
                write_result(&mut out, result, false)?;
            }
        }
        write_chain(&mut out, &report)?;
        for skipped in &report.skipped {
            writeln!(out, "  skipped line {}: {}", skipped.line, skipped.reason)?;
        }
        summary.failed |= report.mismatch > 0 || report.chain_status() == ChainStatus::Broken;
    }
    writeln!(out)?;
    writeln!(out, "Replay does not verify three things:")?;
    for (index, note) in REPLAY_NOTES.iter().enumerate() {
        writeln!(out, "  {}. {note}", index + 1)?;
    }
    writeln!(out)?;
    if summary.failed {
        writeln!(out, "✗ some records are inconsistent, or the hash chain is broken")?;
    } else if summary.unreadable {
        writeln!(out, "? some logs could not be read")?;
    } else {
        writeln!(out, "✓ no inconsistent records")?;
    }
    out.flush()?;
    Ok(summary)
}

fn write_counts(out: &mut impl Write, report: &LogReport) -> io::Result<()> {
    write!(out, "records: {} decisions · {} other events · {} runs", report.records, report.other_events, report.runs)?;
    if report.skipped_lines > 0 {
        write!(out, " · {} unreadable lines (the append-only format allows a torn last line)", report.skipped_lines)?;
    }
    writeln!(out)?;
    if let Some(session) = &report.session {
        writeln!(out, "session: {session}")?;
    }
    if let Some(line) = report.torn_tail {
        writeln!(out, "torn last line: line {line} was cut short and is not counted")?;
    }
    writeln!(out, "  ✓ verified      {:>8}  every applicable check ran and passed", report.verified)?;
    writeln!(
        out,
        "  ~ partial       {:>8}  some checks passed; the rest say why they cannot run (normal for merged decisions)",
        report.partial
    )?;
    writeln!(
        out,
        "  ? unverifiable  {:>8}  fields needed for replay are missing (an old log, or another writer)",
        report.unverifiable
    )?;
    writeln!(out, "  ✗ mismatch      {:>8}  the record is inconsistent", report.mismatch)
}

fn write_chain(out: &mut impl Write, report: &LogReport) -> io::Result<()> {
    match report.chain_status() {
        ChainStatus::Intact => writeln!(out, "chain: intact (no line deleted, inserted, reordered or changed)"),
        ChainStatus::Absent => writeln!(out, "chain: absent (the log was written without a hash chain)"),
        ChainStatus::Broken => {
            writeln!(out, "chain: broken ({} breaks)", report.chain_breaks)?;
            for ChainBreak { line, reason } in &report.breaks {
                writeln!(out, "  ✗ line {line}: {reason}")?;
            }
            Ok(())
        }
    }
}

/// JSON results, kept in memory while small and spilled to a temporary file when large.
struct ResultSink {
    buffer: Vec<u8>,
    spill: Option<(PathBuf, File)>,
    count: u64,
    error: Option<io::Error>,
}

impl ResultSink {
    fn push(&mut self, value: &Value) {
        if self.count > 0 {
            self.buffer.push(b',');
        }
        self.count += 1;
        self.buffer.extend_from_slice(value.to_string().as_bytes());
        if self.buffer.len() >= SPILL_BYTES
            && let Err(e) = self.flush_to_spill()
        {
            self.error.get_or_insert(e);
        }
    }

    fn flush_to_spill(&mut self) -> io::Result<()> {
        if self.spill.is_none() {
            let path = std::env::temp_dir().join(format!("decision-replay-{}.json.part", std::process::id()));
            let file = File::options().read(true).write(true).create(true).truncate(true).open(&path)?;
            self.spill = Some((path, file));
        }
        if let Some((_, file)) = &mut self.spill {
            file.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    fn write_into(&mut self, out: &mut impl Write) -> io::Result<()> {
        if let Some((path, mut file)) = self.spill.take() {
            file.seek(SeekFrom::Start(0))?;
            let mut chunk = vec![0u8; 1 << 16];
            loop {
                let n = file.read(&mut chunk)?;
                if n == 0 {
                    break;
                }
                out.write_all(chunk.get(..n).unwrap_or(&[]))?;
            }
            drop(file);
            std::fs::remove_file(&path)?;
        }
        out.write_all(&self.buffer)
    }
}

/// A step as JavaScript would print it: integral values without a fraction.
fn js_number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

fn result_json(path: &str, result: &RecordResult) -> Value {
    let mut value = json!({
        "run": result.run,
        "step": result.step.map(js_number),
        "node": result.node,
        "status": result.status.as_str(),
        "checks": result.checks.iter().map(|c| json!({
            "name": c.name.as_str(), "status": c.status.as_str(), "detail": c.detail,
        })).collect::<Vec<_>>(),
        "file": path,
        "line": result.line,
    });
    if let (Some(problem), Some(map)) = (&result.problem, value.as_object_mut()) {
        map.insert("problem".to_owned(), Value::from(problem.as_str()));
    }
    value
}

fn json_document(args: &Args, options: &ReplayOptions) -> io::Result<Summary> {
    let mut summary = Summary::default();
    let mut sink = ResultSink { buffer: Vec::new(), spill: None, count: 0, error: None };
    let mut total = LogReport::default();
    let mut chains = Vec::new();
    let mut files = Vec::new();
    for path in &args.logs {
        let display = path.display().to_string();
        let report = replay_file(path, options, &mut |result| {
            if args.verbose || matches!(result.status, Outcome::Mismatch | Outcome::Unverifiable) {
                sink.push(&result_json(&display, result));
            }
        });
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                eprintln!("error: cannot read {display}: {e}");
                summary.unreadable = true;
                files.push(json!({"path": display, "error": e.to_string()}));
                continue;
            }
        };
        for (sum, part) in [
            (&mut total.records, report.records),
            (&mut total.other_events, report.other_events),
            (&mut total.runs, report.runs),
            (&mut total.skipped_lines, report.skipped_lines),
            (&mut total.verified, report.verified),
            (&mut total.partial, report.partial),
            (&mut total.unverifiable, report.unverifiable),
            (&mut total.mismatch, report.mismatch),
        ] {
            *sum += part;
        }
        chains.push(report.chain_status());
        summary.failed |= report.mismatch > 0 || report.chain_status() == ChainStatus::Broken;
        files.push(json!({
            "path": display,
            "session": report.session,
            "chain": report.chain_status().as_str(),
            "chain_breaks": report.breaks,
            "torn_tail": report.torn_tail,
            "long_lines": report.long_lines,
            "skipped": report.skipped,
        }));
    }
    if let Some(e) = sink.error.take() {
        return Err(e);
    }
    // Any broken chain is broken; "intact" only when every log carries an intact chain.
    let chain = if chains.contains(&ChainStatus::Broken) {
        ChainStatus::Broken
    } else if !chains.is_empty() && chains.iter().all(|c| *c == ChainStatus::Intact) {
        ChainStatus::Intact
    } else {
        ChainStatus::Absent
    };
    let head = json!({
        "records": total.records,
        "other_events": total.other_events,
        "runs": total.runs,
        "skipped_lines": total.skipped_lines,
        "verified": total.verified,
        "partial": total.partial,
        "unverifiable": total.unverifiable,
        "mismatch": total.mismatch,
        "chain": chain.as_str(),
    })
    .to_string();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    // The head object without its closing brace, then the streamed results, then the rest.
    out.write_all(head.get(..head.len().saturating_sub(1)).unwrap_or("{").as_bytes())?;
    out.write_all(b",\"results\":[")?;
    sink.write_into(&mut out)?;
    let tail = json!({"notes": REPLAY_NOTES, "files": files}).to_string();
    out.write_all(b"],")?;
    out.write_all(tail.get(1..).unwrap_or("}").as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(summary)
}
