//! `decision mcp [CONTRACT] --log LOG [--provider …] [--approvals deny|queue|elicit]
//! [--approval-timeout S] [--mode enforce|shadow] [--time-budget S] (-- COMMAND ARG... |
//! --upstream URL)`: a decision gateway in front of an MCP server (docs/mcp-gateway.md),
//! spawned from a command or reached over Streamable HTTP. Serves MCP on stdio;
//! every `tools/call` is decided under the contract (the bundled one without CONTRACT) and
//! recorded in LOG, sealed when the client disconnects or the gateway is stopped.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use decision::outcomes::{ContractSet, load_contracts};
use decision::provider::{DecisionProvider, OpenAiMode};
use decision::terminal::one_line as safe;
use decision_mcp::heuristic::AnnotationHeuristic;
use decision_mcp::http::Upstream;
use decision_mcp::stdio::UpstreamServer;
use decision_mcp::{ApprovalMode, BUNDLED_CONTRACT, BUNDLED_CONTRACT_NAME, Gate, GatewayConfig, Mode};

use decision::api::provider::{Endpoint, ProviderSpec};

#[derive(Clone, Copy, clap::ValueEnum)]
enum Approvals {
    /// Ask through the client's elicitation capability when it declares it (else as `queue`).
    Elicit,
    /// Hold the call until `decision approve LOG ID` answers it, or the timeout refuses it.
    Queue,
    /// Refuse every call the contract gives to a person.
    Deny,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum RunMode {
    /// Forward, hold and refuse calls as decided.
    Enforce,
    /// Forward every call; record what enforce mode would have done.
    Shadow,
}

#[derive(clap::Args)]
pub struct Args {
    /// The gateway contract (DECISION.md with a `before-call` block); default: the bundled
    /// examples/mcp-gateway/DECISION.md.
    contract: Option<PathBuf>,
    /// The session log to create (never overwritten); with --listen, the directory each
    /// client session's log is created in.
    #[arg(long)]
    log: PathBuf,
    /// Who answers: heuristic (rules over the tool's annotations), mock, script:FILE,
    /// replay:LOG, systemone or openai.
    #[arg(long, default_value = "heuristic")]
    provider: String,
    /// The provider's base URL (systemone, openai).
    #[arg(long)]
    url: Option<String>,
    /// The model to name in requests (systemone, openai).
    #[arg(long)]
    model: Option<String>,
    /// What a call the contract gives to a person becomes: refused at once (deny), held until
    /// `decision approve LOG ID` answers it (queue), or asked at the client as well (elicit).
    #[arg(long, value_enum, default_value_t = Approvals::Deny)]
    approvals: Approvals,
    /// How long a held call waits for `decision approve`, in seconds, before it is refused.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    approval_timeout: f64,
    /// Enforce the decisions, or only record them.
    #[arg(long, value_enum, default_value_t = RunMode::Enforce)]
    mode: RunMode,
    /// How long a request may wait for the upstream server (and the provider), in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    time_budget: f64,
    /// The largest message accepted from either side, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = decision_mcp::framing::DEFAULT_MAX_MESSAGE)]
    max_message: usize,
    /// Append the log's head to this manifest once the log is sealed (docs/export.md).
    #[arg(long, value_name = "FILE")]
    heads: Option<PathBuf>,
    /// Deliverable contracts for tool results (JSON, as for `decision outcomes check`; tool
    /// `mcp`, method the tool's name): a result that breaks its contract reaches the agent as
    /// a `contract_violation` (docs/mcp-gateway.md). Every call's outcome is recorded either way.
    #[arg(long, value_name = "FILE")]
    outcome_contracts: Option<PathBuf>,
    /// Send each decision as an OpenTelemetry span to this OTLP/HTTP collector (e.g.
    /// http://127.0.0.1:4318) as calls are decided (docs/export.md).
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// The upstream MCP server at this URL, over Streamable HTTP, instead of a command
    /// (headers for it, such as Authorization, from DECISION_MCP_UPSTREAM_HEADERS:
    /// `name=value,…`).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    upstream: Option<String>,
    /// Serve MCP clients over Streamable HTTP at this loopback address (e.g. 127.0.0.1:8931,
    /// path /mcp) instead of on stdio; each client session gets its own upstream server and
    /// its own log in the --log directory. Runs until SIGINT or SIGTERM.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "otlp")]
    listen: Option<std::net::SocketAddr>,
    /// With --listen: a session whose client sent no request for this many seconds, and waits
    /// for no answer, is ended and its log sealed (the client begins again on its `404`); the
    /// seconds count from the last answer the client waited for, if that came later.
    #[arg(long, value_name = "SECONDS", requires = "listen", default_value_t = 1800.0)]
    session_idle: f64,
    /// The upstream MCP server's command and arguments.
    #[arg(last = true, required_unless_present = "upstream", value_name = "COMMAND")]
    command: Vec<OsString>,
}

fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{flag} must be a positive number of seconds, got {value}"))
}

fn provider(args: &Args) -> Result<Arc<dyn DecisionProvider>, String> {
    match args.provider.parse::<ProviderSpec>().map_err(|e| e.to_string())? {
        ProviderSpec::Heuristic => Ok(Arc::new(AnnotationHeuristic)),
        spec => {
            let endpoint =
                Endpoint { url: args.url.as_deref(), model: args.model.as_deref(), openai_mode: OpenAiMode::Chat };
            Ok(spec.build(&endpoint)?.provider)
        }
    }
}

/// The contracts at `path`, or none (every outcome is still recorded, nothing is checked).
fn outcome_contracts(path: Option<&std::path::Path>) -> Result<Arc<ContractSet>, String> {
    let text = match path {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", safe(&path.display().to_string())))?,
        None => r#"{"contracts": []}"#.to_owned(),
    };
    load_contracts(&text).map(Arc::new).map_err(|errors| {
        let shown = path.map(|p| safe(&p.display().to_string()).into_owned()).unwrap_or_default();
        errors.0.iter().map(|e| format!("{shown}:{e}")).collect::<Vec<_>>().join("\n")
    })
}

fn is_heuristic(args: &Args) -> bool {
    matches!(args.provider.parse::<ProviderSpec>(), Ok(ProviderSpec::Heuristic))
}

pub fn run(args: Args) -> ExitCode {
    let otlp = match args.otlp.as_deref().map(super::otlp::endpoint).transpose() {
        Ok(endpoint) => endpoint,
        Err(message) => return super::usage_error(&message),
    };
    let telemetry = super::otlp::follow(otlp, &args.log);
    if args.listen.is_some() {
        return listen(&args);
    }
    let served = serve(&args);
    if let Some(telemetry) = telemetry {
        telemetry.finish();
    }
    match served {
        Ok(summary) => {
            eprintln!(
                "decision mcp: {} — {} call(s): {} forwarded, {} refused, {} held for a person; log sealed at line {}: {}",
                summary.ended,
                summary.calls,
                summary.forwarded,
                summary.refused,
                summary.held,
                summary.head.seq,
                args.log.display()
            );
            match &args.heads {
                Some(manifest) => super::heads::record(manifest, &args.log, ExitCode::SUCCESS),
                None => ExitCode::SUCCESS,
            }
        }
        Err(message) => super::usage_error(&message),
    }
}

/// `--listen`: serves until a signal, then records each session's head when asked.
fn listen(args: &Args) -> ExitCode {
    let served = gateway(args).and_then(|(gate, config, upstream, name)| {
        let Some(address) = args.listen else { return Err("--listen needs an address".to_owned()) };
        let idle = seconds(args.session_idle, "--session-idle")?;
        let listen = decision_mcp::listen::Listen { address, log_dir: args.log.clone(), idle };
        decision_mcp::listen::serve(config, gate, &name, &listen, upstream).map_err(|e| e.to_string())
    });
    let sessions = match served {
        Ok(sessions) => sessions,
        Err(message) => return super::usage_error(&message),
    };
    eprintln!(
        "decision mcp: stopped — {} session(s), each log sealed in {}",
        sessions.len(),
        safe(&args.log.display().to_string())
    );
    let mut code = ExitCode::SUCCESS;
    if let Some(manifest) = &args.heads {
        for (log, _) in &sessions {
            code = super::heads::record(manifest, log, code);
        }
    }
    code
}

fn serve(args: &Args) -> Result<decision_mcp::gateway::Summary, String> {
    let (gate, config, upstream, name) = gateway(args)?;
    decision_mcp::stdio::serve(config, &gate, &name, &args.log, upstream).map_err(|e| e.to_string())
}

/// The gate, the relay's configuration, the upstream server and the contract's name, from the
/// arguments.
fn gateway(args: &Args) -> Result<(Gate, GatewayConfig, UpstreamServer, String), String> {
    let approval_timeout = seconds(args.approval_timeout, "--approval-timeout")?;
    let time_budget = seconds(args.time_budget, "--time-budget")?;
    let (name, source) = match &args.contract {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", safe(&path.display().to_string())))?;
            (path.display().to_string(), text)
        }
        None => (BUNDLED_CONTRACT_NAME.to_string(), BUNDLED_CONTRACT.to_string()),
    };
    let gate = Gate::new(&name, &source, provider(args)?, time_budget).map_err(|e| e.to_string())?;
    // The heuristic decides from a tool's definition alone: a tool its contract refuses on
    // that is refused on every call, so it is hidden from listings too.
    let gate = if is_heuristic(args) { gate.deciding_on_definition() } else { gate };
    let config = GatewayConfig {
        mode: match args.mode {
            RunMode::Enforce => Mode::Enforce,
            RunMode::Shadow => Mode::Shadow,
        },
        approvals: match args.approvals {
            Approvals::Elicit => ApprovalMode::Elicit,
            Approvals::Queue => ApprovalMode::Queue,
            Approvals::Deny => ApprovalMode::Deny,
        },
        approval_timeout,
        time_budget,
        max_message: args.max_message,
        outcome_contracts: Some(outcome_contracts(args.outcome_contracts.as_deref())?),
    };
    let upstream = match &args.upstream {
        Some(url) => {
            let headers = std::env::var_os(decision_mcp::http::HEADERS_VARIABLE)
                .map(|v| {
                    v.into_string().map_err(|_| format!("{} is not Unicode", decision_mcp::http::HEADERS_VARIABLE))
                })
                .transpose()?;
            UpstreamServer::Http(Upstream::new(url, headers.as_deref()).map_err(|e| e.to_string())?)
        }
        None => UpstreamServer::Command(args.command.clone()),
    };
    Ok((gate, config, upstream, name))
}
