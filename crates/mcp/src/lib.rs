//! `decision mcp`: a decision gateway in front of any MCP server.
//!
//! The gateway sits between an MCP client (an agent) and an MCP server. It relays every
//! JSON-RPC message unchanged, except the ones it judges: each `tools/call` becomes a decision
//! under a `DECISION.md` contract (by default the bundled [`BUNDLED_CONTRACT`], answered by the
//! [`heuristic::AnnotationHeuristic`] rules over the tool's annotations), and is forwarded,
//! held for a person ([`approvals`]) or refused with a tool result the agent can act on. Every
//! decision goes into the same sealed session log the other hosts write, so
//! `decision replay --require-seal LOG` verifies a gateway session.
//!
//! The modules, in the order a message meets them: [`framing`] (bounded JSON Lines and the
//! JSON-RPC shapes the gateway writes itself), [`tools`] (the tool definitions a server listed,
//! their annotations with the protocol's defaults, and their pinned digests), [`gate`] (the
//! contract, the frame and the decision), [`approvals`] and [`inbox`] (held calls, answered
//! through the client or by `decision approve` from another process), [`session`] (the log), [`gateway`]
//! (the relay loop) and [`stdio`] (the gateway on standard input and output, the upstream
//! server spawned as a child process, or reached over Streamable HTTP by [`http`], whose event
//! streams [`sse`] reads) and [`listen`] (clients served over Streamable HTTP, a relay loop
//! per client session).
#![deny(missing_docs)]

pub mod approvals;
pub mod framing;
pub mod gate;
pub mod gateway;
pub mod heuristic;
pub mod http;
pub mod inbox;
pub mod listen;
pub mod outcome;
pub mod schema;
pub mod session;
pub mod sse;
pub mod stdio;
pub mod tools;

/// The bundled gateway contract (`examples/mcp-gateway/DECISION.md`), used when no contract
/// is given.
pub const BUNDLED_CONTRACT: &str = include_str!("../../../examples/mcp-gateway/DECISION.md");

/// The name the bundled contract is shown and recorded under.
pub const BUNDLED_CONTRACT_NAME: &str = "examples/mcp-gateway/DECISION.md (bundled)";

pub use gate::{Gate, GateError, Verdict};
pub use gateway::{ApprovalMode, GatewayConfig, Mode};
