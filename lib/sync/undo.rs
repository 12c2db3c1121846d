//! What a failed `axe-sync init` takes back: only what it made.

use std::fs;
use std::path::{Path, PathBuf};

use super::git::Git;

/// Removes `dirs` (deepest first) while they are empty: what anything
/// else wrote there stays.
pub(crate) fn remove_empty(dirs: &[PathBuf]) {
    for made in dirs {
        let _ = fs::remove_dir(made);
    }
}

/// What was there before an init changed anything, read under the sync
/// lock, to take back what a failed one made and nothing else: the
/// directories and the repository it created, the files it wrote that
/// were not there (while they still hold what it wrote), and the
/// repository's config as it was (the merge drivers, the identity, the
/// remote).
pub(crate) struct Undo {
    /// The directories init made, deepest first.
    dirs: Vec<PathBuf>,
    /// `.git` was made by this init: all of it goes.
    repo: bool,
    config: Option<Vec<u8>>,
    hooks: bool,
    /// The files init writes that were not there, with their text.
    files: Vec<(PathBuf, &'static str)>,
}

impl Undo {
    /// `made`: whether this init's `git init` made the repository. Another
    /// init that got the lock first and set it up (its merge drivers are
    /// in the config) made it theirs.
    /// `writes`: the files init writes, with their text.
    pub(crate) fn now(
        git: &Git,
        made: bool,
        dirs: Vec<PathBuf>,
        writes: [(PathBuf, &'static str); 3],
    ) -> Undo {
        let git_dir = git.git_dir();
        let config = fs::read(git_dir.join("config")).ok();
        let set_up = config
            .as_deref()
            .is_some_and(|c| String::from_utf8_lossy(c).contains("[merge \"axe-"));
        let files = writes
            .into_iter()
            .filter(|(p, _)| fs::symlink_metadata(p).is_err())
            .collect();
        Undo {
            dirs,
            repo: made && !set_up,
            config,
            hooks: git_dir.join("hooks").is_dir(),
            files,
        }
    }

    /// Best effort, after a failure that is what the user is told of.
    pub(crate) fn apply(&self, dir: &Path) {
        let git_dir = dir.join(".git");
        if self.repo {
            let _ = fs::remove_dir_all(&git_dir);
        } else if let Some(config) = &self.config {
            // Through a new file renamed over the old, as git writes it.
            let new = git_dir.join("config.axe-new");
            if fs::write(&new, config).is_ok() {
                let _ = fs::rename(&new, git_dir.join("config"));
            }
        }
        for (path, text) in &self.files {
            if fs::read(path).is_ok_and(|now| now == text.as_bytes()) {
                let _ = fs::remove_file(path);
            }
        }
        if !self.repo && !self.hooks {
            let _ = fs::remove_dir(git_dir.join("hooks"));
        }
        remove_empty(&self.dirs);
    }
}
