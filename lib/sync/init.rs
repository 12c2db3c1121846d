//! `axe-sync init`: a repository for memory, its merge drivers, its
//! `.gitattributes` and `.gitignore`, its remote, and the first sync.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use axe_memory::lock::Wait;
use axe_memory::secrets::Secrets;

use super::error::{Result, SyncError};
use super::git::Git;
use super::hook::{PRE_COMMIT, install_hook};
use super::kind::Kind;
use super::remote;
use super::repo::{host, lock};
use super::sync::{Options, Report, sync_locked};
use super::undo::{Undo, remove_empty};

/// The branch a new repository starts on.
pub const BRANCH: &str = "main";

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
    let writes = [
        (git.git_dir().join("hooks").join("pre-commit"), PRE_COMMIT),
        (git.root.join(".gitattributes"), ATTRIBUTES.as_str()),
        (git.root.join(".gitignore"), IGNORE),
    ];
    let undo = Undo::now(&git, created && !had_git, made_dirs, writes);
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

/// `'path'` for a shell, as git runs a merge driver through one.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
