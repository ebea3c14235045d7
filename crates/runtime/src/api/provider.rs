//! `--provider` (and Python's `provider=`): which decision provider answers, written once for
//! every entrance.
//!
//! A spec is parsed from its text ([`ProviderSpec`]'s `FromStr`) and built into the boxed
//! provider with [`ProviderSpec::build`]. Adding a provider means its own file under
//! `crate::provider` (or a host crate), one variant here with its spelling in [`SPELLINGS`],
//! its arm in `parse` and in `build` (the compiler asks for it), and a parsing test: the CLI
//! and Python then both take it. `heuristic` is the coding host's: the runtime parses it and a
//! host that has it builds it ([`ProviderSpec::build`] refuses it).
//!
//! The CLI parses the text where it always did, after its other arguments are read, and not
//! through clap's `value_parser`: clap would put its own words and a usage hint around the
//! message, and `decision run` reports an unknown provider only after it has created its
//! session log. Both are part of the documented output.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use super::error::Error;
use crate::provider::{
    ApiKey, DecisionProvider, MockProvider, OpenAiMode, OpenAiProvider, ReplayProvider, RetryPolicy, Retrying,
    ScriptProvider, SystemOneProvider,
};

/// Where `openai` looks when no `--url` is given (llama.cpp's server default).
const OPENAI_DEFAULT_URL: &str = "http://127.0.0.1:8080/v1";

/// Every spelling [`ProviderSpec`] accepts, in the order an unknown provider's message lists
/// them.
pub const SPELLINGS: [&str; 6] = ["heuristic", "mock", "script:FILE", "replay:LOG", "systemone", "openai"];

/// The spellings an entrance without a host offers (`decision ask`, Python's `ask`), in the
/// order its unknown-provider message lists them: not `heuristic`, whose rules answer only
/// the coding host's questions; `replay:LOG` is taken but not listed.
pub const WITHOUT_HOST: [&str; 4] = ["mock", "script:FILE", "systemone", "openai"];

/// A provider spec for an entrance without a host: `heuristic` and anything unknown are a
/// usage error listing [`WITHOUT_HOST`].
pub fn parse_without_host(text: &str) -> Result<ProviderSpec, Error> {
    match text.parse::<ProviderSpec>() {
        Ok(ProviderSpec::Heuristic) | Err(ProviderSpecError::Unknown(_)) => {
            Err(Error::usage(format!("unknown provider `{text}`: expected {}", listed(&WITHOUT_HOST))))
        }
        Ok(spec) => Ok(spec),
        Err(e) => Err(Error::usage(e.to_string())),
    }
}

/// A decision provider as `--provider` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderSpec {
    /// `heuristic`: the reference coding host's rules (not a model; offline).
    Heuristic,
    /// `mock`: the runtime's fixed answers, for trying a contract out.
    Mock,
    /// `script:FILE`: the answers a JSON script lists, in order.
    Script(PathBuf),
    /// `replay:LOG`: the answers a session log recorded, by request; a request it did not
    /// record is an error.
    Replay(PathBuf),
    /// `systemone`: a System One endpoint (`--url`, default the official one, whose key is
    /// read from its environment variable).
    SystemOne,
    /// `openai`: an OpenAI-compatible endpoint (`--url`, default a local server), its key, if
    /// any, from its environment variable.
    OpenAi,
}

/// Why a `--provider` text names no provider.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderSpecError {
    /// Not one of [`SPELLINGS`] (an empty `script:` included).
    Unknown(String),
    /// `replay:` with no log after it.
    NoReplayLog,
}

impl fmt::Display for ProviderSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderSpecError::Unknown(text) => write!(f, "unknown provider `{text}`: expected {}", listed(&SPELLINGS)),
            ProviderSpecError::NoReplayLog => f.write_str("provider `replay:` needs a session log: replay:LOG"),
        }
    }
}

impl std::error::Error for ProviderSpecError {}

/// `a, b or c`.
pub fn listed(spellings: &[&str]) -> String {
    match spellings.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl FromStr for ProviderSpec {
    type Err = ProviderSpecError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "heuristic" => ProviderSpec::Heuristic,
            "mock" => ProviderSpec::Mock,
            "systemone" => ProviderSpec::SystemOne,
            "openai" => ProviderSpec::OpenAi,
            _ => match text.split_once(':') {
                Some(("script", file)) if !file.is_empty() => ProviderSpec::Script(file.into()),
                Some(("replay", "")) => return Err(ProviderSpecError::NoReplayLog),
                Some(("replay", log)) => ProviderSpec::Replay(log.into()),
                _ => return Err(ProviderSpecError::Unknown(text.to_owned())),
            },
        })
    }
}

/// What the endpoint providers take from the command line (`--url`, `--model`, the OpenAI
/// API); the others ignore it.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    /// `--url`: the provider's base URL; `None`: the provider's default.
    pub url: Option<&'a str>,
    /// `--model`: the model to name in requests; `None`: the provider's default (System One's
    /// pinned model, `default` for OpenAI-compatible servers).
    pub model: Option<&'a str>,
    /// Which OpenAI-compatible endpoint `openai` talks to.
    pub openai_mode: OpenAiMode,
}

/// A built provider.
pub struct Built {
    /// What the decider asks.
    pub provider: Arc<dyn DecisionProvider>,
    /// The same provider when it replays a log, so a command can report its first miss.
    pub replay: Option<Arc<ReplayProvider>>,
}

impl ProviderSpec {
    /// The boxed provider, with the default retry policy around the network ones. Fails when
    /// a script or log cannot be read, for the official System One endpoint without its key
    /// (refused before anything is sent), and for `heuristic`, which its host builds.
    pub fn build(&self, endpoint: &Endpoint<'_>) -> Result<Built, String> {
        let provider: Arc<dyn DecisionProvider> = match self {
            ProviderSpec::Heuristic => {
                return Err("the `heuristic` provider answers the coding host's questions: its host builds it".into());
            }
            ProviderSpec::Mock => Arc::new(MockProvider::default()),
            ProviderSpec::Script(file) => Arc::new(ScriptProvider::from_file(file).map_err(|e| e.to_string())?),
            ProviderSpec::Replay(log) => {
                let replay = Arc::new(ReplayProvider::from_file(log).map_err(|e| e.to_string())?);
                return Ok(Built { provider: Arc::clone(&replay) as Arc<dyn DecisionProvider>, replay: Some(replay) });
            }
            ProviderSpec::SystemOne => Arc::new(Retrying::new(system_one(endpoint)?, RetryPolicy::default())),
            ProviderSpec::OpenAi => {
                let url = endpoint.url.unwrap_or(OPENAI_DEFAULT_URL);
                let model = endpoint.model.unwrap_or("default");
                let provider = OpenAiProvider::new(url, model, endpoint.openai_mode)
                    .with_key(ApiKey::from_env(OpenAiProvider::KEY_VARIABLE));
                Arc::new(Retrying::new(provider, RetryPolicy::default()))
            }
        };
        Ok(Built { provider, replay: None })
    }
}

/// `systemone`: the official endpoint needs its key; a local one may go without.
fn system_one(endpoint: &Endpoint<'_>) -> Result<SystemOneProvider, String> {
    let url = endpoint.url.unwrap_or(SystemOneProvider::OFFICIAL_URL);
    let key = ApiKey::from_env(SystemOneProvider::KEY_VARIABLE);
    if key.is_none() && url.trim_end_matches('/') == SystemOneProvider::OFFICIAL_URL {
        return Err(format!("the official System One endpoint needs {}", SystemOneProvider::KEY_VARIABLE));
    }
    let model = endpoint.model.unwrap_or(SystemOneProvider::PINNED_MODEL);
    Ok(SystemOneProvider::new(url).with_key(key).with_default_model(Some(model.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ProviderSpec, String> {
        text.parse::<ProviderSpec>().map_err(|e| e.to_string())
    }

    #[test]
    fn every_spelling_parses() {
        assert_eq!(parse("heuristic"), Ok(ProviderSpec::Heuristic));
        assert_eq!(parse("mock"), Ok(ProviderSpec::Mock));
        assert_eq!(parse("script:answers.json"), Ok(ProviderSpec::Script("answers.json".into())));
        assert_eq!(parse("replay:run.jsonl"), Ok(ProviderSpec::Replay("run.jsonl".into())));
        assert_eq!(parse("systemone"), Ok(ProviderSpec::SystemOne));
        assert_eq!(parse("openai"), Ok(ProviderSpec::OpenAi));
        // Only the first colon separates: the rest is the path, colons and all.
        assert_eq!(parse("script:C:/a.json"), Ok(ProviderSpec::Script("C:/a.json".into())));
        assert_eq!(parse("replay:a:b"), Ok(ProviderSpec::Replay("a:b".into())));
    }

    #[test]
    fn bad_specs_say_what_is_accepted() {
        let unknown = |text: &str| {
            format!("unknown provider `{text}`: expected heuristic, mock, script:FILE, replay:LOG, systemone or openai")
        };
        for text in ["nope", "", "Mock", " mock", "mock:", "script:", "heuristic:x", "openai:gpt", "systemone "] {
            assert_eq!(parse(text), Err(unknown(text)), "{text:?}");
        }
        assert_eq!(parse("replay:"), Err("provider `replay:` needs a session log: replay:LOG".into()));
    }

    #[test]
    fn an_entrance_without_a_host_refuses_heuristic_and_lists_what_it_takes() {
        let expected = "unknown provider `heuristic`: expected mock, script:FILE, systemone or openai";
        assert_eq!(parse_without_host("heuristic").map_err(|e| e.message), Err(expected.to_owned()));
        assert!(parse_without_host("nope").is_err_and(|e| e.code == super::super::error::Code::Usage));
        assert_eq!(parse_without_host("replay:run.jsonl").ok(), Some(ProviderSpec::Replay("run.jsonl".into())));
        assert_eq!(parse_without_host("mock").ok(), Some(ProviderSpec::Mock));
    }

    #[test]
    fn lists_read_as_a_sentence() {
        assert_eq!(listed(&[]), "");
        assert_eq!(listed(&["mock"]), "mock");
        assert_eq!(listed(&["mock", "openai"]), "mock or openai");
        assert_eq!(listed(&SPELLINGS), "heuristic, mock, script:FILE, replay:LOG, systemone or openai");
    }

    #[test]
    fn building_reads_the_script_and_keeps_a_replay_for_its_misses() {
        let endpoint = Endpoint { url: None, model: None, openai_mode: OpenAiMode::Chat };
        assert!(ProviderSpec::Mock.build(&endpoint).is_ok_and(|b| b.replay.is_none()));
        assert!(ProviderSpec::Heuristic.build(&endpoint).is_err(), "its host builds it");
        let missing = ProviderSpec::Script("/nonexistent/answers.json".into()).build(&endpoint);
        assert!(missing.is_err_and(|e| e.contains("/nonexistent/answers.json")));
        assert!(ProviderSpec::Replay("/nonexistent/run.jsonl".into()).build(&endpoint).is_err());
        let local = Endpoint { url: Some("http://127.0.0.1:9/"), ..endpoint };
        assert!(ProviderSpec::SystemOne.build(&local).is_ok(), "a local System One needs no key");
    }
}
