//! The executables' commands, one module each, plus what they share.

pub mod agents;
mod answer;
pub mod axe;
pub mod config;
pub mod context;
pub mod gc;
pub mod llm;
pub mod mem_append;
pub mod mem_count;
pub mod mem_load;
pub mod mem_path;
pub mod mem_trim;
pub mod notes_learn;
pub mod notes_path;
pub mod notes_prune;
pub mod notes_recall;
pub mod notes_reflect;
pub mod notes_remember;
mod notes_rewrite;
pub mod notes_search;
mod notes_target;
pub mod run;
pub mod state_context;
pub mod state_ingest;
pub mod state_path;
pub mod state_record;
pub mod state_show;
mod state_target;
mod stdin;
mod target;
mod wait;

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
    &mem_path::COMMAND,
    &mem_append::COMMAND,
    &mem_load::COMMAND,
    &mem_count::COMMAND,
    &mem_trim::COMMAND,
    &notes_path::COMMAND,
    &notes_recall::COMMAND,
    &notes_remember::COMMAND,
    &notes_reflect::COMMAND,
    &notes_learn::COMMAND,
    &notes_search::COMMAND,
    &notes_prune::COMMAND,
    &state_path::COMMAND,
    &state_show::COMMAND,
    &state_ingest::COMMAND,
    &state_record::COMMAND,
    &state_context::COMMAND,
];
