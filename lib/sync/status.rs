//! `axe-sync status`: where the repository stands, nothing fetched or
//! changed.

use std::path::Path;

use serde::Serialize;

use super::commit;
use super::error::Result;
use super::merge;
use super::remote;
use super::repo::{branch, open, unresolved};

/// What `axe-sync status` says.
#[derive(Debug, Serialize)]
pub struct Status {
    pub dir: String,
    pub remote: Option<String>,
    pub branch: String,
    pub head: Option<String>,
    /// Commits here the remote has not had (as of the last fetch).
    pub ahead: u64,
    /// Commits the remote had at the last fetch that are not merged here.
    pub behind: u64,
    /// Files changed since the last sync.
    pub changed: Vec<String>,
    pub conflicts: Vec<String>,
    /// A sync was cut off mid-merge; the next one finishes it.
    pub interrupted: bool,
}

/// `axe-sync status`: nothing is fetched or changed.
pub fn status(dir: &Path) -> Result<Status> {
    let git = open(dir)?;
    let branch = branch(&git)?;
    let head = commit::head(&git)?;
    let remote = remote::url(&git)?;
    let (mut ahead, mut behind) = (0, 0);
    if let (Some(h), Some(t)) = (&head, remote::tracking(&git, &branch)?) {
        let out = git.ok(
            &["rev-list", "--left-right", "--count", &format!("{h}...{t}")],
            None,
        )?;
        let text = out.text();
        let mut n = text.split_whitespace().map(|n| n.parse().unwrap_or(0));
        (ahead, behind) = (n.next().unwrap_or(0), n.next().unwrap_or(0));
    }
    Ok(Status {
        dir: dir.to_string_lossy().into_owned(),
        remote,
        branch,
        head,
        ahead,
        behind,
        changed: commit::changed(&git, &|_| true)?.paths,
        conflicts: unresolved(&git, true)?,
        interrupted: merge::journal(&git).exists(),
    })
}
