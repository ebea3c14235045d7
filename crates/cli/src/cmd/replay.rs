//! `decision replay`: verify the decision records of session logs, and their hash chains.
//!
//! Glue over [`decision::log::replay_file`]; results stream through and only the
//! ones that are printed are kept (the JSON listing spills to a temporary file when large),
//! so memory does not grow with the log.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use decision::api::replay::{ReplayRequest, Requirements, log_problems};
use decision::api::{self, Code, Error};
use decision::log::approval::replay_with_ledger;
use decision::log::policy::PolicyBook;
use decision::log::replay::{ChainBreak, MacCheck};
use decision::log::{
    ChainStatus, LogHead, LogReport, RecordResult, ReplayOptions, SEAL_KEY_VARIABLE, SealKey, SealStatus,
};
use decision::record::{RECORD_SCHEMA, REPLAY_NOTES, VerifyOutcome};
use decision::terminal;
use serde_json::Value;

use super::contract_input::Format;
use super::heads::Expected;

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
    /// What every entrance asks of a replay: `--verbose`, `--jobs`, `--max-line`.
    #[command(flatten)]
    request: ReplayRequest,
    /// A head printed at the end of a run (`SEQ:HASH`): the line with that `seq` must have
    /// that hash and every line after it must chain to it, so nothing up to it was changed,
    /// added or cut, its last byte included (a prefix check: a head printed before a later
    /// run extended the log keeps verifying it). Needs exactly one LOG.
    #[arg(long, value_name = "SEQ:HASH", conflicts_with = "heads")]
    head: Option<LogHead>,
    /// A heads manifest (written by `decision run --heads FILE` and `decision mcp --heads
    /// FILE`): every log must extend each head it records for it, a log it names under the
    /// given paths must be there, and a log it does not name fails (docs/export.md).
    #[arg(long, value_name = "FILE")]
    heads: Option<PathBuf>,
    /// Fail unless the log ends with its writer's seal (a run that did not finish, or a log
    /// cut short, fails).
    #[arg(long)]
    require_seal: bool,
    /// Fail unless the log carries an intact hash chain (a log without one — written by the
    /// reference, or stripped — fails).
    #[arg(long)]
    require_chain: bool,
    /// Fail unless the log is keyed and its seals verify under the key in $DECISION_LOG_KEY
    /// (without it, a keyed log fails instead of reading "keyed, not checked").
    #[arg(long)]
    require_key: bool,
    /// Pass a log that holds no decision record (by default it fails: nothing was verified).
    #[arg(long)]
    allow_empty: bool,
    /// The DECISION.md the run followed: each record's action must follow from its recorded
    /// answers under the block's policy (the `policy` check; a record whose action does not
    /// is a mismatch).
    #[arg(long, value_name = "DECISION.md")]
    contract: Option<PathBuf>,
    /// Session logs (JSON Lines), or directories walked for their `*.jsonl` files.
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<PathBuf>,
}

pub fn run(mut args: Args) -> ExitCode {
    let inputs = args.logs.clone();
    args.logs = match super::log_inputs::expand(&args.logs) {
        Ok(logs) => logs,
        Err(message) => return super::usage_error(&message),
    };
    if args.head.is_some() && args.logs.len() != 1 {
        return super::usage_error("--head names the last line of one log: give exactly one LOG");
    }
    let seal_key = match SealKey::from_env() {
        Ok(key) => key,
        Err(e) => return super::usage_error(&e.to_string()),
    };
    let required = Requirements {
        head: args.head,
        seal: args.require_seal,
        chain: args.require_chain,
        key: args.require_key,
        allow_empty: args.allow_empty,
    };
    let policies = match &args.contract {
        Some(path) => match super::contract_input::load_contract(path) {
            Ok(contract) => match PolicyBook::new(contract) {
                Ok(book) => Some(Arc::new(book)),
                Err(message) => return super::fail(&Error::new(Code::Policy, message)),
            },
            Err(error) => return super::fail(&error),
        },
        None => None,
    };
    let options = ReplayOptions { seal_key, policies, head: args.head, ..args.request.options() };
    let heads = match args.heads.as_deref().map(Expected::read).transpose() {
        Ok(heads) => heads.map(|expected| Heads { expected, inputs }),
        Err(message) => return super::usage_error(&message),
    };
    let outcome = match args.format {
        Format::Human => human(&args, &options, &required, heads.as_ref()),
        Format::Json => json_document(&args, &options, &required, heads.as_ref()),
    };
    match outcome {
        Ok(Summary { unreadable: true, .. }) => ExitCode::from(super::EXIT_USAGE),
        Ok(Summary { failed: true, .. }) => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => super::usage_error(&format!("cannot write the output: {e}")),
    }
}

/// `--heads`: the manifest, and the paths it is checked under (as given, before the walk).
struct Heads {
    expected: Expected,
    inputs: Vec<PathBuf>,
}

impl Heads {
    /// `options` with the head the manifest recorded last for `log`, so its replay checks it.
    fn options_for(&self, log: &std::path::Path, options: &ReplayOptions) -> ReplayOptions {
        ReplayOptions { head: self.expected.latest(log).map(|entry| entry.head), ..options.clone() }
    }

    /// The logs the manifest names that are not there, each with its problem.
    fn missing(&self, found: &[PathBuf]) -> Vec<(String, String)> {
        self.expected
            .missing(&self.inputs, found)
            .into_iter()
            .map(|(path, head)| {
                let problem =
                    format!("deleted: the heads manifest recorded head {head} for this log and it is not there");
                (path, problem)
            })
            .collect()
    }
}

#[derive(Default)]
struct Summary {
    failed: bool,
    unreadable: bool,
}

fn status_mark(outcome: VerifyOutcome) -> &'static str {
    match outcome {
        VerifyOutcome::Verified => "✓",
        VerifyOutcome::Partial => "~",
        VerifyOutcome::Unverifiable => "?",
        VerifyOutcome::Mismatch => "✗",
    }
}

fn format_step(step: Option<f64>) -> String {
    step.map_or_else(
        || "?".to_owned(),
        |s| {
            let mut text = String::new();
            decision::digest::write_f64(s, &mut text);
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
    // Node names, problems and check details quote the log: none reaches the terminal raw.
    writeln!(out, "  {}", terminal::one_line(&result_line(result)))?;
    if let Some(problem) = &result.problem {
        writeln!(out, "      {}", terminal::one_line(problem))?;
    }
    for check in &result.checks {
        if failing_only && check.status != decision::record::CheckStatus::Fail {
            continue;
        }
        let detail = terminal::one_line(&check.detail);
        writeln!(out, "      {}: {} — {detail}", check.name.as_str(), check.status.as_str())?;
    }
    Ok(())
}

fn human(args: &Args, options: &ReplayOptions, required: &Requirements, heads: Option<&Heads>) -> io::Result<Summary> {
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
        let log_options = heads.map(|h| h.options_for(path, options));
        let watched = crate::progress::Watched::open(path, "replaying", args.request.verbose);
        let report = watched.and_then(|file| {
            replay_with_ledger(file, log_options.as_ref().unwrap_or(options), &mut |result| {
                if args.request.verbose {
                    if let Err(e) = write_result(&mut out, result, false) {
                        write_error.get_or_insert(e);
                    }
                    return;
                }
                match result.status {
                    VerifyOutcome::Mismatch if mismatches.len() < MISMATCH_LISTED => mismatches.push(result.clone()),
                    VerifyOutcome::Unverifiable if unverifiable.len() <= UNVERIFIABLE_LISTED => {
                        unverifiable.push(result.clone());
                    }
                    _ => {}
                }
            })
        });
        if let Some(e) = write_error {
            return Err(e);
        }
        let (report, ledger) = match report {
            Ok(replayed) => replayed,
            Err(e) => {
                eprintln!("error[E_IO]: {}", terminal::one_line(&format!("cannot read {}: {e}", path.display())));
                summary.unreadable = true;
                continue;
            }
        };
        write_counts(&mut out, &report)?;
        if let Some(contract) = &args.contract {
            writeln!(
                out,
                "policy: each decision's action was checked against the policy of {} (the `policy` check above)",
                terminal::one_line(&contract.display().to_string())
            )?;
        }
        // Logs with approvals also have their approvals checked (other logs print as before).
        let audit = ledger.audit();
        if audit.approvals > 0 {
            let mark = if audit.problems.is_empty() { "✓" } else { "✗" };
            writeln!(
                out,
                "  {mark} approvals: {} requested · {} answered · {} used",
                audit.approvals, audit.answered, audit.used
            )?;
            for problem in &audit.problems {
                writeln!(out, "      {}", decision::terminal::one_line(problem))?;
            }
            summary.failed |= !audit.problems.is_empty();
        }
        for result in &mismatches {
            write_result(&mut out, result, true)?;
        }
        if report.mismatch > mismatches.len() as u64 && !args.request.verbose {
            writeln!(out, "  … and {} more mismatches", report.mismatch - mismatches.len() as u64)?;
        }
        if unverifiable.len() <= UNVERIFIABLE_LISTED {
            for result in &unverifiable {
                write_result(&mut out, result, false)?;
            }
        }
        write_chain(&mut out, &report)?;
        write_seal(&mut out, &report)?;
        let problems = log_problems(&report, required);
        for problem in &problems {
            writeln!(out, "  ✗ {problem}")?;
        }
        if let Some(heads) = heads {
            let head_problems = heads.expected.problems(path, &report, options);
            for problem in &head_problems {
                writeln!(out, "  ✗ heads: {}", terminal::one_line(problem))?;
            }
            summary.failed |= !head_problems.is_empty();
        }
        for skipped in &report.skipped {
            writeln!(out, "  skipped line {}: {}", skipped.line, terminal::one_line(&skipped.reason))?;
        }
        summary.failed |= report.mismatch > 0 || report.chain_status() == ChainStatus::Broken || !problems.is_empty();
    }
    for (path, problem) in heads.map(|h| h.missing(&args.logs)).unwrap_or_default() {
        writeln!(out)?;
        writeln!(out, "file: {}", terminal::one_line(&path))?;
        writeln!(out, "  ✗ heads: {}", terminal::one_line(&problem))?;
        summary.failed = true;
    }
    writeln!(out)?;
    writeln!(out, "Replay does not verify three things:")?;
    for (index, note) in REPLAY_NOTES.iter().enumerate() {
        writeln!(out, "  {}. {note}", index + 1)?;
    }
    writeln!(out)?;
    if summary.failed {
        writeln!(
            out,
            "✗ some records are inconsistent, a log's chain, seal or head does not hold, or a log was not verified"
        )?;
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
        write!(out, " · {} unreadable lines", report.skipped_lines)?;
    }
    writeln!(out)?;
    if let Some(session) = &report.session {
        writeln!(out, "session: {}", terminal::one_line(session))?;
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
        ChainStatus::Missing => writeln!(out, "chain: missing (the header claims a hash chain that no line carries)"),
        ChainStatus::Broken => {
            writeln!(out, "chain: broken ({} breaks)", report.chain_breaks)?;
            for ChainBreak { line, reason } in &report.breaks {
                writeln!(out, "  ✗ line {line}: {}", terminal::one_line(reason))?;
            }
            // Past the listed ones the breaks are counted only: say how many are not shown.
            let unlisted = report.chain_breaks.saturating_sub(report.breaks.len() as u64);
            if unlisted > 0 {
                writeln!(out, "  … and {unlisted} more")?;
            }
            Ok(())
        }
    }
}

/// The seal and the head, for a log that carries a chain (a reference-written log has
/// neither, and its report is left as it always was).
fn write_seal(out: &mut impl Write, report: &LogReport) -> io::Result<()> {
    let seal = report.last_seal;
    match report.seal {
        SealStatus::Absent => return Ok(()),
        SealStatus::Sealed => {
            let (line, lines) = seal.map_or((0, 0), |s| (s.line, s.lines.unwrap_or(0)));
            let run = seal.and_then(|s| s.run).map_or_else(String::new, |run| format!(" ends run {run};"));
            let keyed = match seal.map(|s| s.mac) {
                Some(MacCheck::Verified) => format!("; keyed, verified with ${SEAL_KEY_VARIABLE}"),
                Some(MacCheck::Unchecked) => format!("; keyed, not checked (no key in ${SEAL_KEY_VARIABLE})"),
                _ => String::new(),
            };
            writeln!(out, "seal: sealed (line {line}{run} {lines} lines before it{keyed})")?;
        }
        SealStatus::Unfinished => writeln!(
            out,
            "seal: unfinished (the log does not end with a seal: the run did not finish — a crash — or lines were cut from its end)"
        )?,
        SealStatus::Invalid => writeln!(out, "seal: invalid")?,
    }
    if let Some(head) = report.head {
        writeln!(out, "head: {head}")?;
    }
    Ok(())
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

fn json_document(
    args: &Args,
    options: &ReplayOptions,
    required: &Requirements,
    heads: Option<&Heads>,
) -> io::Result<Summary> {
    let mut sink = ResultSink { buffer: Vec::new(), spill: None, count: 0, error: None };
    let mut logs = api::replay::LogSummary::default();
    for path in &args.logs {
        let display = path.display().to_string();
        let log_options = heads.map(|h| h.options_for(path, options));
        let watched = crate::progress::Watched::open(path, "replaying", false);
        let report = watched.and_then(|file| {
            replay_with_ledger(file, log_options.as_ref().unwrap_or(options), &mut |result| {
                if api::replay::is_listed(result, args.request.verbose) {
                    sink.push(&api::replay::result_json(&display, result));
                }
            })
        });
        match report {
            Ok((report, ledger)) => {
                logs.add(&display, &report, required);
                // Logs with approvals also have their approvals checked (other entries are as before).
                logs.add_approvals(&ledger.audit());
                if let Some(heads) = heads {
                    let problems = heads.expected.problems(path, &report, options);
                    let expected = heads.expected.latest(path).map(|entry| entry.head.to_string());
                    let failed = !problems.is_empty();
                    logs.annotate_last(
                        "heads",
                        serde_json::json!({"expected": expected, "problems": problems}),
                        failed,
                    );
                }
            }
            Err(e) => {
                eprintln!("error[E_IO]: {}", terminal::one_line(&format!("cannot read {display}: {e}")));
                logs.add_unreadable(&display, &e.to_string());
            }
        }
    }
    for (path, problem) in heads.map(|h| h.missing(&args.logs)).unwrap_or_default() {
        logs.add_missing(&path, &problem);
    }
    if let Some(e) = sink.error.take() {
        return Err(e);
    }
    let head = logs.head().to_string();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    // The head object without its closing brace, then the streamed results, then the rest.
    out.write_all(head.get(..head.len().saturating_sub(1)).unwrap_or("{").as_bytes())?;
    out.write_all(b",\"results\":[")?;
    sink.write_into(&mut out)?;
    let tail = logs.tail().to_string();
    out.write_all(b"],")?;
    out.write_all(tail.get(1..).unwrap_or("}").as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(Summary { failed: logs.failed(), unreadable: logs.unreadable() })
}
