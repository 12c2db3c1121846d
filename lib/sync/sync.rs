//! One sync: commit, fetch, merge, push, and again while the remote
//! rejects the push (the crate's documentation tells the whole).

use std::fs;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use axe_memory::lock::Wait;
use axe_memory::secrets::Secrets;

use super::commit::{self, Committed};
use super::error::{Result, SyncError};
use super::git::Git;
use super::merge::{self, Merged};
use super::paths::Refused;
use super::repo::{branch, host, is_conflict_path, lock, open, unresolved};
use super::worktree::Tree;
use super::{pause, remote};

/// How many times a push the remote rejected is tried again.
pub const PUSH_ATTEMPTS: u32 = 4;

/// What a sync is asked to do.
pub struct Options {
    /// The repository: the memory data directory unless `--dir` says.
    pub dir: PathBuf,
    /// Commit only these agents' files (and the shared world topics);
    /// empty: everything.
    pub agents: Vec<String>,
    pub push: bool,
    pub dry_run: bool,
    /// No network step runs past this.
    pub deadline: Instant,
    /// How long a lock (the repository's, a memory file's) is waited for.
    pub wait: Wait,
    /// What the commit step refuses and what arrived is judged by:
    /// config.toml's `[memory] redact` and the keys this process knows.
    pub secrets: Secrets,
}

/// What a sync did, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Report {
    pub dir: String,
    pub remote: Option<String>,
    pub branch: String,
    pub dry_run: bool,
    /// A sync before this one was cut off mid-merge; this one finished it.
    pub recovered: bool,
    pub committed: Committed,
    pub merged: Merged,
    pub pushed: bool,
    /// Pushes tried (more than one when the remote moved meanwhile).
    pub push_attempts: u32,
    /// Conflict files in the repository: unresolved until removed.
    pub conflicts: Vec<String>,
    /// Paths left out: of the remote's tree, or of the work tree, with a
    /// component git itself refuses (`.git` in any spelling, `..`).
    pub refused: Vec<Refused>,
}

/// Whether `rel` is one of `agents`' files or shared by all of them.
fn belongs(rel: &str, agents: &[String]) -> bool {
    if agents.is_empty() {
        return true;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let shared = !rel.contains('/') || parts.contains(&"world");
    shared
        || agents.iter().any(|a| {
            let md = format!("{a}.md");
            let json = format!("{a}.json");
            match parts[..] {
                ["memory", n] => n == md,
                ["state", n] => n == json,
                _ => parts.windows(2).any(|w| w[0] == "agents" && w[1] == a),
            }
        })
}

/// One sync; see the module's documentation.
pub fn sync(opts: &Options) -> Result<Report> {
    let git = open(&opts.dir)?;
    let _lock = lock(&git, opts.wait)?;
    sync_locked(&git, opts)
}

/// [`sync`], by one that holds the repository's lock already.
pub(crate) fn sync_locked(git: &Git, opts: &Options) -> Result<Report> {
    let host = host();
    let recovered = merge::journal(git).exists();
    let branch = branch(git)?;
    let tree = Tree::open(&opts.dir, opts.wait)?;
    let remote = remote::url(git)?;
    pause::at("commit");
    // The first fetch runs while the commit step reads and stages: they
    // touch different parts of the repository (remote-tracking refs and
    // new objects; the index and the branch). Beside them, the conflict
    // files as they are now (what the merge adds or removes is known from
    // the merge) and HEAD, for when nothing is committed.
    let (committed, fetched, listed) = std::thread::scope(|s| {
        let fetch = remote.is_some().then(|| {
            s.spawn(|| {
                pause::at("fetch");
                remote::fetch(git, &branch, opts.deadline)
            })
        });
        let listed = s.spawn(|| Ok((unresolved(git, false)?, commit::head(git)?)));
        let committed = commit::changed(git, &|p| belongs(p, &opts.agents)).and_then(|changed| {
            let message = format!("axe-sync on {host}: {} files", changed.paths.len());
            let done = commit::commit(git, &tree, &changed, &message, &opts.secrets, opts.dry_run)?;
            // New conflict files are untracked: status named them.
            Ok((done, changed.all, changed.refused))
        });
        let fetched = fetch.map(|f| f.join().unwrap_or_else(|_| Err(thread_failed("fetch"))));
        let listed = listed
            .join()
            .unwrap_or_else(|_| Err(thread_failed("ls-files")));
        (committed, fetched, listed)
    });
    let (listed, head) = listed?;
    let (committed, seen, refused) = committed?;
    let mut report = Report {
        dir: opts.dir.to_string_lossy().into_owned(),
        remote: remote.clone(),
        branch: branch.clone(),
        dry_run: opts.dry_run,
        recovered,
        committed,
        merged: Merged::default(),
        pushed: false,
        push_attempts: 0,
        conflicts: Vec::new(),
        refused,
    };
    if let Some(fetched) = fetched {
        let head = report.committed.commit.clone().or(head);
        let on = Repo {
            git,
            tree: &tree,
            host: &host,
            branch: &branch,
        };
        exchange(&on, opts, head, fetched?, &mut report)?;
    }
    if !opts.dry_run {
        // Whatever a sync cut off mid-merge left undone, this one has done
        // (merged again, or found nothing left to merge).
        let _ = fs::remove_file(merge::journal(git));
        if report.committed.commit.is_some() || report.merged.commit.is_some() {
            // The maintenance the fetch was told not to run while the
            // commit step worked beside it (packing loose objects).
            // In the foreground: detached, it would run on past the sync,
            // unseen by the next one's wait for earlier gits ([`running`]).
            let args = [
                "-c",
                "maintenance.autoDetach=false",
                "-c",
                "gc.autoDetach=false",
                "maintenance",
                "run",
                "--auto",
                "--quiet",
            ];
            let _ = git.output(&args, None);
        }
    }
    let mut conflicts = listed;
    conflicts.extend(seen.into_iter().filter(|p| is_conflict_path(p)));
    let merged = &report.merged;
    let arrived = merged.files.iter().filter(|p| is_conflict_path(p));
    conflicts.extend(arrived.chain(&merged.conflicts).cloned());
    conflicts.retain(|p| opts.dir.join(p).is_file());
    conflicts.sort();
    conflicts.dedup();
    report.conflicts = conflicts;
    Ok(report)
}

/// The repository a sync works on, and what it knows of it.
struct Repo<'a> {
    git: &'a Git,
    tree: &'a Tree,
    host: &'a str,
    branch: &'a str,
}

/// An error for a helper thread that panicked.
fn thread_failed(what: &'static str) -> SyncError {
    SyncError::Thread { what }
}

/// Merge what was `fetched` into `head`, push, and while the remote
/// rejects the push (another machine pushed first) fetch, merge and push
/// again, a bounded number of times.
fn exchange(
    on: &Repo<'_>,
    opts: &Options,
    mut head: Option<String>,
    mut fetched: Option<String>,
    report: &mut Report,
) -> Result<()> {
    let Repo {
        git,
        tree,
        host,
        branch,
    } = *on;
    loop {
        head = match &fetched {
            Some(theirs) => {
                pause::at("merge");
                let merged =
                    merge::merge(git, tree, head, theirs, host, &opts.secrets, opts.dry_run)?;
                report.merged.from = merged.from.or(report.merged.from.take());
                report.merged.commit = merged.commit.or(report.merged.commit.take());
                report.merged.files.extend(merged.files);
                report.merged.conflicts.extend(merged.conflicts);
                report.refused.extend(merged.refused);
                report.merged.secrets.extend(merged.secrets);
                merged.head
            }
            None => head,
        };
        let Some(head) = head.clone() else {
            return Ok(());
        };
        if !opts.push || opts.dry_run || fetched.as_deref() == Some(head.as_str()) {
            return Ok(());
        }
        pause::at("push");
        report.push_attempts += 1;
        match remote::push(git, branch, opts.deadline)? {
            remote::Pushed::Done => {
                report.pushed = true;
                // The tracking branch follows, so status shows us even.
                let name = format!("refs/remotes/{}/{branch}", remote::REMOTE);
                let _ = git.output(&["update-ref", &name, &head], None);
                return Ok(());
            }
            remote::Pushed::Rejected if report.push_attempts < PUSH_ATTEMPTS => {}
            remote::Pushed::Rejected => {
                return Err(SyncError::PushesRejected {
                    attempts: PUSH_ATTEMPTS,
                });
            }
        }
        pause::at("fetch");
        fetched = remote::fetch(git, branch, opts.deadline)?;
    }
}
