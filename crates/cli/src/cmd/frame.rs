//! `decision frame`: what the model will see for one block, before anything runs — the
//! frame artifact and the questions, with both digests.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api;
use decision::api::Error;
use decision::api::frame::FrameOptions;
use decision::frame::Mode;
use serde_json::Value;

use super::contract_input::{Format, Profile, load_contract, read_text};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Marking {
    /// Wrap untrusted strings and also mark untrusted lists and counts (this implementation).
    Provenance,
    /// Exactly the reference's frames: untrusted lists travel unmarked.
    Reference,
}

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md file.
    contract: PathBuf,
    /// The block to show.
    #[arg(long, value_name = "ID")]
    block: String,
    /// Host state as a JSON object: cell name → value.
    #[arg(long, value_name = "STATE.json")]
    state: PathBuf,
    /// The host: `reference` uses the reference host's cells, projections and node ids.
    /// Without it the cells are the keys of STATE.json (trusted unless `--untrusted`).
    #[arg(long, value_enum)]
    profile: Option<Profile>,
    /// A cell that carries tool output (without `--profile`); repeatable.
    #[arg(long, value_name = "CELL")]
    untrusted: Vec<String>,
    /// How untrusted values are marked.
    #[arg(long, value_enum, default_value_t = Marking::Provenance)]
    marking: Marking,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match build(&args) {
        Ok(doc) => {
            print(&args, &doc);
            ExitCode::SUCCESS
        }
        Err(error) => super::fail(&error),
    }
}

fn build(args: &Args) -> Result<Value, Error> {
    let path = args.contract.display().to_string();
    let contract = load_contract(&args.contract)?;
    let block = api::find_block(&path, &contract, &args.block)?;
    let state = api::frame::parse_state(&args.state.display().to_string(), &read_text(&args.state)?)?;
    let options = FrameOptions {
        reference_profile: args.profile == Some(Profile::Reference),
        untrusted: args.untrusted.clone(),
        mode: match args.marking {
            Marking::Provenance => Mode::Provenance,
            Marking::Reference => Mode::Reference,
        },
    };
    api::frame::document(block, &state, &options)
}

fn print(args: &Args, doc: &Value) {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let mut out = String::new();
    if args.format == Format::Json {
        out = serde_json::to_string_pretty(doc).unwrap_or_default();
        out.push('\n');
    } else {
        // Writing into a String cannot fail.
        let _ = human(&mut out, doc);
    }
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());

    fn human(out: &mut String, doc: &Value) -> std::fmt::Result {
        let frame = &doc["frame"];
        let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
        writeln!(out, "block {} · node {}", text(&doc["block"]), text(&frame["node"]))?;
        writeln!(out, "frame digest:   {}", text(&frame["digest"]))?;
        writeln!(out, "request digest: {}", text(&doc["requestDigest"]))?;
        writeln!(out, "state:")?;
        for (key, value) in frame["state"].as_object().into_iter().flatten() {
            let shown = match value {
                Value::String(s) => s.replace('\n', " ⏎ "),
                other => other.to_string(),
            };
            writeln!(out, "  {key}: {shown}")?;
        }
        let items = |name: &str, show: &dyn Fn(&Value) -> String| {
            frame[name].as_array().map(|list| list.iter().map(show).collect::<Vec<_>>().join(", ")).unwrap_or_default()
        };
        let lines = [
            ("untrusted", items("untrusted", &|v| text(v))),
            ("truncated", items("truncated", &|v| format!("{} ({} → {})", text(&v["key"]), v["from"], v["to"]))),
            ("unfilled", items("unfilled", &|v| format!("{} (cell {})", text(&v["key"]), text(&v["from"])))),
            ("absent", items("absent", &|v| text(&v["key"]))),
            ("excluded", items("excluded", &|v| text(&v[0]))),
        ];
        for (name, list) in lines {
            if !list.is_empty() {
                writeln!(out, "{name}: {list}")?;
            }
        }
        writeln!(out, "questions:")?;
        for (id, q) in doc["questions"].as_object().into_iter().flatten() {
            writeln!(out, "  {id} ({}): {}", text(&q["type"]), text(&q["instructions"]))?;
        }
        if let Some(note) = doc.get("dynamic") {
            writeln!(out, "dynamic: {} — {}", text(&note["provider"]), text(&note["note"]))?;
        }
        Ok(())
    }
}
