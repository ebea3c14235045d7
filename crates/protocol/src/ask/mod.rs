//! Questions on the wire and the validation of their answers.
//!
//! A block's questions are compiled to their wire form ([`compile_questions`], with the
//! candidates of `dynamic:` blocks from the host's [`CandidateRegistry`]); a provider's
//! response is normalised ([`normalize`], `runtime.md` §1.3) and each answer validated into
//! a typed answer or a typed [`AnswerProblem`] ([`validate_answers`]), failing closed.

mod answer;
mod compile;
mod json_view;
mod wire;

pub use answer::{
    ARGMAX_TOLERANCE, AnswerProblem, MALFORMED_TYPE, Normalized, QuestionProblem, SUM_TOLERANCE, invalid_reason,
    malformed_answer, normalize, validate_answer, validate_answers,
};
pub use compile::{
    BlockQuestions, CandidateProvider, CandidateRegistry, Candidates, QuestionError, ReadCells, compile_questions,
    wire_question,
};
pub use json_view::{BorrowedJson, BorrowedObject, JsonView, ObjectView, Viewed};
pub use wire::{Questions, WireQuestion};
