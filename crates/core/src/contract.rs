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
    pub value: String,
    pub span: Span,
}

/// Who answers a block's question(s). `kind` says who answers, not what is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Choice,
    Noul,
    Score,
    Mixed,
    Rule,
}

impl Kind {
    pub const ALL: [Kind; 5] = [Kind::Choice, Kind::Noul, Kind::Score, Kind::Mixed, Kind::Rule];

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
    pub dynamic: Option<Dynamic>,
    pub frame: Option<Frame>,
    pub questions: Vec<Question>,
    pub policy: Vec<Rule>,
    /// Prose lines of the block, joined with `\n` and trimmed.
    pub rationale: String,
}

impl Block {
    /// A block is an authorisation gate iff any policy rule's action is `ask_human`.
    pub fn is_gate(&self) -> bool {
        self.policy.iter().any(|r| r.action == "ask_human")
    }

    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }
}

/// `dynamic: provider(ctx: cells…) → output —— why`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dynamic {
    /// Empty when the call could not be read.
    pub provider: String,
    pub reads: Vec<String>,
    pub output: String,
    pub why: String,
    pub span: Span,
}

/// `frame:` — what the decision sees, and what it deliberately does not see.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Frame {
    pub fields: Vec<FrameField>,
    pub excluded: Vec<Exclusion>,
    /// The `frame:` line.
    pub span: Span,
}

/// `+ key bound [projection] —— why`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameField {
    pub key: String,
    /// Character budget for strings, item budget for lists; always ≥ 1.
    pub bound: u64,
    pub projection: Option<String>,
    pub why: String,
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
    pub field: String,
    pub why: String,
    pub span: Span,
}

/// A question: the block's implicit one (id = block id) or one per `### id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    pub id: String,
    pub ask: String,
    pub primitive: Primitive,
    pub options: Vec<QuestionOption>,
    /// The line of the first option (or the heading when there is none).
    pub span: Span,
}

impl Question {
    pub fn option(&self, name: &str) -> Option<&QuestionOption> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// One `- name — criterion` (named) or `- criterion` (unnamed; name = 0-based index) item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuestionOption {
    pub name: String,
    pub named: bool,
    pub criterion: String,
    pub span: Span,
}

/// One `- predicate → action` policy rule, as written. Compiled in [`crate::policy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub predicate: String,
    pub action: String,
    pub span: Span,
}
