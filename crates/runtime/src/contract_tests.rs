//! Contract tests: cases that pin what a contract's policies decide, run without a model.
//!
//! A test file is JSON (see `docs/approvals-whatif-tests.md`):
//!
//! ```json
//! {"tests": [
//!   {"name": "a high risk asks a person", "block": "grade_risk",
//!    "answers": {"risk": {"score": 2.4, "probabilities": {"0": 0.1, "1": 0.1, "2": 0.2, "3": 0.6}},
//!                "needs_auth": {"noul": 0.1}},
//!    "expect": {"action": "ask_human", "rule": "score:risk >= 2 → ask_human"}}
//! ]}
//! ```
//!
//! A case names a block and gives the raw answers (as a provider returns them). Optional:
//! `candidates` (the options a `dynamic:` block offered: `{"question": {"id": "criterion"}}`
//! or `{"question": ["id", …]}`; without them the file's listed options are offered),
//! `state` (host cells: the block's frame is compiled from them, with the reference host's cells
//! unless the runner was given another host's ([`TestRunner::with_cells`]), and
//! must compile), `gates` (`["block.question=value", …]`). `expect` gives the `action`, and
//! optionally the `rule` (`predicate → action`, as reasons show it), `invalid` (the answers
//! must be — or must not be — rejected) and `frame` (fields the compiled frame must hold,
//! with their values). Answers are validated exactly as a run validates them, and the
//! block's policy is evaluated by the core's evaluator.
//!
//! Beside a contract `NAME.md`, its tests are `NAME.tests.json` (`DECISION.tests.json`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use decision_core::contract::{Block, Contract, Primitive};
use decision_core::policy::{CompiledPolicy, apply_gates, compile_block, evaluate, parse_gates};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::api::frame::CellSource;
use decision_protocol::ask::{Questions, WireQuestion, invalid_reason, validate_answers, wire_question};

/// A test file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    /// The cases, run in order.
    pub tests: Vec<TestCase>,
}

/// One case.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    /// What the case pins, as reports name it.
    pub name: String,
    /// The contract block whose policy the case runs.
    pub block: String,
    /// The raw answers by question id, as a provider returns them (validated as a run does).
    pub answers: Map<String, Value>,
    /// The options a `dynamic:` block offered (`{"question": {"id": "criterion"}}` or
    /// `{"question": ["id", …]}`); `None`: the file's listed options are offered.
    #[serde(default)]
    pub candidates: Option<Map<String, Value>>,
    /// Host cells the block's frame is compiled from (with the reference host); `None`: no
    /// frame is compiled.
    #[serde(default)]
    pub state: Option<Map<String, Value>>,
    /// Threshold overrides, `block.question=value`, applied before evaluating.
    #[serde(default)]
    pub gates: Vec<String>,
    /// What the case must decide.
    pub expect: Expectation,
}

/// What a case expects.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The action the policy must take (`escalate` for rejected answers).
    pub action: String,
    /// The rule that must fire, as reasons show it (`predicate → action`); `None`: any.
    #[serde(default)]
    pub rule: Option<String>,
    /// Whether the answers must be rejected (`Some(true)`) or accepted (`Some(false)`);
    /// `None`: either.
    #[serde(default)]
    pub invalid: Option<bool>,
    /// Fields the compiled frame must hold, with their values; `None`: the frame is not
    /// checked.
    #[serde(default)]
    pub frame: Option<Map<String, Value>>,
}

/// Why a test file could not be loaded.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TestFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file, as shown.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON of the test-file shape (unknown fields are refused).
    #[error("{path}: not a test file: {source}")]
    Json {
        /// The file, as shown.
        path: String,
        /// Where and why it does not parse.
        source: serde_json::Error,
    },
    /// No tests file was named and there is none beside the contract.
    #[error("{path}: no tests file given and none beside the contract (looked for {expected})")]
    NotFound {
        /// The contract, as shown.
        path: String,
        /// The path looked for ([`tests_beside`]).
        expected: String,
    },
}

/// The tests file beside a contract: `NAME.md` → `NAME.tests.json`.
pub fn tests_beside(contract: &Path) -> PathBuf {
    contract.with_extension("tests.json")
}

/// Read a test file.
pub fn load_tests(path: &Path) -> Result<TestFile, TestFileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TestFileError::Read { path: shown.clone(), source })?;
    serde_json::from_str(&text).map_err(|source| TestFileError::Json { path: shown, source })
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    /// The test file the case came from, as the runner was given it.
    pub file: String,
    /// The case's name.
    pub name: String,
    /// The block it ran.
    pub block: String,
    /// Every expectation held.
    pub passed: bool,
    /// The action taken; `None` when the case could not run (unknown block, bad gates or
    /// candidates, a frame that does not compile).
    pub action: Option<String>,
    /// The rule that fired (`predicate → action`), or why none did.
    pub rule: Option<String>,
    /// The answers were rejected (the action is then `escalate`).
    pub invalid: bool,
    /// One line per difference from the expectation (`action: expected …, got …`), or the
    /// reason the case could not run.
    pub diff: Vec<String>,
}

/// A rule no case reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uncovered {
    /// The rule's 1-based line in the contract file.
    pub line: u32,
    /// The rule as reasons show it (`predicate → action`).
    pub rule: String,
}

/// Rule coverage of one block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockCoverage {
    /// The block id.
    pub block: String,
    /// How many policy rules the block has.
    pub rules: usize,
    /// How many of them fired in at least one case.
    pub covered: usize,
    /// The rules no case reached, in file order.
    pub uncovered: Vec<Uncovered>,
}

/// All cases of a run, and coverage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestReport {
    /// Cases whose every expectation held.
    pub passed: usize,
    /// Cases that did not pass (or could not run).
    pub failed: usize,
    /// Every case's result, in the order run.
    pub cases: Vec<CaseResult>,
    /// Rule coverage, one entry per block of the contract that has policy rules.
    pub coverage: Vec<BlockCoverage>,
}

impl TestReport {
    /// No case failed.
    pub fn ok(&self) -> bool {
        self.failed == 0
    }
}

/// Runs test files against one contract.
pub struct TestRunner<'c> {
    contract: &'c Contract,
    policies: Vec<CompiledPolicy>,
    /// Rule indices reached, by block.
    reached: BTreeMap<String, BTreeSet<usize>>,
    cases: Vec<CaseResult>,
    /// Whose cells a case's `state` holds.
    cells: CellSource,
    /// With a capability report: the contract's adapter diagnostics, found once for all cases.
    adapter: Vec<decision_core::Diagnostic>,
}

impl<'c> TestRunner<'c> {
    /// A runner with every block's policy compiled (a rule that does not compile is left
    /// out, as the checker reports it) and nothing run yet.
    pub fn new(contract: &'c Contract) -> Self {
        let policies = contract.blocks.iter().map(|b| compile_block(b).0).collect();
        TestRunner {
            contract,
            policies,
            reached: BTreeMap::new(),
            cases: Vec::new(),
            cells: CellSource::Reference,
            adapter: Vec::new(),
        }
    }

    /// The runner with a case's `state` read as this host's cells (the reference coding
    /// host's by default). With a capability report, a case on a block that does not fit the
    /// host fails, naming the adapter errors.
    pub fn with_cells(mut self, cells: CellSource) -> Self {
        if let CellSource::Capabilities { capabilities, .. } = &cells {
            self.adapter = decision_core::check::adapter(self.contract, capabilities);
        }
        self.cells = cells;
        self
    }

    /// Run every case of one file (`file` names it in results).
    pub fn run_file(&mut self, file: &str, tests: &TestFile) {
        for case in &tests.tests {
            let result = self.run_case(file, case);
            self.cases.push(result);
        }
    }

    fn run_case(&mut self, file: &str, case: &TestCase) -> CaseResult {
        let mut result = CaseResult {
            file: file.to_string(),
            name: case.name.clone(),
            block: case.block.clone(),
            passed: false,
            action: None,
            rule: None,
            invalid: false,
            diff: Vec::new(),
        };
        match self.decide(case, &mut result) {
            Ok(()) => result.passed = result.diff.is_empty(),
            Err(problem) => result.diff.push(problem),
        }
        result
    }

    fn decide(&mut self, case: &TestCase, result: &mut CaseResult) -> Result<(), String> {
        let contract = self.contract;
        let (index, block) = contract
            .blocks
            .iter()
            .enumerate()
            .find(|(_, b)| b.id == case.block)
            .ok_or_else(|| format!("the contract has no block `{}`", case.block))?;
        if let Some(why) = crate::api::frame::misfit(&self.adapter, block) {
            return Err(format!("block `{}` does not fit the host: {why}", block.id));
        }
        let (_, errors) = compile_block(block);
        if let Some((rule, error)) = errors.first() {
            return Err(format!("block `{}`: policy rule {} does not compile: {error}", block.id, rule + 1));
        }
        let policy = if case.gates.is_empty() {
            self.policies.get(index).cloned().unwrap_or_default()
        } else {
            let gates = parse_gates(&case.gates.join("\n")).map_err(|e| e.to_string())?;
            let gated = apply_gates(&contract.blocks, &self.policies, &gates).map_err(|e| e.to_string())?;
            gated.into_iter().nth(index).unwrap_or_default()
        };
        if let Some(state) = &case.state {
            let frame = frame_state(block, state, &self.cells)?;
            for (field, expected) in case.expect.frame.iter().flatten() {
                match frame.get(field) {
                    Some(actual) if actual == expected => {}
                    Some(actual) => result.diff.push(format!("frame.{field}: expected {expected}, got {actual}")),
                    None => {
                        result.diff.push(format!("frame.{field}: expected {expected}, but the frame has no such field"))
                    }
                }
            }
        } else if case.expect.frame.is_some() {
            return Err("`expect.frame` needs a `state` to compile the frame from".into());
        }
        let questions = offered_questions(block, case.candidates.as_ref())?;
        let (action, rule, invalid) = match validate_answers(&questions, &case.answers) {
            Ok(answers) => {
                let decision = evaluate(&policy, &answers);
                if let Some(fired) = decision.rule {
                    self.reached.entry(block.id.clone()).or_default().insert(fired);
                }
                let rule = decision.rule.and_then(|i| policy.rules.get(i)).map(|r| r.reason());
                (decision.action, rule.unwrap_or(decision.reason), false)
            }
            Err(problems) => ("escalate".to_string(), invalid_reason(&problems), true),
        };
        let expect = &case.expect;
        if action != expect.action {
            result.diff.push(format!("action: expected {}, got {action}", expect.action));
        }
        if let Some(expected) = &expect.rule
            && *expected != rule
        {
            result.diff.push(format!("rule: expected {expected}, got {rule}"));
        }
        if let Some(expected) = expect.invalid
            && expected != invalid
        {
            result.diff.push(format!("invalid: expected {expected}, got {invalid} ({rule})"));
        }
        result.action = Some(action);
        result.rule = Some(rule);
        result.invalid = invalid;
        Ok(())
    }

    /// The results, with rule coverage of every block that has a policy.
    pub fn finish(self) -> TestReport {
        let coverage = self
            .contract
            .blocks
            .iter()
            .zip(&self.policies)
            .filter(|(_, policy)| !policy.rules.is_empty())
            .map(|(block, policy)| {
                let reached = self.reached.get(&block.id);
                let uncovered: Vec<Uncovered> = policy
                    .rules
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !reached.is_some_and(|r| r.contains(i)))
                    .map(|(_, rule)| Uncovered { line: rule.span.line, rule: rule.reason() })
                    .collect();
                BlockCoverage {
                    block: block.id.clone(),
                    rules: policy.rules.len(),
                    covered: policy.rules.len() - uncovered.len(),
                    uncovered,
                }
            })
            .collect();
        let passed = self.cases.iter().filter(|c| c.passed).count();
        TestReport { passed, failed: self.cases.len() - passed, cases: self.cases, coverage }
    }
}

/// The block's frame state compiled from host cells, for the host `source` names.
fn frame_state(block: &Block, cells: &Map<String, Value>, source: &CellSource) -> Result<Map<String, Value>, String> {
    let host = match source {
        CellSource::Reference => "the reference coding host's cells",
        CellSource::State { .. } => "the keys of the case's state",
        CellSource::Capabilities { .. } => "the cells of the host's capability report",
    };
    match crate::api::ask::compile(block, cells, source.host_cells(cells)) {
        Ok(Some(artifact)) => Ok(Map::clone(&artifact.state)),
        Ok(None) => Err(format!("block `{}` has no frame: a `state` has nothing to compile", block.id)),
        Err(e) => Err(format!("block `{}`: the frame does not compile against {host}: {e}", block.id)),
    }
}

/// The block's questions as offered: a dynamic block's choice question offers the case's
/// candidates when given, else the options the file lists.
fn offered_questions(block: &Block, candidates: Option<&Map<String, Value>>) -> Result<Questions, String> {
    let mut questions = Questions::new();
    for question in &block.questions {
        let wire = match candidates.and_then(|c| c.get(&question.id)) {
            Some(options) => {
                if block.dynamic.is_none() || question.primitive != Primitive::Choice {
                    return Err(format!(
                        "candidates for `{}`: not the choice question of a dynamic block",
                        question.id
                    ));
                }
                WireQuestion::Choice { instructions: question.ask.clone(), criteria: criteria(&question.id, options)? }
            }
            None => wire_question(question),
        };
        questions.insert(question.id.clone(), wire);
    }
    if let Some(extra) = candidates.into_iter().flatten().map(|(id, _)| id).find(|id| block.question(id).is_none()) {
        return Err(format!("candidates for `{extra}`: the block has no such question"));
    }
    Ok(questions)
}

fn criteria(id: &str, options: &Value) -> Result<Vec<(String, String)>, String> {
    let listed: Option<Vec<(String, String)>> = match options {
        Value::Object(map) => map.iter().map(|(k, v)| v.as_str().map(|c| (k.clone(), c.to_string()))).collect(),
        Value::Array(list) => list.iter().map(|v| v.as_str().map(|k| (k.to_string(), String::new()))).collect(),
        _ => None,
    };
    match listed {
        Some(listed) if !listed.is_empty() => Ok(listed),
        _ => Err(format!("candidates for `{id}`: expected a non-empty object of criteria or list of option ids")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRACT: &str = "# t\n\nschema: decision-contract/v1\n\n## step_ok\n\nkind: noul\nwhen: after-call\n\nask: Did it work?\n\n- true — yes\n- false — no\n\npolicy:\n  - prob:step_ok >= 0.6 → continue\n  - prob:step_ok < 0.3 → stop\n  - else → escalate\n";

    fn run(cases: Value) -> TestReport {
        let contract = decision_core::parse(CONTRACT.as_bytes()).contract;
        let tests: TestFile = serde_json::from_value(serde_json::json!({ "tests": cases })).unwrap();
        let mut runner = TestRunner::new(&contract);
        runner.run_file("t.json", &tests);
        runner.finish()
    }

    #[test]
    fn passing_and_failing_cases_with_a_diff_and_coverage() {
        let report = run(serde_json::json!([
            {"name": "works", "block": "step_ok", "answers": {"step_ok": {"noul": 0.9}},
             "expect": {"action": "continue", "rule": "prob:step_ok >= 0.6 → continue"}},
            {"name": "wrong", "block": "step_ok", "answers": {"step_ok": {"noul": 0.1}},
             "expect": {"action": "continue"}},
        ]));
        assert_eq!((report.passed, report.failed), (1, 1));
        assert_eq!(report.cases[1].diff, ["action: expected continue, got stop"]);
        let coverage = &report.coverage[0];
        assert_eq!((coverage.rules, coverage.covered), (3, 2));
        assert_eq!(coverage.uncovered[0].rule, "else → escalate");
    }

    #[test]
    fn invalid_answers_are_expected_or_refused() {
        let report = run(serde_json::json!([
            {"name": "bool is not a probability", "block": "step_ok", "answers": {"step_ok": {"noul": true}},
             "expect": {"action": "escalate", "invalid": true}},
            {"name": "expects valid", "block": "step_ok", "answers": {"step_ok": {"noul": 2}},
             "expect": {"action": "escalate", "invalid": false}},
        ]));
        assert!(report.cases[0].passed, "{:?}", report.cases[0]);
        assert!(!report.cases[1].passed);
        assert!(report.cases[1].diff[0].starts_with("invalid: expected false, got true"), "{:?}", report.cases[1].diff);
    }

    #[test]
    fn gates_apply_per_case_and_unknown_blocks_fail() {
        let report = run(serde_json::json!([
            {"name": "lower gate", "block": "step_ok", "answers": {"step_ok": {"noul": 0.5}},
             "gates": ["step_ok.step_ok=0.5"], "expect": {"action": "continue"}},
            {"name": "no block", "block": "nope", "answers": {}, "expect": {"action": "x"}},
        ]));
        assert!(report.cases[0].passed, "{:?}", report.cases[0]);
        assert!(report.cases[1].diff[0].contains("no block `nope`"));
    }

    #[test]
    fn the_tests_file_is_beside_the_contract() {
        assert_eq!(tests_beside(Path::new("a/DECISION.md")), Path::new("a/DECISION.tests.json"));
    }
}
