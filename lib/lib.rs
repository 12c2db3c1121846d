//! axe: run LLM agents from the shell and give them memory.
//!
//! The library behind the `axe-*` executables. Each executable is a thin
//! file in `bins/` that hands its [`cli::Command`] to [`cli::main`]; all
//! behaviour lives here so the small tools, `axe-run` and `axe-gc` share
//! one implementation of every operation.

pub mod agent;
pub mod cli;
pub mod commands;
pub mod config;
pub mod dirs;
pub mod error;
pub mod files;
pub mod glob;
pub mod init;
pub mod llm;
pub mod memory;
pub mod prompt;
pub mod run;
mod signals;
pub mod stderr;
pub mod timeout;

pub use error::{Error, Result};
