//! What agents remember, one folder per kind: `log/`, the run log (a
//! markdown entry per run); `notes/`, the notes workspace (world facts,
//! MEMORY.md, daily logs); `state/`, the structured state (tasks,
//! decisions, errors, facts). `kinds` is the table of the kinds that
//! everything outside their folders consults; `shared_block` and `block` put
//! every kind in one budgeted block. Every kind writes through `lock`
//! (advisory locks, bounded waits, that follow a file replaced under
//! them), `append` (whole entries or none, torn ones cut back) and
//! `replace` (whole-file rewrites that are atomic, keep mode and owner,
//! and clean up after signals and crashes), all on files reached through
//! `axe_base::beneath`'s directory handles.

pub mod append;
pub mod block;
pub mod error;
pub mod hash;
pub mod kind;
pub mod kinds;
pub mod lock;
pub mod log;
pub mod markers;
pub mod notes;
mod offer;
pub mod replace;
pub mod row;
pub mod settings;
pub mod shared_block;
pub mod state;
#[cfg(feature = "test-hooks")]
pub mod toy;

/// Credentials kept out of memory, a crate of its own below this one.
pub use axe_secrets as secrets;
pub use kind::MemoryKind;
pub use lock::{DEFAULT_WAIT, Wait};
pub use settings::Settings;
