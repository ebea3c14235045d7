//! `decision frame --format json`: the frame artifact a block would send and its questions,
//! with both digests.

use super::error::{Code, Error};
use decision_core::Diagnostic;
use decision_core::check::Capabilities;
use decision_core::contract::{Block, Contract};
use decision_core::vocab::CellType;
use decision_protocol::digest::request_digest_of_text;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::host::Profile;

use decision_protocol::ask::wire_question;
use decision_protocol::frame::{
    Cell, FrameArtifact, FrameSpec, HostCells, Mode, Projections, compile_frame, reference_node_id,
};

/// What `frame` is asked, by the names every entrance takes: the command line's options
/// (`--block`, `--profile`, `--untrusted`, `--marking`), Python's keywords and the JavaScript
/// options object. The inputs — the contract and the state — each entrance reads its own way.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FrameRequest {
    /// The block to frame.
    #[cfg_attr(feature = "cli", arg(long, value_name = "ID", required = true))]
    pub block: Option<String>,
    /// The host: `reference` uses the reference host's cells, projections and node ids.
    /// Without it the cells are the keys of the state (trusted unless named untrusted).
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub profile: Option<Profile>,
    /// A cell that carries tool output (without a profile); may be given more than once.
    #[cfg_attr(feature = "cli", arg(long, value_name = "CELL"))]
    pub untrusted: Vec<String>,
    /// How untrusted values are marked.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Marking::Provenance))]
    pub marking: Marking,
}

impl FrameRequest {
    /// The block asked for; without one, a usage error.
    pub fn block(&self) -> Result<&str, Error> {
        self.block.as_deref().ok_or_else(|| Error::usage("frame: `block` is required"))
    }

    /// The host the frame is compiled for.
    pub fn options(&self) -> FrameOptions {
        FrameOptions {
            reference_profile: self.profile == Some(Profile::Reference),
            untrusted: self.untrusted.clone(),
            mode: self.marking.mode(),
        }
    }
}

/// How untrusted values are marked, as a request names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Marking {
    /// Wrap untrusted strings and also mark untrusted lists and counts (this implementation).
    #[default]
    Provenance,
    /// Exactly the reference's frames: untrusted lists travel unmarked.
    Reference,
}

impl Marking {
    /// The frame compiler's mode.
    pub fn mode(self) -> Mode {
        match self {
            Marking::Provenance => Mode::Provenance,
            Marking::Reference => Mode::Reference,
        }
    }
}

impl TryFrom<String> for Marking {
    type Error = String;

    fn try_from(name: String) -> Result<Marking, String> {
        super::named_value("marking", &name, &[("provenance", Marking::Provenance), ("reference", Marking::Reference)])
    }
}

/// The frame document of `block` (found by [`FrameRequest::block`] in the contract `path`
/// names) over `state`, for the host `request` names: what `decision frame --format json`
/// prints.
pub fn respond(path: &str, block: &Block, state: &Map<String, Value>, request: &FrameRequest) -> Result<Value, Error> {
    // A frame the host cannot compile is about this contract: name it.
    document(block, state, &request.options()).map_err(|e| if e.code == Code::Frame { e.at_path(path) } else { e })
}

/// The document `decision frame --format json` prints, member by member in that order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameDocument {
    /// The block framed.
    pub block: String,
    /// The frame artifact: node, state, digest and what was marked, cut, left unfilled or
    /// excluded.
    pub frame: Value,
    /// The questions, as the request sends them.
    pub questions: Value,
    /// The request digest.
    #[serde(rename = "requestDigest")]
    pub request_digest: String,
    /// For a `dynamic:` block, what offers its candidates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic: Option<Value>,
}

impl FrameDocument {
    /// The document as JSON, its members moved in rather than serialised again (the frame
    /// artifact is already a JSON value): the same value as `serde_json::to_value`.
    pub fn into_value(self) -> Value {
        let mut document = Map::with_capacity(5);
        document.insert("block".to_owned(), Value::String(self.block));
        document.insert("frame".to_owned(), self.frame);
        document.insert("questions".to_owned(), self.questions);
        document.insert("requestDigest".to_owned(), Value::String(self.request_digest));
        if let Some(dynamic) = self.dynamic {
            document.insert("dynamic".to_owned(), dynamic);
        }
        Value::Object(document)
    }
}

/// The host a frame is compiled for.
#[derive(Debug, Clone, Default)]
pub struct FrameOptions {
    /// The reference host's cells, projections and node ids; otherwise the cells are the
    /// state's keys (a list is a string list, a boolean a bool, anything else a string).
    pub reference_profile: bool,
    /// Cells that carry tool output (without the reference profile).
    pub untrusted: Vec<String>,
    /// How untrusted values are marked.
    pub mode: Mode,
}

/// Reads the host state (a JSON object of cells) from text; `shown` names it in messages.
pub fn parse_state(shown: &str, text: &str) -> Result<Map<String, Value>, Error> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => {
            let problems = decision_protocol::frame::projections::history_problems(&map);
            if problems.is_empty() { Ok(map) } else { Err(Error::usage(format!("{shown}: {}", problems.join("; ")))) }
        }
        Ok(_) => Err(Error::usage(format!("{shown}: the state must be a JSON object of cells"))),
        Err(e) => Err(Error::usage(format!("{shown}: not JSON: {e}"))),
    }
}

/// The frame document: `block`, `frame` (the artifact), `questions`, `requestDigest`, and
/// for a `dynamic:` block a `dynamic` note.
pub fn document(block: &Block, state: &Map<String, Value>, options: &FrameOptions) -> Result<Value, Error> {
    check_history(state)?;
    let (cells, node) = if options.reference_profile {
        (HostCells::reference(), reference_node_id(&block.id).unwrap_or(&block.id).to_owned())
    } else {
        (cells_of_state(state, &options.untrusted), block.id.clone())
    };
    Ok(PreparedFrame::new(block, node, cells, options.mode)?.document(state))
}

/// Refuses a state whose `history` is not a list of steps `{"tool", "input", "result"}`
/// ([`Code::Usage`]): every front end checks it before it frames, for every host.
pub fn check_history(state: &Map<String, Value>) -> Result<(), Error> {
    let problems = decision_protocol::frame::projections::history_problems(state);
    if problems.is_empty() { Ok(()) } else { Err(Error::usage(format!("the state: {}", problems.join("; ")))) }
}

/// A host whose cells are the keys of a state object, typed by their values; a cell is
/// untrusted when `untrusted` names it.
pub fn cells_of_state(state: &Map<String, Value>, untrusted: &[String]) -> HostCells {
    HostCells::new(state.iter().map(|(name, value)| cell(name, Some(value), untrusted)).collect())
}

/// One cell, typed by its value (a list is a string list, a boolean a bool, anything else,
/// or no value, a string).
fn cell(name: &str, value: Option<&Value>, untrusted: &[String]) -> Cell {
    Cell {
        name: name.to_owned(),
        ty: match value {
            Some(Value::Bool(_)) => CellType::Bool,
            Some(Value::Array(_)) => CellType::StringList,
            _ => CellType::String,
        },
        untrusted: untrusted.iter().any(|u| u == name),
    }
}

/// Whose state cells a block's frame reads when it is asked (`decision ask`, Python
/// `Contract.ask`) or tested (`decision test`). Every entrance offers the same three.
#[derive(Debug, Clone, Default)]
pub enum CellSource {
    /// The reference coding host's 11 cells, with their trust, and its node ids
    /// (`loop.isDone`, …).
    #[default]
    Reference,
    /// The keys of the state given, typed by their values; the node id is the block id.
    State {
        /// The cells that carry untrusted bytes.
        untrusted: Vec<String>,
    },
    /// The cells a host's capability report declares (`stateCells`), typed by the state's
    /// values; a report that declares none leaves the keys of the state. The node id is the
    /// block id, and a block that does not fit the host is refused ([`adapter_errors`]).
    Capabilities {
        /// The host's capability report.
        capabilities: Box<Capabilities>,
        /// The cells that carry untrusted bytes.
        untrusted: Vec<String>,
    },
}

impl CellSource {
    /// The host's cells for this state; `None` for the reference host (whose node ids differ).
    pub fn host_cells(&self, state: &Map<String, Value>) -> Option<HostCells> {
        match self {
            CellSource::Reference => None,
            CellSource::State { untrusted } => Some(cells_of_state(state, untrusted)),
            CellSource::Capabilities { capabilities, untrusted } => Some(match &capabilities.state_cells {
                Some(names) => HostCells::new(names.iter().map(|n| cell(n, state.get(n), untrusted)).collect()),
                None => cells_of_state(state, untrusted),
            }),
        }
    }

    /// The cells that carry untrusted bytes, as named by the caller (empty for the reference
    /// host, whose trust is its own).
    pub fn untrusted(&self) -> &[String] {
        match self {
            CellSource::Reference => &[],
            CellSource::State { untrusted } | CellSource::Capabilities { untrusted, .. } => untrusted,
        }
    }
}

/// The adapter layer's errors about one block, or about the whole file, for a host with
/// these capabilities: every one of them, where a check report keeps only the first ones of
/// the whole file and this block's could be past them. Empty: the block fits the host.
pub fn adapter_errors(contract: &Contract, block: &Block, capabilities: &Capabilities) -> Vec<Diagnostic> {
    errors_of(&decision_core::check::adapter(contract, capabilities), block).cloned().collect()
}

/// Refuses a block that does not fit a host with these capabilities: its adapter errors
/// ([`adapter_errors`]) as one refusal with the first one's code and location. `path` names
/// the contract and `host` the host (`the host of caps.json`), both in the message only.
pub fn refuse_misfit(
    path: &str,
    contract: &Contract,
    block: &Block,
    capabilities: &Capabilities,
    host: &str,
) -> Result<(), Error> {
    let errors = adapter_errors(contract, block, capabilities);
    if errors.is_empty() {
        return Ok(());
    }
    let refused: Vec<&Diagnostic> = errors.iter().collect();
    Err(Error::diagnosed(path, &format!("block `{}` of {path} does not fit {host}", block.id), &refused))
}

/// Of a whole contract's adapter diagnostics, the errors about `block` or the whole file.
fn errors_of<'d>(adapter: &'d [Diagnostic], block: &'d Block) -> impl Iterator<Item = &'d Diagnostic> {
    adapter.iter().filter(|d| d.is_error() && d.block.as_deref().is_none_or(|b| b == block.id))
}

/// Why a block does not fit a host, in one line (`CODE message; …`); `None` when it fits.
/// `adapter` is the whole contract's adapter diagnostics ([`decision_core::check::adapter`]),
/// which a caller asking about many blocks computes once.
pub fn misfit(adapter: &[Diagnostic], block: &Block) -> Option<String> {
    let shown: Vec<String> = errors_of(adapter, block).map(|d| format!("{} {}", d.code, d.message)).collect();
    (!shown.is_empty()).then(|| shown.join("; "))
}

/// A frame spec error about `block`, with the block named once (an error that names its
/// block already is shown as it is).
pub fn in_block(block: &str, error: &decision_protocol::frame::FrameSpecError) -> String {
    match error {
        decision_protocol::frame::FrameSpecError::NoFrame { .. } => error.to_string(),
        _ => format!("block `{block}`: {error}"),
    }
}

/// A block's frame prepared for a host whose cells are fixed (the reference profile): the
/// spec, the questions and their text are built once, and each [`PreparedFrame::document`]
/// only compiles the state.
pub struct PreparedFrame {
    block: String,
    cells: HostCells,
    projections: Projections,
    spec: FrameSpec,
    mode: Mode,
    questions: Value,
    /// `JSON.stringify` of `questions`, for the request digest.
    questions_text: String,
    dynamic: Option<Value>,
}

impl PreparedFrame {
    /// The block's frame for the reference host (its cells, projections and node ids).
    pub fn reference(block: &Block, mode: Mode) -> Result<PreparedFrame, Error> {
        let node = reference_node_id(&block.id).unwrap_or(&block.id).to_owned();
        PreparedFrame::new(block, node, HostCells::reference(), mode)
    }

    /// The block's frame for a host whose cells are the keys of `state` ([`cells_of_state`]):
    /// it holds for every state with the same keys, value kinds and untrusted cells, so a
    /// host that frames such states step after step prepares it once.
    pub fn of_state(
        block: &Block,
        state: &Map<String, Value>,
        untrusted: &[String],
        mode: Mode,
    ) -> Result<PreparedFrame, Error> {
        PreparedFrame::new(block, block.id.clone(), cells_of_state(state, untrusted), mode)
    }

    fn new(block: &Block, node: String, cells: HostCells, mode: Mode) -> Result<PreparedFrame, Error> {
        let projections = Projections::standard();
        let spec = FrameSpec::from_block(&node, block, &cells, &projections)
            .map_err(|e| Error::new(Code::Frame, in_block(&block.id, &e)))?;
        let questions: Map<String, Value> =
            block.questions.iter().map(|q| (q.id.clone(), wire_question(q).to_json())).collect();
        let questions = Value::Object(questions);
        let questions_text = decision_protocol::digest::stringify(&questions);
        let dynamic = block.dynamic.as_ref().map(|dynamic| {
            json!({"provider": dynamic.provider, "reads": dynamic.reads,
                   "note": "candidates are rebuilt by the host each step; the file's default set is shown"})
        });
        Ok(PreparedFrame {
            block: block.id.clone(),
            cells,
            projections,
            spec,
            mode,
            questions,
            questions_text,
            dynamic,
        })
    }

    /// The frame document for one state (see [`document`]): [`PreparedFrame::compile`]'s
    /// parts with the block's own.
    pub fn document(&self, state: &Map<String, Value>) -> Value {
        self.frame_document(state).into_value()
    }

    /// The frame document for `state`, typed.
    pub fn frame_document(&self, state: &Map<String, Value>) -> FrameDocument {
        let (frame, request_digest) = self.compile(state);
        FrameDocument {
            block: self.block.clone(),
            frame,
            questions: self.questions.clone(),
            request_digest,
            dynamic: self.dynamic.clone(),
        }
    }

    /// What a document has that depends on the state: the frame artifact (`frame`) and the
    /// request digest (`requestDigest`). The rest is the same for every state: `block`,
    /// `questions` and, for a `dynamic:` block, `dynamic` ([`PreparedFrame::block`],
    /// [`PreparedFrame::questions`], [`PreparedFrame::dynamic`]).
    pub fn compile(&self, state: &Map<String, Value>) -> (Value, String) {
        let (frame, request) = self.compile_artifact(state);
        (frame.into_value(), request)
    }

    /// [`PreparedFrame::compile`], the frame left typed (for a record written from it).
    pub fn compile_artifact(&self, state: &Map<String, Value>) -> (FrameArtifact, String) {
        let frame = compile_frame(&self.spec, state, &self.cells, &self.projections, self.mode);
        let request = request_digest_of_text(&frame.digest, &self.questions_text);
        (frame, request)
    }

    /// The block's id (the document's `block`).
    pub fn block(&self) -> &str {
        &self.block
    }

    /// The block's questions as they are sent (the document's `questions`).
    pub fn questions(&self) -> &Value {
        &self.questions
    }

    /// `JSON.stringify` of [`PreparedFrame::questions`].
    pub fn questions_text(&self) -> &str {
        &self.questions_text
    }

    /// The `dynamic` note of a `dynamic:` block.
    pub fn dynamic(&self) -> Option<&Value> {
        self.dynamic.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_request_reads_the_names_every_entrance_takes() {
        let request: FrameRequest = super::super::request(
            "frame",
            json!({"block": "pick", "profile": "reference", "untrusted": ["output"], "marking": "reference"}),
        )
        .unwrap();
        assert_eq!(request.block().unwrap(), "pick");
        let options = request.options();
        assert!(options.reference_profile);
        assert_eq!((options.untrusted, options.mode), (vec!["output".to_owned()], Mode::Reference));
        // Nothing given: every option at its default, and the block asked for.
        let none: FrameRequest = super::super::request("frame", Value::Null).unwrap();
        assert_eq!((none.profile, none.marking), (None, Marking::Provenance));
        assert_eq!(none.block().unwrap_err().message, "frame: `block` is required");
    }

    #[test]
    fn a_frame_request_refuses_an_unknown_name_or_value_as_a_usage_error() {
        let refused = |options: Value| super::super::request::<FrameRequest>("frame", options).unwrap_err();
        let marking = refused(json!({"marking": "loud"}));
        assert_eq!(marking.code, Code::Usage);
        assert!(marking.message.starts_with("frame options: unknown marking `loud` (known: provenance, reference)"));
        let profile = refused(json!({"profile": "ours"}));
        assert!(profile.message.starts_with("frame options: unknown profile `ours` (known: reference)"), "{profile:?}");
        let unknown = refused(json!({"colour": "red"}));
        assert!(unknown.message.contains("unknown field `colour`"), "{unknown:?}");
        let typed = refused(json!({"untrusted": "output"}));
        assert!(typed.message.contains("invalid type"), "{typed:?}");
    }

    #[test]
    fn a_frame_document_moved_into_json_is_the_one_serde_writes() {
        let with_dynamic = FrameDocument {
            block: "b".to_owned(),
            frame: json!({"node": "b", "state": {"task": "t"}}),
            questions: json!({"q": {"type": "noul"}}),
            request_digest: "sha256:0".to_owned(),
            dynamic: Some(json!({"provider": "toolsFor"})),
        };
        let without = FrameDocument { dynamic: None, ..with_dynamic.clone() };
        for document in [with_dynamic, without] {
            let serialised = serde_json::to_string(&document).unwrap();
            assert_eq!(document.into_value().to_string(), serialised);
        }
    }

    /// The command line's options are the request's fields: a new field is a new option.
    #[cfg(feature = "cli")]
    #[test]
    fn the_command_line_takes_the_same_request() {
        let parse = super::super::command_line::<FrameRequest>;
        let parsed = parse(&["frame", "--block", "pick", "--untrusted", "a", "--untrusted", "b"]).unwrap();
        assert_eq!(parsed.block().unwrap(), "pick");
        assert_eq!(parsed.untrusted, ["a", "b"]);
        assert_eq!(parsed.marking, Marking::Provenance);
        let reference = parse(&["frame", "--block", "p", "--profile", "reference", "--marking", "reference"]);
        let reference = reference.unwrap();
        assert_eq!((reference.profile, reference.marking), (Some(Profile::Reference), Marking::Reference));
        assert!(parse(&["frame"]).is_err(), "--block is required on the command line");
        assert!(parse(&["frame", "--block", "p", "--marking", "loud"]).is_err());
    }
}
