//! Questions on the wire and the validation of their answers.

mod answer;
mod compile;
mod wire;

pub use answer::{
    ARGMAX_TOLERANCE, AnswerProblem, MALFORMED_TYPE, Normalized, QuestionProblem, SUM_TOLERANCE, answer_kind,
    invalid_reason, malformed_answer, normalize, validate_answer, validate_answers,
};
pub use compile::{
    BlockQuestions, CandidateProvider, CandidateRegistry, Candidates, QuestionError, ReadCells, check_reads,
    compile_questions, wire_question,
};
pub use wire::{Questions, WireQuestion};
