//! Threshold overrides (`--gate block.question=value`, runtime.md §5.1).
//!
//! A gate replaces the threshold of one rule: `block.question` names tier 0 (the first rule
//! of the block with a threshold on that question), `block.question[i]` names tier `i`.
//! Overrides are all-or-nothing: one bad item (unknown block or question, no threshold, a
//! tier out of range, a broken tier order) rejects the whole set, so a run never starts with
//! half of the thresholds someone asked for. The overridden rule's text shows the value
//! actually used, so reasons and logs never show a stale number.

use std::collections::{HashMap, HashSet};

use thiserror::Error;

use super::compile::decimal;
use super::{Comparison, CompiledPolicy, CompiledRule, Predicate};
use crate::contract::Block;
use crate::syntax::text::js_trim;

/// One threshold override.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The block whose policy is overridden.
    pub block: String,
    /// The question whose threshold rule is overridden.
    pub question: String,
    /// Which threshold rule on the question, in document order (0 for a bare key).
    pub tier: usize,
    /// The threshold to use instead.
    pub value: f64,
}

impl Gate {
    /// The key as it would be written: `block.question` or `block.question[i]`.
    pub fn key(&self) -> String {
        if self.tier == 0 {
            format!("{}.{}", self.block, self.question)
        } else {
            format!("{}.{}[{}]", self.block, self.question, self.tier)
        }
    }
}

/// Why a set of overrides was rejected (none of them is applied).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GateError {
    /// An item without `=` (the item).
    #[error("gate `{0}` is not `block.question=value`")]
    Malformed(String),
    /// A key that is not `block.question` or `block.question[i]` (the key).
    #[error("gate key `{0}` is not `block.question` or `block.question[i]`")]
    BadKey(String),
    /// A value that is not a threshold number.
    #[error("gate `{key}`: `{value}` is not a threshold (digits with an optional decimal point)")]
    BadValue {
        /// The item's key.
        key: String,
        /// The value as written.
        value: String,
    },
    /// The same key twice (the key).
    #[error("gate `{0}` is given more than once")]
    Duplicate(String),
    /// No block with the key's block id (the key).
    #[error("gate `{0}`: no block with that id")]
    UnknownBlock(String),
    /// The block has no question with the key's question id (the key).
    #[error("gate `{0}`: the block has no question with that id")]
    UnknownQuestion(String),
    /// No rule of the block has a threshold on the question (the key).
    #[error("gate `{0}`: no policy rule of the block has a threshold on that question")]
    NoThreshold(String),
    /// The tier is past the question's last threshold rule.
    #[error("gate `{key}`: tier {tier} is out of range (the question has {tiers} threshold rule(s))")]
    TierOutOfRange {
        /// The item's key.
        key: String,
        /// The tier asked for.
        tier: usize,
        /// How many threshold rules the question has.
        tiers: usize,
    },
    /// After the overrides, the question's `>=` tiers no longer decrease, so a lower one
    /// would shadow a higher one.
    #[error(
        "gate `{key}`: after overriding, the `>=` thresholds on `{block}.{question}` must be strictly decreasing, got {thresholds:?}"
    )]
    NotDecreasing {
        /// The key of the item that broke the order.
        key: String,
        /// The block.
        block: String,
        /// The question.
        question: String,
        /// The `>=` thresholds on the question after overriding, in document order.
        thresholds: Vec<f64>,
    },
}

/// Parse `block.question=value` items separated by `,`, `;` or newlines. Empty items are
/// skipped; the same key twice is an error (which value was meant is unknowable).
pub fn parse_gates(text: &str) -> Result<Vec<Gate>, GateError> {
    let mut gates: Vec<Gate> = Vec::new();
    // The keys given so far: a hash set keeps the duplicate check linear in a long list.
    let mut seen: HashSet<GateKey<'_>> = HashSet::new();
    for item in text.split([',', ';', '\n']).map(js_trim).filter(|item| !item.is_empty()) {
        let (key, value) = split_gate(item)?;
        let gate = key.with(value);
        if !seen.insert(key) {
            return Err(GateError::Duplicate(gate.key()));
        }
        gates.push(gate);
    }
    Ok(gates)
}

/// A gate's key, borrowed from the text it was written in.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct GateKey<'t> {
    block: &'t str,
    question: &'t str,
    tier: usize,
}

impl GateKey<'_> {
    fn with(self, value: f64) -> Gate {
        Gate { block: self.block.to_string(), question: self.question.to_string(), tier: self.tier, value }
    }
}

/// Parse one `block.question=value` or `block.question[i]=value` item.
pub fn parse_gate(item: &str) -> Result<Gate, GateError> {
    split_gate(item).map(|(key, value)| key.with(value))
}

fn split_gate(item: &str) -> Result<(GateKey<'_>, f64), GateError> {
    let (key, value) = item.split_once('=').ok_or_else(|| GateError::Malformed(item.to_string()))?;
    let (key, value) = (js_trim(key), js_trim(value));
    let (name, tier) = match key.strip_suffix(']').and_then(|k| k.split_once('[')) {
        Some((name, index)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => {
            (name, index.parse::<usize>().map_err(|_| GateError::BadKey(key.to_string()))?)
        }
        Some(_) => return Err(GateError::BadKey(key.to_string())),
        None => (key, 0),
    };
    let (block, question) = name.split_once('.').ok_or_else(|| GateError::BadKey(key.to_string()))?;
    if !is_gate_word(block) || !is_gate_word(question) {
        return Err(GateError::BadKey(key.to_string()));
    }
    let value = decimal(value).ok_or_else(|| GateError::BadValue { key: key.to_string(), value: value.to_string() })?;
    Ok((GateKey { block, question, tier }, value))
}

/// `[A-Za-z_][A-Za-z0-9_-]*`
fn is_gate_word(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Apply `gates` to the compiled policies of `blocks` (matched by block id). Returns every
/// policy, overridden where a gate applies, or the first error with nothing applied.
///
/// Blocks, policies and each question's tiers are looked up through indexes built once, so
/// the work grows with the gates plus the contract, never with their product.
pub fn apply_gates(
    blocks: &[Block],
    policies: &[CompiledPolicy],
    gates: &[Gate],
) -> Result<Vec<CompiledPolicy>, GateError> {
    let mut out = policies.to_vec();
    // The first block and the first policy of each id, as a search in order would find them.
    let mut block_of: HashMap<&str, &Block> = HashMap::with_capacity(blocks.len());
    for block in blocks {
        block_of.entry(block.id.as_str()).or_insert(block);
    }
    let mut policy_of: HashMap<&str, usize> = HashMap::with_capacity(policies.len());
    for (index, policy) in policies.iter().enumerate() {
        policy_of.entry(policy.block.as_str()).or_insert(index);
    }
    // Each block's questions, and each (policy, question)'s tiers, built when first asked.
    let mut questions_of: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut tiers_of: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    for gate in gates {
        let key = || gate.key();
        let block = *block_of.get(gate.block.as_str()).ok_or_else(|| GateError::UnknownBlock(key()))?;
        let questions = questions_of
            .entry(block.id.as_str())
            .or_insert_with(|| block.questions.iter().map(|q| q.id.as_str()).collect());
        if !questions.contains(gate.question.as_str()) {
            return Err(GateError::UnknownQuestion(key()));
        }
        let policy_index = *policy_of.get(gate.block.as_str()).ok_or_else(|| GateError::NoThreshold(key()))?;
        let tiers = tiers_of.entry((policy_index, gate.question.as_str())).or_insert_with(|| {
            policies.get(policy_index).map_or_else(Vec::new, |p| threshold_rules(p, &gate.question).collect())
        });
        if tiers.is_empty() {
            return Err(GateError::NoThreshold(key()));
        }
        let index = *tiers.get(gate.tier).ok_or(GateError::TierOutOfRange {
            key: key(),
            tier: gate.tier,
            tiers: tiers.len(),
        })?;
        if let Some(rule) = out.get_mut(policy_index).and_then(|policy| policy.rules.get_mut(index)) {
            set_threshold(&mut rule.predicate, gate.value);
            rule.text = replace_trailing_number(&rule.text, gate.value);
        }
    }
    // The `>=` thresholds of each overridden policy, by question, in document order: one
    // pass over its rules; each (policy, question) is then checked once, at its first gate.
    let mut thresholds_of: HashMap<usize, HashMap<&str, Vec<f64>>> = HashMap::new();
    let mut checked: HashSet<(usize, &str)> = HashSet::new();
    for gate in gates {
        let Some(&policy_index) = policy_of.get(gate.block.as_str()) else { continue };
        if !checked.insert((policy_index, gate.question.as_str())) {
            continue;
        }
        let by_question = thresholds_of
            .entry(policy_index)
            .or_insert_with(|| gte_thresholds(out.get(policy_index).map_or(&[][..], |policy| policy.rules.as_slice())));
        let thresholds = by_question.get(gate.question.as_str()).map_or(&[][..], Vec::as_slice);
        if thresholds.windows(2).any(|w| matches!(w, [a, b] if a <= b)) {
            return Err(GateError::NotDecreasing {
                key: gate.key(),
                block: gate.block.clone(),
                question: gate.question.clone(),
                thresholds: thresholds.to_vec(),
            });
        }
    }
    Ok(out)
}

/// The thresholds of the `>=` rules (the tiers that must decrease), by question, in
/// document order.
fn gte_thresholds(rules: &[CompiledRule]) -> HashMap<&str, Vec<f64>> {
    let mut by_question: HashMap<&str, Vec<f64>> = HashMap::new();
    for rule in rules {
        if let Predicate::Compare { form, question, threshold, .. } = &rule.predicate
            && form.comparison() == Comparison::AtLeast
        {
            by_question.entry(question.as_str()).or_default().push(*threshold);
        }
    }
    by_question
}

/// Indices of the rules with a threshold on `question`, in document order (the tiers).
fn threshold_rules<'a>(policy: &'a CompiledPolicy, question: &'a str) -> impl Iterator<Item = usize> + 'a {
    policy
        .rules
        .iter()
        .enumerate()
        .filter(move |(_, r)| r.predicate.threshold().is_some() && r.predicate.question() == Some(question))
        .map(|(i, _)| i)
}

fn set_threshold(predicate: &mut Predicate, value: f64) {
    if let Predicate::Compare { threshold, .. } = predicate {
        *threshold = value;
    }
}

/// Every threshold form ends with its number; replace it with the value actually used
/// (shortest round-trip form, as JavaScript's `String(value)` gives for these numbers).
fn replace_trailing_number(text: &str, value: f64) -> String {
    let head = text.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    format!("{head}{value}")
}

/// What the overrides changed in a policy, for the reason of a decision made under them:
/// `gate: top >= 0.6 → call is now top >= 0.8 → call`, one entry per overridden rule other
/// than `fired` (whose own text already shows the value used). `None` when nothing else was
/// overridden. Without it, a decision by another rule (`else → escalate`) would hide that a
/// gate was raised.
pub fn gate_note(original: &CompiledPolicy, gated: &CompiledPolicy, fired: Option<usize>) -> Option<String> {
    let changed: Vec<String> = original
        .rules
        .iter()
        .zip(&gated.rules)
        .enumerate()
        .filter(|(index, (before, after))| Some(*index) != fired && before.text != after.text)
        .map(|(_, (before, after))| format!("{} is now {}", before.reason(), after.reason()))
        .collect();
    (!changed.is_empty()).then(|| format!("gate: {}", changed.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Kind, Primitive, Question, Rule};
    use crate::diag::Span;
    use crate::policy::{Answer, Answers, compile_block, evaluate};

    fn question(id: &str, primitive: Primitive) -> Question {
        Question { id: id.into(), ask: "a".into(), primitive, options: vec![], span: Span::default() }
    }

    fn block(id: &str, questions: Vec<Question>, rules: &[(&str, &str)]) -> Block {
        Block {
            id: id.into(),
            span: Span::default(),
            kind: Kind::Mixed,
            kind_declared: true,
            position: "before-call".into(),
            purpose: String::new(),
            when_span: Span::default(),
            dynamic: None,
            frame: None,
            questions,
            policy: rules
                .iter()
                .map(|(p, a)| Rule { predicate: (*p).into(), action: (*a).into(), span: Span::default() })
                .collect(),
            rationale: String::new(),
        }
    }

    fn contract() -> (Vec<Block>, Vec<CompiledPolicy>) {
        let blocks = vec![
            block(
                "grade_risk",
                vec![question("risk", Primitive::Score), question("needs_auth", Primitive::Noul)],
                &[
                    ("score:risk >= 2", "ask_human"),
                    ("prob:needs_auth >= 0.5", "ask_human"),
                    ("score:risk >= 1", "auto_audit"),
                    ("else", "auto"),
                ],
            ),
            block(
                "pick_tool",
                vec![question("tool", Primitive::Choice)],
                &[("top >= 0.6", "call"), ("else", "escalate")],
            ),
            block("free", vec![question("tool", Primitive::Choice)], &[("picked:tool = a", "call")]),
        ];
        let policies = blocks.iter().map(|b| compile_block(b).0).collect();
        (blocks, policies)
    }

    #[test]
    fn parses_items_with_every_separator() {
        let gates = parse_gates(" pick_tool.tool=0.7 ; grade_risk.risk[1]=0.5,\nstep_ok.ok = .65 ,").unwrap();
        assert_eq!(gates.len(), 3);
        assert_eq!(gates[0], Gate { block: "pick_tool".into(), question: "tool".into(), tier: 0, value: 0.7 });
        assert_eq!(gates[1].tier, 1);
        assert_eq!(gates[1].key(), "grade_risk.risk[1]");
        assert_eq!(gates[2].value, 0.65);
    }

    #[test]
    fn rejects_malformed_items() {
        assert!(matches!(parse_gates("pick_tool.tool"), Err(GateError::Malformed(_))));
        for key in ["pick_tool", "1a.tool", "a.b.c", "a.b[x]", "a.b[]", "a.b[1", "a b.c", ".q"] {
            assert!(matches!(parse_gate(&format!("{key}=0.5")), Err(GateError::BadKey(_))), "{key}");
        }
        for value in ["", "-1", "1e3", "0.5x", "nan", "1."] {
            assert!(matches!(parse_gate(&format!("a.b={value}")), Err(GateError::BadValue { .. })), "{value}");
        }
        assert!(matches!(parse_gates("a.b=0.5;a.b=0.6"), Err(GateError::Duplicate(_))));
        assert!(parse_gates("a.b=0.5;a.b[1]=0.4").is_ok());
    }

    #[test]
    fn bare_key_overrides_tier_zero_and_reason_shows_the_value_used() {
        let (blocks, policies) = contract();
        let gates = parse_gates("pick_tool.tool=0.75").unwrap();
        let out = apply_gates(&blocks, &policies, &gates).unwrap();
        let pick = out.iter().find(|p| p.block == "pick_tool").unwrap();
        assert_eq!(pick.rules[0].predicate.threshold(), Some(0.75));
        assert_eq!(pick.rules[0].reason(), "top >= 0.75 → call");
        // Other policies are untouched.
        assert_eq!(out[0], policies[0]);
        let answers = Answers::from([(
            "tool".to_string(),
            Answer::Choice {
                choice: "a".into(),
                probabilities: [("a".to_string(), 0.7), ("b".to_string(), 0.3)].into(),
                confidence: None,
            },
        )]);
        assert_eq!(evaluate(&policies[1], &answers).action, "call");
        let d = evaluate(pick, &answers);
        assert_eq!(d.action, "escalate");
        assert_eq!(d.margin.unwrap().threshold, 0.75);
    }

    #[test]
    fn tiers_select_later_threshold_rules() {
        let (blocks, policies) = contract();
        let out = apply_gates(&blocks, &policies, &parse_gates("grade_risk.risk[1]=1.5").unwrap()).unwrap();
        assert_eq!(out[0].rules[2].predicate.threshold(), Some(1.5));
        assert_eq!(out[0].rules[2].reason(), "score:risk >= 1.5 → auto_audit");
        assert_eq!(out[0].rules[0].predicate.threshold(), Some(2.0));
        let both = apply_gates(&blocks, &policies, &parse_gates("grade_risk.risk=3;grade_risk.risk[1]=2").unwrap());
        assert_eq!(both.unwrap()[0].rules[0].reason(), "score:risk >= 3 → ask_human");
    }

    #[test]
    fn every_failure_applies_nothing() {
        let (blocks, policies) = contract();
        type IsExpected = fn(&GateError) -> bool;
        let cases: [(&str, IsExpected); 6] = [
            ("nope.tool=0.5", |e| matches!(e, GateError::UnknownBlock(_))),
            ("pick_tool.file=0.5", |e| matches!(e, GateError::UnknownQuestion(_))),
            ("free.tool=0.5", |e| matches!(e, GateError::NoThreshold(_))),
            ("pick_tool.tool[1]=0.5", |e| matches!(e, GateError::TierOutOfRange { tiers: 1, .. })),
            ("grade_risk.risk=1", |e| matches!(e, GateError::NotDecreasing { .. })),
            ("grade_risk.risk[1]=2.5", |e| matches!(e, GateError::NotDecreasing { .. })),
        ];
        for (text, is_expected) in cases {
            // A valid gate first: it must not be applied either.
            let gates = parse_gates(&format!("pick_tool.tool=0.9;{text}")).unwrap();
            let err = apply_gates(&blocks, &policies, &gates).unwrap_err();
            assert!(is_expected(&err), "{text}: {err}");
        }
        // The decreasing rule holds after all overrides, not one at a time.
        assert!(
            apply_gates(&blocks, &policies, &parse_gates("grade_risk.risk[1]=2.5;grade_risk.risk=3").unwrap()).is_ok()
        );
    }
}
