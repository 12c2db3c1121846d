//! Notes: a markdown workspace of world facts, each agent's curated
//! MEMORY.md and its daily logs, in agnx's layout and formats, so agnx
//! workspaces read the same here:
//!
//! ```text
//! <workspace>/world/<topic>.md                 shared by every agent
//! <workspace>/agents/<agent>/MEMORY.md         rewritten whole (reflect)
//! <workspace>/agents/<agent>/daily/<date>.md   appended to (remember)
//! <workspace>/agents/<agent>/history/<t>.json   what a consolidation replaced
//! ```
//!
//! Beyond agnx: a `remember` is one write under the file's lock and is
//! rolled back if it cannot finish; rewrites take the lock and replace the
//! file atomically, and with an expected SHA-256 refuse to overwrite a
//! change they have not seen; a recall keeps to a character budget and
//! names what it left out; paths never leave the workspace. Search is
//! axe-search's, over what this crate scans (`scan`, `query`, `terms`).
//! Dates are UTC.

pub mod conflict;
mod daily;
pub mod dates;
pub mod entries;
pub mod fold;
pub mod history;
pub mod irregular;
pub mod journal;
pub mod kind;
pub mod note;
mod prune;
pub mod query;
mod recall;
mod rewrite;
pub mod scan;
pub mod settings;
pub use kind::KIND;
pub mod snippet;
pub mod stop;
pub mod terms;
mod topic;
pub mod workspace;

pub use daily::remember;
pub use note::{Unreadable, unreadable_note};
pub use prune::prune;
pub use recall::{
    Kind, NoteFile, Reads, Recalled, answer, files, hashes, recall, recall_hashed, remarks, shown,
};
pub use rewrite::{Rewritten, rewrite};
pub use topic::{name as topic_name, sanitize as topic_file_name};
pub use workspace::{READ_LIMIT, Scope, Witness, Workspace};
