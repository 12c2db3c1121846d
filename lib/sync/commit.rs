//! The commit step: what changed in the work tree, read under each file's
//! lock, checked, and recorded as a commit with git's plumbing.
//!
//! `git status` only says which files to look at; their content is read
//! by us, each under its shared lock, so a commit never holds half an
//! entry or half a rewrite. The bytes go into git's object store with
//! `hash-object -w --stdin-paths` (from copies in `.git/axe-sync`, made
//! under the lock) and into the index with `update-index --index-info`;
//! `write-tree`, `commit-tree` and `update-ref` make the commit, so a
//! commit is all or nothing: killed before `update-ref`, there is no
//! commit and the next sync stages the same files again.

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use super::error::{Result, SyncError};
use super::git::Git;
use super::paths::{Refused, refusal};
use super::worktree::Tree;
// git's conflict markers: the one rule, which memory's writes keep clear of.
pub use axe_memory::markers::has_conflict_markers;
use axe_memory::notes::conflict;
use axe_memory::secrets::{Found, Secrets};

/// What a commit step recorded.
#[derive(Debug, Default, Serialize)]
pub struct Committed {
    /// The new commit, when there was anything to commit.
    pub commit: Option<String>,
    /// Files added or changed.
    pub files: Vec<String>,
    /// Files removed.
    pub removed: Vec<String>,
}

/// The one check a file's bytes pass before they are committed: a file
/// holding git's conflict markers, or what `secrets` finds to be a
/// credential (memory writes redact them, but a person or another program
/// may have written one in directly), is refused and named, never the
/// value itself: neither reaches a commit or a remote. A conflict file
/// holds another machine's text as it arrived, markers and all: it is
/// the place for them, so they are not judged there.
///
/// Only what is new here is judged: a value found that the file's
/// versions in `before` hold too (HEAD's: committed here, or arrived from
/// a machine that keeps secrets, `[memory] redact = false`, and reported
/// by the merge that brought it) is on the remote already, and refusing
/// it again would stop every later commit of the file, a day's log on
/// every machine, for good. `before` is asked only when something is
/// found, which is rare.
pub fn admit(
    rel: &str,
    bytes: &[u8],
    secrets: &Secrets,
    before: &dyn Fn() -> Vec<Vec<u8>>,
) -> Result<()> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if !conflict::is_conflict(name) && has_conflict_markers(bytes) {
        return Err(SyncError::ConflictMarkers {
            path: rel.to_owned(),
        });
    }
    // The path is scanned too: a name is never redacted, and a commit
    // pushes it (a key used as a topic's name, a file planted by hand).
    let named = secrets.find(rel.as_bytes());
    let mut found = secrets.find(bytes);
    let before = match named.is_empty() && found.is_empty() {
        true => Vec::new(),
        false => before(),
    };
    // A path committed already is judged no more than its content.
    if !named.is_empty() && before.is_empty() {
        let shown = secrets.redact(rel.as_bytes());
        return Err(SyncError::SecretInName {
            shown: String::from_utf8_lossy(&shown.text).into_owned(),
            kinds: kinds(&named),
        });
    }
    found.retain(|f| !held(before.iter().map(Vec::as_slice), &bytes[f.range.clone()]));
    if let Some(first) = found.first() {
        let line = 1 + bytes[..first.range.start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        return Err(SyncError::Secret {
            path: rel.to_owned(),
            kinds: kinds(&found),
            line,
        });
    }
    Ok(())
}

/// The names of the kinds of `found`, each once, in the order first found.
fn kinds(found: &[Found]) -> Vec<&'static str> {
    let mut kinds: Vec<&str> = Vec::new();
    for f in found {
        if !kinds.contains(&f.kind.name()) {
            kinds.push(f.kind.name());
        }
    }
    kinds
}

/// Whether one of `versions` holds `value`.
pub fn held<'a>(versions: impl IntoIterator<Item = &'a [u8]>, value: &[u8]) -> bool {
    versions
        .into_iter()
        .any(|v| memchr::memmem::find(v, value).is_some())
}

/// The merge's journal, `.git/axe-sync/merging`: the commit a merge under
/// way is merging, there until it is done (see `merge`). Here, below the
/// merge, as the commit step reads it too.
pub fn journal(git: &Git) -> PathBuf {
    git.git_dir().join("axe-sync").join("merging")
}

/// The versions of `rel` the repository holds already, as far as a commit
/// step is concerned: HEAD's, and that of the commit a merge cut off was
/// merging, whose files may be in the work tree already (the next sync
/// commits them as a local change).
fn committed(git: &Git, rel: &str) -> Vec<Vec<u8>> {
    let mut revs = vec!["HEAD".to_owned()];
    if let Ok(merging) = fs::read_to_string(journal(git)) {
        revs.push(merging.trim().to_owned());
    }
    revs.iter()
        .filter_map(|rev| {
            let out = git
                .output(&["cat-file", "blob", &format!("{rev}:{rel}")], None)
                .ok()?;
            out.ok.then_some(out.stdout)
        })
        .collect()
}

/// What `git status` found.
pub struct Changed {
    /// The files changed, added or removed in the work tree (or staged),
    /// relative to the root, that the caller wants committed.
    pub paths: Vec<String>,
    /// Nothing at all differs from HEAD: no commit step to do.
    pub clean: bool,
    /// Every path status named, wanted or not.
    pub all: Vec<String>,
    /// Paths status named that a sync never reads (a `.GIT` or `git~1`
    /// directory made by hand): left out, reported.
    pub refused: Vec<Refused>,
}

/// The files `git status` finds changed, added or removed, those `wanted`
/// keeps.
///
/// What is memory is axe-sync's to say, not any ignore file's: a
/// `.gitignore` of `*` pushed by one clone, the repository's
/// `info/exclude` or the user's `core.excludesFile` would otherwise stop
/// every new file (each day's daily log, a new agent's run log) from
/// syncing, silently. So status lists ignored files too (`!!`, each file,
/// with `--ignored=traditional` and `--untracked-files=all`), and they
/// are taken like any other; only the leftovers of a write cut off are
/// never memory ([`is_leftover`]).
pub fn changed(git: &Git, wanted: &dyn Fn(&str) -> bool) -> Result<Changed> {
    let out = git.ok(
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=traditional",
            "--no-renames",
            "--ignore-submodules",
        ],
        None,
    )?;
    let mut all = Vec::new();
    let mut refused = Vec::new();
    // Each record is `XY <path>`.
    for record in out.paths() {
        let Some(path) = record.get(3..) else {
            continue;
        };
        if let Some(reason) = refusal(path) {
            refused.push(Refused {
                path: path.to_owned(),
                reason,
            });
        } else if !is_leftover(path) && !MACHINES_OWN.iter().any(|d| path.starts_with(d)) {
            all.push(path.to_owned());
        }
    }
    let mut paths: Vec<String> = all.iter().filter(|p| wanted(p)).cloned().collect();
    paths.sort();
    paths.dedup();
    Ok(Changed {
        paths,
        clean: all.is_empty(),
        all,
        refused,
    })
}

/// What in the data directory is the machine's own, not memory, and is
/// never committed: the ledger of model calls (`axe-log`), each machine's
/// record of its own calls, whose month files would differ on every line
/// and conflict on every sync; and the conversations, the transcripts of
/// every run and `axe-llm` call on this machine (tool results included:
/// the files and pages a model read), which `llm` keeps in a local
/// database too. Memory (the run log, notes, state) is what travels.
const MACHINES_OWN: [&str; 2] = ["ledger/", "conversations/"];

/// A replace's temp file (`.<name>.axe-new`) or an append's marker
/// (`.<name>.axe-append`): what a write cut off leaves, which the next
/// write to that file cleans up.
fn is_leftover(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with('.') && (name.ends_with(".axe-new") || name.ends_with(".axe-append"))
}

/// Stages what [`changed`] found from the work tree, each file read under
/// its lock and [`admit`]ted; then commits the index when its tree differs
/// from HEAD's. With `dry_run`, only says what would be.
pub fn commit(
    git: &Git,
    tree: &Tree,
    changed: &Changed,
    message: &str,
    secrets: &Secrets,
    dry_run: bool,
) -> Result<Committed> {
    let mut staged = Vec::new();
    let mut done = Committed::default();
    if changed.clean {
        return Ok(done);
    }
    for rel in &changed.paths {
        match tree.read(rel)? {
            Some(bytes) => {
                admit(rel, &bytes, secrets, &|| committed(git, rel))?;
                staged.push((rel.clone(), bytes));
                done.files.push(rel.clone());
            }
            None => done.removed.push(rel.clone()),
        }
    }
    if dry_run {
        return Ok(done);
    }
    let blobs: Vec<(&str, &[u8])> = staged
        .iter()
        .map(|(r, b)| (r.as_str(), b.as_slice()))
        .collect();
    let oids = store(git, &blobs)?;
    let mut info = Vec::new();
    for ((rel, _), oid) in staged.iter().zip(&oids) {
        info.extend_from_slice(format!("100644 {oid}\t{rel}\0").as_bytes());
    }
    for rel in &done.removed {
        info.extend_from_slice(format!("0 {}\t{rel}\0", zero(oids.first())).as_bytes());
    }
    if !info.is_empty() {
        git.ok(&["update-index", "-z", "--index-info"], Some(&info))?;
    }
    super::pause::at("staged");
    done.commit = commit_index(git, &[], message)?;
    if !info.is_empty() {
        // Fresh stat data for the files just staged, so the next status
        // need not read them again. Best effort: only speed rides on it.
        let _ = git.output(&["update-index", "-q", "--refresh"], None);
    }
    Ok(done)
}

/// An all-zero object id as long as `like` (SHA-1 or SHA-256).
pub fn zero(like: Option<&String>) -> String {
    "0".repeat(like.map_or(40, String::len))
}

/// Writes `blobs` (path, bytes) into the object store; their ids in order.
pub fn store(git: &Git, blobs: &[(&str, &[u8])]) -> Result<Vec<String>> {
    if blobs.is_empty() {
        return Ok(Vec::new());
    }
    let dir = git
        .git_dir()
        .join("axe-sync")
        .join(format!("stage-{}", std::process::id()));
    fs::create_dir_all(&dir).map_err(|e| SyncError::io("mkdir", &dir, e))?;
    let result = (|| {
        let mut list = Vec::new();
        for (i, (_, bytes)) in blobs.iter().enumerate() {
            let path = dir.join(i.to_string());
            fs::write(&path, bytes).map_err(|e| SyncError::io("write", &path, e))?;
            list.extend_from_slice(path.as_os_str().as_encoded_bytes());
            list.push(b'\n');
        }
        let out = git.ok(
            &["hash-object", "-w", "--no-filters", "--stdin-paths"],
            Some(&list),
        )?;
        let oids: Vec<String> = out.text().lines().map(str::to_owned).collect();
        match oids.len() == blobs.len() {
            true => Ok(oids),
            false => Err(SyncError::HashObjectShort),
        }
    })();
    let _ = fs::remove_dir_all(&dir);
    result
}

/// The id of HEAD, `None` before the first commit.
pub fn head(git: &Git) -> Result<Option<String>> {
    git.resolve("HEAD")
}

/// Commits the index as a child of HEAD (and of `more` parents), moving
/// the branch only if HEAD is still what it was; `None` when the index
/// holds HEAD's tree and no other parent is given.
pub fn commit_index(git: &Git, more: &[String], message: &str) -> Result<Option<String>> {
    let tree = git.ok(&["write-tree"], None)?.text();
    let head = head(git)?;
    if let Some(head) = &head
        && more.is_empty()
    {
        let current = git
            .ok(&["rev-parse", &format!("{head}^{{tree}}")], None)?
            .text();
        if current == tree {
            return Ok(None);
        }
    }
    let mut args = vec![
        "commit-tree".to_owned(),
        tree,
        "-m".to_owned(),
        message.to_owned(),
    ];
    for parent in head.iter().chain(more) {
        args.push("-p".to_owned());
        args.push(parent.clone());
    }
    let commit = git.ok(&args, None)?.text();
    let old = head.unwrap_or_else(|| zero(Some(&commit)));
    git.ok(&["update-ref", "-m", message, "HEAD", &commit, &old], None)?;
    Ok(Some(commit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_refused_by_kind_and_line_never_shown() {
        let key = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3kM5";
        let text = format!("notes\nthe token is {key}\n");
        let none = || Vec::new();
        let err = admit(
            "x.md",
            text.as_bytes(),
            &Secrets::with_keys(Vec::new()),
            &none,
        )
        .unwrap_err();
        let said = err.to_string();
        assert!(
            said.starts_with(
                "x.md holds what looks like a secret (github token; the first on line 2)"
            ),
            "{said}"
        );
        assert!(!said.contains(key));
        assert!(admit("x.md", text.as_bytes(), &Secrets::off(), &none).is_ok());
        // A value the file held already is not judged again.
        let had = || vec![format!("old {key}\n").into_bytes()];
        let keys = Secrets::with_keys(Vec::new());
        assert!(admit("x.md", text.as_bytes(), &keys, &had).is_ok());
        // Each kind is named once, however the secrets alternate.
        let aws = "AKIAIOSFODNN7EXAMPLE";
        let text = format!("{key}\n{aws}\n{key}x\n");
        let said = admit(
            "x.md",
            text.as_bytes(),
            &Secrets::with_keys(Vec::new()),
            &none,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(said.matches("github token").count(), 1, "{said}");
    }

    #[test]
    fn conflict_markers_are_found_and_heading_rules_are_not() {
        assert!(has_conflict_markers(
            b"a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"
        ));
        assert!(!has_conflict_markers(b"Title\n=======\n\ntext\n"));
        assert!(!has_conflict_markers(b">>>>>>> alone\n"));
        let off = Secrets::off();
        let none = || Vec::new();
        assert!(admit("a.md", b"<<<<<<< a\n>>>>>>> b\n", &off, &none).is_err());
    }
}
