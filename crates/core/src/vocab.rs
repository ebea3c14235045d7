//! The closed vocabularies, as data: positions and the actions each handles, the 14 actions
//! and their semantics, the 14 standard projections, dynamic outputs, schema versions, and
//! the reference host's profile.

use serde::Serialize;

/// The only supported `schema:` value.
pub const SCHEMA_V1: &str = "decision-contract/v1";
/// All supported schema versions.
pub const SCHEMA_VERSIONS: [&str; 1] = [SCHEMA_V1];
/// The decision record format.
pub const RECORD_SCHEMA: &str = "decision-record/v1";
/// The prefix of host-namespaced positions.
pub const HOST_PREFIX: &str = "host:";
/// Outputs a `dynamic:` provider may declare (closed set of one, by design).
pub const DYNAMIC_OUTPUTS: [&str; 1] = ["candidates"];
/// Section headings (compared lower-cased) that hold the generator's system prompt.
pub const GENERATOR_HEADINGS: [&str; 4] = ["generator", "给生成模型", "生成模型", "system prompt"];
/// The keys a block understands.
pub const BLOCK_KEYS: [&str; 6] = ["kind", "when", "dynamic", "frame", "ask", "policy"];

/// The 14 actions, in the reference's order.
pub const ACTIONS: [&str; 14] = [
    "answer",
    "ask_human",
    "auto",
    "auto_audit",
    "call",
    "continue",
    "deliver",
    "escalate",
    "finish",
    "keep_going",
    "revise",
    "stop",
    "use",
    "use_tool",
];

/// Legal at every position.
pub const ANY_POSITION_ACTION: &str = "escalate";

/// The six core positions and the actions each handles (besides `escalate`).
pub const POSITIONS: [(&str, &[&str]); 6] = [
    ("step-start", &["use_tool", "answer"]),
    ("tool-choice", &["call"]),
    ("input-choice", &["use"]),
    ("before-call", &["auto", "auto_audit", "ask_human"]),
    ("after-tool", &["continue", "stop", "finish", "keep_going"]),
    ("after-generate", &["deliver", "revise"]),
];

/// The actions a core position handles; `None` for anything else (including inherited
/// object names such as `toString`, which the reference wrongly treats as positions).
pub fn position_actions(position: &str) -> Option<&'static [&'static str]> {
    POSITIONS.iter().find(|(name, _)| *name == position).map(|(_, actions)| *actions)
}

/// Whether `name` is one of the 14 [`ACTIONS`] (exact, case-sensitive; there are no
/// namespaced actions).
pub fn is_action(name: &str) -> bool {
    ACTIONS.contains(&name)
}

/// Whether `name` is host-namespaced (starts with [`HOST_PREFIX`]); such a position passes the
/// parse layer and only a host that registers it can consume it.
pub fn is_host_name(name: &str) -> bool {
    name.starts_with(HOST_PREFIX)
}

/// Where an action leads in the reference host's loop (format.md §2.3, column `next`).
/// Serialised in snake case (`pick_tool`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Next {
    /// Decide which tool to use (`tool-choice`).
    PickTool,
    /// Decide the chosen tool's argument (`input-choice`).
    PickInput,
    /// Run the chosen tool call.
    RunTool,
    /// Ask a person for authorisation; a refusal (or no one to ask) stops.
    Human,
    /// Go on to the next step of the tool loop.
    NextStep,
    /// Leave the tool loop and generate the answer.
    Generate,
    /// Generate the answer again, once, and re-ask the delivery gate.
    Regenerate,
    /// The run ends.
    End,
}

/// What an action means (seed §3; format.md §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ActionSemantics {
    /// The action's name, one of [`ACTIONS`].
    pub action: &'static str,
    /// Where the action leads.
    pub next: Next,
    /// Ends the tool loop (not the run: only `deliver` ends the run).
    pub ends_tool_loop: bool,
    /// Further model calls follow (generation, or more decisions).
    pub more_model_calls: bool,
    /// Correctness depends on checking a draft against evidence.
    pub needs_evidence: bool,
    /// How many times the action may send the run back to redo the same work (only `revise`:
    /// one regeneration).
    pub retries: u8,
}

const fn sem(action: &'static str, next: Next, ends: bool, more: bool, evidence: bool, retries: u8) -> ActionSemantics {
    ActionSemantics { action, next, ends_tool_loop: ends, more_model_calls: more, needs_evidence: evidence, retries }
}

/// The action semantics table, one row per action.
pub const ACTION_SEMANTICS: [ActionSemantics; 14] = [
    sem("use_tool", Next::PickTool, false, true, false, 0),
    sem("answer", Next::Generate, true, true, false, 0),
    sem("call", Next::RunTool, false, true, false, 0),
    sem("use", Next::RunTool, false, true, false, 0),
    sem("auto", Next::RunTool, false, true, false, 0),
    sem("auto_audit", Next::RunTool, false, true, false, 0),
    sem("ask_human", Next::Human, true, true, false, 0),
    sem("continue", Next::NextStep, false, true, false, 0),
    sem("stop", Next::Generate, true, true, false, 0),
    sem("finish", Next::Generate, true, true, false, 0),
    sem("keep_going", Next::NextStep, false, true, false, 0),
    sem("deliver", Next::End, true, false, true, 0),
    sem("revise", Next::Regenerate, true, true, true, 1),
    sem("escalate", Next::End, true, true, false, 0),
];

/// The semantics row of an action; `None` when `action` is not one of [`ACTIONS`].
pub fn action_semantics(action: &str) -> Option<&'static ActionSemantics> {
    ACTION_SEMANTICS.iter().find(|s| s.action == action)
}

/// The shape a projection returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Returns {
    /// A string, clipped to the field's bound in characters.
    String,
    /// A list, clipped to the field's bound in items.
    List,
    /// A number; the bound is carried but does not clip it.
    Count,
}

/// A standard projection's declaration (format.md §2.5): a named function a frame field may
/// apply to one state cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProjectionDecl {
    /// The name written in a frame field (e.g. `readMaybe`).
    pub name: &'static str,
    /// The state cell it reads (one of [`REFERENCE_CELLS`]).
    pub reads: &'static str,
    /// The shape of its value.
    pub returns: Returns,
    /// What the projection promises when its cell is missing.
    pub when_missing: &'static str,
}

const fn proj(name: &'static str, reads: &'static str, returns: Returns, when_missing: &'static str) -> ProjectionDecl {
    ProjectionDecl { name, reads, returns, when_missing }
}

/// The 14 standard projections, in the reference's registry order.
pub const PROJECTIONS: [ProjectionDecl; 14] = [
    proj("earlierMaybe", "earlier", Returns::String, "empty string"),
    proj("describeDone", "history", Returns::String, "a one-line summary, never a raw array"),
    proj("filesMaybe", "files", Returns::List, "empty list"),
    proj("readMaybe", "readFiles", Returns::List, "empty list"),
    proj("lastOrNone", "lastResult", Returns::String, "（还没有做过任何动作） — never empty"),
    proj("toolOrEmpty", "lastTool", Returns::String, "empty string"),
    proj("lastInput", "history", Returns::String, "input of the most recent step"),
    proj("toolOrUnknown", "lastTool", Returns::String, "unknown — never empty"),
    proj("localToolRisk", "lastTool", Returns::Count, "field omitted (absent), never 0"),
    proj("resultMaybe", "lastResult", Returns::String, "empty string"),
    proj("readCount", "readFiles", Returns::Count, "0"),
    proj("recentSteps", "history", Returns::List, "empty list"),
    proj("draftMaybe", "draft", Returns::String, "empty string"),
    proj("writeEvidence", "history", Returns::String, "last 3 steps"),
];

/// The declaration of a standard projection; `None` when `name` is not one of [`PROJECTIONS`].
pub fn projection(name: &str) -> Option<&'static ProjectionDecl> {
    PROJECTIONS.iter().find(|p| p.name == name)
}

/// The type of a state cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CellType {
    /// A string (`task`, `cwd`, …).
    String,
    /// A list of strings (`files`, `readFiles`).
    StringList,
    /// The step history: a list of `{step, tool, input, result}` objects.
    StepList,
    /// A boolean permission (`canWrite`, `canDelete`).
    Bool,
}

/// A state cell of the reference host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CellDecl {
    /// The cell's name, as frames and providers name it.
    pub name: &'static str,
    /// The type of its value.
    pub ty: CellType,
    /// Carries bytes returned by a tool call, so its string values are wrapped as untrusted
    /// data when framed (format.md §2.6).
    pub untrusted: bool,
}

const fn cell(name: &'static str, ty: CellType, untrusted: bool) -> CellDecl {
    CellDecl { name, ty, untrusted }
}

/// The reference host's 11 state cells, in canonical order (the order used in messages).
pub const REFERENCE_CELLS: [CellDecl; 11] = [
    cell("task", CellType::String, false),
    cell("cwd", CellType::String, false),
    cell("files", CellType::StringList, true),
    cell("readFiles", CellType::StringList, true),
    cell("history", CellType::StepList, true),
    cell("canWrite", CellType::Bool, false),
    cell("canDelete", CellType::Bool, false),
    cell("earlier", CellType::String, false),
    cell("lastTool", CellType::String, false),
    cell("lastResult", CellType::String, true),
    cell("draft", CellType::String, false),
];

/// The reference host's dynamic providers and the cells each reads.
pub const REFERENCE_PROVIDERS: [(&str, &[&str]); 2] = [
    ("toolsFor", &["history", "files", "readFiles", "canWrite", "canDelete"]),
    ("fileOptions", &["files", "readFiles"]),
];

/// The seven blocks the reference host requires, in order.
pub const REFERENCE_BLOCKS: [&str; 7] =
    ["needs_tool", "pick_tool", "pick_input", "grade_risk", "step_ok", "is_done", "can_deliver"];

/// The question ids the reference host reads from each of its blocks.
pub const REFERENCE_QUESTIONS: [(&str, &[&str]); 7] = [
    ("needs_tool", &["needs_tool"]),
    ("pick_tool", &["tool"]),
    ("pick_input", &["file"]),
    ("grade_risk", &["risk", "needs_auth"]),
    ("step_ok", &["ok"]),
    ("is_done", &["done"]),
    ("can_deliver", &["deliverable", "unsupported"]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_complete_and_consistent() {
        assert_eq!(ACTION_SEMANTICS.len(), ACTIONS.len());
        for action in ACTIONS {
            assert!(action_semantics(action).is_some(), "{action}");
        }
        for (_, actions) in POSITIONS {
            assert!(actions.iter().all(|a| is_action(a)));
        }
        for p in PROJECTIONS {
            assert!(REFERENCE_CELLS.iter().any(|c| c.name == p.reads), "{}", p.name);
        }
        // Only deliver ends the run without another model call; only revise retries.
        assert_eq!(
            ACTION_SEMANTICS.iter().filter(|s| !s.more_model_calls).map(|s| s.action).collect::<Vec<_>>(),
            ["deliver"]
        );
        assert_eq!(ACTION_SEMANTICS.iter().filter(|s| s.retries > 0).map(|s| s.action).collect::<Vec<_>>(), ["revise"]);
        assert_eq!(position_actions("toString"), None);
        assert_eq!(position_actions("after-tool"), Some(&["continue", "stop", "finish", "keep_going"][..]));
    }
}
