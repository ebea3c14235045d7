//! Frames compiled from the real reference `DECISION.md` reproduce the reference's pinned
//! frames and digests byte for byte; provenance mode marks untrusted lists; merges follow
//! `mergeConflicts`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]
#![allow(clippy::disallowed_methods)]

use decision_protocol::digest::{frame_preimage, request_digest};
use decision_protocol::frame::{
    FrameArtifact, FrameSpec, HostCells, MergeError, Mode, Projections, Truncation, UNTRUSTED_PROVENANCE, clip,
    compile_frame, mark_untrusted, merge_conflicts, merge_requests, reference_node_id,
};
use serde_json::{Map, Value, json};

#[path = "../../core/tests/reference/mod.rs"]
mod reference;

struct Reference {
    contract: decision_core::Contract,
    cells: HostCells,
    projections: Projections,
}

impl Reference {
    /// The reference contract, or `None` (after a printed skip line) without the reference files.
    fn load() -> Option<Self> {
        let source = reference::text("fixtures/jevloop/DECISION.md")?;
        let parsed = decision_core::parse(source.as_bytes());
        Some(Reference {
            contract: parsed.contract,
            cells: HostCells::reference(),
            projections: Projections::standard(),
        })
    }

    fn spec(&self, block: &str) -> FrameSpec {
        let block = self.contract.blocks.iter().find(|b| b.id == block).unwrap();
        FrameSpec::from_block(reference_node_id(&block.id).unwrap(), block, &self.cells, &self.projections).unwrap()
    }

    fn frame(&self, block: &str, ctx: &Value, mode: Mode) -> FrameArtifact {
        compile_frame(&self.spec(block), ctx.as_object().unwrap(), &self.cells, &self.projections, mode)
    }
}

fn full_ctx() -> Value {
    json!({
        "task": "把 alpha.ts 里的 totalOf 抄到新文件 summary.ts 里", "cwd": "/w",
        "files": ["alpha.ts", "beta.ts", "notes.md"], "readFiles": ["alpha.ts"],
        "history": [{"step": 1, "tool": "list_dir", "input": ".", "result": "alpha.ts\nbeta.ts\nnotes.md"},
                    {"step": 2, "tool": "read_file", "input": "alpha.ts", "result": "export function totalOf() {}"}],
        "lastTool": "read_file", "lastResult": "export function totalOf() {}", "canWrite": true,
        "earlier": "上一轮问的是这些文件各导出了什么", "draft": "我把 totalOf 抄过去了。"
    })
}

fn bare_ctx() -> Value {
    json!({"task": "t", "cwd": "/w"})
}

fn state(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn step_ok_and_grade_risk_with_the_full_context() {
    let Some(r) = Reference::load() else { return };
    let step_ok = r.frame("step_ok", &full_ctx(), Mode::Reference);
    assert_eq!(
        *step_ok.state,
        state(json!({"tool": "read_file", "input": mark_untrusted("alpha.ts"),
            "output": mark_untrusted("export function totalOf() {}"), "already_read": 1}))
    );
    assert_eq!(step_ok.digest, "1334ecb58f26751b", "vector V4");
    assert_eq!(step_ok.node, "loop.stepOk");
    let grade = r.frame("grade_risk", &full_ctx(), Mode::Reference);
    assert_eq!(
        *grade.state,
        state(
            json!({"tool": "read_file", "base_risk": 0, "target": mark_untrusted("alpha.ts"), "task": full_ctx()["task"]})
        )
    );
    assert_eq!(grade.untrusted, ["target"], "base_risk reads lastTool, which is trusted");
}

#[test]
fn pick_tool_with_the_full_and_the_bare_context() {
    let Some(r) = Reference::load() else { return };
    let full = r.frame("pick_tool", &full_ctx(), Mode::Reference);
    assert_eq!(
        *full.state,
        state(json!({"task": full_ctx()["task"], "earlier": full_ctx()["earlier"],
            "already_done": mark_untrusted("already called: list_dir, read_file (2 steps)"),
            "files_known": ["alpha.ts", "beta.ts", "notes.md"], "already_read": ["alpha.ts"],
            "last_result": mark_untrusted("export function totalOf() {}")}))
    );
    let bare = r.frame("pick_tool", &bare_ctx(), Mode::Reference);
    assert_eq!(
        frame_preimage("loop.pickTool", &bare.state),
        format!(
            r#"["loop.pickTool",[["task","t"],["earlier",""],["already_done",{}],["files_known",[]],["already_read",[]],["last_result",""]]]"#,
            serde_json::to_string(&mark_untrusted("nothing yet")).unwrap()
        )
    );
    assert_eq!(bare.digest, "37beaaf426522254", "vector V5");
    // Not fed: earlier, history, files, readFiles, lastResult (recorded although defaulted).
    let unfilled: Vec<_> = bare.unfilled.iter().map(|u| u.from.as_str()).collect();
    assert_eq!(unfilled, ["earlier", "history", "files", "readFiles", "lastResult"]);
    assert!(full.unfilled.is_empty());
    let step_ok = r.frame("step_ok", &bare_ctx(), Mode::Reference);
    assert_eq!(*step_ok.state, state(json!({"tool": "unknown", "input": "", "output": "", "already_read": 0})));
}

#[test]
fn a_long_result_is_clipped_then_wrapped() {
    let Some(r) = Reference::load() else { return };
    let mut ctx = full_ctx();
    ctx["lastResult"] = json!("x".repeat(2000));
    let step_ok = r.frame("step_ok", &ctx, Mode::Reference);
    assert_eq!(step_ok.truncated, [Truncation { key: "output".into(), from: 2000, to: 500 }]);
    let clipped = clip(&"x".repeat(2000), 500);
    assert_eq!(clipped.chars().count(), 497);
    assert_eq!(step_ok.state["output"], json!(mark_untrusted(&clipped)));
}

#[test]
fn lists_are_cut_to_their_bound() {
    let Some(r) = Reference::load() else { return };
    let mut ctx = full_ctx();
    ctx["files"] = json!((0..25).map(|i| format!("f{i}.ts")).collect::<Vec<_>>());
    let needs = r.frame("needs_tool", &ctx, Mode::Reference);
    assert_eq!(needs.state["files_known"].as_array().unwrap().len(), 15);
    assert_eq!(needs.truncated, [Truncation { key: "files_known".into(), from: 25, to: 15 }]);
}

#[test]
fn an_unknown_tool_leaves_base_risk_absent() {
    let Some(r) = Reference::load() else { return };
    let mut ctx = full_ctx();
    ctx["lastTool"] = json!("rm_rf_everything");
    let grade = r.frame("grade_risk", &ctx, Mode::Reference);
    assert!(!grade.state.contains_key("base_risk"));
    assert_eq!(grade.absent.len(), 1);
    assert_eq!(grade.absent[0].key, "base_risk");
    assert_eq!(grade.state["tool"], "rm_rf_everything");
}

#[test]
fn list_valued_untrusted_keys_match_the_reference_pin() {
    let Some(r) = Reference::load() else { return };
    let mut keys = Vec::new();
    for block in ["needs_tool", "pick_tool", "pick_input", "grade_risk", "step_ok", "is_done", "can_deliver"] {
        let frame = r.frame(block, &full_ctx(), Mode::Reference);
        for key in &frame.untrusted {
            if frame.state[key].is_array() && !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys.sort();
    assert_eq!(keys, ["already_read", "candidates", "files_known", "steps"]);
}

#[test]
fn v7_merged_step_reproduces_every_digest() {
    let Some(r) = Reference::load() else { return };
    let ctx = json!({"task": "list the files and explain what they do", "earlier": "", "files": [], "history": [],
        "canWrite": true, "canDelete": false, "cwd": "/w"});
    let needs = r.frame("needs_tool", &ctx, Mode::Reference);
    let pick = r.frame("pick_tool", &ctx, Mode::Reference);
    assert_eq!(needs.digest, "d132d0c5b60b0fdc");
    assert_eq!(pick.digest, "08d6c0e2653ca72c");
    let block = r.contract.blocks.iter().find(|b| b.id == "needs_tool").unwrap();
    let q = &block.questions[0];
    let needs_q = json!({"needs_tool": {"type": "noul", "instructions": q.ask,
        "criteria": {"true": q.option("true").unwrap().criterion, "false": q.option("false").unwrap().criterion}}});
    let tool_q = json!({"tool": {"type": "choice", "instructions": "Which tool should the agent call next?", "criteria": {
        "list_dir": "The agent does not yet know which files exist in the working directory.",
        "done": "Everything the task asks for has already been done; calling any other tool would not add information."}}});
    let merged = merge_requests(&[(&needs, &needs_q), (&pick, &tool_q)]).unwrap();
    let keys: Vec<_> = merged.state.keys().cloned().collect();
    assert_eq!(keys, ["task", "earlier", "already_done", "files_known", "already_read", "last", "last_result"]);
    assert_eq!(merged.batch_ids, ["loop.needsTool", "loop.pickTool"]);
    assert_eq!(merged.sent_frame_digest, "c988b648263876e2");
    assert_eq!(merged.request_digest, "7e5e6a0bf48a62bc");
    // A single node sends its own frame unchanged, under its own digest.
    let solo = merge_requests(&[(&pick, &tool_q)]).unwrap();
    assert_eq!(solo.sent_frame_digest, pick.digest);
    assert_eq!(solo.request_digest, request_digest(&pick.digest, &tool_q));
}

#[test]
fn merge_conflicts_follow_the_reference_pins() {
    let Some(r) = Reference::load() else { return };
    let ctx = full_ctx();
    let f = |b: &str| r.frame(b, &ctx, Mode::Reference);
    assert!(merge_conflicts(&[&f("needs_tool"), &f("pick_tool")]).is_empty());
    let conflicts = merge_conflicts(&[&f("step_ok"), &f("is_done")]);
    assert_eq!(conflicts[0].cell, "task");
    assert_eq!(conflicts[0].excluded_by, "loop.stepOk");
    assert_eq!(conflicts[0].read_by, "loop.isDone");
    // isDone in turn excludes lastTool and lastResult, which stepOk reads.
    let cells: Vec<_> = conflicts.iter().map(|c| c.cell.as_str()).collect();
    assert_eq!(cells, ["task", "lastTool", "lastResult"]);
    let history = merge_conflicts(&[&f("pick_input"), &f("grade_risk")]);
    assert!(
        history
            .iter()
            .any(|c| c.cell == "history" && c.excluded_by == "loop.pickInput" && c.read_by == "loop.gradeRisk")
    );

    let empty = json!({});
    let err = merge_requests(&[(&f("step_ok"), &empty), (&f("is_done"), &empty)]).unwrap_err();
    let MergeError::Conflicts(list) = &err else { panic!("{err:?}") };
    let message = err.to_string();
    assert!(
        message.contains("`task`") && message.contains("loop.stepOk") && message.contains("loop.isDone"),
        "{message}"
    );
    assert!(message.contains(&list[0].reason) && !list[0].reason.is_empty());
}

#[test]
fn merges_refuse_disagreeing_values_and_duplicate_questions() {
    let Some(r) = Reference::load() else { return };
    let needs = r.frame("needs_tool", &full_ctx(), Mode::Reference);
    let mut pick = r.frame("pick_tool", &full_ctx(), Mode::Reference);
    let q = json!({"a": {"type": "noul"}});
    let err = merge_requests(&[(&needs, &q), (&pick, &q)]).unwrap_err();
    assert!(matches!(err, MergeError::DuplicateQuestion { ref id, .. } if id == "a"), "{err:?}");
    std::sync::Arc::make_mut(&mut pick.state).insert("task".into(), json!("other"));
    let err = merge_requests(&[(&needs, &json!({})), (&pick, &json!({}))]).unwrap_err();
    assert!(matches!(err, MergeError::Disagree { ref key, .. } if key == "task"), "{err:?}");
}

#[test]
fn provenance_mode_marks_untrusted_lists_inside_the_digest() {
    let Some(r) = Reference::load() else { return };
    let ours = r.frame("pick_tool", &full_ctx(), Mode::Provenance);
    let reference = r.frame("pick_tool", &full_ctx(), Mode::Reference);
    assert_eq!(
        ours.state["files_known"],
        json!({"provenance": UNTRUSTED_PROVENANCE, "value": ["alpha.ts", "beta.ts", "notes.md"]})
    );
    assert_eq!(
        ours.state["already_done"], reference.state["already_done"],
        "strings are marked as the reference marks them"
    );
    assert_eq!(ours.state["task"], reference.state["task"]);
    assert_ne!(ours.digest, reference.digest);
    let step_ok = r.frame("step_ok", &full_ctx(), Mode::Provenance);
    assert_eq!(step_ok.state["already_read"], json!({"provenance": UNTRUSTED_PROVENANCE, "value": 1}));
    let artifact = ours.to_value();
    let provenance = artifact["provenance"].as_array().unwrap();
    assert!(provenance.iter().any(|p| p["key"] == "files_known" && p["from"] == "files" && p["marked"] == "wrapper"));
    assert!(reference.to_value().get("provenance").is_none());
    // Empty lists carry nothing to distrust, like the empty string.
    let bare = r.frame("pick_tool", &bare_ctx(), Mode::Provenance);
    assert_eq!(bare.state["files_known"], json!([]));
}

#[test]
fn the_artifact_keeps_the_reference_key_order() {
    let Some(r) = Reference::load() else { return };
    let artifact = r.frame("grade_risk", &full_ctx(), Mode::Reference).to_value();
    let keys: Vec<_> = artifact.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["node", "state", "digest", "fields", "untrusted", "truncated", "unfilled", "absent", "excluded"]);
    assert_eq!(artifact["fields"][1], json!({"key": "base_risk", "from": "lastTool"}));
    assert_eq!(artifact["excluded"][0][0], "cwd");
}

#[test]
fn host_projections_and_unknown_names() {
    let Some(mut r) = Reference::load() else { return };
    let mut block = r.contract.blocks.iter().find(|b| b.id == "step_ok").unwrap().clone();
    block.frame.as_mut().unwrap().fields[0].projection = Some("host:shout".into());
    assert!(FrameSpec::from_block("n", &block, &r.cells, &r.projections).is_err());
    r.projections
        .register("host:shout", "lastTool", |s| {
            s.get("lastTool").and_then(Value::as_str).map(|t| json!(t.to_uppercase()))
        })
        .unwrap();
    let spec = FrameSpec::from_block("n", &block, &r.cells, &r.projections).unwrap();
    let frame = compile_frame(&spec, full_ctx().as_object().unwrap(), &r.cells, &r.projections, Mode::Reference);
    assert_eq!(frame.state["tool"], "READ_FILE");
    block.frame.as_mut().unwrap().fields[0].projection = None;
    block.frame.as_mut().unwrap().fields[0].key = "not_a_cell".into();
    assert!(FrameSpec::from_block("n", &block, &r.cells, &r.projections).is_err());
}

#[test]
fn the_lists_a_spec_fixes_are_shared_and_written_as_their_items() {
    let Some(r) = Reference::load() else { return };
    let spec = r.spec("pick_tool");
    let a = compile_frame(&spec, &state(full_ctx()), &r.cells, &r.projections, Mode::Reference);
    let b = compile_frame(&spec, &state(bare_ctx()), &r.cells, &r.projections, Mode::Reference);
    // Every frame of one spec shares its lists instead of copying them.
    assert!(std::sync::Arc::ptr_eq(&a.fields, &b.fields));
    assert!(std::sync::Arc::ptr_eq(&a.excluded, &b.excluded));
    let value = a.to_value();
    assert_eq!(a.fields.json(), decision_protocol::digest::stringify(&value["fields"]));
    assert_eq!(a.excluded.json(), decision_protocol::digest::stringify(&value["excluded"]));
    assert!(!a.excluded.is_empty());
    // A spec whose fields were changed after it was made gives frames its fields as they are now.
    let mut changed = spec.clone();
    changed.fields[0].key = "renamed".into();
    let c = compile_frame(&changed, &state(full_ctx()), &r.cells, &r.projections, Mode::Reference);
    assert_eq!(c.fields[0].key, "renamed");
    assert!(c.fields.json().starts_with(r#"[{"key":"renamed","from":"#));
    assert!(!std::sync::Arc::ptr_eq(&a.fields, &c.fields));
    assert_eq!(c.fields.json(), decision_protocol::digest::stringify(&c.to_value()["fields"]));
}
