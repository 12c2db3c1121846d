//! axe: run LLM agents from the shell and give them memory.
//!
//! The library behind the `axe-*` executables. Each executable is a thin
//! file in `bins/` that hands its [`cli::Command`] to [`cli::main`]; all
//! behaviour lives here so the small tools, `axe-run` and `axe-gc` share
//! one implementation of every operation.

// One exception, allowed where it stands: the sync's gits take a record
// lock between fork and exec (`sync::git`), which std offers only as an
// unsafe hook. Anything else unsafe is a compile error.
#![deny(unsafe_code)]

// Public: what the executables in bins/ and the tests in tests/ reach.
pub mod agent;
pub mod cli;
pub mod commands;
pub mod error;
pub mod init;
/// The credential scanner, for whatever keeps or ships memory.
pub mod secrets;

pub(crate) mod act;
pub(crate) mod beneath;
pub(crate) mod config;
pub(crate) mod dirs;
pub(crate) mod files;
pub(crate) mod glob;
pub(crate) mod llm;
pub(crate) mod mcp;
pub(crate) mod memory;
pub(crate) mod prompt;
pub(crate) mod read;
pub(crate) mod run;
pub(crate) mod signals;
pub(crate) mod stderr;
pub(crate) mod suggest;
pub(crate) mod sync;
pub(crate) mod timeout;
pub(crate) mod tools;
pub(crate) mod unknown;
