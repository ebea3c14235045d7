//! Reference conformance (skipped, with a printed line, without the reference files; see
//! `reference/mod.rs`). The reference fixtures of format.md: the real contract passes clean with the reference
//! profile; each of the 15 mutation cases is reported in its layer at its line; the negative
//! controls report nothing; the custom-graph contract has exactly one policy error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use decision_core::check::{self, Capabilities, CheckOptions, Report};
use decision_core::diag::codes;
use decision_core::diag::{Layer, Severity};

#[path = "reference/mod.rs"]
mod reference;

/// Whether the reference fixtures are present (else the test prints its skip line and returns).
fn fixtures_present() -> bool {
    reference::present("fixtures/jevloop")
}

/// One reference fixture; only called once [`fixtures_present`] said they are there.
fn fixture(name: &str) -> &'static str {
    reference::text(&format!("fixtures/jevloop/{name}")).expect("the test checked that the fixtures are present")
}

/// The reference `DECISION.md`.
fn reference_md() -> &'static str {
    fixture("DECISION.md")
}

fn check_reference(source: &str) -> Report {
    let caps = Capabilities::reference();
    check::check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) })
}

/// Apply a mutation: `find` must occur exactly once (else the case is stale).
fn mutate(find: &str, to: &str) -> String {
    assert_eq!(reference_md().matches(find).count(), 1, "stale mutation anchor: {find:?}");
    reference_md().replacen(find, to, 1)
}

fn error_layers(report: &Report) -> Vec<Layer> {
    let mut layers: Vec<Layer> = report.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.layer).collect();
    layers.dedup();
    layers
}

fn has(report: &Report, layer: Layer, code: &str, line: u32) -> bool {
    report.diagnostics.iter().any(|d| d.layer == layer && d.code == code && d.span.line == line && d.is_error())
}

fn dump(report: &Report) -> String {
    report
        .diagnostics
        .iter()
        .map(|d| format!("{:?} {} L{} {}", d.layer, d.code, d.span.line, d.message))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_reference_file_is_clean_with_the_reference_profile() {
    if !fixtures_present() {
        return;
    }
    let report = check_reference(reference_md());
    assert!(report.diagnostics.is_empty(), "{}", dump(&report));
    assert_eq!(
        report.summary().headline(),
        "7 decisions, 9 questions, 7 answered by the decision model, 0 decided by code, 1 authorisation gate; 22 options in total"
    );
    let c = &report.contract;
    assert_eq!(c.title.as_deref(), Some("DECISION.md"));
    assert_eq!(c.schema.as_ref().unwrap().span.line, 3);
    let ids: Vec<_> = c.blocks.iter().map(|b| (b.id.as_str(), b.span.line)).collect();
    assert_eq!(
        ids,
        [
            ("needs_tool", 17),
            ("pick_tool", 61),
            ("pick_input", 102),
            ("grade_risk", 139),
            ("step_ok", 187),
            ("is_done", 234),
            ("can_deliver", 278)
        ]
    );
    let pick_tool = &c.blocks[1];
    let dynamic = pick_tool.dynamic.as_ref().unwrap();
    assert_eq!((dynamic.provider.as_str(), dynamic.span.line), ("toolsFor", 65));
    assert_eq!(dynamic.reads, ["history", "files", "readFiles", "canWrite", "canDelete"]);
    let grade_risk = &c.blocks[3];
    assert!(grade_risk.is_gate());
    let risk = &grade_risk.questions[0];
    assert_eq!((risk.id.as_str(), risk.span.line, risk.options.len()), ("risk", 148, 4));
    assert_eq!(risk.options[1].criterion.split(' ').next(), Some("reversible"));
    assert!(c.generator.as_ref().unwrap().len() > 100);
    assert!(c.blocks.iter().all(|b| b.frame.is_some()));
}

struct Mutation {
    id: &'static str,
    find: &'static str,
    to: &'static str,
    /// (layer, code, line) that must be reported.
    expect: &'static [(Layer, &'static str, u32)],
    /// The exact set of layers that report errors.
    layers: &'static [Layer],
}

const NEEDS_TOOL_TASK: &str =
    "  + task          400                   —— 整个判定的主体：问的是「这个任务还有没有没做的动作」\n";
const NEEDS_TOOL_WHEN: &str = "when: step-start —— 每个 step 的开头。判否就直接跳到生成，整个工具循环省掉\n";
const PICK_TOOL_DYNAMIC_HEAD: &str =
    "dynamic: toolsFor(ctx: history, files, readFiles, canWrite, canDelete) → candidates";

fn mutations() -> Vec<(Mutation, String, String)> {
    use Layer::*;
    let task_typo = NEEDS_TOOL_TASK.replacen("+ task ", "+ taskk", 1);
    let task_unbounded = NEEDS_TOOL_TASK.replacen("          400", "", 1);
    let purpose_unread = NEEDS_TOOL_WHEN.replacen("step-start —— ", "step-start ", 1);
    let pick_tool_line =
        reference_md().lines().find(|l| l.starts_with(PICK_TOOL_DYNAMIC_HEAD)).unwrap().to_string() + "\n";
    let cases = vec![
        (
            Mutation {
                id: "action-typo",
                find: "  - score:risk >= 2 → ask_human\n",
                to: "  - score:risk >= 2 → ask_humam\n",
                // The reference also reports the unknown action as not handled at the position
                // (parse) and by the host (adapter); here one mistake gives one error.
                expect: &[(Parse, codes::POL_UNKNOWN_ACTION, 175)],
                layers: &[Parse],
            },
            None,
        ),
        (
            Mutation {
                id: "gate-predicate-dead",
                find: "- read-only\n",
                to: "- read-only — 只读取，不改变任何东西\n",
                expect: &[
                    (Parse, codes::Q_MIXED_STYLE, 148),
                    (Policy, codes::UNCOMPILED, 175),
                    (Policy, codes::UNCOMPILED, 177),
                ],
                layers: &[Parse, Policy],
            },
            None,
        ),
        (
            Mutation {
                id: "exclusion-dropped",
                find: "",
                to: "",
                expect: &[(Adapter, codes::A_UNCOVERED, 27)],
                layers: &[Adapter],
            },
            Some((
                "exclusion-dropped",
                reference_md()
                    .lines()
                    .find(|l| l.starts_with("  - cwd                                 —— 路径不进判定："))
                    .unwrap()
                    .to_string()
                    + "\n",
                String::new(),
            )),
        ),
        (
            Mutation {
                id: "exclusion-no-reason",
                find: "",
                to: "",
                expect: &[(Parse, codes::FRAME_NO_WHY, 35), (Adapter, codes::A_EXCL_NO_WHY, 35)],
                layers: &[Parse, Adapter],
            },
            Some((
                "exclusion-no-reason",
                reference_md()
                    .lines()
                    .find(|l| l.starts_with("  - canWrite                            —— 「能不能写」是**代码**"))
                    .unwrap()
                    .to_string()
                    + "\n",
                "  - canWrite\n".to_string(),
            )),
        ),
        (
            Mutation {
                id: "field-typo",
                find: "",
                to: "",
                expect: &[(Adapter, codes::A_STATE_CELL, 28)],
                layers: &[Adapter],
            },
            Some(("field-typo", NEEDS_TOOL_TASK.to_string(), task_typo)),
        ),
        (
            Mutation {
                id: "field-unbounded",
                find: "",
                to: "",
                expect: &[(Parse, codes::FRAME_BOUND, 28), (Adapter, codes::A_UNCOVERED, 27)],
                layers: &[Parse, Adapter],
            },
            Some(("field-unbounded", NEEDS_TOOL_TASK.to_string(), task_unbounded)),
        ),
        (
            Mutation {
                id: "when-not-a-position",
                find: "when: step-start ——",
                to: "when: loop-start ——",
                // The reference also reports the host's missing position (adapter); here one
                // mistake gives one error.
                expect: &[(Parse, codes::WHEN_UNKNOWN, 20)],
                layers: &[Parse],
            },
            None,
        ),
        (
            Mutation {
                id: "action-not-in-position",
                find: "  - prob:done >= 0.6 → finish\n  - else → keep_going\n",
                to: "  - prob:done >= 0.6 → finish\n  - else → revise\n",
                // The reference also reports it for the host (adapter); here one mistake gives
                // one error.
                expect: &[(Parse, codes::ACTION_NOT_AT_POSITION, 237)],
                layers: &[Parse],
            },
            None,
        ),
        (
            Mutation {
                id: "kind-unknown",
                find: "## needs_tool\n\nkind: noul\n",
                to: "## needs_tool\n\nkind: bool\n",
                expect: &[(Parse, codes::KIND_INVALID, 19)],
                layers: &[Parse],
            },
            None,
        ),
        (
            Mutation {
                id: "block-id-duplicate",
                find: "## step_ok\n",
                to: "## is_done\n",
                expect: &[(Parse, codes::BLOCK_DUP_ID, 234), (Adapter, codes::A_BLOCK_MISSING, 1)],
                layers: &[Parse, Adapter],
            },
            None,
        ),
        (
            Mutation {
                id: "schema-dropped",
                find: "schema: decision-contract/v1\n",
                to: "",
                expect: &[(Schema, codes::SCHEMA_MISSING, 1)],
                layers: &[Schema],
            },
            None,
        ),
        (
            Mutation {
                id: "when-dropped",
                find: "",
                to: "",
                // The reference also reports the empty position as unregistered (adapter); here
                // one mistake gives one error.
                expect: &[(Parse, codes::WHEN_MISSING, 17)],
                layers: &[Parse],
            },
            Some(("when-dropped", NEEDS_TOOL_WHEN.to_string(), String::new())),
        ),
        (
            Mutation {
                id: "when-purpose-unread",
                find: "",
                to: "",
                expect: &[(Parse, codes::WHEN_LEFTOVER, 20)],
                layers: &[Parse],
            },
            Some(("when-purpose-unread", NEEDS_TOOL_WHEN.to_string(), purpose_unread)),
        ),
        (
            Mutation {
                id: "dynamic-output-unknown",
                find: "canDelete) → candidates",
                to: "canDelete) → everything",
                expect: &[(Parse, codes::DYN_OUTPUT, 65)],
                layers: &[Parse],
            },
            None,
        ),
        (
            Mutation {
                id: "dynamic-why-dropped",
                find: "",
                to: "",
                expect: &[(Parse, codes::DYN_NO_WHY, 65)],
                layers: &[Parse],
            },
            Some(("dynamic-why-dropped", pick_tool_line.clone(), PICK_TOOL_DYNAMIC_HEAD.to_string() + "\n")),
        ),
    ];
    cases
        .into_iter()
        .map(|(m, owned)| match owned {
            Some((_, find, to)) => (m, find, to),
            None => {
                let (find, to) = (m.find.to_string(), m.to.to_string());
                (m, find, to)
            }
        })
        .collect()
}

#[test]
fn each_mutation_is_reported_in_its_layer_at_its_line() {
    if !fixtures_present() {
        return;
    }
    let cases = mutations();
    assert_eq!(cases.len(), 15);
    for (m, find, to) in cases {
        let report = check_reference(&mutate(&find, &to));
        for (layer, code, line) in m.expect {
            assert!(
                has(&report, *layer, code, *line),
                "{}: expected {layer:?} {code} at L{line}\n{}",
                m.id,
                dump(&report)
            );
        }
        assert_eq!(error_layers(&report), m.layers, "{}: layers\n{}", m.id, dump(&report));
    }
}

#[test]
fn negative_controls_report_nothing() {
    if !fixtures_present() {
        return;
    }
    let controls = [
        ("sham-whitespace", NEEDS_TOOL_TASK.to_string(), NEEDS_TOOL_TASK.replacen("task          400", "task 400", 1)),
        (
            "sham-prose",
            "policy:\n  - prob:needs_tool >= 0.5 → use_tool\n".to_string(),
            "**这一行是后来补的说明，只给人读。**\n\npolicy:\n  - prob:needs_tool >= 0.5 → use_tool\n".to_string(),
        ),
        ("sham-schema-spacing", "schema: decision-contract/v1".to_string(), "schema:decision-contract/v1".to_string()),
        ("sham-dynamic-spacing", "canDelete) → candidates —— ".to_string(), "canDelete)→candidates —— ".to_string()),
    ];
    for (id, find, to) in controls {
        let report = check_reference(&mutate(&find, &to));
        assert!(report.diagnostics.is_empty(), "{id}:\n{}", dump(&report));
    }
}

#[test]
fn renaming_a_required_block_is_reported() {
    if !fixtures_present() {
        return;
    }
    let report = check_reference(&mutate("## step_ok\n", "## step_ok_renamed\n"));
    let missing: Vec<_> = report.layer(Layer::Adapter).filter(|d| d.code == codes::A_BLOCK_MISSING).collect();
    assert_eq!(missing.len(), 1);
    assert!(missing[0].message.contains("`step_ok`"));
    assert_eq!(missing[0].help.as_deref(), Some("did you mean to name `## step_ok_renamed` `## step_ok`?"));
}

fn custom_graph_caps() -> Capabilities {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    Capabilities {
        positions: [
            ("host:issue-triage".to_string(), strings(&["call"])),
            ("host:test-failure".to_string(), strings(&["call"])),
            ("host:review".to_string(), strings(&["ask_human", "finish"])),
        ]
        .into_iter()
        .collect(),
        actions: strings(&["call", "escalate", "ask_human", "finish"]),
        state_cells: Some(strings(&["task", "output", "evidence", "answer"])),
        ..Capabilities::default()
    }
}

#[test]
fn the_custom_graph_has_exactly_one_policy_error() {
    if !fixtures_present() {
        return;
    }
    let caps = custom_graph_caps();
    let report =
        check::check(fixture("custom-graph.DECISION.md").as_bytes(), CheckOptions { capabilities: Some(&caps) });
    let errors: Vec<_> = report.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{}", dump(&report));
    let e = errors[0];
    assert_eq!((e.layer, e.code, e.block.as_deref()), (Layer::Policy, codes::UNCOMPILED, Some("request_review")));
    assert!(e.message.contains("prob:true >= 0.6"));
    assert_eq!(e.span.line, 65, "the rule's line");
    assert_eq!(e.help.as_deref(), Some("this block's questions are `request_review`"));
    // With no host positions registered, the first block is refused.
    let empty = Capabilities { positions: Default::default(), ..custom_graph_caps() };
    let report =
        check::check(fixture("custom-graph.DECISION.md").as_bytes(), CheckOptions { capabilities: Some(&empty) });
    assert!(
        report.layer(Layer::Adapter).any(|d| d.code == codes::A_POSITION && d.message.contains("`host:issue-triage`"))
    );
}

#[test]
fn the_capability_report_is_sufficient_for_both_fixtures() {
    if !fixtures_present() {
        return;
    }
    let caps = Capabilities::from_json(fixture("external-host.capabilities.json")).unwrap();
    for source in [reference_md(), fixture("custom-graph.DECISION.md")] {
        let report = check::check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) });
        assert_eq!(report.layer(Layer::Adapter).count(), 0, "{}", dump(&report));
        assert_eq!(report.layer(Layer::Schema).count(), 0);
    }
}

#[test]
fn adapter_negative_fixtures() {
    if !fixtures_present() {
        return;
    }
    let check_with =
        |caps: &Capabilities, source: &str| check::check(source.as_bytes(), CheckOptions { capabilities: Some(caps) });
    let adapter_has = |report: &Report, code: &str, needle: &str| {
        report
            .layer(Layer::Adapter)
            .any(|d| d.code == code && d.message.contains(needle) && d.severity == Severity::Error)
    };
    let mut caps = Capabilities::reference();
    caps.projections.retain(|p| p != "resultMaybe");
    let report = check_with(&caps, reference_md());
    assert!(adapter_has(&report, codes::A_PROJECTION, "`resultMaybe`"), "{}", dump(&report));
    let line = report.layer(Layer::Adapter).find(|d| d.code == codes::A_PROJECTION).unwrap().span.line;
    assert!(reference_md().lines().nth(line as usize - 1).unwrap().contains("resultMaybe"));

    let mut caps = Capabilities::reference();
    caps.state_cells.as_mut().unwrap().retain(|c| c != "task");
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_STATE_CELL, "`task`"));

    let mut caps = Capabilities::reference();
    caps.dynamic_providers.clear();
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_PROVIDER, "`toolsFor`"));

    let mut caps = Capabilities::reference();
    caps.actions.retain(|a| a != "finish");
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_ACTION, "`finish`"));

    let mut caps = Capabilities::reference();
    caps.positions.insert("after-tool".into(), vec!["continue".into()]);
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_ACTION_AT_POSITION, "action `finish`"));

    let mut caps = Capabilities::reference();
    caps.positions.remove("after-generate");
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_POSITION, "`after-generate`"));

    // Provider reads are compared in both directions.
    let mut caps = Capabilities::reference();
    caps.dynamic_provider_reads.insert("fileOptions".into(), vec!["files".into()]);
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_PROVIDER_READS_LESS, "[readFiles]"));
    caps.dynamic_provider_reads
        .insert("fileOptions".into(), vec!["files".into(), "readFiles".into(), "history".into()]);
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_PROVIDER_READS_MORE, "[history]"));
    caps.dynamic_provider_reads.remove("fileOptions");
    assert!(adapter_has(&check_with(&caps, reference_md()), codes::A_PROVIDER_READS_MISSING, "`fileOptions`"));

    // Exclusions must name host cells too.
    let report = check_reference(&mutate(
        "  - draft                               —— 草稿是生成之后才有的东西；这一步根本还没到生成\n",
        "  - draftt —— 草稿是生成之后才有的东西；这一步根本还没到生成\n",
    ));
    assert!(adapter_has(&report, codes::A_EXCL_UNKNOWN, "`draftt`"), "{}", dump(&report));
    // Reading and excluding the same cell contradicts.
    let report = check_reference(&mutate(
        "  - draft                               —— 草稿是生成之后才有的东西；这一步根本还没到生成\n",
        "  - draft —— x\n  - task —— x\n",
    ));
    assert!(adapter_has(&report, codes::A_CONTRADICTION, "`task`"), "{}", dump(&report));
}
