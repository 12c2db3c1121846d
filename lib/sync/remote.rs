//! Talking to the remote: fetch and push, each within the sync's deadline;
//! and what `init` asks of it: that it answers, and that a clone of it
//! checks out the branch axe pushes.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::error::{Result, SyncError};
use super::git::{Git, failed};

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
        Err(e) => return Err(SyncError::io("read", path, e)),
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

/// Whether git can reach `url` and finds a repository there (`git
/// ls-remote`, within `deadline`): `init` asks before it changes anything,
/// so a mistyped URL is refused with nothing to undo.
pub fn check(git: &Git, url: &str, deadline: Instant) -> Result<()> {
    // `--`: a URL that starts with a dash is a URL, never an option.
    let args = ["ls-remote", "--quiet", "--", url, "HEAD"];
    let out = git.run(&args, None, Some(deadline))?;
    match out.ok {
        true => Ok(()),
        false => Err(SyncError::RemoteUnusable {
            url: url.to_owned(),
            source: out.failure(&args),
        }),
    }
}

/// Points the HEAD of the remote at `url` to `branch` when that remote is
/// a repository on this machine whose HEAD names a branch it does not have
/// (a bare repository made by a `git init --bare` whose default branch is
/// `master`): without it, every `git clone` of the remote warns that its
/// HEAD refers to a nonexistent ref and checks nothing out. git has no way
/// to set another repository's HEAD over the wire, so a remote reached
/// over ssh or https is left as it is; so is one whose HEAD names a branch
/// it has (its owner chose it). Best effort: the sync is done already.
pub fn point_head(git: &Git, url: &str, branch: &str) {
    let Some(dir) = local_path(&git.root, url) else {
        return;
    };
    let dir = dir.to_string_lossy();
    let on = |args: &[&str]| {
        let mut all = vec!["--git-dir", dir.as_ref()];
        all.extend_from_slice(args);
        git.output(&all, None).ok().filter(|o| o.ok)
    };
    let Some(head) = on(&["symbolic-ref", "-q", "HEAD"]).map(|o| o.text()) else {
        return;
    };
    let ours = format!("refs/heads/{branch}");
    let has = |name: &str| on(&["rev-parse", "-q", "--verify", &format!("{name}^{{commit}}")]);
    if head == ours || has(&head).is_some() || has(&ours).is_none() {
        return;
    }
    let _ = on(&["symbolic-ref", "HEAD", &ours]);
}

/// The directory a remote URL names when git reaches it as a local path:
/// `/srv/memory.git`, `../memory.git` (from the work tree, where git
/// runs), `file:///srv/memory.git`. `None` for anything git reaches over
/// a transport: `host:path` (scp-like: a colon before any slash),
/// `ssh://`, `https://`.
fn local_path(root: &Path, url: &str) -> Option<PathBuf> {
    let path = match url.strip_prefix("file://") {
        Some(rest) => rest,
        None if url.contains("://") => return None,
        None => {
            let colon = url.find(':');
            let slash = url.find('/');
            if colon.is_some_and(|c| slash.is_none_or(|s| c < s)) {
                return None;
            }
            url
        }
    };
    let path = Path::new(path);
    Some(match path.is_absolute() {
        true => path.to_owned(),
        false => root.join(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_are_told_from_transports() {
        let root = Path::new("/home/ada/.local/share/axe");
        assert_eq!(
            local_path(root, "/srv/m.git"),
            Some(PathBuf::from("/srv/m.git"))
        );
        assert_eq!(
            local_path(root, "file:///srv/m.git"),
            Some(PathBuf::from("/srv/m.git"))
        );
        assert_eq!(local_path(root, "../m.git"), Some(root.join("../m.git")));
        for remote in [
            "host:m.git",
            "git@github.com:ada/m.git",
            "ssh://host/m.git",
            "https://host/m.git",
        ] {
            assert_eq!(local_path(root, remote), None, "{remote}");
        }
    }
}
