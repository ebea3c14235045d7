//! Questions on the wire, merged requests, answer validation and the decider.

mod answer;
mod compile;
mod decider;
mod wire;

pub use answer::{
    ARGMAX_TOLERANCE, AnswerProblem, MALFORMED_TYPE, Normalized, QuestionProblem, SUM_TOLERANCE, answer_kind,
    malformed_answer, normalize, validate_answer, validate_answers,
};
pub use compile::{
    BlockQuestions, CandidateProvider, CandidateRegistry, Candidates, QuestionError, ReadCells, check_reads,
    compile_questions, wire_question,
};
pub use decider::{CODE_PROVIDER, DecideError, Decider, NodeDecision, NodeSpec, NodeSpecRef, WireJson, invalid_reason};
pub use wire::{Questions, WireQuestion};
