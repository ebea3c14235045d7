//! The typed contract: what a host consumes. Every element keeps its source span.

use serde::Serialize;

use crate::diag::Span;

/// A parsed `DECISION.md`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Contract {
    /// The `# title` line before the first block (last one wins).
    pub title: Option<String>,
    /// Prose before the first block, trimmed.
    pub intro: String,
    /// The `schema:` declaration before the first block (last one wins).
    pub schema: Option<Located>,
    /// Decision blocks in document order (generator sections excluded).
    pub blocks: Vec<Block>,
    /// The generator sections' raw text, joined and trimmed; `None` when there is none.
    pub generator: Option<String>,
}

/// A string value with the span it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Located {
    /// The value, trimmed as the parser reads it.
    pub value: String,
    /// Where the value was read: the declaration line, trimmed.
    pub span: Span,
}

/// Who answers a block's question(s). `kind` says who answers, not what is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The decision model picks one of several named options (format.md §1.6: exactly one
    /// `choice` question).
    Choice,
    /// The decision model answers one yes/no question with a probability of `true`.
    Noul,
    /// The decision model grades one question on ordered levels.
    Score,
    /// The decision model answers two or more questions of any primitive at once.
    Mixed,
    /// Code decides from the policy alone; no model is asked and the block has no questions.
    Rule,
}

impl Kind {
    /// Every kind, in the order the format spec lists them (§2.1).
    pub const ALL: [Kind; 5] = [Kind::Choice, Kind::Noul, Kind::Score, Kind::Mixed, Kind::Rule];

    /// The `kind:` value as written in a contract (lowercase).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Choice => "choice",
            Kind::Noul => "noul",
            Kind::Score => "score",
            Kind::Mixed => "mixed",
            Kind::Rule => "rule",
        }
    }

    /// Exact, case-sensitive lookup.
    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// The primitive type of a question, inferred from how its options are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Primitive {
    /// Exactly two named options, `true` and `false`.
    Noul,
    /// All options named.
    Choice,
    /// No option named: ordered levels, lowest first.
    Score,
}

impl Primitive {
    /// The lowercase name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Primitive::Noul => "noul",
            Primitive::Choice => "choice",
            Primitive::Score => "score",
        }
    }
}

/// One `## id` decision block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// The heading text after `## `; also the id of the block's implicit question.
    pub id: String,
    /// The heading line.
    pub span: Span,
    /// The declared kind; `Rule` when `kind:` is missing or invalid (as the reference does).
    pub kind: Kind,
    /// Whether a valid `kind:` line was seen.
    pub kind_declared: bool,
    /// The position token of `when:` (empty when missing).
    pub position: String,
    /// The human purpose after `——` in `when:`.
    pub purpose: String,
    /// The `when:` line, or the heading line when there is none.
    pub when_span: Span,
    /// The `dynamic:` declaration (kept even when it has problems); `None` when there is no
    /// non-blank `dynamic:` line.
    pub dynamic: Option<Dynamic>,
    /// The `frame:` region (the last one when written twice); `None` when there is none,
    /// which is an error for every kind but `rule`.
    pub frame: Option<Frame>,
    /// The questions kept after parsing, in document order (a question with no options is
    /// dropped); empty for a well-formed `rule` block.
    pub questions: Vec<Question>,
    /// The policy rules in document order (first match wins); rules with no `→` or an empty
    /// side are not recorded.
    pub policy: Vec<Rule>,
    /// Prose lines of the block, joined with `\n` and trimmed.
    pub rationale: String,
}

impl Block {
    /// A block is an authorisation gate iff any policy rule's action is `ask_human`.
    pub fn is_gate(&self) -> bool {
        self.policy.iter().any(|r| r.action == "ask_human")
    }

    /// The question with this id; `None` when the block has none of that id.
    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }
}

/// `dynamic: provider(ctx: cells…) → output —— why`: the block's options are rebuilt at run
/// time by a host provider (format.md §1.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dynamic {
    /// The provider's name; empty when the call could not be read. Not checked against any
    /// registry here (the adapter layer does that).
    pub provider: String,
    /// The state cells the provider reads, as listed after `ctx:`, duplicates kept.
    pub reads: Vec<String>,
    /// What the provider produces; only `candidates` is valid.
    pub output: String,
    /// The reason after `——`; empty when missing (an error).
    pub why: String,
    /// The `dynamic:` line.
    pub span: Span,
}

/// `frame:` — what the decision sees, and what it deliberately does not see.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Frame {
    /// The `+` lines: cells the decision model is shown, in document order.
    pub fields: Vec<FrameField>,
    /// The `-` lines: cells deliberately withheld, each with its reason.
    pub excluded: Vec<Exclusion>,
    /// The `frame:` line.
    pub span: Span,
}

/// `+ key bound [projection] —— why`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameField {
    /// The key the value is sent under; also the state cell read when there is no projection.
    pub key: String,
    /// Character budget for strings, item budget for lists; always ≥ 1.
    pub bound: u64,
    /// The projection that computes the value from a state cell (e.g. `readMaybe`); `None`
    /// means the cell named `key` is sent as it is, clipped to `bound`.
    pub projection: Option<String>,
    /// Why the decision needs this field (the text after `——`); empty when missing (an error).
    pub why: String,
    /// The `+` line.
    pub span: Span,
}

impl FrameField {
    /// The state cell this field reads: the projection's cell when the projection is known,
    /// otherwise the field key itself.
    pub fn source_cell<'a>(&'a self, projection_reads: impl Fn(&str) -> Option<&'a str>) -> &'a str {
        match &self.projection {
            Some(p) => projection_reads(p).unwrap_or(&self.key),
            None => &self.key,
        }
    }
}

/// `- cell —— why`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exclusion {
    /// The state cell withheld from the decision.
    pub field: String,
    /// Why the decision must not see it; empty when missing (an error).
    pub why: String,
    /// The `-` line.
    pub span: Span,
}

/// A question: the block's implicit one (id = block id) or one per `### id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// The block id for the implicit question, else the `###` subheading text; unique within
    /// its block in a file without errors. Policy predicates name questions by this id.
    pub id: String,
    /// The `ask:` text put to the decision model; empty when missing (an error).
    pub ask: String,
    /// The primitive inferred from how the options are written (format.md §1.5).
    pub primitive: Primitive,
    /// The options in document order; never empty (a question without options is dropped).
    pub options: Vec<QuestionOption>,
    /// The line of the first option (or the heading when there is none).
    pub span: Span,
}

impl Question {
    /// The option of this name (for a score question, the decimal level index); `None` when
    /// there is none.
    pub fn option(&self, name: &str) -> Option<&QuestionOption> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// One `- name — criterion` (named) or `- criterion` (unnamed; name = 0-based index) item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuestionOption {
    /// The name before the separator, or the 0-based index as a decimal string (`"0"`, `"1"`,
    /// …) for an unnamed option.
    pub name: String,
    /// Whether the name was written (`- name — criterion`) rather than being the index.
    pub named: bool,
    /// The text that tells the decision model when this option applies (a score level's
    /// description for an unnamed option).
    pub criterion: String,
    /// The option's list-item line.
    pub span: Span,
}

/// One `- predicate → action` policy rule, as written. Compiled in [`crate::policy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The predicate text before `→`, trimmed and not yet compiled (e.g. `prob:ok >= 0.7`).
    pub predicate: String,
    /// The action after `→`; one of [`crate::vocab::ACTIONS`] in a file without errors.
    pub action: String,
    /// The rule's list-item line.
    pub span: Span,
}
