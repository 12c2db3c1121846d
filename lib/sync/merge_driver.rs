//! `axe-sync merge-driver`: the merge git runs for a memory file in a
//! user's own `git merge` or `git pull`.

use std::fs;
use std::io::Write;
use std::path::Path;

use axe_memory::notes::conflict;

use super::error::{Result, SyncError};
use super::git::Git;
use super::kind::{self, Kind};
use super::repo::host;

/// `axe-sync merge-driver KIND BASE OURS THEIRS PATH`, as git runs it
/// during a user's own `git merge`: merges the three files by `kind` into
/// OURS; a line conflict keeps our lines and writes their text beside the
/// file (`PATH`, relative to the work tree, git's working directory).
/// Returns the conflict file written, if any.
pub fn merge_driver(
    kind: Kind,
    base: &Path,
    ours: &Path,
    theirs: &Path,
    rel: &str,
) -> Result<Option<String>> {
    let read = |p: &Path| fs::read(p).map_err(|e| SyncError::io("read", p, e));
    let (b, o, t) = (read(base)?, read(ours)?, read(theirs)?);
    let cwd = std::env::current_dir().map_err(SyncError::NoWorkingDir)?;
    let git = Git::at(&cwd)?;
    let merged = kind::merge(&git, kind, rel, Some(&b), Some(&o), Some(&t))?;
    let mut out = fs::File::create(ours).map_err(|e| SyncError::io("write", ours, e))?;
    out.write_all(&merged.text.unwrap_or_default())
        .map_err(|e| SyncError::io("write", ours, e))?;
    let Some(theirs_text) = merged.conflict else {
        return Ok(None);
    };
    let now = time::OffsetDateTime::now_utc();
    let side = conflict::path_for(rel, &host(), now, &theirs_text);
    fs::write(cwd.join(&side), theirs_text)
        .map_err(|e| SyncError::io("write", cwd.join(&side), e))?;
    Ok(Some(side))
}
