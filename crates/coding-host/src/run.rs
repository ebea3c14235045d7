//! The reference coding host: the seven-node loop of runtime.md §6.3 as a Level-2 graph,
//! with every name registered through the host adapter.
//!
//! ```text
//! step (needs_tool + pick_tool, one request)
//!   ├ call ─▶ grade_risk            ├ read ─▶ pick_input ─ use ─▶ grade_risk
//!   └ answer / tool_unclear / unknown_tool / agent_done / input_unclear ─▶ generate
//! grade_risk ─ ran (auto, auto_audit + audit record, ask_human approved) ─▶ step_ok
//!            └ denied (ask_human or escalate, refused or nobody to ask) ─▶ generate
//! step_ok ─ continue ─▶ is_done ;  stop / escalate ─▶ generate
//! is_done ─ finish ─▶ generate ;  next ─▶ step ;  max_steps / time_budget ─▶ generate
//! generate ─ drafted ─▶ can_deliver
//! can_deliver ─ deliver ─▶ end ;  revise ─▶ can_deliver (once) ;  escalate / revise_exhausted ─▶ end
//! ```
//!
//! Tools run inside the handlers of `auto`, `auto_audit` and an approved `ask_human` (their
//! `next` is `run_tool`); generation runs in the `generate` phase and, on `revise`, once
//! more in the `revise` handler.
//!
//! Each call's result is a tool outcome, validated against its deliverable contract
//! ([`super::outcomes`]) and recorded as `tool:outcome`. A `contract_violation` decides the
//! step by code: `step_ok` is not asked, its `stop` path is taken, and the decision is recorded
//! as `decision:code`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use decision_core::policy::{Answer, CompiledPolicy};
use decision_core::vocab::{
    ACTIONS, POSITIONS, REFERENCE_BLOCKS, REFERENCE_CELLS, REFERENCE_QUESTIONS, action_semantics,
};
use serde_json::{Map, Value, json};
use thiserror::Error;

use super::approvals::{AWAITING_APPROVAL, Approval, PENDING_EVENT, USED_EVENT, approval_id};
use super::candidates::{FileOptions, ToolsFor, pending_page};
use super::events::{RunEnd, RunStart, RunStats, members};
use super::explore::{parse_range, split_page};
use super::floor::{FLOOR_EVENT, GateFloor, floor_gate};
use super::focus::{defines, focus_read, focus_search, read_on_to_definition};
use super::generate::{EVIDENCE_REPORT_LABEL, WRITE_INPUT_PROMPT};
use super::generate::{GenerateRequest, Generator};
use super::heuristic::TaskReading;
use super::human::{GateAnswer, GatedCall, Human, fingerprint};
use super::inputs::{AuditLog, input_from_task, write_target};
use super::outcomes::{TOOL_ROLE, ToolContracts, tool_outcome, violation_result};
use super::rank::{Hit, rank};
use super::tools::{FileTools, TOOL_ERROR_PREFIX, TOOLS, cap_output, listed_files, tool};
use super::unread::unread;
use decision_outcomes::report::OUTCOME_EVENT_TYPE;
use decision_outcomes::{ContractSet, EventContext, LintErrors, ValidationVerdict, outcome_event};
use decision_protocol::ask::ReadCells;
use decision_protocol::frame::projections::HostState;
use decision_protocol::frame::{Projections, clip, reference_node_id};
use decision_runtime::decide::NodeDecision;
use decision_runtime::graph::{
    CodeDecision, Cursor, Dispatch, EventSink, Graph, GraphContext, GraphHost, HandlerError, HostAdapter, Invocation,
    RunError, StartRefusal, Step, report,
};
use decision_runtime::log::now_ms;
use decision_runtime::provider::{DecisionProvider, WithDeadline};

/// The bundled contract this host is written for.
pub const CODING_CONTRACT: &str = include_str!("../../../examples/coding-agent/DECISION.md");
/// The halts of a loop that ended because the task was judged done: the only ones a run may
/// deliver from. Every other halt ends the loop before that — a failed step, a refused or
/// unclear call, a ceiling, an error, the host's check refusing the answer twice — and its
/// report is still written, but never delivered.
const DONE_HALTS: [&str; 3] = ["task_done", "agent_done", "answered_directly"];

/// Why a run that ended before its task was done is not delivered, when nothing more precise
/// was said on the way (`None` for a delivered run and for a run waiting for an approval,
/// which says how to answer it).
fn not_done_detail(halt: &str, delivered: bool) -> Option<String> {
    if delivered || halt == AWAITING_APPROVAL {
        return None;
    }
    let (base, appended) = halt.split_once('+').unwrap_or((halt, ""));
    let why = match base {
        "max_steps" => "the step limit was reached before the task was done".to_owned(),
        "time_budget" => "the time budget was spent before the task was done".to_owned(),
        budget if budget.starts_with("budget_") => format!("a budget ran out ({budget}) before the task was done"),
        "denied" => "a call the task needed was denied, so the task was not done".to_owned(),
        "tool_unclear" | "unknown_tool" => {
            "no tool could be chosen for the next step, so the task was not done".to_owned()
        }
        "input_unclear" => "no input could be chosen for the next call, so the task was not done".to_owned(),
        _ if !appended.is_empty() => String::new(),
        other => format!("the run ended `{other}` before the task was done"),
    };
    Some(match (why.is_empty(), appended.is_empty()) {
        (_, true) => why,
        (true, false) => format!("the delivery gate answered `{appended}`, not `deliver`"),
        (false, false) => format!("{why}; the delivery gate answered `{appended}`, not `deliver`"),
    })
}

/// The search hits of a `search` output: its `file:N: text` lines.
fn search_hits(output: &str) -> Vec<Hit> {
    super::focus::cited_lines(output)
        .filter_map(|l| {
            let (place, text) = l.split_once(": ")?;
            let (file, number) = place.rsplit_once(':')?;
            Some((file.to_owned(), number.parse().ok()?, text.to_owned()))
        })
        .collect()
}

/// The default step limit.
pub const DEFAULT_MAX_STEPS: u64 = 12;
/// How long past the time budget a model request may still run: requests that start before
/// the budget is spent end by `budget + MODEL_GRACE`, and requests after it (the delivery
/// gate, generation) get no more than that either. So a slow or stalled model server cannot
/// keep a run past its budget plus this grace (and the host's own work).
pub const MODEL_GRACE: Duration = Duration::from_secs(1);

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The user's task, in words (untrusted: it reaches the model and the tools).
    pub task: String,
    /// The work directory: every tool is confined to it, and it must exist.
    pub workdir: PathBuf,
    /// The step limit; `is_done` halts `max_steps` when it is reached (the answer is still
    /// generated and gated).
    pub max_steps: u64,
    /// A wall-clock budget for the run, measured from the start of [`run_task`] (a resumed
    /// run gets its own clock). It is checked only at a step boundary — when `is_done` would
    /// start another step — so a step that has begun runs to its end and no decision is half
    /// recorded; the first step always runs. When the budget is spent the loop halts with
    /// `time_budget` (after `max_steps`, which is checked first) and, as with `max_steps`, the
    /// answer is still generated and put to the delivery gate. Every model request — the
    /// decision provider's and the generator's, retries included — must end by the budget
    /// plus [`MODEL_GRACE`]: past that nothing is sent, and a request that is not allowed
    /// fails closed (a decision escalates, a generation fails). The reference names this halt
    /// `budget_wall:<n>ms` and skips generation; this host writes an honest report instead.
    /// `None`: no limit.
    pub time_budget: Option<Duration>,
    /// Whether `write_file` and `append_file` are offered and may run (the `canWrite` cell);
    /// `move_file` needs this and `allow_delete` both.
    pub allow_write: bool,
    /// Whether `delete_file` is offered and may run (the `canDelete` cell).
    pub allow_delete: bool,
    /// Earlier turns of the conversation, if any.
    pub earlier: Option<String>,
    /// Where `auto_audit` appends its records.
    pub audit_path: PathBuf,
    /// A label for the contract in `run:start` (e.g. its path).
    pub contract_label: String,
    /// Deliverable contracts for the tools' outcomes, checked before the bundled ones (the
    /// contracts of `examples/coding-agent/outcomes.json`); `None`: the bundled ones only.
    pub outcome_contracts: Option<Arc<ContractSet>>,
}

impl RunConfig {
    /// A run of `task` in `workdir`, auditing to `audit_path`, with the defaults `decision
    /// run` uses: [`DEFAULT_MAX_STEPS`], no time budget, no writes or deletes, no earlier
    /// turns, the bundled contract, the bundled outcome contracts only.
    pub fn new(task: impl Into<String>, workdir: impl Into<PathBuf>, audit_path: impl Into<PathBuf>) -> Self {
        RunConfig {
            task: task.into(),
            workdir: workdir.into(),
            max_steps: DEFAULT_MAX_STEPS,
            time_budget: None,
            allow_write: false,
            allow_delete: false,
            earlier: None,
            audit_path: audit_path.into(),
            contract_label: "DECISION.md".into(),
            outcome_contracts: None,
        }
    }
}

/// Who the host works with.
pub struct Collaborators {
    /// Answers the contract's questions at every decision node.
    pub provider: Arc<dyn DecisionProvider>,
    /// Writes the answer (and a file's content, when it can).
    pub generator: Box<dyn Generator>,
    /// Authorises what the `grade_risk` gate sends to a person.
    pub human: Box<dyn Human>,
    /// Receives every event of the run (normally the session log).
    pub sink: Box<dyn EventSink>,
}

/// Where a resumed run picks up (runtime.md §4.7).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResumeState {
    /// The `history` cell: one `{step, tool, input, result}` record per finished step.
    pub history: Vec<Value>,
    /// The `files` cell: the paths the listings found.
    pub files: Vec<String>,
    /// The `readFiles` cell: the paths `read_file` read.
    pub read_files: Vec<String>,
    /// The step to run next (an in-flight step runs again).
    pub next_step: u64,
}

/// The run's state: the reference cells plus what the handlers need. Host authors meet it
/// only as the type parameter of the [`GraphHost`] that [`start_host`] returns; it is built
/// by [`run_task`].
pub struct CodingRun {
    cells: HostState,
    tools: FileTools,
    /// The policy of `grade_risk`, for the code floor under it.
    gate_policy: Option<CompiledPolicy>,
    max_steps: u64,
    /// When the time budget is spent (`None`: never).
    deadline: Option<Instant>,
    /// When model requests must end: the budget plus [`MODEL_GRACE`] (`None`: no budget).
    model_deadline: Option<Instant>,
    halt: String,
    revisions: u8,
    human: Box<dyn Human>,
    generator: Box<dyn Generator>,
    instructions: String,
    audit: AuditLog,
    model_calls: u64,
    model_ms: u64,
    audits: u64,
    last_step: u64,
    tool_us: u64,
    generate_us: u64,
    contracts: ToolContracts,
    /// A `step_ok` decision code has made (a tool outcome broke its contract), taken once.
    step_decided: Option<CodeDecision>,
    contract_violations: u64,
    /// The search hits of this run, which rank the files.
    hits: Vec<Hit>,
    /// What happened, in words, when the run halted on something other than success: a
    /// fail-closed decision's reason, a refused write, a missing permission.
    halt_detail: Option<String>,
    allow_write: bool,
    allow_delete: bool,
    /// This run's index in its log (names pending approvals).
    run_index: u64,
    /// Why the host's check refused the latest draft ([`super::gate`]), if it did.
    refusal: Option<super::gate::Refusal>,
}

impl GraphContext for CodingRun {
    fn cells(&self) -> &HostState {
        &self.cells
    }

    fn code_decision(&mut self, invocation: &Invocation) -> Option<CodeDecision> {
        match invocation.node.as_str() {
            "step_ok" => self.step_decided.take(),
            "can_deliver" => self.check_draft(),
            _ => None,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Why the run stopped (`task_done`, `max_steps`, `time_budget`, `denied`,
    /// `awaiting_approval`, `error`, …), as `run:end` records it.
    pub halt: String,
    /// The last step that ran.
    pub steps: u64,
    /// The last draft (empty when none was generated).
    pub answer: String,
    /// Whether the delivery gate let the answer out and the halt counts as done.
    pub delivered: bool,
    /// Decisions the provider's answers were asked for.
    pub decisions: u64,
    /// Requests sent to the provider (one request may hold several decisions).
    pub requests: u64,
    /// Time spent in those requests, in milliseconds.
    pub decision_ms: u64,
    /// Generator calls.
    pub model_calls: u64,
    /// Time spent in them, in milliseconds.
    pub model_ms: u64,
    /// Records `auto_audit` appended to the audit file.
    pub audits: u64,
    /// Graph transitions taken (0 when the run stopped with an error).
    pub transitions: u64,
    /// Wall-clock time of the whole run, in milliseconds.
    pub wall_ms: u64,
    /// Time spent inside tools, in microseconds.
    pub tool_us: u64,
    /// Time spent generating, in microseconds.
    pub generate_us: u64,
    /// Decisions code made instead of the model (a tool outcome that broke its contract).
    pub code_decisions: u64,
    /// Tool outcomes that broke their deliverable contract.
    pub contract_violations: u64,
    /// The session log's head after its seal (`None` without a session log).
    pub head: Option<decision_runtime::log::LogHead>,
    /// What happened, in words, when the run did not end in success (a fail-closed
    /// decision's reason and where it was taken, a refused write, a missing permission).
    pub halt_detail: Option<String>,
}

/// Why a run could not start or stopped early. A halt (denied, step limit, …) is not an
/// error: it is a [`RunSummary`].
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HostError {
    /// The contract does not fit the host's registrations or graph; nothing ran.
    #[error(transparent)]
    Refused(#[from] StartRefusal),
    /// The work directory could not be opened (missing, not a directory, no permission).
    #[error("work directory {path}: {source}")]
    Workdir {
        /// The directory as configured.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The graph could not go on (a handler failed, an outcome no transition consumes).
    #[error("the run stopped: {0}")]
    Run(#[from] RunError),
    /// The event sink (the session log) refused an event.
    #[error(transparent)]
    Sink(#[from] decision_runtime::graph::SinkError),
    /// The contracts bundled with this host are broken (a build defect, never the user's).
    #[error("the bundled outcome contracts do not load: {0}")]
    OutcomeContracts(#[from] LintErrors),
}

/// The adapter: the reference cells, the 14 projections (risk baselines from the tool
/// table), `toolsFor` and `fileOptions`, the six positions, a handler for each of the 14
/// actions, the `writeEvidence` evidence provider, and the sink.
pub(crate) fn coding_adapter(sink: Option<Box<dyn EventSink>>) -> HostAdapter<CodingRun> {
    let risks = TOOLS.iter().map(|t| (t.name.to_owned(), t.base_risk)).collect();
    let mut adapter = HostAdapter::new("crates/coding-host/src/run.rs")
        .projections(Projections::standard_with_tools(risks))
        .candidates(Box::new(ToolsFor))
        .candidates(Box::new(FileOptions))
        .evidence("writeEvidence", |run: &CodingRun| Value::from(run.evidence_lines()))
        .require_coverage();
    for cell in REFERENCE_CELLS {
        adapter = adapter.state_cell(cell.name, cell.ty, cell.untrusted);
    }
    for (position, actions) in POSITIONS {
        adapter = adapter.position(position, actions);
    }
    for action in ACTIONS {
        adapter = adapter.action(action, |run: &mut CodingRun, d: &mut Dispatch<'_>| run.on_action(d));
    }
    for (block, questions) in REFERENCE_QUESTIONS {
        adapter = adapter.reads_questions(block, questions);
    }
    for block in REFERENCE_BLOCKS {
        if let Some(node) = reference_node_id(block) {
            adapter = adapter.node_id(block, node);
        }
    }
    match sink {
        Some(sink) => adapter.event_sink(sink),
        None => adapter,
    }
}

/// The loop as a graph.
pub(crate) fn coding_graph() -> Graph<CodingRun> {
    Graph::new("step")
        .decide("step", &["needs_tool", "pick_tool"])
        .starts_step("step")
        .edge("step", "call", "grade_risk")
        .edge("step", "read", "pick_input")
        .edge("step", "answer", "generate")
        .edge("step", "tool_unclear", "generate")
        .edge("step", "unknown_tool", "generate")
        .edge("step", "agent_done", "generate")
        .edge("step", "input_unclear", "generate")
        .decide("pick_input", &["pick_input"])
        .edge("pick_input", "use", "grade_risk")
        .edge("pick_input", "input_unclear", "generate")
        .decide("grade_risk", &["grade_risk"])
        .edge("grade_risk", "ran", "step_ok")
        .edge("grade_risk", "denied", "generate")
        .edge("grade_risk", "time_budget", "generate")
        .edge("grade_risk", AWAITING_APPROVAL, "end")
        .decide("step_ok", &["step_ok"])
        .edge("step_ok", "continue", "is_done")
        .edge("step_ok", "stop", "generate")
        .edge("step_ok", "escalate", "generate")
        .decide("is_done", &["is_done"])
        .edge("is_done", "finish", "generate")
        .edge("is_done", "next", "step")
        .edge("is_done", "max_steps", "generate")
        .edge("is_done", "time_budget", "generate")
        .phase("generate", |run: &mut CodingRun, s: &mut Step<'_>| run.generate_phase(s))
        .edge("generate", "drafted", "can_deliver")
        .decide("can_deliver", &["can_deliver"])
        .evidence("can_deliver", "writeEvidence")
        .edge("can_deliver", "deliver", "end")
        .edge("can_deliver", "revise", "can_deliver")
        .edge("can_deliver", "revise_exhausted", "end")
        .edge("can_deliver", "escalate", "end")
        .terminal("end")
}

/// The host's capability report description.
pub fn coding_description() -> report::HostDescription {
    let mut d = report::describe(&coding_adapter(None), &coding_graph());
    d.description =
        "The reference coding host: the seven-node tool loop over sandboxed file tools, as a Level-2 graph.".into();
    d.conformance_command = "decision run --task TEXT --workdir DIR --provider heuristic".into();
    d.negative_fixtures = "crates/coding-host/tests/graph_triage.rs".into();
    d.report_check = "decision adapter-report --check FILE".into();
    d.known_limitations = vec![
        "Tool names are fixed: only their implementations could be swapped.".into(),
        "Budgets other than the step limit and wall time (model calls, tokens) are not enforced; wall time is checked between steps and before each tool call.".into(),
        "Tools have input and output caps and read at most 16,000 bytes of a file, but no timeouts: a call that has started runs to its end.".into(),
        "State-cell names are not listed here; the report is checked against the code with decision adapter-report --check.".into(),
    ];
    d
}

/// Start the host: the contract is checked against the registrations and the graph before
/// anything can be dispatched.
pub fn start_host(
    contract: &[u8],
    provider: Arc<dyn DecisionProvider>,
    sink: Box<dyn EventSink>,
) -> Result<GraphHost<CodingRun>, StartRefusal> {
    GraphHost::start(coding_adapter(Some(sink)), coding_graph(), contract, provider)
}

/// Run one task to its end: `run:start`, the graph, `run:end`.
pub fn run_task(
    contract: &[u8],
    config: &RunConfig,
    with: Collaborators,
    resume: Option<&ResumeState>,
) -> Result<RunSummary, HostError> {
    run_task_at(contract, config, with, resume, None)
}

/// Continue a run that halted awaiting `approval` (answered): the call (with the approved
/// input when it was modified) is put through the risk gate again at its step, and `with`'s
/// human — normally [`super::approvals::RecordedAnswers`] — answers the gate.
pub fn run_task_approved(
    contract: &[u8],
    config: &RunConfig,
    with: Collaborators,
    resume: &ResumeState,
    approval: &Approval,
) -> Result<RunSummary, HostError> {
    run_task_at(contract, config, with, Some(resume), Some(approval))
}

fn run_task_at(
    contract: &[u8],
    config: &RunConfig,
    with: Collaborators,
    resume: Option<&ResumeState>,
    approval: Option<&Approval>,
) -> Result<RunSummary, HostError> {
    let started = Instant::now();
    let tools = FileTools::new(&config.workdir)
        .map_err(|source| HostError::Workdir { path: config.workdir.clone(), source })?;
    let contracts = ToolContracts::new(config.outcome_contracts.clone())?;
    // A budget too large to add to the clock is no limit at all.
    let deadline = config.time_budget.and_then(|budget| started.checked_add(budget));
    let model_deadline = deadline.and_then(|deadline| deadline.checked_add(MODEL_GRACE));
    let provider: Arc<dyn DecisionProvider> = match model_deadline {
        Some(at) => Arc::new(WithDeadline::new(with.provider, at)),
        None => with.provider,
    };
    let mut host = start_host(contract, provider, with.sink)?;
    let instructions = host.contract().generator.clone().unwrap_or_default();
    let mut run = CodingRun::new(config, tools, with.human, with.generator, instructions, contracts);
    run.gate_policy = host.policy("grade_risk").cloned();
    run.deadline = deadline;
    run.model_deadline = model_deadline;
    let mut cursor = Cursor { node: "step".into(), step: 0, state_version: 0 };
    if let Some(resume) = resume {
        run.cells.insert("history".into(), Value::from(resume.history.clone()));
        run.cells.insert("files".into(), Value::from(resume.files.clone()));
        run.cells.insert("readFiles".into(), Value::from(resume.read_files.clone()));
        if let Some(last) = resume.history.last() {
            if let Some(tool) = last.get("tool").and_then(Value::as_str) {
                run.cells.insert("lastTool".into(), json!(tool));
            }
            if let Some(result) = last.get("result").and_then(Value::as_str) {
                run.cells.insert("lastResult".into(), json!(result));
            }
        }
        cursor.step = resume.next_step.saturating_sub(1);
    }
    if let Some(approval) = approval {
        // The gated call is pending again at its step; the risk gate decides it anew.
        run.push_pending(approval.step, &approval.tool, approval.effective_input());
        run.cells.insert("lastTool".into(), json!(approval.tool));
        run.run_index = approval.run + 1;
        cursor = Cursor { node: "grade_risk".into(), step: approval.step, state_version: 0 };
    }
    let start = RunStart {
        task: &config.task,
        cwd: run.tools.root().display().to_string(),
        at: now_ms(),
        max_steps: config.max_steps,
        time_budget_seconds: config.time_budget.map(|budget| budget.as_secs_f64()),
        allow_write: config.allow_write,
        allow_delete: config.allow_delete,
        provider: host.provider_name(),
        contract: &config.contract_label,
        resumed_at_step: resume.map(|resume| approval.map_or(resume.next_step, |a| a.step)),
        resumed_approval: approval.map(|approval| approval.id.as_str()),
    };
    host.emit("run:start", members(&start))?;
    let outcome = host.run_from(&mut run, cursor);
    let (stats, transitions, error) = match &outcome {
        Ok(o) => (o.stats, o.stats.transitions, None),
        Err(e) => (Default::default(), 0, Some(e.to_string())),
    };
    if error.is_some() {
        run.halt = "error".into();
    }
    let delivered = outcome.is_ok() && run.halt_is_delivered();
    let answer = run.cells.get("draft").and_then(Value::as_str).unwrap_or_default().to_owned();
    let summary = RunSummary {
        halt: run.halt.clone(),
        steps: run.last_step,
        answer: answer.clone(),
        delivered,
        decisions: stats.decisions,
        requests: stats.requests,
        decision_ms: stats.decision_ms,
        model_calls: run.model_calls,
        model_ms: run.model_ms,
        audits: run.audits,
        transitions,
        wall_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        tool_us: run.tool_us,
        generate_us: run.generate_us,
        code_decisions: stats.code_decisions,
        contract_violations: run.contract_violations,
        head: None,
        halt_detail: run
            .halt_detail
            .clone()
            .or_else(|| error.clone())
            .or_else(|| not_done_detail(&run.halt, delivered)),
    };
    let end = RunEnd {
        halt: &summary.halt,
        steps: summary.steps,
        answer: &answer,
        stats: RunStats {
            decisions: summary.decisions,
            requests: summary.requests,
            decision_ms: summary.decision_ms,
            model_calls: summary.model_calls,
            model_ms: summary.model_ms,
            audits: summary.audits,
            transitions: summary.transitions,
            code_decisions: summary.code_decisions,
            contract_violations: summary.contract_violations,
        },
        error: error.as_deref(),
        halt_detail: if error.is_some() { None } else { summary.halt_detail.as_deref() },
    };
    host.emit("run:end", members(&end))?;
    // The run's last lines, and the seal that says it finished, are in the file before its
    // answer is handed over.
    let head = host.seal()?;
    outcome?;
    Ok(RunSummary { head, ..summary })
}

impl CodingRun {
    fn new(
        config: &RunConfig,
        tools: FileTools,
        human: Box<dyn Human>,
        generator: Box<dyn Generator>,
        instructions: String,
        contracts: ToolContracts,
    ) -> Self {
        let mut cells = Map::new();
        cells.insert("task".into(), json!(config.task));
        cells.insert("cwd".into(), json!(tools.root().display().to_string()));
        cells.insert("files".into(), json!([]));
        cells.insert("readFiles".into(), json!([]));
        cells.insert("history".into(), json!([]));
        cells.insert("canWrite".into(), json!(config.allow_write));
        cells.insert("canDelete".into(), json!(config.allow_delete));
        if let Some(earlier) = &config.earlier {
            cells.insert("earlier".into(), json!(earlier));
        }
        CodingRun {
            cells,
            tools,
            gate_policy: None,
            max_steps: config.max_steps,
            deadline: None,
            model_deadline: None,
            halt: String::new(),
            revisions: 0,
            human,
            generator,
            instructions,
            audit: AuditLog::new(&config.audit_path),
            model_calls: 0,
            model_ms: 0,
            audits: 0,
            last_step: 0,
            tool_us: 0,
            generate_us: 0,
            contracts,
            step_decided: None,
            contract_violations: 0,
            hits: Vec::new(),
            halt_detail: None,
            allow_write: config.allow_write,
            allow_delete: config.allow_delete,
            run_index: 0,
            refusal: None,
        }
    }

    /// The host's check of the draft before the delivery gate's model is asked: a draft the
    /// evidence does not support is sent back by code ([`super::gate`]).
    fn check_draft(&mut self) -> Option<CodeDecision> {
        let draft = self.cells.get("draft").and_then(Value::as_str).unwrap_or_default().to_owned();
        let task = TaskReading::kept(&self.task());
        match super::gate::check_draft(&task, &draft, self.history(), self.tools.workdir()) {
            Ok(()) => {
                self.refusal = None;
                None
            }
            Err(refusal) => {
                let reason = format!("evidence check: {} (decided by code; the model was not asked)", refusal.reason);
                let evidence = json!({"check": refusal.reason, "halt": refusal.halt});
                self.refusal = Some(refusal);
                Some(CodeDecision { action: "revise".into(), reason, evidence })
            }
        }
    }

    /// A run is delivered when its loop ended because the task was done, the gate let the
    /// answer through (no `+action` appended) and, for a task that asks for a write, move or
    /// delete, that action happened.
    fn halt_is_delivered(&self) -> bool {
        DONE_HALTS.contains(&self.halt.as_str()) && self.act_pending().is_none()
    }

    /// For a task that asks for an action, the action that did not happen yet.
    fn act_pending(&self) -> Option<&'static str> {
        let t = TaskReading::kept(&self.task());
        let succeeded = |tool: &str| {
            self.history().iter().any(|h| {
                h.get("tool").and_then(Value::as_str) == Some(tool)
                    && h.get("result")
                        .and_then(Value::as_str)
                        .is_some_and(|r| !r.is_empty() && !r.starts_with(TOOL_ERROR_PREFIX))
            })
        };
        [
            (t.write || t.edit, "write_file"),
            (t.append, "append_file"),
            (t.delete, "delete_file"),
            (t.moves, "move_file"),
        ]
        .into_iter()
        .find(|(wanted, tool)| *wanted && !succeeded(tool))
        .map(|(_, tool)| tool)
    }

    /// Before the answer is written: a task whose action did not happen says why.
    fn explain_pending_act(&mut self) {
        let Some(tool) = self.act_pending() else { return };
        let task = TaskReading::kept(&self.task());
        if task.edit && !task.write && !self.generator.writes_content() {
            self.halt = "write_refused".into();
            self.halt_detail = Some(
                "nothing was changed: the task asks for an edit of existing code, and without a generator \
                 (--generator-url) the host writes only content the task gives word for word"
                    .into(),
            );
            return;
        }
        let missing = match tool {
            "write_file" | "append_file" if !self.allow_write => Some("--allow-write"),
            "delete_file" if !self.allow_delete => Some("--allow-delete"),
            "move_file" if !(self.allow_write && self.allow_delete) => Some("--allow-write and --allow-delete"),
            _ => None,
        };
        if let Some(flags) = missing {
            let verb = match tool {
                "delete_file" => "deleting",
                "move_file" => "moving",
                _ => "writing",
            };
            self.halt = "not_permitted".into();
            self.halt_detail = Some(format!(
                "{verb} files is not permitted in this run, so nothing was changed; run again with {flags} to allow it"
            ));
        } else if self.halt_detail.is_none() {
            self.halt_detail = Some(format!("the task asks for {tool}, and it did not happen: nothing was changed"));
        }
    }

    fn task(&self) -> String {
        self.cells.get("task").and_then(Value::as_str).unwrap_or_default().to_owned()
    }

    fn history(&self) -> &[Value] {
        self.cells.get("history").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }

    /// The history, for in-place changes (created when missing).
    fn history_mut(&mut self) -> Option<&mut Vec<Value>> {
        if !matches!(self.cells.get("history"), Some(Value::Array(_))) {
            self.cells.insert("history".into(), Value::Array(Vec::new()));
        }
        match self.cells.get_mut("history") {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        }
    }

    fn list(&self, cell: &str) -> Vec<String> {
        self.cells
            .get(cell)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Each step as `tool(input) → result`; a write keeps 600 characters of its input.
    pub(crate) fn evidence_lines(&self) -> Vec<String> {
        self.history()
            .iter()
            .map(|h| {
                let tool = h.get("tool").and_then(Value::as_str).unwrap_or_default();
                let input = h.get("input").and_then(Value::as_str).unwrap_or_default();
                let result = h.get("result").and_then(Value::as_str).unwrap_or_default();
                format!("{tool}({}) → {result}", clip(input, if tool == "write_file" { 600 } else { 120 }))
            })
            .collect()
    }

    /// Halt with `halt` on the step's `input_unclear` path: the call's input (its content, its
    /// target) is not one the host will run.
    fn refuse(&mut self, halt: &str) -> String {
        self.halt = halt.to_owned();
        "input_unclear".into()
    }

    fn budget_spent(&self) -> bool {
        self.deadline.is_some_and(|deadline| Instant::now() >= deadline)
    }

    /// Why a run whose step failed is not delivered: the call and the start of its result.
    fn failed_step_detail(&self, step: u64) -> String {
        let last = self.history().iter().rev().find(|h| h.get("step").and_then(Value::as_u64) == Some(step));
        let text = |h: &Value, key: &str| h.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let Some(call) = last else {
            return format!("step {step} failed, and the loop ended before the task was done");
        };
        let result = text(call, "result");
        let first_line = result.lines().next().unwrap_or_default();
        let shown: String = first_line.chars().take(200).collect();
        let cut = if shown.len() < result.len() { " …" } else { "" };
        format!(
            "step {step} failed — {}({}) → {shown}{cut} — and the loop ended before the task was done",
            text(call, "tool"),
            text(call, "input").lines().next().unwrap_or_default()
        )
    }

    fn set_halt(&mut self, halt: &str) -> String {
        self.halt = halt.to_owned();
        halt.to_owned()
    }

    fn push_pending(&mut self, step: u64, tool: &str, input: &str) {
        if let Some(history) = self.history_mut() {
            history.push(json!({"step": step, "tool": tool, "input": input, "result": ""}));
        }
    }

    /// What an action means at the node that decided it.
    fn on_action(&mut self, d: &mut Dispatch<'_>) -> Result<String, HandlerError> {
        let node = d.invocation.node.clone();
        self.last_step = self.last_step.max(d.invocation.step);
        // A fail-closed decision says on screen what happened and where, not only in the log.
        // The first one is the cause; later ones follow from it.
        if self.halt_detail.is_none()
            && let Some(failed) = d.decisions.iter().find(|x| !x.valid || x.escalate)
        {
            self.halt_detail = Some(format!(
                "`{}` at step {} fell back to `{}`: {}",
                failed.id, failed.step, failed.action, failed.reason
            ));
        }
        Ok(match (node.as_str(), d.action) {
            ("step", "answer") => {
                self.halt = "answered_directly".into();
                "answer".into()
            }
            // The need was not `answer` (an escalation included): the pick decides (§6.3).
            ("step", _) => self.choose_tool(d)?,
            ("pick_input", "use") => {
                let file = choice_of(d, "file").unwrap_or_default();
                self.push_pending(d.invocation.step, "read_file", &file);
                "use".into()
            }
            ("pick_input", _) => self.set_halt("input_unclear"),
            // A spent time budget: no call starts, nobody is asked.
            ("grade_risk", _) if self.budget_spent() => {
                self.withdraw_pending();
                self.set_halt("time_budget")
            }
            ("grade_risk", decided) => {
                // The code floor: the tool's baseline and whether it changes files, whatever
                // the model answered.
                let floor = self.gate_floor(d, decided)?;
                match floor.as_ref().map_or(decided, |f| f.action.as_str()) {
                    "auto" => self.run_tool(d)?,
                    "auto_audit" => {
                        self.write_audit(d, floor.as_ref())?;
                        self.run_tool(d)?
                    }
                    // ask_human: a person decides, or the call waits for an approval.
                    "ask_human" => self.human_gate(d, floor.as_ref())?,
                    // escalate (a backend outage included): a person decides; with nobody to
                    // ask, the call is denied.
                    _ => self.authorize(d, floor.as_ref())?,
                }
            }
            ("step_ok", "continue") => "continue".into(),
            ("step_ok", action) => {
                self.halt = "step_failed".into();
                if self.halt_detail.is_none() {
                    self.halt_detail = Some(self.failed_step_detail(d.invocation.step));
                }
                action.to_owned()
            }
            ("is_done", "finish") => {
                self.halt = "task_done".into();
                "finish".into()
            }
            // keep_going, and escalate: the loop goes on while steps remain.
            ("is_done", _) if d.invocation.step >= self.max_steps => self.set_halt("max_steps"),
            // The step boundary: the next step starts only while the time budget lasts.
            ("is_done", _) if self.budget_spent() => self.set_halt("time_budget"),
            ("is_done", _) => "next".into(),
            ("can_deliver", "deliver") => "deliver".into(),
            ("can_deliver", "revise") => {
                let allowed = action_semantics("revise").map_or(0, |s| s.retries);
                if self.revisions < allowed {
                    self.revisions += 1;
                    let reason = d.decisions.first().map(|x| x.reason.clone()).unwrap_or_default();
                    let step = d.invocation.step + 1 + u64::from(self.revisions);
                    self.generate(step, Some(&reason), &mut *d.sink)?;
                    "revise".into()
                } else {
                    match self.refusal.clone() {
                        // The host's check refused the revision of a loop that ended done:
                        // the halt says why. A loop that ended before (a ceiling, a failed
                        // step) keeps that halt, which is the first reason.
                        Some(refusal) if DONE_HALTS.contains(&self.halt.as_str()) => {
                            self.halt = refusal.halt.into();
                            self.halt_detail.get_or_insert(refusal.reason);
                        }
                        _ => self.halt = format!("{}+revise", self.halt),
                    }
                    "revise_exhausted".into()
                }
            }
            ("can_deliver", action) => {
                self.halt = format!("{}+{action}", self.halt);
                action.to_owned()
            }
            (other, action) => {
                return Err(HandlerError(format!("the coding host has no node `{other}` for action `{action}`")));
            }
        })
    }

    /// After `use_tool` (or an escalated need): the pick's tool, and its input.
    fn choose_tool(&mut self, d: &mut Dispatch<'_>) -> Result<String, HandlerError> {
        let pick = d.decisions.get(1).ok_or_else(|| HandlerError("the step asked no pick_tool".into()))?;
        if pick.action != "call" {
            return Ok(self.set_halt("tool_unclear"));
        }
        let chosen = match pick.answers.get("tool") {
            Some(Answer::Choice { choice, .. }) => choice.clone(),
            _ => return Ok(self.set_halt("tool_unclear")),
        };
        // The name is untrusted: only an exact entry of the tool table counts.
        let Some(spec) = tool(&chosen) else { return Ok(self.set_halt("unknown_tool")) };
        if spec.name == "done" {
            return Ok(self.set_halt("agent_done"));
        }
        self.cells.insert("lastTool".into(), json!(spec.name));
        let step = d.invocation.step;
        match spec.name {
            "list_dir" | "list_files" => {
                // A listing given a page at a time goes on with its next page.
                let page = if spec.name == "list_files" { pending_page(self.cells.get("history")) } else { None };
                let input = page.unwrap_or(".").to_owned();
                self.push_pending(step, spec.name, &input);
                Ok("call".into())
            }
            "read_file" if unread(ReadCells::all(&self.cells), 0).count == 0 => Ok(self.set_halt("input_unclear")),
            "read_file" => Ok("read".into()),
            name => {
                let files = self.list("files");
                let input = match input_from_task(name, &self.task(), &files) {
                    Some(input) => Some(input),
                    None if name == "write_file" && self.generator.writes_content() => {
                        self.generated_write_input(step, d)?
                    }
                    None if matches!(name, "write_file" | "append_file") => {
                        let target = write_target(&self.task()).unwrap_or_else(|| "the file".into());
                        // Text to append always comes from the task; new content may come from a generator.
                        let why = if name == "append_file" {
                            "the text to append is only ever taken from the task"
                        } else {
                            "no generator is configured to write it (--generator-url)"
                        };
                        self.halt_detail = Some(format!(
                            "nothing was written: the task does not give the exact content for {target} (as in \
                             \"containing the line '…'\"), and {why}"
                        ));
                        return Ok(self.refuse("write_refused"));
                    }
                    None => None,
                };
                if let Some(refusal) = input.as_deref().and_then(|i| self.refuse_write(name, i)) {
                    self.halt_detail = Some(refusal);
                    return Ok(self.refuse("write_refused"));
                }
                match input {
                    Some(input) => {
                        self.push_pending(step, name, &input);
                        Ok("call".into())
                    }
                    None => Ok(self.set_halt("input_unclear")),
                }
            }
        }
    }

    /// Why a write must not run: it would replace an existing file the task did not say to
    /// replace, or its content holds the evidence report or prompt text (never file content).
    fn refuse_write(&self, name: &str, input: &str) -> Option<String> {
        if !matches!(name, "write_file" | "append_file") {
            return None;
        }
        let (path, content) = input.split_once('\n').unwrap_or((input, ""));
        let path = path.trim();
        let dir = self.tools.workdir();
        let exists = dir.path(path).is_ok_and(|p| dir.kind(&p).is_ok());
        if name == "write_file" && exists && !TaskReading::kept(&self.task()).overwrite {
            return Some(format!(
                "nothing was written: {path} exists and the task does not say to overwrite or replace it (to add to it, ask to append)"
            ));
        }
        let instructions = self.instructions.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
        let prompt_text = [EVIDENCE_REPORT_LABEL, WRITE_INPUT_PROMPT, "Tool results, in order:"]
            .iter()
            .any(|marker| content.contains(marker))
            || (!instructions.is_empty() && content.contains(instructions));
        prompt_text.then(|| {
            format!("nothing was written: the content for {path} holds the run's own report or prompt text, which is never written into a file")
        })
    }

    /// Write content the task does not quote is written by the generator.
    fn generated_write_input(&mut self, step: u64, d: &mut Dispatch<'_>) -> Result<Option<String>, HandlerError> {
        let Some(path) = write_target(&self.task()) else { return Ok(None) };
        let task = format!("{}\n\n{WRITE_INPUT_PROMPT} `{path}` and nothing else.", self.task());
        let evidence = self.evidence_lines();
        let history = self.history().to_vec();
        let request = GenerateRequest {
            task: &task,
            instructions: &self.instructions,
            evidence: &evidence,
            history: &history,
            halt: "write_input",
            revise: None,
            deadline: self.model_deadline,
            detail: None,
        };
        // Generation is a side effect (a model call): the decision that asked for it is on disk first.
        d.commit()?;
        let generated = self.generator.generate(&request).map_err(|e| HandlerError(e.to_string()))?;
        self.count_model_call(step, "generate/write-input", &generated, &mut *d.sink)?;
        Ok(Some(format!("{path}\n{}", generated.text)))
    }

    /// The flag a tool needs that this run was not given, if any.
    fn missing_permission(&self, name: &str) -> Option<&'static str> {
        match name {
            "write_file" | "append_file" if !self.allow_write => Some("--allow-write"),
            "delete_file" if !self.allow_delete => Some("--allow-delete"),
            "move_file" if !(self.allow_write && self.allow_delete) => Some("--allow-write and --allow-delete"),
            _ => None,
        }
    }

    fn pending(&self) -> (String, String) {
        let last = self.history().last();
        let field = |k: &str| last.and_then(|h| h.get(k)).and_then(Value::as_str).unwrap_or_default().to_owned();
        (field("tool"), field("input"))
    }

    fn run_tool(&mut self, d: &mut Dispatch<'_>) -> Result<String, HandlerError> {
        let step = d.invocation.step;
        // No tool call starts once the time budget is spent (while a person decided, say).
        if self.budget_spent() {
            self.withdraw_pending();
            return Ok(self.set_halt("time_budget"));
        }
        let (name, input) = self.pending();
        d.emit("tool:call", obj(json!({"step": step, "tool": name, "input": input})))?;
        // The decision that led to this call, and the call itself, are on disk before it runs.
        d.commit()?;
        let started = Instant::now();
        // Permissions are enforced where the tool runs, not only where tools are offered: a
        // call that reaches here by any road (a resumed approval, say) is still refused.
        let result = match self.missing_permission(&name) {
            Some(flag) => {
                Err(format!("{name} is not permitted in this run ({flag} was not given); nothing was changed"))
            }
            None => self.tools.run(&name, &input),
        };
        let elapsed = started.elapsed();
        self.tool_us += u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let output = match &result {
            Ok(out) => out.clone(),
            Err(e) => cap_output(format!("{TOOL_ERROR_PREFIX}{e}")),
        };
        d.emit("tool:result", obj(json!({"step": step, "tool": name, "output": output, "ms": ms})))?;
        // A tool that changed files has its result on disk at once: were the process to stop
        // now, resume would see the call as done and not run it a second time. (Between the
        // tool's return and this write the call is still in flight; that window is all.)
        if tool(&name).is_some_and(|spec| spec.base_risk > 0) {
            d.commit()?;
        }
        let ok = result.is_ok();
        let mut result_text = self.judge_outcome(d, step, &name, result, &output)?;
        let task = TaskReading::kept(&self.task());
        let mut files = self.list("files");
        // Whether the offered files' order may change: a listing or a search does; a read
        // only when it offers the rest of a cut file. (Ranking again what was ranked, on the
        // same hits, gives the same order: a read need not pay for it.)
        let mut reorder = matches!(name.as_str(), "list_dir" | "list_files" | "search");
        if ok && matches!(name.as_str(), "list_dir" | "list_files") {
            let page = listed_files(&output);
            if name == "list_files" && split_page(&input).1 > 1 {
                // A later page of a listing adds to the files its earlier pages named.
                let known: foldhash::HashSet<String> = files.iter().cloned().collect();
                files.extend(page.into_iter().filter(|f| !known.contains(f)));
            } else {
                files = page;
            }
        } else if ok && name == "search" {
            self.hits.extend(search_hits(&output));
            if result_text == output {
                result_text = focus_search(&output);
            }
        } else if name == "read_file" {
            let target = input.trim().to_owned();
            if ok && result_text == output {
                let path = parse_range(&target).map_or(target.as_str(), |(p, _, _)| p).to_owned();
                let mut focus = focus_read(&path, &output, &task.terms);
                // A search found the definition further down than this read reached: read on to it.
                let definitions: Vec<(String, usize)> = self
                    .hits
                    .iter()
                    .filter(|(file, _, _)| *file == path)
                    .filter_map(|(_, line, text)| {
                        task.terms.iter().find(|t| defines(text, t)).map(|t| (t.clone(), *line))
                    })
                    .collect();
                if focus.read_on.is_none()
                    && let Some((next, note)) = read_on_to_definition(&path, &focus, &definitions)
                {
                    focus.text = match focus.text.split_once(']') {
                        Some((header, rest)) => format!("{header}; {note}]{rest}"),
                        None => focus.text,
                    };
                    focus.read_on = Some(next);
                }
                result_text = focus.text;
                if let Some(next) = focus.read_on {
                    // The rest of a cut file is a file still to read, offered first.
                    files.retain(|f| f != &next);
                    files.insert(0, next);
                    reorder = true;
                }
            }
            // Appended in place: the list grows with the run, and a copy every step would too.
            match self.cells.get_mut("readFiles") {
                Some(Value::Array(read)) => read.push(Value::String(target)),
                _ => {
                    self.cells.insert("readFiles".into(), json!([target]));
                }
            }
        }
        if let Some(Value::Object(last)) = self.history_mut().and_then(|h| h.last_mut()) {
            last.insert("result".into(), json!(result_text));
        }
        self.cells.insert("lastResult".into(), json!(result_text));
        if reorder {
            let (ranges, plain): (Vec<String>, Vec<String>) = files.into_iter().partition(|f| parse_range(f).is_some());
            let mut ranked = ranges;
            ranked.extend(rank(&plain, &task, &self.hits));
            self.cells.insert("files".into(), json!(ranked));
        }
        Ok("ran".into())
    }

    /// Validate the call's outcome against its deliverable contract and record it; returns the
    /// step's result text. A violation is the step's result, stated as such, and it decides
    /// `step_ok` by code.
    fn judge_outcome(
        &mut self,
        d: &mut Dispatch<'_>,
        step: u64,
        name: &str,
        result: Result<String, String>,
        output: &str,
    ) -> Result<String, HandlerError> {
        let validated = self.contracts.validate(name, tool_outcome(name, result));
        let call_id = format!("step-{step}");
        let context = EventContext { trace_id: None, call_id: Some(&call_id), at_ms: Some(now_ms()), depth: Some(0) };
        let mut event = obj(outcome_event(TOOL_ROLE, name, &validated, &context));
        event.insert("step".into(), json!(step));
        d.emit(OUTCOME_EVENT_TYPE, event)?;
        if !matches!(validated.verdict, ValidationVerdict::Violated(_)) {
            return Ok(output.to_owned());
        }
        let message = validated.outcome.tool_error().map(|e| e.message.as_str()).unwrap_or_default();
        let text = violation_result(message, output);
        self.contract_violations += 1;
        self.step_decided = Some(CodeDecision {
            action: "stop".into(),
            reason: format!("contract_violation: {message} (decided by code; the model was not asked)"),
            evidence: validated.outcome.to_json(),
        });
        Ok(text)
    }

    /// The floor under the gate's decided action, recorded when it changes the action.
    fn gate_floor(&self, d: &mut Dispatch<'_>, decided: &str) -> Result<Option<GateFloor>, HandlerError> {
        let (name, _) = self.pending();
        let Some(spec) = tool(&name) else { return Ok(None) };
        let none = NodeDecision::by_code("grade_risk", d.invocation.step, decided, "");
        let decision = d.decisions.first().unwrap_or(&none);
        let Some(floor) = floor_gate(self.gate_policy.as_ref(), spec, decision, decided) else { return Ok(None) };
        d.emit(
            FLOOR_EVENT,
            obj(json!({
                "step": d.invocation.step, "tool": name, "baseRisk": spec.base_risk, "modelRisk": floor.model_risk,
                "decided": floor.decided, "action": floor.action, "reason": floor.reason,
            })),
        )?;
        Ok(Some(floor))
    }

    fn write_audit(&mut self, d: &mut Dispatch<'_>, floor: Option<&GateFloor>) -> Result<(), HandlerError> {
        let (name, input) = self.pending();
        let decision = d.decisions.first();
        let reason = match floor {
            Some(floor) => floor.reason.clone(),
            None => decision.map(|x| x.reason.clone()).unwrap_or_default(),
        };
        let risk = match floor {
            Some(floor) => Some(floor.risk),
            None => decision.and_then(|x| match x.answers.get("risk") {
                Some(Answer::Score { score, .. }) => Some(*score),
                _ => None,
            }),
        };
        let record = AuditLog::record(d.invocation.step, now_ms(), &name, &input, &reason, risk);
        // The audit file is written only after the decision that asks for it is on disk.
        d.commit()?;
        self.audit.append(&record).map_err(|e| {
            HandlerError(format!("cannot write the audit record to {}: {e}", self.audit.path().display()))
        })?;
        self.audits += 1;
        d.emit("audit", obj(json!({"step": d.invocation.step, "record": record})))
    }

    fn authorize(&mut self, d: &mut Dispatch<'_>, floor: Option<&GateFloor>) -> Result<String, HandlerError> {
        let (name, input) = self.pending();
        let reason = match floor {
            Some(floor) => floor.reason.clone(),
            None => d.decisions.first().map(|x| x.reason.clone()).unwrap_or_default(),
        };
        // A person is asked only once the decision that asks them is on disk.
        d.commit()?;
        let approved = self.human.authorize(&name, &input, &reason);
        d.emit(
            "authorize",
            obj(json!({"step": d.invocation.step, "tool": name, "reason": reason, "approved": approved})),
        )?;
        if approved {
            return self.run_tool(d);
        }
        self.withdraw_pending();
        Ok(self.set_halt("denied"))
    }

    /// A call that will not run: the pending step is withdrawn and the last tool is the
    /// previous one again.
    fn withdraw_pending(&mut self) {
        if let Some(history) = self.history_mut() {
            history.pop();
        }
        match self.history().last().and_then(|h| h.get("tool")).cloned() {
            Some(previous) => self.cells.insert("lastTool".into(), previous),
            None => self.cells.remove("lastTool"),
        };
    }

    /// `ask_human`: the human gate approves, denies, or leaves the call pending — recorded as
    /// an `approval:pending` event, committed at once, and the run halts `awaiting_approval`.
    fn human_gate(&mut self, d: &mut Dispatch<'_>, floor: Option<&GateFloor>) -> Result<String, HandlerError> {
        let (tool, input) = self.pending();
        let decision = d.decisions.first();
        let rule = decision.map(|x| x.reason.clone()).unwrap_or_default();
        // The reason a person reads is the floor's when the code floor raised the gate.
        let reason = floor.map_or_else(|| rule.clone(), |floor| floor.reason.clone());
        let call = GatedCall {
            step: d.invocation.step,
            tool,
            input,
            rule,
            reason,
            request_digest: decision.map(|x| x.request_digest.clone()).unwrap_or_default(),
        };
        // A person is asked only once the decision that asks them is on disk.
        d.commit()?;
        let answer = self.human.gate(&call);
        let step = call.step;
        match answer {
            GateAnswer::Pending => {
                let print = fingerprint(&call.tool, &call.input);
                let id = approval_id(self.run_index, step, &print);
                let event = json!({
                    "step": step, "id": id, "requestDigest": call.request_digest, "tool": call.tool,
                    "input": call.input, "fingerprint": print, "rule": call.rule, "reason": call.reason,
                });
                d.emit(PENDING_EVENT, obj(event))?;
                // The pending approval is on disk before anything else happens.
                d.commit()?;
                Ok(self.set_halt(AWAITING_APPROVAL))
            }
            GateAnswer::Approve { approval } => {
                if let Some(id) = approval {
                    let used = json!({"step": step, "id": id, "fingerprint": call.fingerprint()});
                    d.emit(USED_EVENT, obj(used))?;
                }
                d.emit(
                    "authorize",
                    obj(json!({"step": step, "tool": call.tool, "reason": call.reason, "approved": true})),
                )?;
                self.run_tool(d)
            }
            GateAnswer::Deny { reason: why, approval } => {
                let mut event = obj(json!({"step": step, "tool": call.tool, "reason": call.reason, "approved": false}));
                if let Some(id) = approval {
                    let used = json!({"step": step, "id": id, "fingerprint": call.fingerprint()});
                    d.emit(USED_EVENT, obj(used))?;
                    event.insert("denial".into(), json!(why));
                }
                d.emit("authorize", event)?;
                self.withdraw_pending();
                Ok(self.set_halt("denied"))
            }
        }
    }

    fn generate_phase(&mut self, s: &mut Step<'_>) -> Result<String, HandlerError> {
        let step = s.invocation.step + 1;
        self.explain_pending_act();
        self.generate(step, None, &mut *s.sink)?;
        Ok("drafted".into())
    }

    fn generate(&mut self, step: u64, revise: Option<&str>, sink: &mut dyn EventSink) -> Result<(), HandlerError> {
        record(sink, "phase", obj(json!({"step": step, "kind": "generate"})))?;
        let task = self.task();
        let evidence = self.evidence_lines();
        let history = self.history().to_vec();
        let request = GenerateRequest {
            task: &task,
            instructions: &self.instructions,
            evidence: &evidence,
            history: &history,
            halt: &self.halt,
            revise,
            deadline: self.model_deadline,
            detail: self.halt_detail.as_deref(),
        };
        // What led to generation is on disk before the model is called.
        sink.commit().map_err(|e| HandlerError(e.to_string()))?;
        let generated = self.generator.generate(&request).map_err(|e| HandlerError(e.to_string()))?;
        let kind = if revise.is_some() { "generate/revise" } else { "generate" };
        self.count_model_call(step, kind, &generated, sink)?;
        self.cells.insert("draft".into(), json!(generated.text));
        Ok(())
    }

    fn count_model_call(
        &mut self,
        step: u64,
        kind: &str,
        generated: &super::generate::Generated,
        sink: &mut dyn EventSink,
    ) -> Result<(), HandlerError> {
        let ms = u64::try_from(generated.latency.as_millis()).unwrap_or(u64::MAX);
        self.generate_us += u64::try_from(generated.latency.as_micros()).unwrap_or(u64::MAX);
        self.model_calls += 1;
        self.model_ms += ms;
        record(
            sink,
            "generate",
            obj(json!({
                "step": step, "kind": format!("{kind} ({})", self.generator.name()), "latencyMs": ms,
                "inputTokens": generated.input_tokens, "outputTokens": generated.output_tokens,
            })),
        )
    }

    /// The work directory's canonical path, as opened for the run.
    pub fn workdir(&self) -> &Path {
        self.tools.root()
    }
}

/// Records an event from inside a handler or phase.
fn record(sink: &mut dyn EventSink, event_type: &str, payload: Map<String, Value>) -> Result<(), HandlerError> {
    sink.emit(event_type, payload).map_err(|e| HandlerError(e.to_string()))
}

fn choice_of(d: &Dispatch<'_>, question: &str) -> Option<String> {
    d.decisions.iter().find_map(|x| match x.answers.get(question) {
        Some(Answer::Choice { choice, .. }) => Some(choice.clone()),
        _ => None,
    })
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_loop_that_ended_undone_says_why_it_is_not_delivered() {
        assert_eq!(not_done_detail("task_done", true), None);
        assert_eq!(not_done_detail(AWAITING_APPROVAL, false), None);
        let said = |halt| not_done_detail(halt, false).unwrap_or_default();
        assert_eq!(said("max_steps"), "the step limit was reached before the task was done");
        assert_eq!(said("task_done+revise"), "the delivery gate answered `revise`, not `deliver`");
        assert!(said("max_steps+escalate").starts_with("the step limit was reached"));
        assert!(said("max_steps+escalate").ends_with("answered `escalate`, not `deliver`"));
        assert!(said("budget_wall:5ms").contains("budget_wall:5ms"));
        assert_eq!(said("denied"), "a call the task needed was denied, so the task was not done");
    }
}
