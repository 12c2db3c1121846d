//! The run log: one markdown file per agent, appended to after each run and
//! read back into the next (M6), trimmed by `gc` (M7).

mod entry;
mod lock;
mod log;
mod replace;
mod scan;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use entry::{RESULT_LIMIT, TASK_LIMIT};
pub use log::{NO_TRIM_TARGET, Trim, append, count, load, tail, trim};

use crate::dirs;
use crate::error::Result;

/// How many entries a log (or part of one) read into memory holds.
pub fn count_entries(bytes: &[u8]) -> u64 {
    scan::count_in(bytes)
}

/// The log of `agent`: `custom` when non-empty (used as is, even when
/// relative, as in Go), else `<data>/memory/<agent>.md`. Creates nothing and
/// does not check the name; [`crate::agent::check_name`] does that before.
pub fn file_path(agent: &str, custom: &str) -> Result<PathBuf> {
    if !custom.is_empty() {
        return Ok(PathBuf::from(custom));
    }
    Ok(dirs::data_dir()?.join("memory").join(format!("{agent}.md")))
}
