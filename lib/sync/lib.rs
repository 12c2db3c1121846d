//! `axe-sync`: the memory data directory as a git repository, synced with
//! a remote by entry, so memory written on several machines ends up the
//! same on all of them and nothing written anywhere is lost.
//!
//! One sync is: commit what changed ([`commit`]: each file read under its
//! lock), fetch, merge ([`merge`]: by what each file is, working files
//! rewritten under their locks, never by `git merge`), push, and on a
//! push the remote rejected (another machine pushed meanwhile) fetch,
//! merge and push again, a bounded number of times. Only one sync runs on
//! a repository at a time: a second waits for the first's lock
//! (`.git/axe-sync/lock`) as long as a memory command waits for a file's,
//! then says busy.
//!
//! `git` does the storage and the talking (any remote it speaks); the
//! merging is ours, in the same code the merge drivers run, so a plain
//! `git pull` by a user merges the same way.
//!
//! What goes wrong is a [`SyncError`] with its cause (the I/O error, git's
//! command, exit code and stderr), which the toolkit's error takes in
//! whole at the crate's boundary (`error.rs` says how).
//!
//! The jobs, a module each: [`sync()`] (`sync.rs`), [`init()`] (`init.rs`,
//! and `undo.rs`, what a failed one takes back), [`status()`]
//! (`status.rs`), [`merge_driver()`] (`merge_driver.rs`), the pre-commit
//! hook (`hook.rs`); what they share about the repository, `repo.rs`.

mod commit;
mod entries;
mod error;
mod git;
mod hook;
mod init;
mod kind;
mod lines;
mod merge;
mod merge_driver;
mod paths;
mod pause;
mod remote;
mod repo;
mod running;
mod status;
mod sync;
mod undo;
mod worktree;

pub use commit::Committed;
/// The entry merge of run logs and daily logs, for `axe-import`, which
/// merges what it brings in by entry exactly as a sync merges.
pub use entries::{Layout, count as count_entries, merge as merge_entries};
pub use error::{GitFailed, Result, SyncError};
pub use hook::PRE_COMMIT;
pub use init::{ATTRIBUTES, BRANCH, IGNORE, Initialized, init};
pub use kind::Kind;
pub use merge::Merged;
pub use merge_driver::merge_driver;
pub use paths::Refused;
pub use repo::{default_dir, host};
pub use status::{Status, status};
pub use sync::{Options, PUSH_ATTEMPTS, Report, sync};
