//! `decision frame`: what the model will see for one block, before anything runs — the
//! frame artifact and the questions, with both digests.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api;
use decision::api::Error;
use decision::api::frame::FrameRequest;
use serde_json::Value;

use super::contract_input::{Format, load_contract, read_text};

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md file.
    contract: PathBuf,
    /// Host state as a JSON object: cell name → value.
    #[arg(long, value_name = "STATE.json")]
    state: PathBuf,
    /// What to frame, and for which host: the options every entrance takes.
    #[command(flatten)]
    request: FrameRequest,
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
    let block = api::find_block(&path, &contract, args.request.block()?)?;
    let state = api::frame::parse_state(&args.state.display().to_string(), &read_text(&args.state)?)?;
    api::frame::respond(&path, block, &state, &args.request)
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
