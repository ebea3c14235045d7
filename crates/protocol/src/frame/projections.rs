//! Projections: named functions from host state to one frame value. The 14 standard ones
//! reproduce the reference's exactly (`runtime.md` §2.7), including what each promises
//! when its cell is missing; a host registers its own under the `host:` namespace.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use decision_core::vocab::{HOST_PREFIX, PROJECTIONS, ProjectionDecl};
use serde_json::{Map, Value};
use thiserror::Error;

use super::push_clipped;

/// Host state: cell name → JSON value. A missing key is JavaScript's `undefined`.
pub type HostState = Map<String, Value>;

/// A projection body: `None` means "not applicable" (the field becomes `absent`).
pub type ProjectionFn = Arc<dyn Fn(&HostState) -> Option<Value> + Send + Sync>;

/// "No action taken yet", the reference's default for `lastOrNone`.
pub const NO_ACTION_YET: &str = "（还没有做过任何动作）";

/// A registered projection: the cell it declares it reads, and its body.
#[derive(Clone)]
pub struct Projection {
    /// The name a frame field uses after its bound (`lastOrNone`, `host:openTickets`).
    pub name: String,
    /// The cell the projection declares it reads: the field's `from`, which decides the
    /// value's trust and which frames may merge.
    pub reads: String,
    /// The function itself.
    pub body: ProjectionFn,
    /// Set when the projection only picks a cell (`state[cell] ?? default`, as the standard
    /// `…Maybe` ones do): [`Projection::value`] then reads the cell in place instead of
    /// calling `body`, which copies it whole, so that a list the frame cuts to its bound is
    /// copied only up to it (a run's `readFiles` grows by a file a step).
    pub picks: Option<Pick>,
}

/// What a picking projection gives: `state[cell] ?? default` (JavaScript's `??`: null counts
/// as missing).
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// The cell picked.
    pub cell: &'static str,
    /// The value when the cell is missing or null.
    pub default: Value,
}

impl Projection {
    /// The projection's value for `state`, borrowed from it where the projection only picks a
    /// cell; `None` means "not applicable". Always equal to what `body` returns.
    pub fn value<'a>(&'a self, state: &'a HostState) -> Option<Cow<'a, Value>> {
        match &self.picks {
            Some(pick) => Some(match state.get(pick.cell) {
                None | Some(Value::Null) => Cow::Borrowed(&pick.default),
                Some(value) => Cow::Borrowed(value),
            }),
            None => (self.body)(state).map(Cow::Owned),
        }
    }
}

/// Why [`Projections::register`] refused a host projection.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProjectionError {
    /// The name does not start with `host:`; the other names belong to the standard set.
    #[error("custom projection `{0}` must be namespaced `host:`")]
    NotNamespaced(String),
    /// A projection of that name is already registered.
    #[error("projection `{0}` is already registered")]
    Duplicate(String),
}

/// The projections a host offers.
#[derive(Clone, Default)]
pub struct Projections {
    by_name: BTreeMap<String, Projection>,
    /// Declared standard projections with no body here (see [`Projections::without_body`]).
    without_body: Vec<String>,
}

/// The reference host's tool table: name → base risk (used by `localToolRisk`).
pub const REFERENCE_TOOL_RISK: [(&str, u64); 6] =
    [("list_dir", 0), ("read_file", 0), ("write_file", 1), ("move_file", 2), ("delete_file", 3), ("done", 0)];

impl Projections {
    /// The 14 standard projections, with the reference's tool table for `localToolRisk`.
    pub fn standard() -> Self {
        Self::standard_with_tools(REFERENCE_TOOL_RISK.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect())
    }

    /// The 14 standard projections; `localToolRisk` reads the injected tool table.
    ///
    /// A projection the vocabulary declares but this runtime has no body for is not
    /// registered and is listed by [`Projections::without_body`]; a frame field that uses it
    /// is refused with [`FrameSpecError::ProjectionWithoutBody`](super::FrameSpecError), at
    /// that field.
    pub fn standard_with_tools(tools: BTreeMap<String, u64>) -> Self {
        Self::from_declarations(&PROJECTIONS, &tools)
    }

    /// Registers a body for each declared projection, recording the names that have none.
    fn from_declarations(declarations: &[ProjectionDecl], tools: &BTreeMap<String, u64>) -> Self {
        let mut p = Projections::default();
        for decl in declarations {
            match standard_body(decl.name, tools) {
                Some(body) => {
                    let picks = standard_pick(decl.name);
                    p.by_name.insert(
                        decl.name.to_owned(),
                        Projection { name: decl.name.to_owned(), reads: decl.reads.to_owned(), body, picks },
                    );
                }
                None => p.without_body.push(decl.name.to_owned()),
            }
        }
        p
    }

    /// The standard projections the vocabulary declares but this runtime has no body for
    /// (empty while the two agree, which a test holds).
    pub fn without_body(&self) -> &[String] {
        &self.without_body
    }

    /// Registers a host projection; its name must start with `host:`.
    pub fn register(
        &mut self,
        name: &str,
        reads: &str,
        body: impl Fn(&HostState) -> Option<Value> + Send + Sync + 'static,
    ) -> Result<(), ProjectionError> {
        if !name.starts_with(HOST_PREFIX) {
            return Err(ProjectionError::NotNamespaced(name.to_owned()));
        }
        if self.by_name.contains_key(name) {
            return Err(ProjectionError::Duplicate(name.to_owned()));
        }
        self.by_name.insert(
            name.to_owned(),
            Projection { name: name.to_owned(), reads: reads.to_owned(), body: Arc::new(body), picks: None },
        );
        Ok(())
    }

    /// The projection called `name`; `None` when none is registered under it.
    pub fn get(&self, name: &str) -> Option<&Projection> {
        self.by_name.get(name)
    }

    /// The registered names, in byte order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }
}

/// The body of a standard projection, or `None` for a name this runtime does not implement.
fn standard_body(name: &str, tools: &BTreeMap<String, u64>) -> Option<ProjectionFn> {
    if let Some(Pick { cell, default }) = standard_pick(name) {
        return Some(Arc::new(move |s: &HostState| Some(or(s, cell, default.clone()))));
    }
    let body: ProjectionFn = match name {
        "describeDone" => Arc::new(|s: &HostState| Some(Value::from(describe_done(history(s))))),
        "lastInput" => Arc::new(|s: &HostState| {
            Some(history(s).last().map_or_else(|| Value::from(""), |h| Value::from(js_string(h.get("input")))))
        }),
        "readCount" => Arc::new(|s: &HostState| {
            let n = s.get("readFiles").and_then(Value::as_array).map_or(0, Vec::len);
            Some(Value::from(n))
        }),
        "recentSteps" => Arc::new(|s: &HostState| Some(Value::Array(recent_steps(history(s))))),
        "writeEvidence" => Arc::new(|s: &HostState| Some(Value::from(write_evidence(history(s))))),
        "localToolRisk" => {
            let tools = tools.clone();
            Arc::new(move |s: &HostState| {
                let tool = s.get("lastTool").and_then(Value::as_str)?;
                tools.get(tool).map(|risk| Value::from(*risk))
            })
        }
        _ => return None,
    };
    Some(body)
}

/// The cell and default of a standard projection that only picks a cell; `None` for the
/// others. [`standard_body`] makes their bodies from these pairs.
fn standard_pick(name: &str) -> Option<Pick> {
    let (cell, default) = match name {
        "earlierMaybe" => ("earlier", Value::from("")),
        "filesMaybe" => ("files", Value::Array(Vec::new())),
        "readMaybe" => ("readFiles", Value::Array(Vec::new())),
        "resultMaybe" => ("lastResult", Value::from("")),
        "draftMaybe" => ("draft", Value::from("")),
        "toolOrEmpty" => ("lastTool", Value::from("")),
        "lastOrNone" => ("lastResult", Value::from(NO_ACTION_YET)),
        "toolOrUnknown" => ("lastTool", Value::from("unknown")),
        _ => return None,
    };
    Some(Pick { cell, default })
}

/// `state[cell] ?? default` (JavaScript's `??`: null counts as missing).
fn or(state: &HostState, cell: &str, default: Value) -> Value {
    match state.get(cell) {
        None | Some(Value::Null) => default,
        Some(v) => v.clone(),
    }
}

fn history(state: &HostState) -> &[Value] {
    state.get("history").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// JavaScript's `String(v)` for the values a step record holds.
fn js_string(value: Option<&Value>) -> String {
    js_str(value).into_owned()
}

/// [`js_string`], borrowed where the value is a string already.
fn js_str(value: Option<&Value>) -> Cow<'_, str> {
    match value {
        Some(Value::String(s)) => Cow::Borrowed(s),
        _ => Cow::Owned(js_string_of_other(value)),
    }
}

fn js_string_of_other(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => {
            let mut out = String::new();
            crate::digest::write_number(n, &mut out);
            out
        }
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| if v.is_null() { String::new() } else { js_string(Some(v)) })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}

/// `"nothing yet"`, or `already called: a, b (n steps)` with tools in first-seen order.
pub(crate) fn describe_done(history: &[Value]) -> String {
    if history.is_empty() {
        return "nothing yet".to_owned();
    }
    let mut tools: Vec<Cow<'_, str>> = Vec::new();
    // A step that repeats the tool before it (a run of reads) is passed over with one
    // comparison: this runs over the whole history at every step.
    let mut last: Option<&str> = None;
    for step in history {
        let member = step_member(step, "tool");
        let text = member.and_then(Value::as_str);
        if text.is_some() && text == last {
            continue;
        }
        last = text;
        let tool = js_str(member);
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    let n = history.len();
    format!("already called: {} ({n} step{})", tools.join(", "), if n > 1 { "s" } else { "" })
}

/// The member `name` of a history entry, found by comparing the entry's few keys: this runs
/// for every entry at every step, and a keyed lookup hashes the name each time.
pub fn step_member<'a>(step: &'a Value, name: &str) -> Option<&'a Value> {
    step.as_object()?.iter().find_map(|(key, value)| (key == name).then_some(value))
}

/// The fields of one entry of the `history` cell, which `recentSteps`, `writeEvidence` and
/// `describeDone` read: `{"step": 1, "tool": "read_file", "input": "a.py", "result": "…"}`.
/// `step` (the step number) is optional; `tool` (the tool called), `input` (its argument) and
/// `result` (what it returned) are strings, and each must be present.
pub const STEP_FIELDS: [&str; 3] = ["tool", "input", "result"];

/// Every way the `history` cell of `state` departs from the step-entry shape
/// ([`STEP_FIELDS`]): not a list, an entry that is not an object, a missing field. Empty when
/// the cell is absent or well formed. A host building its own history never has any; state
/// written by hand (`decision frame --state`) is checked with this before it is projected.
pub fn history_problems(state: &HostState) -> Vec<String> {
    let Some(history) = state.get("history") else { return Vec::new() };
    let Some(entries) = history.as_array() else {
        return vec!["`history` must be a list of steps `{\"tool\", \"input\", \"result\"}`".into()];
    };
    let mut problems = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match entry.as_object() {
            None => {
                problems.push(format!("history[{index}] is not a step object `{{\"tool\", \"input\", \"result\"}}`"))
            }
            Some(step) => {
                let missing: Vec<&str> = STEP_FIELDS.iter().copied().filter(|f| !step.contains_key(*f)).collect();
                if !missing.is_empty() {
                    problems.push(format!(
                        "history[{index}] lacks {}",
                        missing.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
    }
    problems
}

/// A step field as text; a missing one is empty, never JavaScript's `undefined` (the reference
/// writes `undefined`; [`history_problems`] reports the missing field instead).
fn step_field<'v>(step: &'v Value, field: &str) -> Cow<'v, str> {
    match step.get(field) {
        None => Cow::Borrowed(""),
        value => js_str(value),
    }
}

/// One step as `tool(input) → result`, input and result clipped to their budgets.
fn step_line(step: &Value, input_budget: usize, result_budget: usize) -> String {
    let tool = step_field(step, "tool");
    let input = step_field(step, "input");
    let result = step_field(step, "result");
    // Budgets count UTF-16 units; four bytes of UTF-8 cover a unit's worst case.
    let mut line = String::with_capacity(
        tool.len() + input.len().min(4 * input_budget) + result.len().min(4 * result_budget) + 32,
    );
    line.push_str(&tool);
    line.push('(');
    push_clipped(&input, input_budget, &mut line);
    line.push_str(") → ");
    push_clipped(&result, result_budget, &mut line);
    line
}

/// The last 5 steps, `tool(input) → result`, input clipped to 60 and result to 200. Each
/// entry of `history` has the shape of [`STEP_FIELDS`]; a missing field shows as empty.
pub(crate) fn recent_steps(history: &[Value]) -> Vec<Value> {
    let from = history.len().saturating_sub(5);
    history.get(from..).unwrap_or(&[]).iter().map(|h| Value::from(step_line(h, 60, 200))).collect()
}

/// The steps `writeEvidence` shows, each with the budgets of its input and its result: the
/// last 3 steps; a `write_file` step keeps 600 of its input and 60 of its result, any other
/// keeps 60 of its input and 600 of its result when it is the last step, 200 otherwise. The
/// coding host's report cites only what this window lets the delivery gate see.
pub fn evidence_window(history: &[Value]) -> impl Iterator<Item = (&Value, usize, usize)> {
    let from = history.len().saturating_sub(3);
    let recent = history.get(from..).unwrap_or(&[]);
    let last = recent.len().saturating_sub(1);
    recent.iter().enumerate().map(move |(index, h)| {
        if h.get("tool").and_then(Value::as_str) == Some("write_file") {
            (h, 600, 60)
        } else {
            (h, 60, if index == last { 600 } else { 200 })
        }
    })
}

/// The steps of [`evidence_window`], one line each, joined by `\n`.
pub(crate) fn write_evidence(history: &[Value]) -> String {
    evidence_window(history).map(|(h, input, result)| step_line(h, input, result)).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, state: Value) -> Option<Value> {
        let p = Projections::standard();
        (p.get(name).unwrap().body)(state.as_object().unwrap())
    }

    #[test]
    fn missing_value_promises() {
        let empty = json!({});
        for (name, expected) in [
            ("earlierMaybe", Some(json!(""))),
            ("filesMaybe", Some(json!([]))),
            ("readMaybe", Some(json!([]))),
            ("resultMaybe", Some(json!(""))),
            ("draftMaybe", Some(json!(""))),
            ("toolOrEmpty", Some(json!(""))),
            ("lastOrNone", Some(json!("（还没有做过任何动作）"))),
            ("toolOrUnknown", Some(json!("unknown"))),
            ("describeDone", Some(json!("nothing yet"))),
            ("lastInput", Some(json!(""))),
            ("readCount", Some(json!(0))),
            ("recentSteps", Some(json!([]))),
            ("writeEvidence", Some(json!(""))),
            ("localToolRisk", None),
        ] {
            assert_eq!(run(name, empty.clone()), expected, "{name}");
        }
        assert_eq!(Projections::standard().names().count(), 14);
    }

    #[test]
    fn describe_done_names_each_tool_once_in_first_use_order() {
        let step = |tool: Value| json!({"tool": tool, "input": "", "result": ""});
        let history = [
            step(json!("read_file")),
            step(json!("read_file")),
            step(json!("list_dir")),
            step(json!("read_file")),
            json!({"input": "", "result": ""}),
            json!({"input": "", "result": ""}),
            step(json!(3)),
            step(json!("3")),
            step(json!("list_dir")),
        ];
        assert_eq!(describe_done(&history), "already called: read_file, list_dir, undefined, 3 (9 steps)");
        assert_eq!(describe_done(&history[..1]), "already called: read_file (1 step)");
    }

    #[test]
    fn values_when_present() {
        let history = json!([{"step":1,"tool":"list_dir","input":".","result":"a\nb"},
                             {"step":2,"tool":"read_file","input":"a","result":"x"},
                             {"step":3,"tool":"read_file","input":"b","result":"y"}]);
        let state = json!({"history": history, "lastTool": "delete_file", "readFiles": ["a", "b"], "lastResult": "r"});
        assert_eq!(run("describeDone", state.clone()), Some(json!("already called: list_dir, read_file (3 steps)")));
        assert_eq!(
            run("describeDone", json!({"history": [history[0]]})),
            Some(json!("already called: list_dir (1 step)"))
        );
        assert_eq!(run("lastInput", state.clone()), Some(json!("b")));
        assert_eq!(run("readCount", state.clone()), Some(json!(2)));
        assert_eq!(run("localToolRisk", state.clone()), Some(json!(3)));
        assert_eq!(run("localToolRisk", json!({"lastTool": "rm_rf_everything"})), None);
        assert_eq!(run("lastOrNone", state.clone()), Some(json!("r")));
        assert_eq!(run("toolOrUnknown", state.clone()), Some(json!("delete_file")));
        assert_eq!(
            run("recentSteps", state.clone()),
            Some(json!(["list_dir(.) → a\nb", "read_file(a) → x", "read_file(b) → y"]))
        );
        assert_eq!(run("writeEvidence", state), Some(json!("list_dir(.) → a\nb\nread_file(a) → x\nread_file(b) → y")));
    }

    #[test]
    fn evidence_budgets_depend_on_the_tool_and_position() {
        let long = "z".repeat(1000);
        let history =
            json!([{"tool":"write_file","input":long,"result":long},{"tool":"read_file","input":long,"result":long}]);
        let text = write_evidence(history.as_array().unwrap());
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], format!("write_file({} …[+412]) → {} …[+952]", "z".repeat(588), "z".repeat(48)));
        assert_eq!(lines[1], format!("read_file({} …[+952]) → {} …[+412]", "z".repeat(48), "z".repeat(588)));
        let steps: Vec<Value> = (0..7).map(|i| json!({"tool": "t", "input": i, "result": ""})).collect();
        assert_eq!(recent_steps(&steps)[0], json!("t(2) → "));
        assert_eq!(recent_steps(&steps).len(), 5);
    }

    #[test]
    fn every_declared_standard_projection_has_a_body() {
        let p = Projections::standard();
        assert_eq!(p.without_body(), &[] as &[String]);
        for decl in PROJECTIONS {
            assert_eq!(p.get(decl.name).map(|found| found.reads.as_str()), Some(decl.reads), "{}", decl.name);
        }
    }

    #[test]
    fn a_declared_projection_without_a_body_is_reported_not_dropped() {
        use crate::frame::{FrameSpec, FrameSpecError, HostCells};
        use decision_core::vocab::Returns;

        let declared = [
            PROJECTIONS[0],
            ProjectionDecl { name: "newThing", reads: "task", returns: Returns::String, when_missing: "empty string" },
        ];
        let p = Projections::from_declarations(&declared, &BTreeMap::new());
        assert_eq!(p.without_body(), ["newThing"]);
        assert!(p.get("newThing").is_none());
        assert_eq!(p.names().collect::<Vec<_>>(), [PROJECTIONS[0].name]);

        let spec = |projection: &str| {
            let source = format!("## b\nkind: rule\nwhen: after-tool —— p\nframe:\n  + x 10 {projection} —— r\n");
            let parsed = decision_core::parse(source.as_bytes());
            FrameSpec::from_block("b", &parsed.contract.blocks[0], &HostCells::reference(), &p).map(|s| s.fields.len())
        };
        let refused = spec("newThing").unwrap_err();
        assert_eq!(refused, FrameSpecError::ProjectionWithoutBody { key: "x".into(), projection: "newThing".into() });
        assert_eq!(
            refused.to_string(),
            "field `x` uses standard projection `newThing`, which is declared but has no body in this runtime"
        );
        assert_eq!(
            spec("noSuchThing"),
            Err(FrameSpecError::UnknownProjection { key: "x".into(), projection: "noSuchThing".into() })
        );
        assert_eq!(spec(PROJECTIONS[0].name), Ok(1));
    }

    #[test]
    fn a_step_with_a_missing_field_never_shows_undefined_and_is_reported() {
        let state = json!({"history": [{"tool": "read_file", "result": "x"}, {"step": 2, "tool": "list_dir", "input": ".", "result": "a"}, 3]});
        let state = state.as_object().unwrap().clone();
        let steps = run("recentSteps", Value::Object(state.clone())).unwrap();
        assert_eq!(steps[0], json!("read_file() → x"));
        assert!(!steps.to_string().contains("undefined"), "{steps}");
        assert!(!run("writeEvidence", Value::Object(state.clone())).unwrap().to_string().contains("undefined"));
        assert_eq!(
            history_problems(&state),
            ["history[0] lacks `input`", "history[2] is not a step object `{\"tool\", \"input\", \"result\"}`"]
        );
        let good = json!({"history": [{"tool": "t", "input": "i", "result": "r"}], "task": "x"});
        assert!(history_problems(good.as_object().unwrap()).is_empty());
        assert!(history_problems(json!({"task": "x"}).as_object().unwrap()).is_empty());
        assert_eq!(history_problems(json!({"history": "x"}).as_object().unwrap()).len(), 1);
    }

    #[test]
    fn host_projections_are_namespaced() {
        let mut p = Projections::standard();
        assert_eq!(p.register("mine", "task", |_| None), Err(ProjectionError::NotNamespaced("mine".into())));
        assert!(p.register("host:upper", "task", |s| s.get("task").cloned()).is_ok());
        assert_eq!(p.register("host:upper", "task", |_| None), Err(ProjectionError::Duplicate("host:upper".into())));
        assert_eq!(p.get("host:upper").unwrap().reads, "task");
    }
}

#[cfg(test)]
mod picks {
    use super::*;
    use serde_json::json;

    /// A picking projection's in-place value is its body's, whatever the state holds; and
    /// exactly the `…Maybe`-style projections pick.
    #[test]
    fn a_picked_value_is_the_bodys_value() {
        let projections = Projections::standard();
        let states = [
            json!({}),
            json!({"earlier": null, "files": null, "readFiles": null, "lastResult": null, "draft": null, "lastTool": null}),
            json!({"earlier": "e", "files": ["a", "b"], "readFiles": ["a"], "lastResult": "r", "draft": "d", "lastTool": "read_file"}),
            json!({"earlier": 3, "files": "x", "readFiles": {"a": 1}, "lastResult": [1], "draft": false, "lastTool": 0}),
        ];
        let mut picking = Vec::new();
        for name in projections.names() {
            let projection = projections.get(name).unwrap();
            if projection.picks.is_some() {
                picking.push(name);
            }
            for state in &states {
                let state = state.as_object().unwrap();
                let value = projection.value(state).map(Cow::into_owned);
                assert_eq!(value, (projection.body)(state), "{name} on {state:?}");
            }
        }
        assert_eq!(
            picking,
            [
                "draftMaybe",
                "earlierMaybe",
                "filesMaybe",
                "lastOrNone",
                "readMaybe",
                "resultMaybe",
                "toolOrEmpty",
                "toolOrUnknown"
            ]
        );
    }
}
