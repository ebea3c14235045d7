//! What a compiled predicate is. A threshold predicate is a [`Probe`] (what it reads from an
//! answer) compared with a number by a [`Comparison`]; the table [`THRESHOLD_FORMS`] lists
//! the pairs the grammar has (format.md §2.4) with their reference names. Compiling,
//! evaluating, margins, overrides and the checker's dead-rule lints work from the probe and
//! the comparison alone, so a new probe or comparison is a variant of its enum here plus the
//! rows of the table that use it; the compiler's exhaustive matches point at what the
//! variant has to say.

use std::fmt;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::Answer;
use crate::contract::{Primitive, Question};

/// The quantity a threshold predicate reads from an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Probe {
    /// `top`: how decided the answer is, whatever its type (format.md §4.3): the chosen
    /// option's probability, max(p, 1 − p) for a noul, the confidence of a score.
    Top,
    /// `prob:q`: the probability of `true` of a noul answer.
    Prob,
    /// `score:q`: the numeric level of a score answer (format.md §4.4).
    Score,
}

/// Which question a probe reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The block's only question; the form names none (`top >= n`).
    OnlyQuestion,
    /// The question named after the keyword and a colon (`prob:q`), which must be of this type.
    Named(Primitive),
}

impl Probe {
    /// The keyword a form with this probe starts with; also the `form` a wrong-type error names.
    pub const fn keyword(self) -> &'static str {
        match self {
            Probe::Top => "top",
            Probe::Prob => "prob",
            Probe::Score => "score",
        }
    }

    /// Which question the probe reads.
    pub const fn target(self) -> Target {
        match self {
            Probe::Top => Target::OnlyQuestion,
            Probe::Prob => Target::Named(Primitive::Noul),
            Probe::Score => Target::Named(Primitive::Score),
        }
    }

    /// The value the probe reads from `answer`; `None` when it does not apply to that type of
    /// answer.
    pub fn read(self, answer: &Answer) -> Option<f64> {
        match (self, answer) {
            (Probe::Top, answer) => Some(answer.top()),
            (Probe::Prob, Answer::Noul { noul }) => Some(*noul),
            (Probe::Score, Answer::Score { score, .. }) => Some(*score),
            (Probe::Prob | Probe::Score, _) => None,
        }
    }

    /// Whether a comparison that negates another ([`Comparison::negates`]) is, on this probe,
    /// exactly that negation, so it also holds when the answer is missing. The reference
    /// defines `top < t` as NOT `top >= t` (format.md §4.3), while `prob:q < t` needs a noul
    /// answer below `t`.
    pub const fn negation_is_complement(self) -> bool {
        match self {
            Probe::Top => true,
            Probe::Prob | Probe::Score => false,
        }
    }

    /// The values the probe can take on `question`, with what they are called in lints:
    /// the levels of a score question for `score:`, probabilities otherwise.
    pub fn range(self, question: &Question) -> (f64, f64, &'static str) {
        match (self, question.primitive) {
            (Probe::Score, Primitive::Score) => {
                (0.0, question.options.len().saturating_sub(1) as f64, "the score's levels")
            }
            _ => (0.0, 1.0, "probabilities"),
        }
    }
}

/// How a threshold predicate compares its probe with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `>=`: the value is at least the threshold (comparisons are closed, format.md §4.5).
    AtLeast,
    /// `<`: the value is below the threshold.
    Below,
}

impl Comparison {
    /// The operator as written in a predicate.
    pub const fn operator(self) -> &'static str {
        match self {
            Comparison::AtLeast => ">=",
            Comparison::Below => "<",
        }
    }

    /// Whether a value passes against `threshold`.
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Comparison::AtLeast => value >= threshold,
            Comparison::Below => value < threshold,
        }
    }

    /// The comparison this one is the negation of, if any (`<` of `>=`).
    pub const fn negates(self) -> Option<Comparison> {
        match self {
            Comparison::AtLeast => None,
            Comparison::Below => Some(Comparison::AtLeast),
        }
    }

    /// Whether every value that passes against `later` also passes against `earlier`, so a
    /// later rule with the same probe never decides (first match wins).
    pub fn covers(self, earlier: f64, later: f64) -> bool {
        match self {
            Comparison::AtLeast => later >= earlier,
            Comparison::Below => later <= earlier,
        }
    }

    /// Whether no value in `[low, high]` passes against `threshold`.
    pub fn unreachable(self, threshold: f64, low: f64, high: f64) -> bool {
        match self {
            Comparison::AtLeast => threshold > high,
            Comparison::Below => threshold <= low,
        }
    }
}

/// A threshold form of the grammar: a probe and a comparison the grammar allows together.
/// Its fields are private, so every form is a row of [`THRESHOLD_FORMS`] and a combination
/// the grammar refuses (`score:q < n`) cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThresholdForm {
    probe: Probe,
    comparison: Comparison,
    kind: &'static str,
}

/// Every threshold form, in the order the grammar lists them (and help texts show them),
/// with the reference's name for each (format.md §4.7).
pub const THRESHOLD_FORMS: [ThresholdForm; 5] = [
    ThresholdForm { probe: Probe::Top, comparison: Comparison::AtLeast, kind: "topGte" },
    ThresholdForm { probe: Probe::Top, comparison: Comparison::Below, kind: "topLt" },
    ThresholdForm { probe: Probe::Prob, comparison: Comparison::AtLeast, kind: "probGte" },
    ThresholdForm { probe: Probe::Prob, comparison: Comparison::Below, kind: "probLt" },
    ThresholdForm { probe: Probe::Score, comparison: Comparison::AtLeast, kind: "scoreGte" },
];

impl ThresholdForm {
    /// The form comparing `probe` by `comparison`, if the grammar has it.
    pub fn of(probe: Probe, comparison: Comparison) -> Option<ThresholdForm> {
        THRESHOLD_FORMS.into_iter().find(|form| form.probe == probe && form.comparison == comparison)
    }

    /// What the form reads.
    pub const fn probe(self) -> Probe {
        self.probe
    }

    /// How the form compares.
    pub const fn comparison(self) -> Comparison {
        self.comparison
    }

    /// The reference's name for the form (`topGte`, …), as margins and serialised
    /// predicates give it.
    pub const fn kind(self) -> &'static str {
        self.kind
    }

    /// Whether the form holds for the probe's value (`None`: the probe does not apply to the
    /// answer, or there is none).
    pub fn holds(self, value: Option<f64>, threshold: f64) -> bool {
        match self.comparison.negates() {
            Some(negated) if self.probe.negation_is_complement() => !value.is_some_and(|v| negated.holds(v, threshold)),
            _ => value.is_some_and(|v| self.comparison.holds(v, threshold)),
        }
    }
}

/// The form as a help text shows it: `top >= n`, `prob:q < n`.
impl fmt::Display for ThresholdForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let question = match self.probe.target() {
            Target::OnlyQuestion => "",
            Target::Named(_) => ":q",
        };
        write!(f, "{}{question} {} n", self.probe.keyword(), self.comparison.operator())
    }
}

/// A compiled predicate.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// `else` / `_` / `否则` / `其余`: always true.
    Fallback,
    /// A probe compared with a number on one question: `top >= 0.6`, `prob:q < 0.5`,
    /// `score:q >= 2`.
    Compare {
        /// Which probe, which comparison.
        form: ThresholdForm,
        /// The question read (for `top`, the block's only one).
        question: String,
        /// The number compared with.
        threshold: f64,
    },
    /// `picked:q = option` on a choice question.
    Picked {
        /// The choice question.
        question: String,
        /// The option that must have been chosen (exact text; not checked against the options).
        option: String,
    },
    /// A predicate that did not compile: never true, so the policy falls through.
    Never,
}

impl Predicate {
    /// The threshold predicate comparing `probe` of `question` by `comparison` with
    /// `threshold`; `None` when the grammar has no such form (`score:q < n`).
    pub fn compare(probe: Probe, comparison: Comparison, question: &str, threshold: f64) -> Option<Predicate> {
        let form = ThresholdForm::of(probe, comparison)?;
        Some(Predicate::Compare { form, question: question.to_string(), threshold })
    }

    /// The predicate's threshold, if it has one.
    pub fn threshold(&self) -> Option<f64> {
        match self {
            Predicate::Compare { threshold, .. } => Some(*threshold),
            Predicate::Fallback | Predicate::Picked { .. } | Predicate::Never => None,
        }
    }

    /// The question the predicate reads, if any.
    pub fn question(&self) -> Option<&str> {
        match self {
            Predicate::Compare { question, .. } | Predicate::Picked { question, .. } => Some(question),
            Predicate::Fallback | Predicate::Never => None,
        }
    }

    /// The reference's name for the predicate kind (as used in margins).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Predicate::Fallback => "else",
            Predicate::Compare { form, .. } => form.kind(),
            Predicate::Picked { .. } => "picked",
            Predicate::Never => "uncompiled",
        }
    }
}

/// `{"kind": …}` and the variant's fields, the kind in camelCase (`fallback`, `topGte`, …,
/// `picked`, `never`): the shape the predicate had as a tagged enum, kept byte for byte.
impl Serialize for Predicate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tag_only = |serializer: S, kind: &'static str| {
            let mut out = serializer.serialize_struct("Predicate", 1)?;
            out.serialize_field("kind", kind)?;
            out.end()
        };
        match self {
            Predicate::Fallback => tag_only(serializer, "fallback"),
            Predicate::Never => tag_only(serializer, "never"),
            Predicate::Compare { form, question, threshold } => {
                let mut out = serializer.serialize_struct("Predicate", 3)?;
                out.serialize_field("kind", form.kind())?;
                out.serialize_field("question", question)?;
                out.serialize_field("threshold", threshold)?;
                out.end()
            }
            Predicate::Picked { question, option } => {
                let mut out = serializer.serialize_struct("Predicate", 3)?;
                out.serialize_field("kind", "picked")?;
                out.serialize_field("question", question)?;
                out.serialize_field("option", option)?;
                out.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROBES: [Probe; 3] = [Probe::Top, Probe::Prob, Probe::Score];
    const COMPARISONS: [Comparison; 2] = [Comparison::AtLeast, Comparison::Below];

    fn form(probe: Probe, comparison: Comparison) -> ThresholdForm {
        ThresholdForm::of(probe, comparison).unwrap()
    }

    #[test]
    fn the_table_has_each_pair_once_and_only_the_grammar_s_pairs() {
        let mut found = Vec::new();
        for probe in PROBES {
            for comparison in COMPARISONS {
                if let Some(form) = ThresholdForm::of(probe, comparison) {
                    assert_eq!((form.probe(), form.comparison()), (probe, comparison));
                    found.push(form.kind());
                }
            }
        }
        assert_eq!(found, ["topGte", "topLt", "probGte", "probLt", "scoreGte"]);
        assert_eq!(THRESHOLD_FORMS.map(ThresholdForm::kind), ["topGte", "topLt", "probGte", "probLt", "scoreGte"]);
        // `score:q < n` is not in the grammar, so it cannot be built either.
        assert_eq!(ThresholdForm::of(Probe::Score, Comparison::Below), None);
        assert_eq!(Predicate::compare(Probe::Score, Comparison::Below, "risk", 1.0), None);
        let built = Predicate::compare(Probe::Score, Comparison::AtLeast, "risk", 1.0).unwrap();
        assert_eq!(built.kind_name(), "scoreGte");
    }

    #[test]
    fn forms_show_as_the_help_lists_them() {
        let shown: Vec<String> = THRESHOLD_FORMS.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["top >= n", "top < n", "prob:q >= n", "prob:q < n", "score:q >= n"]);
    }

    #[test]
    fn at_least_is_closed_and_below_is_strict() {
        for probe in [Probe::Top, Probe::Prob] {
            let at_least = form(probe, Comparison::AtLeast);
            let below = form(probe, Comparison::Below);
            assert!(at_least.holds(Some(0.6), 0.6) && !at_least.holds(Some(0.59), 0.6), "{at_least}");
            assert!(below.holds(Some(0.59), 0.6) && !below.holds(Some(0.6), 0.6), "{below}");
        }
        let score = form(Probe::Score, Comparison::AtLeast);
        assert!(score.holds(Some(2.4), 2.0) && !score.holds(Some(1.9), 2.0));
    }

    #[test]
    fn top_below_is_the_complement_and_prob_below_needs_a_value() {
        // A missing answer (or one the probe does not read): only `top <` holds.
        for form in THRESHOLD_FORMS {
            let expected = form == self::form(Probe::Top, Comparison::Below);
            assert_eq!(form.holds(None, 0.5), expected, "{form}");
        }
        // So does a value no comparison admits: `top < t` is exactly NOT `top >= t`.
        assert!(form(Probe::Top, Comparison::Below).holds(Some(f64::NAN), 0.5));
        assert!(!form(Probe::Prob, Comparison::Below).holds(Some(f64::NAN), 0.5));
        assert!(!form(Probe::Top, Comparison::AtLeast).holds(Some(f64::NAN), 0.5));
    }

    #[test]
    fn probes_read_only_their_answer_types() {
        let noul = Answer::Noul { noul: 0.2 };
        let score = Answer::Score { score: 2.0, probabilities: Default::default(), confidence: Some(0.7) };
        let choice =
            Answer::Choice { choice: "a".into(), probabilities: [("a".to_string(), 0.9)].into(), confidence: None };
        assert_eq!(PROBES.map(|p| p.read(&noul)), [Some(0.8), Some(0.2), None]);
        assert_eq!(PROBES.map(|p| p.read(&score)), [Some(0.7), None, Some(2.0)]);
        assert_eq!(PROBES.map(|p| p.read(&choice)), [Some(0.9), None, None]);
    }

    #[test]
    fn comparisons_know_when_a_later_tier_is_dead_and_when_no_value_passes() {
        assert!(Comparison::AtLeast.covers(1.0, 2.0) && !Comparison::AtLeast.covers(2.0, 1.0));
        assert!(Comparison::Below.covers(0.5, 0.3) && !Comparison::Below.covers(0.3, 0.5));
        // The same threshold twice: the second rule is dead whichever the comparison.
        assert!(Comparison::AtLeast.covers(1.0, 1.0) && Comparison::Below.covers(0.5, 0.5));
        assert!(Comparison::AtLeast.unreachable(1.5, 0.0, 1.0) && !Comparison::AtLeast.unreachable(1.0, 0.0, 1.0));
        assert!(Comparison::Below.unreachable(0.0, 0.0, 1.0) && !Comparison::Below.unreachable(0.1, 0.0, 1.0));
    }

    #[test]
    fn serialises_as_the_tagged_enum_did() {
        let json = |p: &Predicate| serde_json::to_string(p).unwrap();
        assert_eq!(json(&Predicate::Fallback), r#"{"kind":"fallback"}"#);
        assert_eq!(json(&Predicate::Never), r#"{"kind":"never"}"#);
        let compare = |p, c, t| json(&Predicate::compare(p, c, "q", t).unwrap());
        assert_eq!(
            compare(Probe::Top, Comparison::AtLeast, 0.6),
            r#"{"kind":"topGte","question":"q","threshold":0.6}"#
        );
        assert_eq!(compare(Probe::Top, Comparison::Below, 0.5), r#"{"kind":"topLt","question":"q","threshold":0.5}"#);
        assert_eq!(
            compare(Probe::Prob, Comparison::AtLeast, 0.6),
            r#"{"kind":"probGte","question":"q","threshold":0.6}"#
        );
        assert_eq!(
            compare(Probe::Prob, Comparison::Below, 0.25),
            r#"{"kind":"probLt","question":"q","threshold":0.25}"#
        );
        assert_eq!(
            compare(Probe::Score, Comparison::AtLeast, 2.0),
            r#"{"kind":"scoreGte","question":"q","threshold":2.0}"#
        );
        let picked = Predicate::Picked { question: "tool".into(), option: "a".into() };
        assert_eq!(json(&picked), r#"{"kind":"picked","question":"tool","option":"a"}"#);
    }
}
