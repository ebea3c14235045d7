//! A block's questions at run time: the file's questions in wire form, with the candidates of
//! a `dynamic:` block built by the host's registered provider.
//!
//! A candidate provider sees only the cells it declared (the file's `dynamic:` reads, which
//! must equal the host's declaration in both directions), so candidates cannot silently
//! depend on a cell nobody wrote down.

use decision_core::contract::{Block, Primitive, Question};
use serde_json::{Map, Value};
use thiserror::Error;

use super::wire::{Questions, WireQuestion};

/// The options a candidate provider offers for one step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Candidates {
    /// `(option id, when to pick it)`, in the order offered.
    pub options: Vec<(String, String)>,
    /// Instructions computed by code, replacing the file's `ask:` (as `pick_input` does).
    pub instructions: Option<String>,
}

/// A host's dynamic candidate provider, registered under the name the file uses.
pub trait CandidateProvider: Send + Sync {
    /// The name a block's `dynamic:` line uses for this provider.
    fn name(&self) -> &str;
    /// The cells this provider reads, as the host declares them.
    fn reads(&self) -> Vec<String>;
    /// Build this step's candidates from `cells`, which shows only the declared cells.
    fn candidates(&self, cells: ReadCells<'_>) -> Candidates;
}

/// The host's cells as a candidate provider sees them: only the cells it declared it reads;
/// any other reads as absent. A view, so nothing is copied.
#[derive(Debug, Clone, Copy)]
pub struct ReadCells<'a> {
    cells: &'a Map<String, Value>,
    reads: Option<&'a [String]>,
}

impl<'a> ReadCells<'a> {
    /// Only the cells named in `reads`.
    pub fn only(cells: &'a Map<String, Value>, reads: &'a [String]) -> Self {
        ReadCells { cells, reads: Some(reads) }
    }

    /// Every cell of `cells` (a map that holds only what may be read).
    pub fn all(cells: &'a Map<String, Value>) -> Self {
        ReadCells { cells, reads: None }
    }

    /// The cell, when it is readable and present.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        match self.reads {
            Some(reads) if !reads.iter().any(|r| r == name) => None,
            _ => self.cells.get(name),
        }
    }

    /// The readable cells that are present, in the host's order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a String, &'a Value)> + 'a {
        let reads = self.reads;
        self.cells.iter().filter(move |(name, _)| reads.is_none_or(|reads| reads.contains(name)))
    }
}

/// Why a block's questions could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum QuestionError {
    /// The block declares no question, so there is nothing to ask.
    #[error("block `{block}` has no questions")]
    NoQuestions {
        /// The block id.
        block: String,
    },
    /// The block is `dynamic:` over a provider the host did not register.
    #[error("block `{block}`: the host has not registered dynamic provider `{provider}`")]
    UnregisteredProvider {
        /// The block id.
        block: String,
        /// The provider name the file uses.
        provider: String,
    },
    /// The file's `dynamic:` reads and the provider's [`CandidateProvider::reads`] are not
    /// the same set.
    #[error(
        "block `{block}`: provider `{provider}` reads differ from the file (the host lacks {missing:?}; the file does not declare {extra:?})"
    )]
    ReadsDiffer {
        /// The block id.
        block: String,
        /// The provider name.
        provider: String,
        /// Cells the file declares and the provider does not read.
        missing: Vec<String>,
        /// Cells the provider reads and the file does not declare.
        extra: Vec<String>,
    },
    /// Candidates go into the block's one `choice` question; the block has none or several.
    #[error("block `{block}`: a dynamic block needs exactly one choice question to receive candidates (found {found})")]
    DynamicTarget {
        /// The block id.
        block: String,
        /// How many choice questions it has.
        found: usize,
    },
}

/// The registered candidate providers.
#[derive(Default)]
pub struct CandidateRegistry {
    providers: Vec<Box<dyn CandidateProvider>>,
}

impl CandidateRegistry {
    /// A registry with no providers.
    pub fn new() -> Self {
        CandidateRegistry::default()
    }

    /// Register a provider; a later registration under the same name replaces the earlier.
    pub fn register(&mut self, provider: Box<dyn CandidateProvider>) {
        self.providers.retain(|p| p.name() != provider.name());
        self.providers.push(provider);
    }

    /// The provider registered under `name`, if any.
    pub fn get(&self, name: &str) -> Option<&dyn CandidateProvider> {
        self.providers.iter().find(|p| p.name() == name).map(|p| &**p)
    }

    /// The registered names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.providers.iter().map(|p| p.name()).collect()
    }
}

/// A block's compiled questions for one step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockQuestions {
    /// The questions to send, in the file's order, dynamic candidates filled in.
    pub questions: Questions,
    /// Dynamic questions with no candidates this step: not asked at all (a choice over
    /// nothing is invalid), so the host must not decide this block now.
    pub not_asked: Vec<String>,
}

/// The wire form of a file question (static options).
pub fn wire_question(question: &Question) -> WireQuestion {
    let instructions = question.ask.clone();
    match question.primitive {
        Primitive::Noul => {
            let criterion = |name: &str| question.option(name).map(|o| o.criterion.clone());
            let criteria = criterion("true").zip(criterion("false"));
            WireQuestion::Noul { instructions, criteria }
        }
        Primitive::Choice => WireQuestion::Choice {
            instructions,
            criteria: question.options.iter().map(|o| (o.name.clone(), o.criterion.clone())).collect(),
        },
        Primitive::Score => WireQuestion::Score {
            instructions,
            criteria: question.options.iter().map(|o| o.criterion.clone()).collect(),
        },
    }
}

/// Compile a block's questions for this step. `cells` are the host's state cells (only the
/// ones a dynamic provider declared are shown to it).
pub fn compile_questions(
    block: &Block,
    cells: &Map<String, Value>,
    registry: &CandidateRegistry,
) -> Result<BlockQuestions, QuestionError> {
    if block.questions.is_empty() {
        return Err(QuestionError::NoQuestions { block: block.id.clone() });
    }
    let mut dynamic = match &block.dynamic {
        Some(dynamic) => {
            let provider = registry.get(&dynamic.provider).ok_or_else(|| QuestionError::UnregisteredProvider {
                block: block.id.clone(),
                provider: dynamic.provider.clone(),
            })?;
            check_reads(&block.id, &dynamic.provider, &dynamic.reads, &provider.reads())?;
            let choices: Vec<&Question> = block.questions.iter().filter(|q| q.primitive == Primitive::Choice).collect();
            let [target] = choices.as_slice() else {
                return Err(QuestionError::DynamicTarget { block: block.id.clone(), found: choices.len() });
            };
            Some((target.id.clone(), provider.candidates(ReadCells::only(cells, &dynamic.reads))))
        }
        None => None,
    };
    // The candidates move into the last question that receives them (there is one).
    let last_target = dynamic.as_ref().and_then(|(target, _)| block.questions.iter().rposition(|q| q.id == *target));
    let mut out = BlockQuestions::default();
    for (index, question) in block.questions.iter().enumerate() {
        match &mut dynamic {
            Some((target, candidates)) if *target == question.id => {
                if candidates.options.is_empty() {
                    out.not_asked.push(question.id.clone());
                    continue;
                }
                let (instructions, criteria) = match last_target == Some(index) {
                    true => (candidates.instructions.take(), std::mem::take(&mut candidates.options)),
                    false => (candidates.instructions.clone(), candidates.options.clone()),
                };
                let instructions = instructions.unwrap_or_else(|| question.ask.clone());
                out.questions.insert(question.id.clone(), WireQuestion::Choice { instructions, criteria });
            }
            _ => {
                out.questions.insert(question.id.clone(), wire_question(question));
            }
        }
    }
    Ok(out)
}

/// The file's reads and the host's must be the same set: a missing cell silently loses a
/// class of candidates; an extra one makes candidates change for a reason nobody wrote down.
pub(crate) fn check_reads(block: &str, provider: &str, file: &[String], host: &[String]) -> Result<(), QuestionError> {
    let missing: Vec<String> = file.iter().filter(|c| !host.contains(c)).cloned().collect();
    let extra: Vec<String> = host.iter().filter(|c| !file.contains(c)).cloned().collect();
    if missing.is_empty() && extra.is_empty() {
        Ok(())
    } else {
        Err(QuestionError::ReadsDiffer { block: block.to_string(), provider: provider.to_string(), missing, extra })
    }
}
