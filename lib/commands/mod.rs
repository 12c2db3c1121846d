//! The executables' commands, one module each, those of a memory kind in
//! the kind's folder (`log/`, `notes/`, `state/`, whose `mod.rs` holds what
//! they share), plus what many share (`args`, `stdin`, `answer`).

pub mod agents;
mod answer;
mod args;
pub mod axe;
pub mod config;
pub mod context;
pub mod gc;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod notes;
pub mod run;
pub mod state;
mod stdin;
pub mod sync;

use crate::cli::Command;

/// Every executable's command but `axe`'s, in the order `axe help` lists
/// them; for table checks and generated docs.
pub const ALL: &[&Command] = &[
    &run::COMMAND,
    &gc::COMMAND,
    &agents::COMMAND,
    &config::COMMAND,
    &llm::COMMAND,
    &context::COMMAND,
    &mcp::COMMAND,
    &log::path::COMMAND,
    &log::append::COMMAND,
    &log::load::COMMAND,
    &log::count::COMMAND,
    &log::trim::COMMAND,
    &notes::path::COMMAND,
    &notes::recall::COMMAND,
    &notes::remember::COMMAND,
    &notes::reflect::COMMAND,
    &notes::learn::COMMAND,
    &notes::search::COMMAND,
    &notes::prune::COMMAND,
    &state::path::COMMAND,
    &state::show::COMMAND,
    &state::ingest::COMMAND,
    &state::record::COMMAND,
    &state::context::COMMAND,
    &sync::COMMAND,
];
