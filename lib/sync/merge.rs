//! The merge step: the other side's commit merged into ours, file by file
//! by what each file is ([`kind`](super::kind)), without `git merge`.
//!
//! git's checkout and merge write working files in place and without our
//! locks: a run reading a memory file meanwhile could see half of it, and
//! an append landing between git's read and write would be lost. So the
//! merged contents are computed here from the three versions git holds,
//! each working file is rewritten under its exclusive lock (merged with
//! what it holds at that moment, appends since the commit step included),
//! and the merge commit is made with plumbing from the merged blobs.
//!
//! What arrives is whatever any clone pushed. A file holding git's
//! conflict markers (a person's unfinished `git merge`, committed past
//! the hook) is not merged in: it is kept aside in a conflict file, as a
//! line conflict is, and reported; the note keeps our text.
//!
//! Interrupted (a signal, `kill -9`, a full disk), the working files are
//! each whole, old or merged; HEAD has not moved, so the next sync commits
//! what was merged so far as a local change and merges again, which finds
//! the work done: every merge here is idempotent (an entry is never
//! doubled, a conflict file is named by its text's hash, so the same the
//! second time), except the state's run counter, a sum of both sides' runs
//! since the base, which a redone merge counts the other side's runs into
//! again (a count too high, nothing lost; the README says so). A journal
//! in `.git/axe-sync/merging` says a merge was under way, for the report.

use std::collections::{BTreeMap, HashMap};
use std::fs;

use serde::Serialize;

use super::commit::{self, commit_index, store};
use super::error::{Result, SyncError};
use super::git::Git;
use super::kind::{self, Kind as FileKind};
use super::paths;
use super::pause;
use super::worktree::Tree;
use axe_memory::notes::conflict;
use axe_memory::secrets::{self, Secrets};

/// What a merge step did.
#[derive(Debug, Default, Serialize)]
pub struct Merged {
    /// The commit merged in, when there was one to merge.
    pub from: Option<String>,
    /// The merge commit made (or the commit fast-forwarded to).
    pub commit: Option<String>,
    /// Files the merge changed.
    pub files: Vec<String>,
    /// Conflict files written: the other side's text of a note whose
    /// lines both sides changed, or of a file that arrived holding git's
    /// conflict markers (never merged in).
    pub conflicts: Vec<String>,
    /// Paths of their tree left out (a `.git` or `..` component).
    #[serde(skip)]
    pub refused: Vec<paths::Refused>,
    /// Files that arrived holding what looks like a secret (from a
    /// machine that keeps them: `[memory] redact = false`). Said once, by
    /// the merge that brings them; being on the remote already, they are
    /// not refused at commit after.
    pub secrets: Vec<Arrived>,
    /// HEAD afterwards.
    #[serde(skip)]
    pub head: Option<String>,
}

/// A file that arrived holding what looks like a secret, and its kinds
/// (each once), never the value.
#[derive(Debug, Serialize)]
pub struct Arrived {
    pub path: String,
    pub kinds: Vec<secrets::Kind>,
}

/// A file changed on their side since the base: its blob ids there and in
/// the base (`None`: no file).
struct Change {
    base: Option<String>,
    theirs: Option<String>,
}

/// The journal's path (kept with the commit step, which reads it too).
pub use super::commit::journal;

/// Merges `theirs` (a commit id) into `head` (HEAD, `None` before the
/// first commit) and the work tree. `host` names the conflict files this
/// machine writes.
pub fn merge(
    git: &Git,
    tree: &Tree,
    head: Option<String>,
    theirs: &str,
    host: &str,
    secrets: &Secrets,
    dry_run: bool,
) -> Result<Merged> {
    let mut done = Merged {
        head: head.clone(),
        ..Merged::default()
    };
    if head.as_deref() == Some(theirs) || head.as_ref().is_some_and(|h| is_ancestor(git, theirs, h))
    {
        return Ok(done);
    }
    done.from = Some(theirs.to_owned());
    let mut forward = head.as_ref().is_none_or(|h| is_ancestor(git, h, theirs));
    let base = merge_base(git, head.as_ref(), theirs)?;
    let mut changes = diff(git, &base, theirs)?;
    done.refused = paths::take_refused(&mut changes);
    // Their tree holds what ours must not: a merge commit without it,
    // never their commit itself.
    forward &= done.refused.is_empty();
    done.files = changes.keys().cloned().collect();
    if dry_run || changes.is_empty() && forward {
        if !dry_run && let Some(h) = &head {
            git.ok(&["update-ref", "HEAD", theirs, h], None)?;
            done.head = Some(theirs.to_owned());
        }
        return Ok(done);
    }
    let ours: HashMap<String, Option<String>> = match (&head, forward) {
        (Some(h), false) => diff(git, &base, h)?
            .into_iter()
            .filter(|(p, _)| changes.contains_key(p))
            .map(|(p, c)| (p, c.theirs))
            .collect(),
        _ => HashMap::new(),
    };
    let wanted: Vec<&String> = changes
        .values()
        .flat_map(|c| [&c.base, &c.theirs])
        .chain(ours.values())
        .flatten()
        .collect();
    let blobs = cat(git, &wanted)?;

    let journal = journal(git);
    fs::write(&journal, theirs).map_err(|e| SyncError::io("write", &journal, e))?;
    let files = Files {
        git,
        tree,
        host,
        made: commit_time(git, theirs)?,
        secrets,
        ours: &ours,
        blobs: &blobs,
    };
    let mut index = NewIndex::default();
    for (rel, change) in &changes {
        files.merge(rel, change, &mut index, &mut done)?;
    }
    index.write(git, theirs)?;
    done.commit = record(git, head.as_ref(), forward, index.refused, theirs, host)?;
    let _ = fs::remove_file(&journal);
    done.head = done.commit.clone().or(done.head);
    Ok(done)
}

/// The commit both sides come from: git's merge base, or the empty tree
/// when they share none (or before the first commit).
fn merge_base(git: &Git, head: Option<&String>, theirs: &str) -> Result<String> {
    match head {
        Some(h) => {
            let out = git.output(&["merge-base", h, theirs], None)?;
            match out.ok {
                true => Ok(out.text()),
                false => empty_tree(git),
            }
        }
        None => empty_tree(git),
    }
}

/// What each file's merge reads: the repository and its work tree, this
/// machine's name and their commit's time for conflict files, the
/// secrets an arrived text is judged by, our version of each file both
/// sides changed, and every version's bytes.
struct Files<'a> {
    git: &'a Git,
    tree: &'a Tree,
    host: &'a str,
    made: time::OffsetDateTime,
    secrets: &'a Secrets,
    ours: &'a HashMap<String, Option<String>>,
    blobs: &'a HashMap<String, Vec<u8>>,
}

/// The merged tree's version of each file (blob id, or bytes to store),
/// and the conflict files to add.
#[derive(Default)]
struct NewIndex {
    entries: Vec<(String, Option<String>)>,
    to_store: Vec<(String, Vec<u8>)>,
    /// A file that arrived holding conflict markers was refused: then
    /// the merge is a merge commit even where it could fast-forward.
    refused: bool,
}

impl Files<'_> {
    /// The bytes of the blob `oid`, if any.
    fn blob(&self, oid: &Option<String>) -> Option<&[u8]> {
        oid.as_ref()
            .and_then(|o| self.blobs.get(o))
            .map(Vec::as_slice)
    }

    /// Merges `rel`, which changed on their side: the working file under
    /// its lock, the tree's version into `index`, their text kept aside
    /// when it could not be merged in.
    fn merge(
        &self,
        rel: &String,
        change: &Change,
        index: &mut NewIndex,
        done: &mut Merged,
    ) -> Result<()> {
        let (git, tree) = (self.git, self.tree);
        let kind = FileKind::of(rel);
        let (b, t) = (self.blob(&change.base), self.blob(&change.theirs));
        let head_version = self.ours.get(rel).map_or(b, |o| self.blob(o));
        if let Some(t) = t
            && let Some(found) = arrived(self.secrets, rel, t, [b, head_version])
        {
            done.secrets.push(found);
        }
        if let Some(t) = t.filter(|t| marked(rel, t)) {
            // Someone's unfinished `git merge`, pushed past the hook: not
            // merged in (memory never holds a marker), but kept aside like
            // any text that could not be merged. The working file is left
            // as it is, the tree keeps our version (HEAD's).
            let side = keep_aside(tree, rel, self.host, self.made, t)?;
            index.entries.push((side.clone(), change.theirs.clone()));
            let head_version = self.ours.get(rel).cloned();
            let head_version = head_version.unwrap_or_else(|| change.base.clone());
            index.entries.push((rel.clone(), head_version));
            done.conflicts.push(side);
            index.refused = true;
            return Ok(());
        }
        let mut conflicted = false;
        tree.update(rel, |w| {
            let m = kind::merge(git, kind, rel, b, w, t)?;
            conflicted |= m.conflict.is_some();
            Ok(m.text)
        })?;
        pause::at("merging");
        match self.ours.get(rel) {
            Some(o) => {
                let m = kind::merge(git, kind, rel, b, self.blob(o), t)?;
                conflicted |= m.conflict.is_some();
                match m.text {
                    Some(text) if Some(text.as_slice()) == t => {
                        index.entries.push((rel.clone(), change.theirs.clone()))
                    }
                    Some(text) => index.to_store.push((rel.clone(), text)),
                    None => index.entries.push((rel.clone(), None)),
                }
            }
            None => index.entries.push((rel.clone(), change.theirs.clone())),
        }
        if conflicted && let Some(t) = t {
            let side = keep_aside(tree, rel, self.host, self.made, t)?;
            index.entries.push((side.clone(), change.theirs.clone()));
            done.conflicts.push(side);
        }
        Ok(())
    }
}

impl NewIndex {
    /// Stores the merged texts and sets every entry in git's index.
    fn write(&mut self, git: &Git, theirs: &str) -> Result<()> {
        let blobs: Vec<(&str, &[u8])> = self
            .to_store
            .iter()
            .map(|(r, b)| (r.as_str(), b.as_slice()))
            .collect();
        let stored = store(git, &blobs)?;
        self.entries.extend(
            self.to_store
                .iter()
                .map(|(r, _)| r.clone())
                .zip(stored.into_iter().map(Some)),
        );
        let mut info = Vec::new();
        let zero = commit::zero(Some(&theirs.to_owned()));
        for (rel, oid) in &self.entries {
            let line = match oid {
                Some(oid) => format!("100644 {oid}\t{rel}\0"),
                None => format!("0 {zero}\t{rel}\0"),
            };
            info.extend_from_slice(line.as_bytes());
        }
        git.ok(&["update-index", "-z", "--index-info"], Some(&info))?;
        Ok(())
    }
}

/// The commit the merged index becomes: a merge commit, or their commit
/// itself when ours is behind it (a fast-forward, or the first sync) and
/// nothing was refused.
fn record(
    git: &Git,
    head: Option<&String>,
    forward: bool,
    refused: bool,
    theirs: &str,
    host: &str,
) -> Result<Option<String>> {
    let zero = commit::zero(Some(&theirs.to_owned()));
    Ok(match (head, forward) {
        _ if refused => commit_index(
            git,
            &[theirs.to_owned()],
            &format!("axe-sync: merge on {host}"),
        )?,
        (Some(h), true) => {
            git.ok(
                &[
                    "update-ref",
                    "-m",
                    "axe-sync: fast-forward",
                    "HEAD",
                    theirs,
                    h,
                ],
                None,
            )?;
            Some(theirs.to_owned())
        }
        (None, true) => {
            git.ok(
                &[
                    "update-ref",
                    "-m",
                    "axe-sync: first sync",
                    "HEAD",
                    theirs,
                    &zero,
                ],
                None,
            )?;
            Some(theirs.to_owned())
        }
        (_, false) => commit_index(
            git,
            &[theirs.to_owned()],
            &format!("axe-sync: merge on {host}"),
        )?,
    })
}

/// What looks like a secret in `theirs`, the text of `rel` that arrived,
/// that neither of `before` (the base's and our version) held: what this
/// merge brings here first.
fn arrived(
    secrets: &Secrets,
    rel: &str,
    theirs: &[u8],
    before: [Option<&[u8]>; 2],
) -> Option<Arrived> {
    let mut kinds: Vec<secrets::Kind> = Vec::new();
    for f in secrets.find(theirs) {
        let new = !commit::held(before.iter().flatten().copied(), &theirs[f.range]);
        if new && !kinds.contains(&f.kind) {
            kinds.push(f.kind);
        }
    }
    (!kinds.is_empty()).then(|| Arrived {
        path: rel.to_owned(),
        kinds,
    })
}

/// Whether `theirs`, the text of `rel` that arrived, holds git's conflict
/// markers (a conflict file may: it holds what arrived, as it arrived).
fn marked(rel: &str, theirs: &[u8]) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    !conflict::is_conflict(name) && commit::has_conflict_markers(theirs)
}

/// Writes `text`, the other side's version of `rel`, to its conflict file
/// beside it; returns the file's path. Never over another: a file of that
/// name holds this text already (the name is its hash), or someone's
/// edit of it, which stays.
fn keep_aside(
    tree: &Tree,
    rel: &str,
    host: &str,
    made: time::OffsetDateTime,
    text: &[u8],
) -> Result<String> {
    let side = conflict::path_for(rel, host, made, text);
    tree.update(&side, |now| Ok(Some(now.unwrap_or(text).to_vec())))?;
    Ok(side)
}

/// Whether commit `a` is an ancestor of commit `b`.
fn is_ancestor(git: &Git, a: &str, b: &str) -> bool {
    git.output(&["merge-base", "--is-ancestor", a, b], None)
        .is_ok_and(|o| o.ok)
}

/// The empty tree's id, for histories with nothing in common.
fn empty_tree(git: &Git) -> Result<String> {
    Ok(git
        .ok(&["hash-object", "-t", "tree", "--stdin"], Some(b""))?
        .text())
}

/// The commit time of `commit`.
fn commit_time(git: &Git, commit: &str) -> Result<time::OffsetDateTime> {
    let secs: i64 = git
        .ok(&["show", "-s", "--format=%ct", commit], None)?
        .text()
        .parse()
        .unwrap_or_default();
    Ok(time::OffsetDateTime::from_unix_timestamp(secs).unwrap_or(time::OffsetDateTime::UNIX_EPOCH))
}

/// The regular files that differ between two trees (or commits), with
/// their blob ids on each side.
fn diff(git: &Git, from: &str, to: &str) -> Result<BTreeMap<String, Change>> {
    let out = git.ok(&["diff-tree", "-r", "-z", "--no-renames", from, to], None)?;
    let mut fields = out.stdout.split(|&b| b == 0);
    let mut changes = BTreeMap::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old, new, ..] = parts[..] else {
            continue;
        };
        let regular = |mode: &str| matches!(mode, "100644" | "100755" | "000000");
        if !regular(old_mode) || !regular(new_mode) {
            continue;
        }
        let id = |mode: &str, oid: &str| (mode != "000000").then(|| oid.to_owned());
        changes.insert(
            String::from_utf8_lossy(path).into_owned(),
            Change {
                base: id(old_mode, old),
                theirs: id(new_mode, new),
            },
        );
    }
    Ok(changes)
}

/// The bytes of the blobs `oids`, by one `git cat-file --batch`.
fn cat(git: &Git, oids: &[&String]) -> Result<HashMap<String, Vec<u8>>> {
    let mut found = HashMap::new();
    if oids.is_empty() {
        return Ok(found);
    }
    let mut input = Vec::new();
    for oid in oids {
        input.extend_from_slice(oid.as_bytes());
        input.push(b'\n');
    }
    let out = git.ok(&["cat-file", "--batch"], Some(&input))?;
    let mut rest = out.stdout.as_slice();
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        let mut parts = header.split(' ');
        let (Some(oid), Some(_), Some(size)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(SyncError::CatFile {
                header: Some(header),
            });
        };
        let Ok(size) = size.parse::<usize>() else {
            return Err(SyncError::CatFile {
                header: Some(header),
            });
        };
        if rest.len() < size + 1 {
            return Err(SyncError::CatFile { header: None });
        }
        found.insert(oid.to_owned(), rest[..size].to_vec());
        rest = &rest[size + 1..];
    }
    Ok(found)
}
