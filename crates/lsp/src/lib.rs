//! The DECISION.md language server: `decision check`'s diagnostics on every keystroke, an
//! outline of the contract, hovers that say what an action, a projection, a question or a
//! diagnostic means, completion of kinds, positions, actions, question ids and projections, going to,
//! finding and renaming a question id, and quick fixes, over the Language Server Protocol on a byte stream (the
//! `decision lsp` command serves it on stdio).
//!
//! ```no_run
//! let stdin = std::io::stdin();
//! let ending = decision_lsp::serve(stdin.lock(), std::io::stdout(), decision_lsp::Settings::default())?;
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(missing_docs)]

mod actions;
mod completion;
mod diagnostics;
mod features;
mod hover;
mod navigate;
mod open;
mod server;
mod settings;
pub mod text;
pub mod transport;

pub use server::{Ending, serve};
pub use settings::{BESIDE_FILE, Settings};
