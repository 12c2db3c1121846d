//! The repository every job works on: opening it, its sync lock, its
//! branch, this machine's name, and the conflict files in it.

use std::fs;
use std::path::{Path, PathBuf};

use axe_base::beneath::{Dir, Open};
use axe_memory::lock::{Wait, create_locked};
use axe_memory::notes::conflict;

use super::error::{Result, SyncError};
use super::git::Git;
use super::running;

/// The memory data directory of `dirs`: where `axe-sync` works unless
/// told.
pub fn default_dir(dirs: &axe_base::dirs::Dirs) -> axe_base::error::Result<PathBuf> {
    dirs.data()
}

/// This machine's name, for commit messages and conflict files.
pub fn host() -> String {
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    match name.is_empty() {
        true => "localhost".to_owned(),
        false => name,
    }
}

/// The repository at `dir`, which must exist.
pub(crate) fn open(dir: &Path) -> Result<Git> {
    // Before git runs: it would run in the directory, which may not exist.
    if !dir.join(".git").join("HEAD").is_file() {
        return Err(SyncError::NotARepository(dir.to_owned()));
    }
    Git::at(dir)
}

/// Takes the repository's sync lock, waiting as long as a memory file's
/// lock is waited for; held until the returned file is dropped. No
/// program gets it (a daemon git starts would keep it for its life); a
/// git left running by a sync killed with `kill -9` (a fetch beside the
/// commit step) keeps the next sync waiting another way, until it is
/// done, rather than racing it for git's own locks ([`running`]).
pub(crate) fn lock(git: &Git, wait: Wait) -> Result<fs::File> {
    let path = git.git_dir().join("axe-sync");
    let fail = |e: std::io::Error| SyncError::Io {
        context: "another axe-sync is running",
        op: "lock",
        path: path.join("lock"),
        source: e,
    };
    let dir = Dir::root(&path, true)
        .map_err(fail)?
        .ok_or_else(|| fail(std::io::ErrorKind::NotFound.into()))?;
    let (file, _) = create_locked(&dir, "lock".as_ref(), Open::Update, wait).map_err(fail)?;
    git.mark_running(running::settle(&path, wait.deadline())?);
    Ok(file)
}

/// The branch HEAD is on, read from `.git/HEAD` (a process less).
pub(crate) fn branch(git: &Git) -> Result<String> {
    let path = git.git_dir().join("HEAD");
    let text = fs::read_to_string(&path).map_err(|e| SyncError::io("read", &path, e))?;
    text.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_owned)
        .ok_or_else(|| SyncError::Detached(git.root.clone()))
}

/// Whether the file at `rel` is a conflict file.
pub(crate) fn is_conflict_path(rel: &str) -> bool {
    conflict::is_conflict(rel.rsplit('/').next().unwrap_or(rel))
}

/// The conflict files git tracks that are in the work tree; with
/// `untracked`, those it does not track yet too (a walk of the whole
/// tree, which a sync leaves to `git status`).
pub(crate) fn unresolved(git: &Git, untracked: bool) -> Result<Vec<String>> {
    let mut args = vec!["ls-files", "-z", "--cached"];
    if untracked {
        // No ignore rules: a conflict file a `.gitignore` matches is
        // unresolved all the same.
        args.push("--others");
    }
    args.push("*.conflict-*.md");
    let out = git.ok(&args, None)?;
    let mut files: Vec<String> = out
        .paths()
        .filter(|p| is_conflict_path(p) && git.root.join(p).is_file())
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}
