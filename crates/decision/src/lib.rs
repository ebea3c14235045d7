#![doc = include_str!("../GUIDE.md")]
#![deny(missing_docs)]

// The facade names every item it exports: a layer crate's module is never re-exported whole
// (except `api`, which is itself the command surface, and the table of diagnostic codes), so
// what a host or a front end may depend on is this file, read top to bottom.
// `crates/core/tests/architecture.rs` holds the rule.

pub use decision_core::{Contract, Diagnostic, Severity, Span};

/// The command surface every entrance goes through (CLI, Python, wasm, the MCP gateway, the
/// editor server): typed requests in, typed documents or one typed error out.
pub use decision_runtime::api;

/// Checking a contract's text: the contract with every diagnostic.
pub mod check {
    pub use decision_core::check::{Capabilities, CapabilitiesError, CheckOptions, Report, check};
}

/// The checked contract: its blocks, their kinds and questions.
pub mod contract {
    pub use decision_core::contract::{Block, Contract, Kind, Primitive, Question};
}

/// Located diagnostics with stable codes.
pub mod diag {
    pub use decision_core::diag::{Diagnostic, Layer, MAX_DIAGNOSTICS, Omitted, Severity, Span, codes};
}

/// The format's vocabulary: positions, actions, cell types, projections.
pub mod vocab {
    pub use decision_core::vocab::{
        ACTIONS, ANY_POSITION_ACTION, CellType, POSITIONS, PROJECTIONS, RECORD_SCHEMA, Returns, action_semantics,
        position_actions, projection,
    };
}

/// Answers → action: a block's compiled policy.
pub mod policy {
    pub use decision_core::policy::{Answer, CompiledPolicy};
}

/// A block's questions compiled for a request; answers validated against them.
pub mod ask {
    pub use decision_protocol::ask::{
        CandidateRegistry, Questions, WireQuestion, compile_questions, normalize, validate_answers,
    };
}

/// The digests of frames and requests, and the `JSON.stringify`-exact writer they hash.
pub mod digest {
    pub use decision_protocol::digest::{
        digest_bytes, frame_digest, frame_digest_of_json, request_digest, request_digest_of_json, stringify, write_f64,
    };
}

/// Host state → the frame a decision model sees.
pub mod frame {
    pub use decision_protocol::frame::{
        Cell, FrameArtifact, FrameSpec, HostCells, HostState, Mode, Projections, compile_frame,
    };
}

/// A decision record, read from a log and verified.
pub mod record {
    pub use decision_protocol::record::{
        CheckStatus, EventRead, RECORD_SCHEMA, REPLAY_NOTES, VerifyOutcome, read_event, verify_record,
    };
}

/// The indexed candidate table: one request per step, typed answers that fail closed.
pub mod space {
    pub use decision_protocol::space::{
        Applicable, DecisionState, Evidence, HostObject, Operation, Snapshot, SpaceConfig,
    };
}

/// A request → a provider's answers.
pub mod provider {
    pub use decision_runtime::provider::{
        ApiKey, DecisionProvider, MockProvider, ProviderError, Request, Response, ScriptProvider,
    };
    #[cfg(feature = "http")]
    pub use decision_runtime::provider::{OpenAiMode, OpenAiProvider, SystemOneProvider};
}

/// A block's request answered and turned into a decision.
pub mod decide {
    pub use decision_runtime::decide::{Decider, NodeDecision, NodeSpec};
}

/// The host's graph of phases and decisions.
pub mod graph {
    pub use decision_runtime::graph::{
        ActionHandler, CodeDecision, Dispatch, EventSink, EvidenceProvider, FnSink, Graph, GraphContext, GraphHost,
        HostAdapter, HostPhase, Invocation, MemorySink, NodeKind, Problem, RunError, RunOutcome, SinkError,
        StartRefusal, Step, Tee, Transition,
    };

    /// The graph report a host's `--graph` prints, and its check.
    pub mod report {
        pub use decision_runtime::graph::report::{check, generate};
    }
}

/// Contract tests: expected actions for given answers, beside the contract.
pub mod contract_tests {
    pub use decision_runtime::contract_tests::{TestFileError, TestReport, TestRunner, load_tests, tests_beside};
}

/// Reading a log a line at a time, with a cap on each line.
pub mod lines {
    pub use decision_runtime::lines::DEFAULT_MAX_LINE;
}

/// Text from files, models, servers and tasks made safe for a terminal.
pub mod terminal {
    pub use decision_runtime::terminal::{lines, one_line};
}

/// The session log: writing it, its chain and seal, its replay, approvals and heads.
pub mod log {
    pub use decision_runtime::log::{
        ChainStatus, DecisionEvent, FramedDecisionEvent, FsyncPolicy, LogError, LogHead, LogHeader, LogReport,
        ObservedLine, RecordResult, ReplayOptions, SEAL_KEY_VARIABLE, SealKey, SealStatus, SessionLog, next_run,
        now_ms, read_head, replay_file, replay_reader, replay_reader_observed,
    };

    /// Approvals bound to the exact call, used once, and their verification.
    pub mod approval {
        pub use decision_runtime::log::approval::{
            ApprovalError, Ledger, Pending, PendingCall, Verdict, VerifyOptions, answer_event, append_bound_answer,
            append_checked_answer, append_pending, append_used, call_fingerprint, pending_document, read_approvals,
            read_ledger, record_answer, replay_with_ledger, verdict_of, verdict_words, verify_lines, verify_log,
        };
    }

    /// The heads manifest: each run's last line, to find a log cut, rewritten or deleted.
    pub mod heads {
        pub use decision_runtime::log::heads::{HeadEntry, HeadsManifest, entry_problem, record_head};
    }

    /// A replay's findings beyond the records.
    pub mod replay {
        pub use decision_runtime::log::replay::{ChainBreak, MacCheck};
    }

    /// A log line's envelope.
    pub mod envelope {
        pub use decision_runtime::log::envelope::parse_line;
    }

    /// The policies a log's contract gives its blocks, for replay's `--contract`.
    pub mod policy {
        pub use decision_runtime::log::policy::PolicyBook;
    }

    /// What-if: a log's recorded answers under another contract.
    pub mod what_if {
        pub use decision_runtime::log::what_if::WhatIfReport;
    }
}

/// Tool-outcome contracts: typed violations, weak-success telemetry, advisory
/// recommendations.
pub mod outcomes {
    pub use decision_outcomes::{
        ContractSet, EventContext, LintError, Outcome, ToolError, Validated, ValidationVerdict, error_type,
        load_contracts, outcome_event,
    };
    // The function only: the module of the same name is the curated one below.
    pub use decision_outcomes::report::report;

    /// The outcomes report and its event.
    pub mod report {
        pub use decision_outcomes::report::{OUTCOME_EVENT_TYPE, report};
    }
}
