//! axe: run LLM agents from the shell and give them memory.
//!
//! The application: agent files, the run, the commands and `axe-mcp`'s
//! server, over the crates below it (`axe_base`, `axe_cli`, `axe_llm`,
//! `axe_memory`, `axe_tools`, `axe_sync`). Each executable is a thin file
//! in `bins/` that hands its [`cli::Command`] to [`cli::main`]; all
//! behaviour lives in the library so the small tools, `axe-run` and
//! `axe-gc` share one implementation of every operation.

// Public: what the executables in bins/ and the tests in tests/ reach.
pub mod agent;
pub mod commands;
pub mod init;

pub use axe_base::error;
pub use axe_cli as cli;
/// The credential scanner, for whatever keeps or ships memory.
pub use axe_memory::secrets;
/// Every environment variable that changes where axe's calls go (tests
/// clear them all).
pub use config::variables;

pub(crate) mod config;
pub(crate) mod files;
pub(crate) mod glob;
pub(crate) mod ledger;
pub(crate) mod mcp;
pub(crate) mod prompt;
pub(crate) mod run;
