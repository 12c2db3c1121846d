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

mod commit;
mod entries;
mod error;
mod git;
mod kind;
mod lines;
mod merge;
mod paths;
mod pause;
mod remote;
mod running;
mod worktree;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

pub use commit::Committed;
/// The entry merge of run logs and daily logs, for `axe-import`, which
/// merges what it brings in by entry exactly as a sync merges.
pub use entries::{Layout, count as count_entries, merge as merge_entries};
pub use error::{GitFailed, Result, SyncError};
pub use kind::Kind;
pub use merge::Merged;
pub use paths::Refused;

use axe_base::beneath::{Dir, Open};
use axe_memory::lock::{Wait, create_locked};
use axe_memory::notes::conflict;
use axe_memory::secrets::Secrets;
use git::Git;
use worktree::Tree;

/// How many times a push the remote rejected is tried again.
pub const PUSH_ATTEMPTS: u32 = 4;

/// The branch a new repository starts on.
pub const BRANCH: &str = "main";

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
fn open(dir: &Path) -> Result<Git> {
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
fn lock(git: &Git, wait: Wait) -> Result<fs::File> {
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
fn branch(git: &Git) -> Result<String> {
    let path = git.git_dir().join("HEAD");
    let text = fs::read_to_string(&path).map_err(|e| SyncError::io("read", &path, e))?;
    text.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_owned)
        .ok_or_else(|| SyncError::Detached(git.root.clone()))
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
fn sync_locked(git: &Git, opts: &Options) -> Result<Report> {
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

/// Whether the file at `rel` is a conflict file.
fn is_conflict_path(rel: &str) -> bool {
    conflict::is_conflict(rel.rsplit('/').next().unwrap_or(rel))
}

/// The conflict files git tracks that are in the work tree; with
/// `untracked`, those it does not track yet too (a walk of the whole
/// tree, which a sync leaves to `git status`).
fn unresolved(git: &Git, untracked: bool) -> Result<Vec<String>> {
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

/// What `.gitattributes` says: which merge driver each kind of file takes
/// when a user runs `git merge` or `git pull` themselves. Made from the
/// kinds' rows: every part whose merge is not the lines' names its files'
/// pattern and its merge's driver, kind by kind in
/// `axe_memory::kinds::KINDS`' order.
pub static ATTRIBUTES: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    use axe_memory::kinds::{KINDS, Merge, ROWS};
    let mut text = String::from(
        "# Written by axe-sync init: merge memory by entry, not by line.\n*.md merge=axe-lines\n",
    );
    for kind in KINDS {
        for row in ROWS
            .iter()
            .filter(|r| r.section == *kind && r.merge != Merge::Lines)
        {
            text.push_str(&format!(
                "{} merge=axe-{}\n",
                row.pattern,
                row.merge.driver()
            ));
        }
    }
    text
});

/// What `.gitignore` says: the leftovers of a write cut off, never memory.
pub const IGNORE: &str = "\
# Written by axe-sync init: a replace's temp file, an append's marker.
.*.axe-new
.*.axe-append
";

/// What `axe-sync init` did.
#[derive(Debug, Serialize)]
pub struct Initialized {
    pub dir: String,
    /// A new repository was made (else one was there and is set up again).
    pub created: bool,
    pub remote: Option<String>,
    /// The first sync (a commit only, without a remote).
    pub sync: Report,
}

/// `axe-sync init`: makes `dir` a repository (or sets up the one there
/// again), installs the merge drivers in its own config, writes
/// `.gitattributes` and `.gitignore`, sets the remote, and syncs once.
/// The remote is asked first whether it answers; an init that fails takes
/// back what it made ([`Undo`]), so the next one starts from what was
/// there before. The sync lock is held from just after `git init` to the
/// end, undoing included, so a failed init never undoes another's work.
/// `program` is the command line that runs `axe-sync` (the merge drivers
/// run `program merge-driver ...`).
pub fn init(
    dir: &Path,
    remote_url: Option<&str>,
    deadline: Instant,
    secrets: Secrets,
    program: &[String],
    wait: Wait,
) -> Result<Initialized> {
    let made_dirs: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let had_git = fs::symlink_metadata(dir.join(".git")).is_ok();
    // Until the lock is held, only what this init made alone: directories
    // (removed only while empty) and a `.git` that was not there.
    let before_lock = |e: SyncError, git_made: bool| {
        if git_made && !had_git {
            let _ = fs::remove_dir_all(dir.join(".git"));
        }
        remove_empty(&made_dirs);
        e
    };
    fs::create_dir_all(dir).map_err(|e| {
        let failed = SyncError::CreateDir {
            path: dir.to_owned(),
            source: e,
        };
        before_lock(failed, false)
    })?;
    let git = Git::at(dir).map_err(|e| before_lock(e, false))?;
    let created = !git.exists();
    if created {
        git.ok(&["init", "-q", "-b", BRANCH], None)
            .map_err(|e| before_lock(e, true))?;
    }
    // Busy: another init or sync has the repository, and whatever is
    // there may be its; nothing is undone but empty directories.
    let _lock = lock(&git, wait).map_err(|e| before_lock(e, false))?;
    let undo = Undo::now(&git, created && !had_git, made_dirs);
    let done = set_up(
        &git,
        created,
        remote_url,
        (deadline, wait),
        secrets,
        program,
    );
    if done.is_err() {
        undo.apply(&git.root);
    }
    done
}

/// What [`init`] does once it holds the lock; undone by it on failure.
fn set_up(
    git: &Git,
    created: bool,
    remote_url: Option<&str>,
    (deadline, wait): (Instant, Wait),
    secrets: Secrets,
    program: &[String],
) -> Result<Initialized> {
    let dir = git.root.as_path();
    if let Some(url) = remote_url {
        remote::check(git, url, deadline)?;
    }
    let exe: Vec<String> = program.iter().map(|w| shell_quote(w)).collect();
    let exe = exe.join(" ");
    for (name, _) in Kind::NAMES {
        let key = format!("merge.axe-{name}");
        git.ok(
            &[
                "config",
                &format!("{key}.name"),
                &format!("axe-sync: {name}"),
            ],
            None,
        )?;
        let driver = format!("{exe} merge-driver {name} %O %A %B %P");
        git.ok(&["config", &format!("{key}.driver"), &driver], None)?;
    }
    // Years of daily logs make a large tree: git remembers which
    // directories changed, so a status with nothing new stays quick.
    git.ok(&["config", "core.untrackedCache", "true"], None)?;
    if git
        .output(&["config", "user.email"], None)?
        .text()
        .is_empty()
    {
        git.ok(&["config", "user.name", "axe-sync"], None)?;
        git.ok(
            &["config", "user.email", &format!("axe-sync@{}", host())],
            None,
        )?;
    }
    install_hook(git)?;
    for (name, text) in [
        (".gitattributes", ATTRIBUTES.as_str()),
        (".gitignore", IGNORE),
    ] {
        let path = dir.join(name);
        if !path.exists() {
            fs::write(&path, text).map_err(|e| SyncError::io("write", &path, e))?;
        }
    }
    if let Some(url) = remote_url {
        let verb = match remote::url(git)? {
            Some(_) => "set-url",
            None => "add",
        };
        git.ok(&["remote", verb, "--", remote::REMOTE, url], None)?;
    }
    let remote = remote::url(git)?;
    let sync = sync_locked(
        git,
        &Options {
            dir: dir.to_owned(),
            agents: Vec::new(),
            push: true,
            dry_run: false,
            deadline,
            wait,
            secrets,
        },
    )?;
    if let Some(url) = &remote
        && sync.pushed
    {
        remote::point_head(git, url, &sync.branch);
    }
    Ok(Initialized {
        dir: dir.to_string_lossy().into_owned(),
        created,
        remote,
        sync,
    })
}

/// Removes `dirs` (deepest first) while they are empty: what anything
/// else wrote there stays.
fn remove_empty(dirs: &[PathBuf]) {
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
struct Undo {
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
    fn now(git: &Git, made: bool, dirs: Vec<PathBuf>) -> Undo {
        let git_dir = git.git_dir();
        let config = fs::read(git_dir.join("config")).ok();
        let set_up = config
            .as_deref()
            .is_some_and(|c| String::from_utf8_lossy(c).contains("[merge \"axe-"));
        let files = [
            (git_dir.join("hooks").join("pre-commit"), PRE_COMMIT),
            (git.root.join(".gitattributes"), ATTRIBUTES.as_str()),
            (git.root.join(".gitignore"), IGNORE),
        ]
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
    fn apply(&self, dir: &Path) {
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
fn install_hook(git: &Git) -> Result<()> {
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

/// `'path'` for a shell, as git runs a merge driver through one.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

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
