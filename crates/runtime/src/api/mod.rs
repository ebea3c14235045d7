//! The JSON documents the `decision` command prints, as library functions: text and values
//! in, [`serde_json::Value`] out. Nothing here touches the filesystem, and nothing but an
//! `ask` ([`ask::Prepared::decide`], which calls the provider it is given under a deadline)
//! the network or the clock, so every host — the CLI, a Python or a WebAssembly binding —
//! produces the same documents byte for byte from the same inputs.
//!
//! Names given to these functions (`path`, `shown`) are only used in messages and in the
//! documents; they are never opened.

pub mod approve;
pub mod ask;
pub mod check;
pub mod diagnostic;
pub mod error;
pub mod eval;
pub mod explain;
pub mod frame;
pub mod host;
pub mod outcomes;
#[cfg(feature = "http")]
pub mod provider;
pub mod replay;
pub mod what_if;

pub use crate::names::snake_case;
pub use error::{Code, Error, Kind, find_block, parse_contract};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

/// The value called `name` among `known` (name, value); otherwise why not, as every request
/// says it of a named value: "unknown {what} `{name}` (known: a, b)".
pub(crate) fn named_value<T: Copy>(what: &str, name: &str, known: &[(&str, T)]) -> Result<T, String> {
    match known.iter().find(|(known_name, _)| *known_name == name) {
        Some((_, value)) => Ok(*value),
        None => {
            let names: Vec<&str> = known.iter().map(|(known_name, _)| *known_name).collect();
            Err(format!("unknown {what} `{name}` (known: {})", names.join(", ")))
        }
    }
}

/// A command's request (its options, by the names every entrance takes) from a JSON object
/// (`null`: every option at its default): how the JavaScript binding reads its options object.
/// A name the command does not take, or a value of the wrong type, is a usage error that names
/// the command.
pub fn request<T: DeserializeOwned + Default>(command: &str, options: Value) -> Result<T, Error> {
    if options.is_null() {
        return Ok(T::default());
    }
    request_from(command, options)
}

/// A command's request from any serde source of its options (the Python binding reads a
/// method's keywords this way), refused as [`request`] refuses it.
pub fn request_from<'de, T: Deserialize<'de>, D: Deserializer<'de>>(command: &str, options: D) -> Result<T, Error> {
    T::deserialize(options).map_err(|e| Error::usage(format!("{command} options: {e}")))
}

/// The request `R` parsed from a command line (`args[0]` the command), as the CLI's flattened
/// arguments parse it: for the requests' tests.
#[cfg(all(test, feature = "cli"))]
pub(crate) fn command_line<R: clap::Args + clap::FromArgMatches>(args: &[&str]) -> Result<R, clap::Error> {
    let matches = R::augment_args(clap::Command::new("decision")).try_get_matches_from(args)?;
    R::from_arg_matches(&matches)
}

/// The engine's version (the `decision-runtime` crate's), for hosts that detect version skew.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The engine version and the schema versions it reads and writes, as one object:
/// `{"version", "contract_schemas", "record_schema"}`.
pub fn engine_info() -> Value {
    json!({
        "version": ENGINE_VERSION,
        "contract_schemas": decision_core::vocab::SCHEMA_VERSIONS,
        "record_schema": decision_core::vocab::RECORD_SCHEMA,
    })
}
