//! The executables' commands, one module each, plus what they share.

pub mod gc;
pub mod llm;
pub mod mem_append;
pub mod mem_count;
pub mod mem_load;
pub mod mem_path;
pub mod mem_trim;
pub mod run;
mod target;

use crate::cli::Command;

/// Every command, for table checks and generated docs.
pub const ALL: &[&Command] = &[
    &mem_path::COMMAND,
    &mem_append::COMMAND,
    &mem_load::COMMAND,
    &mem_count::COMMAND,
    &mem_trim::COMMAND,
    &llm::COMMAND,
    &run::COMMAND,
    &gc::COMMAND,
];
