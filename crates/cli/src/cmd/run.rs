//! `decision run [CONTRACT] --task TEXT --workdir DIR [--provider …] [--log LOG] [--max-steps N]
//! [--time-budget SECONDS] [--allow-write] [--allow-delete] [--outcome-contracts FILE]
//! [--generator-url URL [--max-output-tokens N]]`: run the reference coding host on a task,
//! showing each decision as it happens, and end with a summary. The session log it writes
//! verifies with `decision replay`; its `tool:outcome` events feed `decision outcomes report`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use decision::graph::{EventSink, FnSink, Tee};
use decision::log::{FsyncPolicy, LogError, LogHeader, SealKey, SessionLog, now_ms, read_head};
use decision::outcomes::{ContractSet, load_contracts};
use decision::provider::{ApiKey, OpenAiMode, OpenAiProvider};
use decision::terminal;
use decision_coding_host::approvals::{
    AWAITING_APPROVAL, Approval, QueueApprovals, RecordedAnswers, read_approvals, refuse_log_in_workdir,
};
use decision_coding_host::generate::{ChatGenerator, EvidenceReport, Generator};
use decision_coding_host::human::{Human, NoTerminal, TerminalHuman};
use decision_coding_host::{
    CODING_CONTRACT, Collaborators, DEFAULT_MAX_STEPS, HostError, ResumeState, RunConfig, RunSummary, run_task,
    run_task_approved,
};
use serde_json::{Map, Value, json};

use super::contract_input::Format;
use decision::api::provider::{Built, Endpoint, ProviderSpec, ProviderSpecError};
use decision_coding_host::heuristic::HeuristicProvider;

/// Options shared by `run` and `resume`.
#[derive(clap::Args, Clone)]
pub struct Common {
    /// `heuristic` (rules, not a model; offline), `mock`, `script:FILE`, `replay:LOG` (the
    /// answers a session log recorded; a request it did not record is an error), `systemone`
    /// (key in TYPESAFE_API_KEY) or `openai` (key, if any, in OPENAI_API_KEY).
    #[arg(long, value_name = "PROVIDER", default_value = "heuristic")]
    pub provider: String,
    /// The decision provider's base URL.
    #[arg(long)]
    pub url: Option<String>,
    /// The decision model to name in requests.
    #[arg(long)]
    pub model: Option<String>,
    /// An OpenAI-compatible chat endpoint (API root, e.g. `http://127.0.0.1:8080/v1`) that writes
    /// the answer; without one, a labelled deterministic evidence report is written. Default:
    /// `$DECISION_GENERATOR_URL`.
    #[arg(long, value_name = "URL")]
    pub generator_url: Option<String>,
    /// The generator's model name (default: `$DECISION_GENERATOR_MODEL`, else `default`).
    #[arg(long)]
    pub generator_model: Option<String>,
    /// The most tokens the generator may write per answer (`max_tokens` in its requests);
    /// needs a generator URL.
    #[arg(long, value_name = "N", value_parser = parse_token_cap)]
    pub max_output_tokens: Option<u32>,
    /// A wall-clock budget for the run, in seconds (decimals allowed, > 0). It is checked
    /// between steps: when it is spent, the loop halts with `time_budget` and the answer is
    /// still written from the evidence so far. Every model request, retries included, ends
    /// by the budget plus 1 s.
    #[arg(long, value_name = "SECONDS", value_parser = parse_time_budget)]
    pub time_budget: Option<Duration>,
    /// Where `auto_audit` appends audit records (default: next to the log).
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Print only the summary, not each decision.
    #[arg(long)]
    pub quiet: bool,
    /// Deliverable contracts for the tools' outcomes (JSON, as for `decision outcomes check`;
    /// tool `files`, method the tool's name), checked before the bundled
    /// examples/coding-agent/outcomes.json.
    #[arg(long, value_name = "FILE")]
    pub outcome_contracts: Option<PathBuf>,
    /// Who answers a call the risk gate sends to a person: `terminal` asks on the terminal
    /// when there is one and otherwise queues it; `queue` records it as a pending approval
    /// and halts `awaiting_approval` (answer with `decision approve`, continue with
    /// `decision resume`); `deny` refuses it.
    #[arg(long, value_enum, default_value_t = Approvals::Terminal)]
    pub approvals: Approvals,
    /// Output format of the summary on stdout (`json`: one document; each decision is still
    /// shown on stderr unless `--quiet`).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// `--approvals`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Approvals {
    Terminal,
    Queue,
    Deny,
}

/// `--time-budget`: a finite number of seconds greater than 0.
fn parse_time_budget(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(format!("`{text}`: the budget must be a number of seconds greater than 0"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("`{text}`: {e}"))
}

/// `--max-steps`: a whole number of steps, at least 1.
pub fn parse_max_steps(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("the step limit must be at least 1 (a run with no steps cannot act on the task)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number of steps")),
    }
}

/// `--max-output-tokens`: a whole number of tokens, at least 1.
fn parse_token_cap(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err("the token cap must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number of tokens from 1 to {}", u32::MAX)),
    }
}

/// `--task`: some text to act on; an empty or blank task is refused before anything runs.
fn parse_task(text: &str) -> Result<String, String> {
    match text.trim().is_empty() {
        true => Err("the task is empty: say what the run should do".into()),
        false => Ok(text.to_owned()),
    }
}

/// The `--outcome-contracts` file, loaded and linted (every problem located).
pub fn outcome_contracts(common: &Common) -> Result<Option<Arc<ContractSet>>, String> {
    let Some(path) = &common.outcome_contracts else { return Ok(None) };
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match load_contracts(&text) {
        Ok(set) => Ok(Some(Arc::new(set))),
        Err(errors) => {
            let listed: Vec<String> = errors.0.iter().map(|e| format!("{}:{e}", path.display())).collect();
            Err(listed.join("\n"))
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md contract (default: the bundled coding-agent contract).
    contract: Option<PathBuf>,
    /// The task (not empty).
    #[arg(long, value_parser = parse_task)]
    task: String,
    /// The work directory the tools are confined to.
    #[arg(long, value_name = "DIR")]
    workdir: PathBuf,
    /// The session log to write (default: a new file under the system temp directory).
    #[arg(long, value_name = "LOG")]
    log: Option<PathBuf>,
    /// Append the log's head to this manifest once the run is over (an append-only file
    /// `decision replay --heads FILE` checks logs against; docs/export.md).
    #[arg(long, value_name = "FILE")]
    heads: Option<PathBuf>,
    /// Send each decision as an OpenTelemetry span to this OTLP/HTTP collector (e.g.
    /// http://127.0.0.1:4318) while the run goes on (docs/export.md).
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// The step limit.
    #[arg(long, default_value_t = DEFAULT_MAX_STEPS, value_parser = parse_max_steps)]
    max_steps: u64,
    /// Offer `write_file` (and, with --allow-delete, `move_file`).
    #[arg(long)]
    allow_write: bool,
    /// Offer `delete_file` (and, with --allow-write, `move_file`).
    #[arg(long)]
    allow_delete: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: Args) -> ExitCode {
    let (source, label) = match &args.contract {
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => (bytes, path.display().to_string()),
            Err(e) => return super::io_error(&format!("cannot read {}: {e}", path.display())),
        },
        None => (CODING_CONTRACT.as_bytes().to_vec(), "bundled:examples/coding-agent/DECISION.md".to_string()),
    };
    let log_path = args.log.clone().unwrap_or_else(default_log_path);
    let otlp = match args.otlp.as_deref().map(super::otlp::endpoint).transpose() {
        Ok(endpoint) => endpoint,
        Err(message) => return super::usage_error(&message),
    };
    let outcome_contracts = match outcome_contracts(&args.common) {
        Ok(set) => set,
        Err(message) => return super::usage_error(&message),
    };
    let config = RunConfig {
        task: args.task.clone(),
        workdir: args.workdir.clone(),
        max_steps: args.max_steps,
        time_budget: args.common.time_budget,
        allow_write: args.allow_write,
        allow_delete: args.allow_delete,
        earlier: None,
        audit_path: args.common.audit.clone().unwrap_or_else(|| audit_next_to(&log_path)),
        contract_label: label,
        outcome_contracts,
    };
    let log = match open_log(&log_path, Some(&args.workdir), None) {
        Ok(log) => log,
        Err(message) => return super::usage_error(&message),
    };
    let telemetry = super::otlp::follow(otlp, &log_path);
    let code = execute(&source, &config, &args.common, log, &log_path, None);
    if let Some(telemetry) = telemetry {
        telemetry.finish();
    }
    match &args.heads {
        Some(manifest) => super::heads::record(manifest, &log_path, code),
        None => code,
    }
}

/// A new log under the temp directory.
fn default_log_path() -> PathBuf {
    std::env::temp_dir().join("decision-sessions").join(format!("run-{}.jsonl", now_ms()))
}

pub fn audit_next_to(log: &Path) -> PathBuf {
    let mut name = log.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".audit.jsonl");
    log.with_file_name(name)
}

/// Create the log (or, with `run`, reopen it to append a resumed run), locked for this
/// process alone. A log inside the work directory is refused: the run's tools could rewrite it.
pub fn open_log(path: &Path, workdir: Option<&Path>, run: Option<u64>) -> Result<SessionLog, String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    if let Some(workdir) = workdir {
        refuse_log_in_workdir(path, workdir)?;
    }
    let mut log = match run {
        // A torn last line left by a killed process is removed (it is the uncommitted group).
        Some(_) => SessionLog::open_repairing(path, FsyncPolicy::Never).map_err(|e| e.to_string()).map(|(log, repair)| {
            if let Some(repair) = repair {
                eprintln!(
                    "repaired {}: line {} was cut short when the process stopped ({} bytes of a write that never completed, so nothing it recorded took effect); it was removed",
                    path.display(),
                    repair.line,
                    repair.bytes
                );
            }
            log
        }),
        None => {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("run");
            let id: String =
                stem.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').take(64).collect();
            let header = LogHeader {
                id: if id.is_empty() { format!("run-{}", now_ms()) } else { id },
                created_at_ms: now_ms(),
                cwd: workdir.and_then(|w| std::fs::canonicalize(w).ok()).map(|p| p.display().to_string()),
            };
            SessionLog::create(path, &header, FsyncPolicy::Never).map_err(|e| match &e {
                // A log is never overwritten: what it recorded is the run's evidence.
                LogError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => format!(
                    "{} already exists, and a session log is never overwritten: give a new path with --log, \
                     or continue the run it records with `decision resume {}`",
                    terminal::one_line(&path.display().to_string()),
                    terminal::one_line(&path.display().to_string())
                ),
                _ => e.to_string(),
            })
        }
    }
?;
    if let Some(run) = run {
        log.set_run(run);
    }
    // With a key in the environment the run's seal is keyed: only a key holder can make one.
    log.set_seal_key(SealKey::from_env().map_err(|e| e.to_string())?);
    // The host commits the log before every side effect, at every step's end and at the end.
    Ok(log.with_group_commit())
}

/// Run the host and print the outcome.
pub fn execute(
    source: &[u8],
    config: &RunConfig,
    common: &Common,
    log: SessionLog,
    log_path: &Path,
    resume: Option<&ResumeState>,
) -> ExitCode {
    execute_approved(source, config, common, log, log_path, resume, None)
}

/// [`execute`], continuing from an answered approval when one is given.
pub fn execute_approved(
    source: &[u8],
    config: &RunConfig,
    common: &Common,
    log: SessionLog,
    log_path: &Path,
    resume: Option<&ResumeState>,
    approval: Option<&Approval>,
) -> ExitCode {
    let Built { provider, replay } = match build_provider(common) {
        Ok(built) => built,
        Err(message) => return super::usage_error(&message),
    };
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let generator: Box<dyn Generator> = match common.generator_url.clone().or_else(|| env("DECISION_GENERATOR_URL")) {
        Some(url) => {
            let model = common.generator_model.clone().or_else(|| env("DECISION_GENERATOR_MODEL"));
            let key = ApiKey::from_env(OpenAiProvider::KEY_VARIABLE);
            let chat = ChatGenerator::new(&url, model.as_deref().unwrap_or("default"), key);
            Box::new(chat.with_max_tokens(common.max_output_tokens))
        }
        // The evidence report has no tokens to cap: a cap given for it would silently do nothing.
        None if common.max_output_tokens.is_some() => {
            return super::usage_error(
                "--max-output-tokens caps a language model's answer: it needs --generator-url or $DECISION_GENERATOR_URL",
            );
        }
        None => Box::new(EvidenceReport),
    };
    let generator_is_model = common.generator_url.is_some() || env("DECISION_GENERATOR_URL").is_some();
    let human: Box<dyn Human> = match (approval, common.approvals) {
        (Some(approval), _) => Box::new(RecordedAnswers::new(approval.clone())),
        (None, Approvals::Deny) => Box::new(NoTerminal::stderr()),
        (None, Approvals::Queue) => Box::new(QueueApprovals),
        (None, Approvals::Terminal) if TerminalHuman::available() => Box::new(TerminalHuman),
        (None, Approvals::Terminal) => Box::new(QueueApprovals),
    };
    let quiet = common.quiet;
    let progress = FnSink(move |event_type: &str, e: &Map<String, Value>| {
        if !quiet {
            show(event_type, e);
        }
    });
    let sinks: Vec<Box<dyn EventSink>> = vec![Box::new(log), Box::new(progress)];
    let with = Collaborators { provider, generator, human, sink: Box::new(Tee::new(sinks)) };
    if !quiet {
        let workdir = config.workdir.display().to_string();
        eprintln!("decision run · provider {} · workdir {}", common.provider, terminal::one_line(&workdir));
        eprintln!("task: {}", terminal::one_line(&config.task));
    }
    let outcome = match approval {
        Some(approval) => run_task_approved(source, config, with, &resume.cloned().unwrap_or_default(), approval),
        None => run_task(source, config, with, resume),
    };
    match outcome {
        Ok(summary) => {
            match common.format {
                Format::Human => {
                    print_summary(&summary, log_path, generator_is_model);
                    if summary.halt == AWAITING_APPROVAL {
                        print_awaiting(log_path);
                    }
                }
                Format::Json => println!("{}", summary_json(&summary, log_path, generator_is_model)),
            }
            if let Some(miss) = replay.as_ref().and_then(|r| r.first_miss()) {
                eprintln!("error: {}", terminal::one_line(&miss));
                return ExitCode::from(1);
            }
            if summary.delivered { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(HostError::Refused(refusal)) => {
            eprintln!("{}", terminal::lines(&refusal.to_string()));
            ExitCode::from(1)
        }
        Err(HostError::Workdir { path, source }) => {
            super::usage_error(&format!("work directory {}: {source}", path.display()))
        }
        Err(e) => {
            eprintln!("error: {}", terminal::lines(&e.to_string()));
            eprintln!("log: {} (verify with: decision replay {})", log_path.display(), log_path.display());
            // The run was sealed on its way out when the log could still be written.
            if let Ok(Some(head)) = read_head(log_path) {
                eprintln!("head: {head}");
            }
            ExitCode::from(1)
        }
    }
}

/// `--provider` with `--url` and `--model`; the host speaks to OpenAI-compatible servers
/// through their chat endpoint.
fn build_provider(common: &Common) -> Result<Built, String> {
    let spec: ProviderSpec = common.provider.parse().map_err(|e: ProviderSpecError| e.to_string())?;
    match spec {
        // The coding host's own rules: the host builds them.
        ProviderSpec::Heuristic => Ok(Built { provider: Arc::new(HeuristicProvider), replay: None }),
        spec => spec.build(&Endpoint {
            url: common.url.as_deref(),
            model: common.model.as_deref(),
            openai_mode: OpenAiMode::Chat,
        }),
    }
}

/// One line per decision (node, action, each answer's top probability, margin), and per
/// tool call, authorisation, audit and generation.
fn show(event_type: &str, e: &Map<String, Value>) {
    if let Some(line) = progress_line(event_type, e) {
        // Inputs, tool output and answers come from outside: none reaches the terminal raw.
        eprintln!("{}", terminal::one_line(&line));
    }
}

/// The progress line of an event, if it has one.
fn progress_line(event_type: &str, e: &Map<String, Value>) -> Option<String> {
    let step = e.get("step").and_then(Value::as_u64).unwrap_or(0);
    Some(match event_type {
        "decision" => {
            let block = e.get("block").and_then(Value::as_str).unwrap_or_default();
            let action = e.get("action").and_then(Value::as_str).unwrap_or_default();
            let answers = e.get("answers").and_then(Value::as_object).map(answer_summary).unwrap_or_default();
            let margin = e
                .get("margin")
                .and_then(|m| m.get("margin"))
                .and_then(Value::as_f64)
                .map(|m| format!("  margin {m:.2}"))
                .unwrap_or_default();
            let invalid =
                if e.get("escalate") == Some(&json!(true)) && answers.is_empty() { "  (no valid answer)" } else { "" };
            format!("  step {step:>2}  {block:<12} → {action:<11} {answers}{margin}{invalid}")
        }
        "tool:call" => {
            let tool = e.get("tool").and_then(Value::as_str).unwrap_or_default();
            let input = e.get("input").and_then(Value::as_str).unwrap_or_default();
            let first = input.lines().next().unwrap_or_default();
            format!("           tool {tool}({first})")
        }
        "tool:result" => {
            let output = e.get("output").and_then(Value::as_str).unwrap_or_default();
            let lines = output.lines().count();
            let head: String = output.lines().next().unwrap_or_default().chars().take(70).collect();
            format!("           ← {lines} line(s): {head}")
        }
        "tool:outcome" => {
            let verdict = e.get("contract").and_then(Value::as_str).unwrap_or_default();
            let weak = e.get("weak_success").and_then(Value::as_array).map_or(0, Vec::len);
            let flags = if weak > 0 { format!(" · {weak} weak-success flag(s)") } else { String::new() };
            match e.get("outcome").and_then(|o| o.get("error_type")).and_then(Value::as_str) {
                Some(error_type) => format!("           outcome: {error_type} (contract {verdict}){flags}"),
                None => format!("           outcome: ok (contract {verdict}){flags}"),
            }
        }
        "decision:code" => {
            let block = e.get("block").and_then(Value::as_str).unwrap_or_default();
            let action = e.get("action").and_then(Value::as_str).unwrap_or_default();
            format!("  step {step:>2}  {block:<12} → {action:<11} decided by code (the model was not asked)")
        }
        "approval:pending" => {
            let tool = e.get("tool").and_then(Value::as_str).unwrap_or_default();
            let id = e.get("id").and_then(Value::as_str).unwrap_or_default();
            format!("           approval pending for {}: {}", terminal::one_line(tool), terminal::one_line(id))
        }
        "authorize" => {
            let tool = e.get("tool").and_then(Value::as_str).unwrap_or_default();
            let ok = e.get("approved") == Some(&json!(true));
            format!("           authorisation for {tool}: {}", if ok { "approved" } else { "denied" })
        }
        "gate:floor" => {
            let tool = e.get("tool").and_then(Value::as_str).unwrap_or_default();
            let decided = e.get("decided").and_then(Value::as_str).unwrap_or_default();
            let action = e.get("action").and_then(Value::as_str).unwrap_or_default();
            let base = e.get("baseRisk").and_then(Value::as_u64).unwrap_or(0);
            format!("           floor: {tool} has risk baseline {base}: {decided} → {action} (code, not the model)")
        }
        "audit" => "           audit record written".to_owned(),
        "generate" => {
            let kind = e.get("kind").and_then(Value::as_str).unwrap_or_default();
            let ms = e.get("latencyMs").and_then(Value::as_u64).unwrap_or(0);
            format!("           {kind}: {ms} ms")
        }
        _ => return None,
    })
}

fn answer_summary(answers: &Map<String, Value>) -> String {
    answers
        .iter()
        .map(|(id, a)| {
            if let Some(p) = a.get("noul").and_then(Value::as_f64) {
                format!("{id}={p:.2}")
            } else if let Some(choice) = a.get("choice").and_then(Value::as_str) {
                let p = a.get("probabilities").and_then(|ps| ps.get(choice)).and_then(Value::as_f64).unwrap_or(0.0);
                format!("{id}={choice}@{p:.2}")
            } else if let Some(score) = a.get("score").and_then(Value::as_f64) {
                format!("{id}={score:.2}")
            } else {
                format!("{id}=?")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The approval a run halted for: the log's last unanswered one.
fn awaited_approval(log: &Path) -> Option<decision_coding_host::approvals::Approval> {
    read_approvals(log).ok().and_then(|all| all.into_iter().rev().find(|a| a.answer.is_none()))
}

/// How to answer the approval a run halted for.
fn print_awaiting(log: &Path) {
    if let Some(approval) = awaited_approval(log) {
        println!(
            "awaiting approval {} for {}: decision approve {} {} [--deny --reason TEXT] [--input JSON], then decision resume {}",
            approval.id,
            terminal::one_line(&approval.tool),
            log.display(),
            approval.id,
            log.display()
        );
    }
}

/// The run's summary as one JSON document (`--format json`): how it halted and whether the
/// answer was delivered, the counts and times of the human summary, the log and its head,
/// and, when the run halted for a person, the approval to answer.
fn summary_json(s: &RunSummary, log: &Path, generator_is_model: bool) -> Value {
    let awaiting = (s.halt == AWAITING_APPROVAL).then(|| awaited_approval(log)).flatten().map(|a| {
        json!({
            "id": a.id,
            "tool": a.tool,
            "approve": format!("decision approve {} {}", log.display(), a.id),
            "resume": format!("decision resume {}", log.display()),
        })
    });
    json!({
        "halt": s.halt,
        "delivered": s.delivered,
        "why": s.halt_detail.as_deref().filter(|_| !s.delivered),
        "answer": s.answer,
        "answeredBy": if generator_is_model { "model" } else { "evidence report" },
        "steps": s.steps,
        "decisions": s.decisions,
        "requests": s.requests,
        "generations": s.model_calls,
        "audits": s.audits,
        "contractViolations": s.contract_violations,
        "codeDecisions": s.code_decisions,
        "timeMs": {"decisions": s.decision_ms, "generation": s.model_ms, "wall": s.wall_ms},
        "log": log.display().to_string(),
        "head": s.head.as_ref().map(ToString::to_string),
        "awaitingApproval": awaiting,
    })
}

/// The run's summary. `generator_is_model` says whether the answer was written by a language
/// model: without one the answer is the evidence report, and no model call is claimed.
fn print_summary(s: &RunSummary, log: &Path, generator_is_model: bool) {
    let total = (s.decision_ms + s.model_ms).max(1);
    let share = 100.0 * s.decision_ms as f64 / total as f64;
    // The answer is the model's (or quotes the files): its lines stay lines, nothing else
    // reaches the terminal raw.
    println!("{}", terminal::lines(&s.answer));
    println!();
    println!("halt: {} ({})", s.halt, if s.delivered { "delivered" } else { "not delivered" });
    // What happened, on screen and not only in the log: a fail-closed decision and where it was
    // taken (a transport error, a refusal), a refused write, a missing permission.
    if let Some(detail) = s.halt_detail.as_deref().filter(|_| !s.delivered) {
        println!("why: {}", terminal::one_line(detail));
    }
    let written = match generator_is_model {
        true => format!("model calls: {}", s.model_calls),
        false => format!("evidence reports: {} (no model)", s.model_calls),
    };
    println!(
        "steps: {} · decisions: {} in {} requests · {written} · audits: {}",
        s.steps, s.decisions, s.requests, s.audits
    );
    if s.code_decisions + s.contract_violations > 0 {
        println!(
            "tool outcomes: {} contract violation(s) · {} decision(s) made by code",
            s.contract_violations, s.code_decisions
        );
    }
    println!(
        "time: decisions {} ms ({share:.0}%) · generation {} ms · wall {} ms",
        s.decision_ms, s.model_ms, s.wall_ms
    );
    println!("log: {} (verify with: decision replay {})", log.display(), log.display());
    if let Some(head) = &s.head {
        println!("head: {head} (`decision replay --head SEQ:HASH LOG` checks the log against it, to its last byte)");
    }
}
