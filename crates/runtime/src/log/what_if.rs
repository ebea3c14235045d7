//! What-if: re-evaluate every recorded decision's policy under another contract (or other
//! gate thresholds) on the answers that were recorded, and report each decision whose action
//! would change. Nothing is asked of a model: policies are pure functions of the answers.
//!
//! A recorded answer only means something for the question it answered. A decision is
//! re-evaluated only when its recorded questions are the questions the new contract would
//! ask — the same ids, the same kinds, and for questions whose options the file fixes, the
//! same options in the same order. Otherwise it is reported as *not comparable*, with the
//! first difference; it is never guessed. The options of a `dynamic:` block's choice question
//! come from the host at run time, not from the file, so the recorded ones are taken as they
//! were offered.
//!
//! Evaluation is the core's ([`decision_core::policy::evaluate`]) on answers validated by
//! the runtime's [`validate_answers`] against the recorded questions: a recorded answer that
//! is invalid escalates, exactly as it did at run time.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use decision_core::contract::{Block, Contract, Primitive};
use decision_core::policy::{CompiledPolicy, Gate, apply_gates, compile_block, evaluate};
use decision_protocol::digest::{ScanError, Scanner, ValueKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::lines::{DEFAULT_MAX_LINE, Line, LineReader};
use crate::names::snake_case;
use decision_protocol::ask::{
    BorrowedObject, ObjectView, Questions, WireQuestion, invalid_reason, validate_answers, wire_question,
};

/// How many changed and not-comparable decisions a report lists (all are counted).
pub const MAX_LISTED: usize = 10_000;

/// Why the new policies could not be prepared.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum WhatIfError {
    /// A rule of the new contract does not compile: what-if cannot say what it decides.
    #[error("block `{block}`: policy rule {rule} does not compile: {message}")]
    Policy {
        /// The block whose policy it is.
        block: String,
        /// The rule's 1-based position in the block's policy.
        rule: usize,
        /// The compiler's message.
        message: String,
    },
    /// A gate does not apply to the new contract (unknown block or question, or a threshold
    /// out of range).
    #[error("{0}")]
    Gate(#[from] decision_core::policy::GateError),
}

/// What the new contract would ask of one block, and how it would decide.
#[derive(Debug, Clone)]
struct BlockPlan {
    policy: CompiledPolicy,
    /// The questions in file order: id, kind, and the offered ids when the file fixes them.
    questions: Vec<ExpectedQuestion>,
}

#[derive(Debug, Clone)]
struct ExpectedQuestion {
    id: String,
    kind: &'static str,
    /// `None` for the choice question of a `dynamic:` block (the host offers its options).
    offered: Option<Vec<String>>,
}

/// The new contract's policies (gates applied), ready to re-evaluate recorded decisions.
#[derive(Debug, Clone)]
pub struct WhatIf {
    blocks: BTreeMap<String, BlockPlan>,
}

impl WhatIf {
    /// Compile every block's policy and apply the gates (all or nothing). A rule that does
    /// not compile is refused, as a host refuses to load it.
    pub fn new(contract: &Contract, gates: &[Gate]) -> Result<WhatIf, WhatIfError> {
        let mut policies = Vec::with_capacity(contract.blocks.len());
        for block in &contract.blocks {
            let (policy, errors) = compile_block(block);
            if let Some((index, error)) = errors.first() {
                return Err(WhatIfError::Policy {
                    block: block.id.clone(),
                    rule: index + 1,
                    message: error.to_string(),
                });
            }
            policies.push(policy);
        }
        if !gates.is_empty() {
            policies = apply_gates(&contract.blocks, &policies, gates)?;
        }
        let blocks = contract
            .blocks
            .iter()
            .zip(policies)
            .filter(|(block, _)| !block.questions.is_empty())
            .map(|(block, policy)| (block.id.clone(), BlockPlan { policy, questions: expected_questions(block) }))
            .collect();
        Ok(WhatIf { blocks })
    }

    /// Re-evaluate one recorded decision.
    pub fn compare(&self, recorded: &RecordedDecision) -> WhatIfComparison {
        let questions = recorded_questions(&recorded.questions);
        self.judge(recorded, questions.as_ref(), &recorded.answers)
    }

    /// [`WhatIf::judge`] of answers as the log reader read them.
    fn judge_read(
        &self,
        recorded: &RecordedDecision,
        questions: Result<&Questions, &String>,
        answers: &RecordedAnswers<'_>,
    ) -> WhatIfComparison {
        match answers {
            RecordedAnswers::Borrowed(answers) => self.judge(recorded, questions, answers),
            RecordedAnswers::Map(answers) => self.judge(recorded, questions, answers),
        }
    }

    /// Re-evaluate a decision whose recorded questions were already read (`Err`: why they
    /// could not be).
    fn judge(
        &self,
        recorded: &RecordedDecision,
        questions: Result<&Questions, &String>,
        answers: &(impl ObjectView + ?Sized),
    ) -> WhatIfComparison {
        let Some((block_id, plan)) = self.block_of(recorded) else {
            return WhatIfComparison::NotComparable {
                reason: format!("the contract has no block for node `{}`", recorded.id),
            };
        };
        let questions = match questions {
            Ok(questions) => questions,
            Err(reason) => return WhatIfComparison::NotComparable { reason: reason.clone() },
        };
        if let Err(reason) = same_questions(&plan.questions, questions) {
            return WhatIfComparison::NotComparable { reason };
        }
        let decision = match validate_answers(questions, answers) {
            Ok(answers) => {
                let decision = evaluate(&plan.policy, &answers);
                let rule = decision.rule.and_then(|i| plan.policy.rules.get(i)).map(|r| r.reason());
                NewDecision {
                    block: block_id.to_string(),
                    action: decision.action,
                    rule: rule.unwrap_or(decision.reason),
                    margin: decision.margin.map(|m| m.margin),
                    invalid: false,
                }
            }
            Err(problems) => NewDecision {
                block: block_id.to_string(),
                action: "escalate".into(),
                rule: invalid_reason(&problems),
                margin: None,
                invalid: true,
            },
        };
        if decision.action == recorded.action {
            WhatIfComparison::Same(decision)
        } else {
            WhatIfComparison::Changed(decision)
        }
    }

    /// The block a record belongs to: the host's `block` field; else the node; else the spec
    /// id itself; else the last segment of a dotted camelCase spec id in snake_case (the
    /// reference loop's `loop.needsTool` is block `needs_tool`).
    fn block_of(&self, recorded: &RecordedDecision) -> Option<(&str, &BlockPlan)> {
        let direct = [recorded.block.as_deref(), recorded.node.as_deref(), Some(recorded.id.as_str())];
        if let Some((id, plan)) = direct.into_iter().flatten().find_map(|id| self.blocks.get_key_value(id)) {
            return Some((id.as_str(), plan));
        }
        let derived = snake_case(recorded.id.rsplit('.').next().unwrap_or(&recorded.id));
        self.blocks.get_key_value(derived.as_str()).map(|(id, plan)| (id.as_str(), plan))
    }
}

fn expected_questions(block: &Block) -> Vec<ExpectedQuestion> {
    block
        .questions
        .iter()
        .map(|q| {
            let wire = wire_question(q);
            let host_offers = block.dynamic.is_some() && q.primitive == Primitive::Choice;
            ExpectedQuestion {
                id: q.id.clone(),
                kind: wire.type_name(),
                offered: (!host_offers).then(|| wire.offered_ids()),
            }
        })
        .collect()
}

/// The recorded questions in wire form (`{id: {type, instructions, criteria}}`).
fn recorded_questions(value: &Map<String, Value>) -> Result<Questions, String> {
    let mut questions = Questions::new();
    for (id, question) in value {
        let kind = question.get("type").and_then(Value::as_str);
        let instructions = question.get("instructions").and_then(Value::as_str).unwrap_or_default().to_string();
        let criteria = question.get("criteria");
        let wire = match (kind, criteria) {
            (Some("noul"), None) => WireQuestion::Noul { instructions, criteria: None },
            (Some("noul"), Some(Value::Object(pair))) => {
                let text = |key: &str| pair.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
                WireQuestion::Noul { instructions, criteria: Some((text("true"), text("false"))) }
            }
            (Some("choice"), Some(Value::Object(options))) => WireQuestion::Choice {
                instructions,
                criteria: options
                    .iter()
                    .map(|(id, c)| (id.clone(), c.as_str().unwrap_or_default().to_string()))
                    .collect(),
            },
            (Some("score"), Some(Value::Array(levels))) => WireQuestion::Score {
                instructions,
                criteria: levels.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect(),
            },
            _ => return Err(format!("the recorded question `{id}` is not a noul, choice or score question")),
        };
        questions.insert(id.clone(), wire);
    }
    Ok(questions)
}

/// `Err` names the first difference between what the contract would ask and what was asked.
fn same_questions(expected: &[ExpectedQuestion], recorded: &Questions) -> Result<(), String> {
    for question in expected {
        let Some(asked) = recorded.get(&question.id) else {
            return Err(format!("question `{}` was not asked when this was recorded", question.id));
        };
        if asked.type_name() != question.kind {
            return Err(format!(
                "question `{}` is a {} question now; a {} question was recorded",
                question.id,
                question.kind,
                asked.type_name()
            ));
        }
        if let Some(offered) = &question.offered
            && *offered != asked.offered_ids()
        {
            return Err(format!(
                "question `{}` offers {:?} now; {:?} was recorded",
                question.id,
                offered,
                asked.offered_ids()
            ));
        }
    }
    if let Some(extra) = recorded.ids().find(|id| !expected.iter().any(|q| q.id == *id)) {
        return Err(format!("question `{extra}` was recorded but the contract no longer asks it"));
    }
    Ok(())
}

/// One recorded decision, as what-if reads it from a `decision` event.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct RecordedDecision {
    /// The event's `step`, as recorded; `None` when absent.
    #[serde(default)]
    pub step: Option<f64>,
    /// The decision spec id.
    #[serde(default)]
    pub id: String,
    /// The host's graph node, when it records one.
    #[serde(default)]
    pub node: Option<String>,
    /// The host's block id, when it records one.
    #[serde(default)]
    pub block: Option<String>,
    /// This node's own questions, in wire form.
    #[serde(default)]
    pub questions: Map<String, Value>,
    /// The raw answers recorded, by question id (validated again before evaluating).
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// The action recorded; the new one is compared with it.
    #[serde(default)]
    pub action: String,
}

/// The decision the new contract takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewDecision {
    /// The block of the new contract the record was matched to.
    pub block: String,
    /// The action the new policy takes (`escalate` when the recorded answers are invalid).
    pub action: String,
    /// The rule that fires now (`predicate → action`), or why nothing did.
    pub rule: String,
    /// How far the deciding value is from the fired rule's threshold; `None` when the rule
    /// compares no threshold or nothing fired.
    pub margin: Option<f64>,
    /// The recorded answer is invalid for its question, so the decision escalates.
    pub invalid: bool,
}

/// One recorded decision compared with what the new contract decides on the same answers
/// ([`WhatIf::compare`]).
#[derive(Debug, Clone, PartialEq)]
pub enum WhatIfComparison {
    /// The new contract takes the recorded action.
    Same(NewDecision),
    /// The new contract takes another action.
    Changed(NewDecision),
    /// The recorded answers cannot be re-evaluated: no block matches, or the recorded
    /// questions differ from what the new contract asks.
    NotComparable {
        /// The first difference found.
        reason: String,
    },
}

/// Where a recorded decision is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Located {
    /// The log, as the caller named it.
    pub log: String,
    /// 1-based line number.
    pub line: u64,
    /// The run index of the event's envelope.
    pub run: u64,
    /// The recorded `step`, when there is one (an integral step is written as an integer).
    #[serde(serialize_with = "integral_step")]
    pub step: Option<f64>,
    /// The recorded graph node, else the decision spec id.
    pub node: String,
}

/// A step as JSON: `3`, not `3.0`, when it is a whole number JavaScript holds exactly (as
/// the reference writes it); any other recorded value as the number it is.
fn integral_step<S: serde::Serializer>(step: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match step {
        Some(n) if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 =>
        {
            #[allow(clippy::cast_possible_truncation)]
            serializer.serialize_i64(*n as i64)
        }
        Some(n) => serializer.serialize_f64(*n),
        None => serializer.serialize_none(),
    }
}

/// A decision whose action the new contract changes, as the report lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Where the decision is.
    #[serde(flatten)]
    pub at: Located,
    /// The block it was matched to.
    pub block: String,
    /// The recorded action.
    pub old: String,
    /// The action the new contract takes.
    pub new: String,
    /// The rule that fires now, or why nothing did.
    pub rule: String,
    /// The new decision's margin, when its rule compares a threshold.
    pub margin: Option<f64>,
    /// The recorded answers are invalid for the questions, so the new action escalates.
    pub invalid: bool,
}

/// A decision what-if could not re-evaluate, as the report lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotComparable {
    /// Where the decision is.
    #[serde(flatten)]
    pub at: Located,
    /// The first difference between what was asked and what the contract asks.
    pub reason: String,
}

/// Per-block counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BlockSummary {
    /// Decisions of the block read.
    pub decisions: u64,
    /// Of those, the ones whose action changes.
    pub changed: u64,
    /// Of those, the ones that could not be compared.
    pub not_comparable: u64,
}

/// The whole what-if report.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct WhatIfReport {
    /// `decision` events read.
    pub decisions: u64,
    /// Decisions re-evaluated (`unchanged + changed`).
    pub compared: u64,
    /// Decisions the new contract takes the same action on.
    pub unchanged: u64,
    /// Decisions whose action changes.
    pub changed: u64,
    /// Decisions that could not be compared.
    pub not_comparable: u64,
    /// Lines that are not JSON or whose decision event could not be read.
    pub unreadable_lines: u64,
    /// By block id (`?` when no block of the contract matches).
    pub by_block: BTreeMap<String, BlockSummary>,
    /// `old → new` and how many decisions moved that way.
    pub by_action: BTreeMap<String, u64>,
    /// The first [`MAX_LISTED`] changes.
    pub changes: Vec<Change>,
    /// The first [`MAX_LISTED`] decisions that could not be compared.
    pub not_comparable_list: Vec<NotComparable>,
}

/// How many `old → new` keys are searched by comparing them with the move's actions before
/// the key is written and looked up instead. A contract has a handful of actions; a log's
/// recorded actions are whatever it says, and must not make each decision a long search.
const SEARCHED_MOVES: usize = 32;

/// Counts one decision moved from action `old` to `new` under its key `old → new`, written
/// only the first time when there are few keys: a log's changed decisions move between a
/// handful of actions.
fn count_move(by_action: &mut BTreeMap<String, u64>, old: &str, new: &str) {
    if by_action.len() <= SEARCHED_MOVES {
        let is_key =
            |key: &str| key.strip_prefix(old).and_then(|rest| rest.strip_prefix(" → ")).is_some_and(|rest| rest == new);
        if let Some((_, count)) = by_action.iter_mut().find(|(key, _)| is_key(key)) {
            *count += 1;
            return;
        }
    }
    *by_action.entry(format!("{old} → {new}")).or_default() += 1;
}

impl WhatIfReport {
    /// Account for one decision's comparison.
    pub fn add(&mut self, at: Located, recorded: &RecordedDecision, comparison: WhatIfComparison) {
        self.add_located(|| at, recorded, comparison);
    }

    /// [`add`](Self::add), with the location made only when the decision is listed (most
    /// decisions of a log are counted, not listed).
    fn add_located(&mut self, at: impl FnOnce() -> Located, recorded: &RecordedDecision, comparison: WhatIfComparison) {
        self.decisions += 1;
        match comparison {
            WhatIfComparison::Same(new) => {
                self.compared += 1;
                self.unchanged += 1;
                self.by_block.entry(new.block).or_default().decisions += 1;
            }
            WhatIfComparison::Changed(new) => {
                self.compared += 1;
                self.changed += 1;
                let summary = self.by_block.entry(new.block.clone()).or_default();
                summary.decisions += 1;
                summary.changed += 1;
                count_move(&mut self.by_action, &recorded.action, &new.action);
                if self.changes.len() < MAX_LISTED {
                    self.changes.push(Change {
                        at: at(),
                        block: new.block,
                        old: recorded.action.clone(),
                        new: new.action,
                        rule: new.rule,
                        margin: new.margin,
                        invalid: new.invalid,
                    });
                }
            }
            WhatIfComparison::NotComparable { reason } => {
                self.not_comparable += 1;
                // Named as the log names it: its block, else its decision id, else its
                // graph node (a record with none of them is `(unnamed)`).
                let block = recorded
                    .block
                    .iter()
                    .chain(std::iter::once(&recorded.id))
                    .chain(recorded.node.iter())
                    .find(|name| !name.is_empty())
                    .cloned()
                    .unwrap_or_else(|| "(unnamed)".into());
                let summary = self.by_block.entry(block).or_default();
                summary.decisions += 1;
                summary.not_comparable += 1;
                if self.not_comparable_list.len() < MAX_LISTED {
                    self.not_comparable_list.push(NotComparable { at: at(), reason });
                }
            }
        }
    }
}

/// How many distinct question sets the reader keeps parsed (a node asks the same questions
/// from record to record; a dynamic block's vary with its candidates).
const QUESTION_CACHE: usize = 4096;

/// Reads decision events from log lines in place (no tree is built for the state, the frame
/// or the sent questions), keeping each distinct questions text parsed once and stepping over
/// the values a node repeats from record to record with one comparison ([`KnownTexts`]).
#[derive(Default)]
struct DecisionReader {
    questions: HashMap<Vec<u8>, Result<Questions, String>, foldhash::fast::RandomState>,
    known: KnownTexts,
    key: Vec<u8>,
    text: Vec<u8>,
}

/// One decision event of a line, with its questions read.
struct LineDecision<'line> {
    run: u64,
    recorded: RecordedDecision,
    questions: std::ops::Range<usize>,
    answers: RecordedAnswers<'line>,
}

/// Where a value lies in an event (`key` or `frame.key`), and its text.
type KnownText = (Vec<u8>, Vec<u8>);

/// How many nodes [`KnownTexts`] remembers values for (a contract has a few dozen blocks).
const MAX_KNOWN_NODES: usize = 64;
/// How many places of an event [`KnownTexts`] remembers per node (an event has about twenty).
const MAX_KNOWN_PLACES: usize = 64;
/// The longest place name (`frame.` and a member key) [`KnownTexts`] remembers values at.
const MAX_PLACE_NAME: usize = 64;
/// The longest value [`KnownTexts`] remembers.
const MAX_KNOWN_BYTES: usize = 16 * 1024;

/// The text of values already validated, by the node that recorded them and where they lie
/// in the event. A node's records repeat most of their bytes (the frame's field lists and
/// exclusions, the questions asked, the provider), and equal bytes validate alike, so a
/// repeated value is stepped over with one comparison instead of being scanned again. A
/// value that differs is scanned and remembered in its place. Memory is bounded: at most
/// [`MAX_KNOWN_NODES`] nodes, [`MAX_KNOWN_PLACES`] places each, values up to
/// [`MAX_KNOWN_BYTES`].
#[derive(Default)]
struct KnownTexts {
    /// Per node (its quoted id as written): the values remembered for it.
    nodes: Vec<NodeTexts>,
    /// The node of the event being read, once its `id` is known.
    current: Option<usize>,
    /// The entry to reuse when all are taken.
    evict: usize,
}

/// The values remembered for one node, in the order its events hold them.
#[derive(Default)]
struct NodeTexts {
    /// The node's quoted id as written.
    id: Vec<u8>,
    /// Each place and its last value.
    values: Vec<KnownText>,
    /// The place expected next: a node's events list their members in the same order, so
    /// the next place is almost always the one after the last (checked before searching).
    next: usize,
}

impl KnownTexts {
    /// Forgets which node is being read (a new event starts).
    fn reset(&mut self) {
        self.current = None;
    }

    /// Remembers values for `node` (its id's text as written) from now on.
    fn select(&mut self, node: &[u8]) {
        if let Some(index) = self.nodes.iter().position(|known| known.id == node) {
            if let Some(known) = self.nodes.get_mut(index) {
                known.next = 0;
            }
            self.current = Some(index);
            return;
        }
        let fresh = NodeTexts { id: node.to_vec(), values: Vec::new(), next: 0 };
        if self.nodes.len() < MAX_KNOWN_NODES {
            self.nodes.push(fresh);
            self.current = Some(self.nodes.len() - 1);
        } else if let Some(entry) = self.nodes.get_mut(self.evict) {
            *entry = fresh;
            self.current = Some(self.evict);
            self.evict = (self.evict + 1) % MAX_KNOWN_NODES;
        }
    }

    /// Validates the next value and returns where it lies, stepping over it when it repeats
    /// the value remembered at `place` for the current node (or `also`, a value of the same
    /// line already validated, such as the state a frame repeats).
    fn skip(
        &mut self,
        scanner: &mut Scanner<'_>,
        place: &[u8],
        also: Option<&[u8]>,
    ) -> Result<std::ops::Range<usize>, ScanError> {
        if let Some(range) = also.and_then(|text| scanner.skip_known(text)) {
            return Ok(range);
        }
        let Some(node) = self.current.and_then(|index| self.nodes.get_mut(index)) else {
            return scanner.skip_span();
        };
        let values = &mut node.values;
        let expected = values.get(node.next).is_some_and(|(at, _)| at == place);
        let slot = match expected.then_some(node.next).or_else(|| values.iter().position(|(at, _)| at == place)) {
            Some(index) => index,
            None if values.len() < MAX_KNOWN_PLACES && place.len() <= MAX_PLACE_NAME => {
                values.push((place.to_vec(), Vec::new()));
                values.len() - 1
            }
            None => return scanner.skip_span(),
        };
        node.next = slot + 1;
        let Some((_, known)) = values.get_mut(slot) else { return scanner.skip_span() };
        if let Some(range) = scanner.skip_known(known) {
            return Ok(range);
        }
        let range = scanner.skip_span()?;
        let text = scanner.text(range.clone());
        if text.len() <= MAX_KNOWN_BYTES {
            known.clear();
            known.extend_from_slice(text);
        }
        Ok(range)
    }
}

/// A record's answers as read: borrowed from the line, or, for text the borrowed reader
/// refuses, a `serde_json` map (see [`read_answers`]).
enum RecordedAnswers<'line> {
    Borrowed(BorrowedObject<'line>),
    Map(Map<String, Value>),
}

impl Default for RecordedAnswers<'_> {
    fn default() -> Self {
        RecordedAnswers::Borrowed(BorrowedObject::default())
    }
}

/// The recorded answers at the scanner's position (an object), read once: parsed where they
/// lie, borrowing their text (validation reads them as it reads a `serde_json` map), and
/// stepped over by their text (`serde_json` reads JSON as strictly as the scanner, which
/// therefore accepts what it read).
///
/// Text the borrowed reader refuses is read into a `serde_json` map, as it was before the
/// borrowed reader: among it, objects with a key `serde_json` reserves, which some of its
/// features read as something else than an object, so that validation sees what a map
/// holds. Answers `serde_json` cannot read at all (a lone surrogate, nesting past its limit,
/// text that is not JSON) are validated by the scanner as any value is, and are empty (so
/// they fail validation) or break the line, as before.
fn read_answers<'line>(scanner: &mut Scanner<'_>, line: &'line [u8]) -> Result<RecordedAnswers<'line>, ScanError> {
    if let Some(answers) = parse_here::<BorrowedObject<'line>>(scanner, line) {
        return Ok(RecordedAnswers::Borrowed(answers));
    }
    if let Some(answers) = parse_here::<Map<String, Value>>(scanner, line) {
        return Ok(RecordedAnswers::Map(answers));
    }
    let span = scanner.skip_span()?;
    Ok(RecordedAnswers::Map(serde_json::from_slice(line.get(span).unwrap_or_default()).unwrap_or_default()))
}

/// The value at the scanner's position read by `serde_json` as a `T`, and the scanner moved
/// past it; `None` (the scanner unmoved) when `serde_json` cannot read it as one.
fn parse_here<'line, T: serde::Deserialize<'line>>(scanner: &mut Scanner<'_>, line: &'line [u8]) -> Option<T> {
    let rest = line.get(scanner.offset()..).unwrap_or_default();
    let mut parser = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
    let value = parser.next()?.ok()?;
    scanner.skip_known(rest.get(..parser.byte_offset()).unwrap_or_default())?;
    Some(value)
}

impl DecisionReader {
    pub fn new() -> Self {
        DecisionReader::default()
    }

    /// Re-evaluate the decision event of one line, if it holds one. `Err`: the line is not
    /// JSON or its decision event is malformed.
    fn judge_line(
        &mut self,
        what_if: &WhatIf,
        line: &[u8],
    ) -> Result<Option<(u64, RecordedDecision, WhatIfComparison)>, String> {
        // Most lines of a log are not decisions; a decision line always names its type.
        if memchr::memmem::find(line, b"\"type\":\"decision\"").is_none() {
            return Ok(None);
        }
        let Some(found) = self.read(line).map_err(|e| e.to_string())? else { return Ok(None) };
        let text = line.get(found.questions.clone()).unwrap_or_default();
        // Found with one lookup: a node asks the same questions from record to record.
        if let Some(questions) = self.questions.get(text) {
            let comparison = what_if.judge_read(&found.recorded, questions.as_ref(), &found.answers);
            return Ok(Some((found.run, found.recorded, comparison)));
        }
        if self.questions.len() >= QUESTION_CACHE {
            self.questions.clear();
        }
        let parsed = serde_json::from_slice::<Map<String, Value>>(text)
            .map_err(|e| format!("the recorded questions are not a JSON object: {e}"))
            .and_then(|map| recorded_questions(&map));
        let comparison = what_if.judge_read(&found.recorded, parsed.as_ref(), &found.answers);
        self.questions.insert(text.to_vec(), parsed);
        Ok(Some((found.run, found.recorded, comparison)))
    }

    fn read<'line>(&mut self, line: &'line [u8]) -> Result<Option<LineDecision<'line>>, ScanError> {
        let mut scanner = Scanner::new(line)?;
        if scanner.peek_kind()? != ValueKind::Object || !scanner.begin_object()? {
            return Ok(None);
        }
        let mut run = 0;
        let mut found = None;
        loop {
            scanner.member_key(&mut self.key)?;
            match self.key.as_slice() {
                b"run" if scanner.peek_kind()? == ValueKind::Number => {
                    let n = scanner.number_value()?;
                    run = if n.is_finite() && n >= 0.0 { n as u64 } else { 0 };
                }
                b"e" if scanner.peek_kind()? == ValueKind::Object => found = self.event(&mut scanner, line)?,
                _ => scanner.skip_value()?,
            }
            if !scanner.next_member()? {
                break;
            }
        }
        Ok(found.map(|(recorded, questions, answers)| LineDecision { run, recorded, questions, answers }))
    }

    #[allow(clippy::type_complexity)]
    fn event<'line>(
        &mut self,
        scanner: &mut Scanner<'_>,
        line: &'line [u8],
    ) -> Result<Option<(RecordedDecision, std::ops::Range<usize>, RecordedAnswers<'line>)>, ScanError> {
        let mut recorded = RecordedDecision::default();
        let mut is_decision = false;
        let mut questions = 0..0;
        let mut answers = RecordedAnswers::default();
        // The state and the sent questions, which the frame and the questions repeat.
        let (mut state, mut sent_questions) = (None, None);
        self.known.reset();
        if !scanner.begin_object()? {
            return Ok(None);
        }
        loop {
            scanner.member_key(&mut self.key)?;
            let kind = scanner.peek_kind()?;
            match (self.key.as_slice(), kind) {
                (b"type", ValueKind::String) => {
                    // Compared as read (its canonical quoted text), without making a `String` of it.
                    self.text.clear();
                    scanner.string_value(&mut self.text)?;
                    is_decision = self.text == b"\"decision\"";
                }
                (b"step", ValueKind::Number) => recorded.step = Some(scanner.number_value()?),
                (b"id", ValueKind::String) => {
                    let at = scanner.offset();
                    recorded.id = self.string(scanner)?;
                    self.known.select(line.get(at..scanner.offset()).unwrap_or_default());
                }
                (b"node", ValueKind::String) => recorded.node = Some(self.string(scanner)?),
                (b"block", ValueKind::String) => recorded.block = Some(self.string(scanner)?),
                (b"action", ValueKind::String) => recorded.action = self.string(scanner)?,
                (b"frame", ValueKind::Object) => self.frame(scanner, state)?,
                (b"questions", ValueKind::Object) => {
                    questions = self.known.skip(scanner, b"questions", sent_questions)?;
                }
                (b"answers", ValueKind::Object) => answers = read_answers(scanner, line)?,
                (b"state", _) => state = line.get(self.known.skip(scanner, b"state", None)?),
                (b"sentQuestions", _) => {
                    sent_questions = line.get(self.known.skip(scanner, b"sentQuestions", None)?);
                }
                _ => {
                    self.known.skip(scanner, &self.key, None)?;
                }
            }
            if !scanner.next_member()? {
                break;
            }
        }
        Ok(is_decision.then_some((recorded, questions, answers)))
    }

    /// Validates a frame member by member: its state repeats the event's, and its field
    /// lists and exclusions repeat from record to record of a node.
    fn frame(&mut self, scanner: &mut Scanner<'_>, state: Option<&[u8]>) -> Result<(), ScanError> {
        if !scanner.begin_object()? {
            return Ok(());
        }
        loop {
            scanner.member_key(&mut self.key)?;
            if self.key == b"state" {
                self.known.skip(scanner, b"frame.state", state)?;
            } else {
                self.key.splice(0..0, *b"frame.");
                self.known.skip(scanner, &self.key, None)?;
            }
            if !scanner.next_member()? {
                return Ok(());
            }
        }
    }

    fn string(&mut self, scanner: &mut Scanner<'_>) -> Result<String, ScanError> {
        self.text.clear();
        scanner.string_value(&mut self.text)?;
        Ok(decision_protocol::record::text_of(&self.text))
    }
}

/// Re-evaluate every decision of one session log, adding to `report`.
pub fn what_if_reader(
    what_if: &WhatIf,
    log: &str,
    reader: impl Read,
    report: &mut WhatIfReport,
) -> std::io::Result<()> {
    let mut lines = LineReader::new(reader, DEFAULT_MAX_LINE);
    let mut decisions = DecisionReader::new();
    while let Some(line) = lines.next_line()? {
        let (number, bytes) = match line {
            Line::Text { number, bytes, .. } => (number, bytes),
            Line::TooLong { .. } => {
                report.unreadable_lines += 1;
                continue;
            }
        };
        match decisions.judge_line(what_if, bytes) {
            Ok(Some((run, recorded, comparison))) => {
                let at = || Located {
                    log: log.to_string(),
                    line: number,
                    run,
                    step: recorded.step,
                    node: recorded.node.clone().unwrap_or_else(|| recorded.id.clone()),
                };
                report.add_located(at, &recorded, comparison);
            }
            Ok(None) => {}
            Err(_) => report.unreadable_lines += 1,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use decision_core::policy::parse_gates;

    const CONTRACT: &str = "# t\n\nschema: decision-contract/v1\n\n## grade_risk\n\nkind: mixed\nwhen: before-call\n\n### risk\n\nask: How risky?\n\n- read-only\n- reversible write\n- irreversible\n\n### needs_auth\n\nask: Authorise?\n\n- true — yes\n- false — no\n\npolicy:\n  - score:risk >= 2 → ask_human\n  - prob:needs_auth >= 0.5 → ask_human\n  - score:risk >= 1 → auto_audit\n  - else → auto\n";

    fn contract(text: &str) -> Contract {
        decision_core::parse(text.as_bytes()).contract
    }

    fn recorded(score: f64, auth: f64, action: &str) -> RecordedDecision {
        serde_json::from_value(serde_json::json!({
            "step": 1, "id": "loop.gradeRisk", "node": "grade_risk", "block": "grade_risk",
            "questions": {
                "risk": {"type": "score", "instructions": "How risky?", "criteria": ["read-only", "reversible write", "irreversible"]},
                "needs_auth": {"type": "noul", "instructions": "Authorise?", "criteria": {"true": "yes", "false": "no"}}
            },
            "answers": {
                "risk": {"type": "score", "score": score, "probabilities": {"0": 0.8, "1": 0.1, "2": 0.1}},
                "needs_auth": {"type": "noul", "noul": auth}
            },
            "action": action
        }))
        .unwrap()
    }

    #[test]
    fn moves_are_counted_under_their_written_keys_however_many_there_are() {
        let mut by_action = BTreeMap::new();
        let moves = [("auto", "ask_human"), ("a → b", "c"), ("a", "b → c"), ("auto", "ask_human"), ("", "")];
        for (old, new) in moves {
            count_move(&mut by_action, old, new);
        }
        // `a → b → c` is one key for both moves, as writing it makes it.
        let expected: BTreeMap<String, u64> =
            [(" → ".to_owned(), 1), ("a → b → c".to_owned(), 2), ("auto → ask_human".to_owned(), 2)].into();
        assert_eq!(by_action, expected);
        // Past the searched keys, a move is still counted once under its key.
        let mut many = BTreeMap::new();
        for round in 0..2 {
            for i in 0..(SEARCHED_MOVES * 3) {
                count_move(&mut many, &format!("old{i}"), "new");
            }
            assert_eq!(many.len(), SEARCHED_MOVES * 3);
            assert!(many.values().all(|count| *count == round + 1));
        }
    }

    #[test]
    fn the_same_contract_changes_nothing() {
        let what_if = WhatIf::new(&contract(CONTRACT), &[]).unwrap();
        let comparison = what_if.compare(&recorded(0.3, 0.15, "auto"));
        assert!(
            matches!(comparison, WhatIfComparison::Same(ref d) if d.action == "auto" && d.rule == "else → auto"),
            "{comparison:?}"
        );
    }

    #[test]
    fn a_lower_gate_changes_the_action_and_names_the_rule() {
        let gates = parse_gates("grade_risk.needs_auth=0.1").unwrap();
        let what_if = WhatIf::new(&contract(CONTRACT), &gates).unwrap();
        let WhatIfComparison::Changed(new) = what_if.compare(&recorded(0.3, 0.15, "auto")) else { panic!() };
        assert_eq!(new.action, "ask_human");
        assert_eq!(new.rule, "prob:needs_auth >= 0.1 → ask_human");
        assert!((new.margin.unwrap() - 0.05).abs() < 1e-9);
    }

    #[test]
    fn changed_questions_are_not_comparable() {
        let fewer_levels = CONTRACT.replace("- irreversible\n", "");
        let what_if = WhatIf::new(&contract(&fewer_levels), &[]).unwrap();
        let WhatIfComparison::NotComparable { reason } = what_if.compare(&recorded(0.3, 0.15, "auto")) else {
            panic!()
        };
        assert!(reason.contains("question `risk` offers"), "{reason}");

        let renamed = CONTRACT.replace("### needs_auth", "### authorise").replace("prob:needs_auth", "prob:authorise");
        let what_if = WhatIf::new(&contract(&renamed), &[]).unwrap();
        let WhatIfComparison::NotComparable { reason } = what_if.compare(&recorded(0.3, 0.15, "auto")) else {
            panic!()
        };
        assert!(reason.contains("`authorise` was not asked"), "{reason}");

        let no_block = CONTRACT.replace("## grade_risk", "## assess");
        let what_if = WhatIf::new(&contract(&no_block), &[]).unwrap();
        assert!(matches!(what_if.compare(&recorded(0.3, 0.15, "auto")), WhatIfComparison::NotComparable { .. }));
    }

    #[test]
    fn an_invalid_recorded_answer_escalates_as_it_did() {
        let what_if = WhatIf::new(&contract(CONTRACT), &[]).unwrap();
        let comparison = what_if.compare(&recorded(7.0, 0.15, "escalate"));
        assert!(
            matches!(comparison, WhatIfComparison::Same(ref d) if d.invalid && d.action == "escalate"),
            "{comparison:?}"
        );
    }

    #[test]
    fn reference_spec_ids_map_to_blocks() {
        let what_if = WhatIf::new(&contract(CONTRACT), &[]).unwrap();
        let mut record = recorded(2.0, 0.15, "auto");
        record.block = None;
        record.node = None;
        let WhatIfComparison::Changed(new) = what_if.compare(&record) else { panic!() };
        assert_eq!((new.block.as_str(), new.action.as_str()), ("grade_risk", "ask_human"));
    }

    #[test]
    fn a_log_is_read_line_by_line_and_summarised() {
        let what_if = WhatIf::new(&contract(CONTRACT), &parse_gates("grade_risk.needs_auth=0.1").unwrap()).unwrap();
        let event = |r: RecordedDecision| {
            serde_json::json!({"kind": "event", "run": 0, "at": 1, "e": {
                "type": "decision", "step": r.step, "id": r.id, "node": r.node, "block": r.block,
                "questions": r.questions, "answers": r.answers, "action": r.action}})
            .to_string()
        };
        let log = [
            r#"{"kind":"header","v":2,"id":"s"}"#.to_string(),
            event(recorded(0.3, 0.15, "auto")),
            event(recorded(0.3, 0.05, "auto")),
            r#"{"kind":"event","run":0,"e":{"type":"tool:call","tool":"read_file"}}"#.to_string(),
            "{not json \"type\":\"decision\"".to_string(),
        ]
        .join("\n");
        let mut report = WhatIfReport::default();
        what_if_reader(&what_if, "s.jsonl", log.as_bytes(), &mut report).unwrap();
        assert_eq!((report.decisions, report.changed, report.unchanged, report.unreadable_lines), (2, 1, 1, 1));
        assert_eq!(report.by_action.get("auto → ask_human"), Some(&1));
        assert_eq!(report.changes.first().map(|c| c.at.line), Some(2));
        assert_eq!(report.by_block.get("grade_risk").map(|b| b.changed), Some(1));
    }

    /// A decision line as the coding host writes it: a state, a frame repeating the state
    /// and its field lists, sent questions repeated as the questions.
    fn host_line(auth: f64, state: &str, fields: &str) -> String {
        let questions = serde_json::json!({
            "risk": {"type": "score", "instructions": "How risky?", "criteria": ["read-only", "reversible write", "irreversible"]},
            "needs_auth": {"type": "noul", "instructions": "Authorise?", "criteria": {"true": "yes", "false": "no"}}
        })
        .to_string();
        format!(
            concat!(
                r#"{{"kind":"event","run":0,"e":{{"type":"decision","step":1,"id":"loop.gradeRisk","#,
                r#""node":"grade_risk","block":"grade_risk","state":{state},"#,
                r#""frame":{{"node":"loop.gradeRisk","state":{state},"digest":"d","fields":{fields}}},"#,
                r#""sentQuestions":{questions},"questions":{questions},"#,
                r#""answers":{{"risk":{{"type":"score","score":0.3,"probabilities":{{"0":0.8,"1":0.1,"2":0.1}}}},"#,
                r#""needs_auth":{{"type":"noul","noul":{auth}}}}},"action":"auto"}}}}"#
            ),
            state = state,
            fields = fields,
            questions = questions,
            auth = auth
        )
    }

    /// Each line's verdict (changed, unchanged or unreadable), reading all lines with one reader
    /// and reading each with a fresh one.
    /// Per line: decisions changed, unchanged, lines unreadable.
    type Verdict = (u64, u64, u64);

    fn verdicts(lines: &[String]) -> (Vec<Verdict>, Vec<Verdict>) {
        let what_if = WhatIf::new(&contract(CONTRACT), &parse_gates("grade_risk.needs_auth=0.1").unwrap()).unwrap();
        let count = |report: &WhatIfReport| (report.changed, report.unchanged, report.unreadable_lines);
        let mut together = Vec::new();
        let mut report = WhatIfReport::default();
        let mut reader = DecisionReader::new();
        for line in lines {
            let before = count(&report);
            match reader.judge_line(&what_if, line.as_bytes()) {
                Ok(Some((_, recorded, comparison))) => {
                    let at = Located { log: String::new(), line: 0, run: 0, step: None, node: String::new() };
                    report.add(at, &recorded, comparison);
                }
                Ok(None) => {}
                Err(_) => report.unreadable_lines += 1,
            }
            let after = count(&report);
            together.push((after.0 - before.0, after.1 - before.1, after.2 - before.2));
        }
        let alone = lines
            .iter()
            .map(|line| {
                let mut report = WhatIfReport::default();
                what_if_reader(&what_if, "l", line.as_bytes(), &mut report).unwrap();
                count(&report)
            })
            .collect();
        (together, alone)
    }

    #[test]
    fn repeated_values_are_stepped_over_and_read_alike() {
        let state = r#"{"task":"fix it","files":["a.rs","b.rs"]}"#;
        let fields = r#"[{"key":"task","from":"task"},{"key":"files","from":"files"}]"#;
        let lines = [host_line(0.15, state, fields), host_line(0.05, state, fields), host_line(0.15, state, fields)];
        let (together, alone) = verdicts(&lines);
        assert_eq!(together, vec![(1, 0, 0), (0, 1, 0), (1, 0, 0)]);
        assert_eq!(together, alone);
    }

    #[test]
    fn a_value_that_differs_from_the_remembered_one_is_validated_again() {
        let state = r#"{"task":"fix it"}"#;
        let fields = r#"[{"key":"task","from":"task"}]"#;
        let lines = [
            host_line(0.15, state, fields),
            // The frame's field list starts as the remembered one but is not JSON.
            host_line(0.15, state, r#"[{"key":"task","from":"task"},{"key":tru}]"#),
            // A state the frame does not repeat exactly, with an invalid escape.
            host_line(0.15, r#"{"task":"fix \x it"}"#, fields),
            // An invalid string in a field list that differs from the remembered one.
            host_line(0.15, state, "[\"a\u{1}\"]"),
            host_line(0.15, state, fields),
        ];
        let (together, alone) = verdicts(&lines);
        assert_eq!(together, vec![(1, 0, 0), (0, 0, 1), (0, 0, 1), (0, 0, 1), (1, 0, 0)]);
        assert_eq!(together, alone);
    }

    /// `host_line` with its answers object replaced by `answers` (any text).
    fn with_answers(auth: f64, answers: &str) -> String {
        let line = host_line(auth, r#"{"task":"t"}"#, r#"[{"key":"task","from":"task"}]"#);
        let start = line.find(r#""answers":"#).unwrap() + r#""answers":"#.len();
        let end = line.find(r#","action":"#).unwrap();
        format!("{}{answers}{}", &line[..start], &line[end..])
    }

    #[test]
    fn answers_are_read_once_as_json_parse_reads_them_and_the_line_goes_on_after_them() {
        let risk = r#""risk":{"type":"score","score":0.3,"probabilities":{"0":0.8,"1":0.1,"2":0.1}}"#;
        let lines = [
            // Whitespace, and a key given twice: its last value counts (0.15: the gate changes it).
            with_answers(
                0.05,
                &format!(
                    r#" {{ "needs_auth" : {{"type":"noul","noul":0.05}}, {risk} , "needs_auth":{{"type":"noul","noul":0.15}} }}"#
                ),
            ),
            // As written: unchanged at 0.05.
            with_answers(0.05, &format!(r#"{{{risk},"needs_auth":{{"type":"noul","noul":0.05}}}}"#)),
            // A lone surrogate, valid JSON that no map holds: no answers, so the decision
            // escalates (changed from `auto`), and the line is read on.
            with_answers(0.05, &format!(r#"{{{risk},"needs_auth":{{"type":"noul","noul":0.05,"note":"\ud800"}}}}"#)),
            // Not JSON: the line is unreadable.
            with_answers(0.05, &format!(r#"{{{risk},"needs_auth":{{"type":"noul","noul":0.05}},}}"#)),
            with_answers(0.05, r#"{"risk":{"type":"score","score":0.3,"probabilities":{"0":0.8"#),
        ];
        let (together, alone) = verdicts(&lines);
        assert_eq!(together, vec![(1, 0, 0), (0, 1, 0), (1, 0, 0), (0, 0, 1), (0, 0, 1)]);
        assert_eq!(together, alone);
    }

    #[test]
    fn answers_with_a_key_serde_json_reserves_are_judged_as_a_map_reads_them() {
        let what_if = WhatIf::new(&contract(CONTRACT), &parse_gates("grade_risk.needs_auth=0.1").unwrap()).unwrap();
        let risk = r#""risk":{"type":"score","score":0.3,"probabilities":{"0":0.8,"1":0.1,"2":0.1}}"#;
        // With some of serde_json's features on, such an object reads as the JSON text or
        // the number it holds; without them, as an object. Either way as a map reads it.
        for answers in [
            format!(r#"{{{risk},"needs_auth":{{"type":"noul","noul":0.05,"$serde_json::private::RawValue":"1"}}}}"#),
            format!(r#"{{{risk},"needs_auth":{{"$serde_json::private::RawValue":"{{\"noul\":0.05}}"}}}}"#),
            format!(r#"{{{risk},"needs_auth":{{"type":"noul","noul":{{"$serde_json::private::Number":"0.05"}}}}}}"#),
        ] {
            let line = with_answers(0.05, &answers);
            let mut reader = DecisionReader::new();
            let found = reader.read(line.as_bytes()).unwrap().unwrap();
            assert!(matches!(found.answers, RecordedAnswers::Map(_)), "{answers}");
            let asked =
                serde_json::from_slice::<Map<String, Value>>(&line.as_bytes()[found.questions.clone()]).unwrap();
            let questions = recorded_questions(&asked);
            let map: Map<String, Value> = serde_json::from_str(&answers).unwrap_or_default();
            let expected = what_if.judge(&found.recorded, questions.as_ref(), &map);
            let (_, _, judged) = reader.judge_line(&what_if, line.as_bytes()).unwrap().unwrap();
            assert_eq!(judged, expected, "{answers}");
        }
    }

    #[test]
    fn remembered_values_stay_bounded() {
        let mut known = KnownTexts::default();
        for node in 0..MAX_KNOWN_NODES * 2 {
            known.select(format!("\"n{node}\"").as_bytes());
            for place in 0..MAX_KNOWN_PLACES * 2 {
                let text = format!("[{place}]");
                let mut scanner = Scanner::new(text.as_bytes()).unwrap();
                assert_eq!(known.skip(&mut scanner, format!("p{place}").as_bytes(), None).unwrap(), 0..text.len());
            }
            let long = format!("\"{}\"", "x".repeat(MAX_KNOWN_BYTES));
            let mut scanner = Scanner::new(long.as_bytes()).unwrap();
            known.skip(&mut scanner, b"long", None).unwrap();
        }
        assert_eq!(known.nodes.len(), MAX_KNOWN_NODES);
        assert!(known.nodes.iter().all(|node| node.values.len() <= MAX_KNOWN_PLACES));
        assert!(known.nodes.iter().flat_map(|node| &node.values).all(|(_, text)| text.len() <= MAX_KNOWN_BYTES));
    }
}
