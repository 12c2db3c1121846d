//! What agents remember, one folder per kind: `log/`, the run log (a
//! markdown entry per run), and `notes/`, the notes workspace (world
//! facts, MEMORY.md, daily logs). Every kind writes through `lock` (advisory
//! locks that follow a file replaced under them) and `replace` (whole-file
//! rewrites that are atomic, keep mode and owner, and clean up after
//! signals and crashes).

pub(crate) mod append;
pub mod block;
pub mod context;
pub(crate) mod hash;
pub(crate) mod lock;
mod log;
pub mod notes;
pub(crate) mod replace;
pub mod state;

pub use lock::{DEFAULT_WAIT, wait_for, wait_until};
pub use log::{
    NO_TRIM_TARGET, RESULT_LIMIT, TASK_LIMIT, Trim, append, count, count_entries, entries,
    file_path, load, tail, trim,
};
