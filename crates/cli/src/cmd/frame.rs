//! `decision frame`: what the model will see for one block, before anything runs — the
//! frame artifact and the questions, with both digests.

use std::path::PathBuf;
use std::process::ExitCode;

use decision_core::digest::request_digest;
use decision_core::vocab::CellType;
use decision_runtime::ask::wire_question;
use decision_runtime::frame::projections::history_problems;
use decision_runtime::frame::{Cell, FrameSpec, HostCells, Mode, Projections, compile_frame, reference_node_id};
use serde_json::{Map, Value, json};

use super::contract_input::{Format, Profile, read_source};

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
        Ok(Built::Document(doc)) => {
            print(&args, &doc);
            ExitCode::SUCCESS
        }
        Ok(Built::Failed(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
        Err(message) => super::usage_error(&message),
    }
}

enum Built {
    Document(Value),
    /// The contract cannot produce this frame (parse errors, unknown names).
    Failed(String),
}

fn build(args: &Args) -> Result<Built, String> {
    let source = read_source(&args.contract)?;
    let parsed = decision_core::syntax::parse(&source);
    let errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}:{}: {} {}", args.contract.display(), d.span.line, d.code, d.message))
        .collect();
    if !errors.is_empty() {
        return Ok(Built::Failed(format!("the contract does not parse:\n  {}", errors.join("\n  "))));
    }
    let Some(block) = parsed.contract.blocks.iter().find(|b| b.id == args.block) else {
        let known: Vec<&str> = parsed.contract.blocks.iter().map(|b| b.id.as_str()).collect();
        return Err(format!("no block `{}` in {} (blocks: {})", args.block, args.contract.display(), known.join(", ")));
    };
    let text =
        std::fs::read_to_string(&args.state).map_err(|e| format!("cannot read {}: {e}", args.state.display()))?;
    let state: Map<String, Value> = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err(format!("{}: the state must be a JSON object of cells", args.state.display())),
        Err(e) => return Err(format!("{}: not JSON: {e}", args.state.display())),
    };
    let problems = history_problems(&state);
    if !problems.is_empty() {
        return Err(format!("{}: {}", args.state.display(), problems.join("; ")));
    }
    let (cells, node) = match args.profile {
        Some(Profile::Reference) => {
            (HostCells::reference(), reference_node_id(&block.id).unwrap_or(&block.id).to_owned())
        }
        None => (cells_of_state(&state, &args.untrusted), block.id.clone()),
    };
    let projections = Projections::standard();
    let spec = match FrameSpec::from_block(&node, block, &cells, &projections) {
        Ok(spec) => spec,
        Err(e) => return Ok(Built::Failed(super::in_block(&block.id, &e))),
    };
    let mode = match args.marking {
        Marking::Provenance => Mode::Provenance,
        Marking::Reference => Mode::Reference,
    };
    let frame = compile_frame(&spec, &state, &cells, &projections, mode);
    let questions: Map<String, Value> =
        block.questions.iter().map(|q| (q.id.clone(), wire_question(q).to_json())).collect();
    let questions = Value::Object(questions);
    let request = request_digest(&frame.digest, &questions);
    let mut doc = json!({
        "block": block.id,
        "frame": frame.to_value(),
        "questions": questions,
        "requestDigest": request,
    });
    if let (Some(dynamic), Some(map)) = (&block.dynamic, doc.as_object_mut()) {
        map.insert(
            "dynamic".to_owned(),
            json!({"provider": dynamic.provider, "reads": dynamic.reads,
                   "note": "candidates are rebuilt by the host each step; the file's default set is shown"}),
        );
    }
    Ok(Built::Document(doc))
}

/// A host whose cells are the keys of a state object, typed by their values; a cell is
/// untrusted when `untrusted` names it.
pub fn cells_of_state(state: &Map<String, Value>, untrusted: &[String]) -> HostCells {
    let cells = state
        .iter()
        .map(|(name, value)| Cell {
            name: name.clone(),
            ty: match value {
                Value::Bool(_) => CellType::Bool,
                Value::Array(_) => CellType::StringList,
                _ => CellType::String,
            },
            untrusted: untrusted.contains(name),
        })
        .collect();
    HostCells::new(cells)
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
