//! Talking to the remote: fetch and push, each within the sync's deadline.

use std::time::Instant;

use super::git::{Git, failed};
use crate::error::Result;

/// The remote every clone syncs with.
pub const REMOTE: &str = "origin";

/// The remote's URL, `None` when there is no remote (a repository synced
/// only locally). Read from `.git/config` (a process less a sync), where
/// `git remote add` wrote it: `url = ...` in `[remote "origin"]`.
pub fn url(git: &Git) -> Result<Option<String>> {
    let path = git.git_dir().join("config");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(crate::error::Error::memory("", "read", &path, &e)),
    };
    let section = format!("[remote \"{REMOTE}\"]");
    let mut inside = false;
    let mut url = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == section;
        } else if inside
            && let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            // The last one wins, as for git.
            url = Some(value.trim().trim_matches('"').to_owned());
        }
    }
    Ok(url.filter(|u| !u.is_empty()))
}

/// Fetches the remote's branches; the id of `branch` there, `None` when it
/// has none yet (a new, empty remote).
pub fn fetch(git: &Git, branch: &str, deadline: Instant) -> Result<Option<String>> {
    // No automatic maintenance (a repack) while a commit step may work
    // beside the fetch: the sync runs it afterwards.
    let args = [
        "-c",
        "maintenance.auto=false",
        "-c",
        "gc.auto=0",
        "fetch",
        "--quiet",
        "--no-tags",
        "--prune",
        REMOTE,
    ];
    let out = git.run(&args, None, Some(deadline))?;
    if !out.ok {
        return Err(failed(&args, &out));
    }
    tracking(git, branch)
}

/// The last fetched id of the remote's `branch`.
pub fn tracking(git: &Git, branch: &str) -> Result<Option<String>> {
    git.resolve(&format!("refs/remotes/{REMOTE}/{branch}"))
}

/// How a push went.
pub enum Pushed {
    Done,
    /// The remote moved on since our fetch: fetch, merge and try again.
    Rejected,
}

/// Pushes HEAD to the remote's `branch`.
pub fn push(git: &Git, branch: &str, deadline: Instant) -> Result<Pushed> {
    let refspec = format!("HEAD:refs/heads/{branch}");
    let args = ["push", "--quiet", "--porcelain", REMOTE, refspec.as_str()];
    let out = git.run(&args, None, Some(deadline))?;
    if out.ok {
        return Ok(Pushed::Done);
    }
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let rejected = [
        "rejected",
        "non-fast-forward",
        "fetch first",
        "stale info",
        "cannot lock ref",
    ]
    .iter()
    .any(|w| said.contains(w));
    match rejected {
        true => Ok(Pushed::Rejected),
        false => Err(failed(&args, &out)),
    }
}
