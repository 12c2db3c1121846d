//! The pre-commit hook `axe-sync init` installs.

use std::fs;

use super::error::{Result, SyncError};
use super::git::Git;

/// The pre-commit hook `init` installs: a user's own `git commit` in the
/// repository refuses staged files with conflict markers too, as
/// `axe-sync` refuses them (`git grep --cached` reads what is staged).
pub const PRE_COMMIT: &str = r#"#!/bin/sh
# Written by axe-sync init: no conflict marker is committed to memory
# (a conflict file holds another machine's text as it arrived: not judged).
marked=$(git grep --cached -l -E '^<<<<<<<( |$)' -- . ':(exclude)*.conflict-*.md' | while read -r f; do
  git grep --cached -q -E '^>>>>>>>( |$)' -- "$f" && printf '%s ' "$f"
done)
if [ -n "$marked" ]; then
  echo "axe-sync: git conflict markers in $marked- resolve them first" >&2
  exit 1
fi
"#;

/// Installs [`PRE_COMMIT`] unless the repository has a pre-commit hook of
/// its own already.
pub(crate) fn install_hook(git: &Git) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let hooks = git.git_dir().join("hooks");
    let path = hooks.join("pre-commit");
    if path.exists() {
        return Ok(());
    }
    let fail = |e: std::io::Error| SyncError::io("write", &path, e);
    fs::create_dir_all(&hooks).map_err(fail)?;
    fs::write(&path, PRE_COMMIT).map_err(fail)?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).map_err(fail)
}
