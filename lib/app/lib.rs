//! axe: run LLM agents from the shell and give them memory.
//!
//! The application: the commands, over the crates below them
//! (`axe_agent` for agent files and config, `axe_run` for running one,
//! `axe_mcp` for `axe-mcp`'s server, `axe_ledger`, `axe_sync`,
//! `axe_memory`, `axe_tools`, `axe_llm`, `axe_cli`, `axe_base`). Each
//! executable is a thin file in `bins/` that hands its [`cli::Command`] to
//! [`cli::main`]; all behaviour lives in the libraries so the small tools,
//! `axe-run` and `axe-gc` share one implementation of every operation.

// Public: what the executables in bins/ and the tests in tests/ reach.
pub mod commands;

pub use axe_agent as agent;
/// Every environment variable that changes where axe's calls go (tests
/// clear them all).
pub use axe_agent::config::variables;
pub use axe_agent::init;
pub use axe_base::error;
pub use axe_cli as cli;
/// The credential scanner, for whatever keeps or ships memory.
pub use axe_memory::secrets;
