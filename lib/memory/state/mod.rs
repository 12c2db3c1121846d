//! Structured state (agentium's memory): one JSON document per agent of
//! task progress, decisions, errors and key facts, fed by signal lines in
//! the model's output and by each run's outcome, and given back to the
//! model as a "Session Memory" block within a character budget.
//!
//! Beyond agentium: saves lock the file and replace it atomically; a
//! corrupt file is an error naming the file and the position, never an
//! empty store; fields written by a newer version survive a save; unknown
//! or malformed signals are reported, never dropped; the context builder
//! leaves out only the items that do not fit and says which.

mod data;
mod doc;
pub mod kind;
mod merge;
mod redact;
mod session_block;
pub mod settings;
pub use kind::KIND;
mod signal_lines;
mod store;
mod view;

pub use data::Outcome;
pub use merge::merge;
pub use session_block::{Current, build, offer};
pub use signal_lines::{Rejected, Signal, parse};
pub use store::{Pruned, load, read, update, view};
pub use view::View;

use std::path::PathBuf;

/// The task signals and outcomes go to when none is named.
pub const DEFAULT_TASK: &str = "main";

/// The state file of `agent`: `custom` when set (used as is, as the run
/// log's `memory.path`), else `<data>/state/<agent>.json`.
pub fn file_path(
    dirs: &axe_base::dirs::Dirs,
    agent: &str,
    custom: &str,
) -> axe_base::error::Result<PathBuf> {
    if !custom.is_empty() {
        return Ok(PathBuf::from(custom));
    }
    Ok(dirs.data()?.join("state").join(format!("{agent}.json")))
}
