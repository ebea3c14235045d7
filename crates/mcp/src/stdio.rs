//! The gateway on standard input and output: the client speaks on our stdin and stdout. The
//! upstream server is a child process spawned from a command line and spoken to on its stdin
//! and stdout (its stderr relayed to ours line by line, with terminal escape sequences
//! removed), or a server at a URL spoken to over Streamable HTTP ([`crate::http`]).

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::time::{Duration, Instant};

use decision::log::SealKey;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use thiserror::Error;

use crate::framing::{self, Line};
use crate::gate::Gate;
use crate::gateway::{ApprovalMode, Event, Gateway, GatewayConfig, GatewayError, Mode, Summary};
use crate::http::{HttpUpstream, Upstream};
use crate::inbox::{Inbox, inbox_dir};
use crate::session::Session;

/// Why a stdio gateway could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServeError {
    /// No upstream command was given.
    #[error("no upstream server: give its command after `--`")]
    NoCommand,
    /// The upstream server could not be started.
    #[error("cannot start the upstream server `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// What the system said.
        source: io::Error,
    },
    /// The signal handlers could not be installed.
    #[error("cannot watch for SIGINT and SIGTERM: {0}")]
    Signals(io::Error),
    /// The inbox beside the log could not be created.
    #[error("cannot create the approvals inbox {path}: {source}")]
    Inbox {
        /// The inbox directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The session log could not be created or written.
    #[error(transparent)]
    Log(#[from] decision::log::LogError),
    /// The relay loop stopped without a seal.
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    /// `--listen` names an address other machines could reach.
    #[error("--listen must be a loopback address (127.0.0.1 or [::1]), not {0}: the gateway authenticates no client")]
    NotLoopback(std::net::SocketAddr),
    /// The address could not be listened on.
    #[error("cannot listen on {address}: {why}")]
    Listen {
        /// The address.
        address: std::net::SocketAddr,
        /// What the system said.
        why: String,
    },
    /// The directory for the sessions' logs could not be created.
    #[error("cannot create the log directory {path}: {source}")]
    LogDir {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// Reads lines from `reader` into `events` until it ends, each wrapped by `wrap`.
fn pump(mut reader: impl BufRead, max: usize, events: Sender<Event>, wrap: fn(Line) -> Event, end: Event) {
    loop {
        match framing::read_line(&mut reader, max) {
            Ok(Line::End) | Err(_) => break,
            Ok(line) => {
                if events.send(wrap(line)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = events.send(end);
}

/// Ends the child: closes its input (done by the caller dropping it), gives it a moment to
/// exit on its own, then kills it.
pub(crate) fn end_child(child: &mut Child) {
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The server the gateway stands in front of.
#[derive(Clone)]
pub enum UpstreamServer {
    /// A command line, spawned as a child process and spoken to on its stdin and stdout.
    Command(Vec<OsString>),
    /// A server at a URL, spoken to over Streamable HTTP.
    Http(Upstream),
}

/// The session log and its inbox, created before anything is relayed.
pub(crate) fn open_session(config: &GatewayConfig, log: &Path) -> Result<(Session, Option<Inbox>), ServeError> {
    let seal_key = SealKey::from_env()
        .map_err(|e| ServeError::Signals(io::Error::new(io::ErrorKind::InvalidInput, format!("the seal key: {e}"))))?;
    let session = Session::create(log, seal_key)?;
    // Calls are held only in enforce mode with approvals that wait; only then is there an
    // inbox for `decision approve` to hand answers to.
    let holds = config.mode == Mode::Enforce && config.approvals != ApprovalMode::Deny;
    let inbox = match holds {
        true => Some(Inbox::create(log).map_err(|source| ServeError::Inbox { path: inbox_dir(log), source })?),
        false => None,
    };
    Ok((session, inbox))
}

/// Reads the client from stdin and watches for SIGINT and SIGTERM, both into `events`.
fn watch_client(events: &Sender<Event>, max: usize) -> Result<signal_hook::iterator::Handle, ServeError> {
    let sender = events.clone();
    std::thread::spawn(move || pump(io::stdin().lock(), max, sender, Event::Client, Event::Client(Line::End)));
    let mut signals = Signals::new([SIGINT, SIGTERM]).map_err(ServeError::Signals)?;
    let handle = signals.handle();
    let sender = events.clone();
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let _ = sender.send(Event::Stop);
        }
    });
    Ok(handle)
}

/// Serves the client on this process's stdin and stdout in front of `upstream`, deciding with
/// `gate` and recording in a new log at `log` (named `contract` in its first event). Returns
/// when the client disconnects or SIGINT/SIGTERM arrives, with the log sealed.
pub fn serve(
    config: GatewayConfig,
    gate: &Gate,
    contract: &str,
    log: &Path,
    upstream: UpstreamServer,
) -> Result<Summary, ServeError> {
    match upstream {
        UpstreamServer::Command(command) => serve_command(config, gate, contract, log, &command),
        UpstreamServer::Http(upstream) => serve_http(config, gate, contract, log, upstream),
    }
}

/// [`serve`] in front of a server at a URL.
fn serve_http(
    config: GatewayConfig,
    gate: &Gate,
    contract: &str,
    log: &Path,
    upstream: Upstream,
) -> Result<Summary, ServeError> {
    let (session, inbox) = open_session(&config, log)?;
    let (events, receiver) = mpsc::channel();
    let shown = upstream.shown().to_owned();
    let mut server = HttpUpstream::new(upstream, events.clone(), config.max_message, config.time_budget);
    let handle = watch_client(&events, config.max_message)?;
    drop(events);
    let stdout = io::stdout();
    let mut client = stdout.lock();
    let mut gateway = Gateway::new(config, gate, session, inbox, &mut client, &mut server);
    gateway.start(&shown, contract)?;
    let summary = gateway.run(&receiver);
    handle.close();
    let _ = client.flush();
    server.close();
    Ok(summary?)
}

/// Spawns the server from `command`, its output read into `events` (and its stderr relayed);
/// returns the child, its stdin and the command as shown.
pub(crate) fn spawn_child(
    command: &[OsString],
    events: &Sender<Event>,
    max: usize,
) -> Result<(Child, ChildStdin, String), ServeError> {
    let (program, args) = command.split_first().ok_or(ServeError::NoCommand)?;
    let shown = command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ServeError::Spawn { command: shown.clone(), source })?;
    let (Some(upstream_out), Some(upstream_in), Some(upstream_err)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        end_child(&mut child);
        return Err(ServeError::Spawn { command: shown, source: io::Error::other("its pipes were not opened") });
    };
    let sender = events.clone();
    std::thread::spawn(move || pump(BufReader::new(upstream_out), max, sender, Event::Upstream, Event::UpstreamEnd));
    std::thread::spawn(move || {
        for line in BufReader::new(upstream_err).lines() {
            let Ok(line) = line else { break };
            eprintln!("[upstream] {}", decision::terminal::one_line(&line));
        }
    });
    Ok((child, upstream_in, shown))
}

/// [`serve`] in front of a server started from `command`.
fn serve_command(
    config: GatewayConfig,
    gate: &Gate,
    contract: &str,
    log: &Path,
    command: &[OsString],
) -> Result<Summary, ServeError> {
    let (events, receiver) = mpsc::channel();
    let max = config.max_message;
    let (mut child, mut upstream_in, shown) = spawn_child(command, &events, max)?;
    let (session, inbox) = match open_session(&config, log) {
        Ok(opened) => opened,
        Err(e) => {
            drop(upstream_in);
            end_child(&mut child);
            return Err(e);
        }
    };
    let handle = watch_client(&events, max)?;

    let stdout = io::stdout();
    let mut client = stdout.lock();
    drop(events);
    let mut gateway = Gateway::new(config, gate, session, inbox, &mut client, &mut upstream_in);
    gateway.start(&shown, contract)?;
    let summary = gateway.run(&receiver);
    handle.close();
    let _ = client.flush();
    drop(upstream_in);
    end_child(&mut child);
    Ok(summary?)
}
