//! What an import brings in, merged into the notes workspace as
//! `axe-sync` merges another machine's files, never over what is there.
//!
//! A daily log is merged by entry with sync's own entry merge
//! ([`axe_sync::merge_entries`]) against an empty base: every entry of
//! both, once, in time order. MEMORY.md and world topics merge by lines
//! in sync, against the version both sides started from; an import has
//! no such version, so it takes the cases where a base is known: the
//! same text, or one side's lines all in the other in order (the other
//! only added lines: the base was the smaller), keep the larger; any
//! other difference is a conflict, and the imported text is kept whole
//! beside the note in a conflict file, named as sync names them
//! ([`conflict::path_for`]) and reported with exit code 7. The conflict
//! file's name ends with its text's hash: one already there with that
//! hash is the same conflict, not written again, so a second import of
//! the same source changes nothing.
//!
//! Every write takes the file's lock and replaces it atomically, as
//! `reflect` does; the text has been through the secret scanner first.

use std::collections::HashMap;
use std::io::{Read, Write};

use serde::Serialize;
use time::OffsetDateTime;

use axe_base::beneath::Open;
use axe_base::error::{Error, Result};
use axe_memory::error::io_error;
use axe_memory::hash::sha256_hex;
use axe_memory::lock::{Wait, create_locked};
use axe_memory::notes::{READ_LIMIT, Workspace, conflict};
use axe_memory::replace::replace;
use axe_sync::{Layout, merge_entries};

/// How a file merges: as sync merges its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// MEMORY.md, a world topic.
    Lines,
    /// A daily log.
    Daily,
}

/// One file an import would write: where in the workspace (with `/`),
/// how it merges, and its text (already redacted).
#[derive(Debug, Clone)]
pub struct Planned {
    pub rel: String,
    pub how: How,
    pub text: Vec<u8>,
}

/// What became of one planned file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Merged,
    Unchanged,
    Conflict,
}

#[derive(Debug, Clone, Serialize)]
pub struct Done {
    /// The note's path, relative to the workspace.
    pub path: String,
    pub action: Action,
    /// The note's size after (or, in a dry run, as it would be).
    pub bytes: usize,
    /// The conflict file holding the imported text, for a conflict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
    /// A new conflict file's size (0 when it was there already).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_bytes: Option<usize>,
}

/// What the note at `current` becomes with `new` merged in.
enum Outcome {
    Keep,
    Write(Vec<u8>),
    Conflict,
}

fn decide(how: How, current: &[u8], new: &[u8]) -> Outcome {
    if current == new {
        return Outcome::Keep;
    }
    if current.is_empty() {
        return Outcome::Write(new.to_vec());
    }
    match how {
        How::Daily => {
            let merged = merge_entries(Layout::Daily, b"", current, new);
            match merged == current {
                true => Outcome::Keep,
                false => Outcome::Write(merged),
            }
        }
        How::Lines if in_order(new, current) => Outcome::Keep,
        How::Lines if in_order(current, new) => Outcome::Write(new.to_vec()),
        How::Lines => Outcome::Conflict,
    }
}

/// Whether every line of `small` is in `large`, in the same order.
fn in_order(small: &[u8], large: &[u8]) -> bool {
    let mut large = lines(large);
    lines(small).all(|line| large.any(|l| l == line))
}

/// The lines of `text`: each ended by a newline, and what follows the
/// last newline. A last line without its newline is the same line as with
/// one (an export to the MCP memory server's JSONL adds it), and an empty
/// text has none.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    body.split(|&b| b == b'\n').take(match text.is_empty() {
        true => 0,
        false => usize::MAX,
    })
}

/// Merges `plan` into `ws` (or, with `dry_run`, says what that would do
/// and writes nothing).
pub fn apply(ws: &Workspace, plan: &[Planned], wait: Wait, dry_run: bool) -> Result<Vec<Done>> {
    let now = OffsetDateTime::now_utc();
    let mut beside = Beside::default();
    // In a dry run, what the notes written so far would hold: a later
    // text for the same note merges with that, as it will when written.
    let mut would_be: HashMap<String, Vec<u8>> = HashMap::new();
    let mut done = Vec::new();
    for p in plan {
        done.push(one(ws, p, now, wait, dry_run, &mut beside, &mut would_be)?);
    }
    Ok(done)
}

/// The conflict files in each directory an import reached, by the note
/// they are beside (its file name less `.md`) and their text's hash:
/// each directory listed once, not once per conflict (20,000 conflicts in
/// one folder took minutes of listing).
#[derive(Default)]
struct Beside {
    listed: HashMap<String, HashMap<(String, String), String>>,
}

impl Beside {
    /// The conflict file in `dir_rel` beside `stem` whose text has `hash`.
    fn find(
        &mut self,
        ws: &Workspace,
        dir_rel: &str,
        stem: &str,
        hash: &str,
    ) -> Result<Option<String>> {
        if !self.listed.contains_key(dir_rel) {
            let parent = ws.root.join(dir_rel);
            let mut found = HashMap::new();
            if let Some(dir) = ws.dir(&parent, false)? {
                let names = dir
                    .list()
                    .map_err(|e| io_error("failed to import", "list", &parent, e))?;
                for (n, _) in names {
                    let Ok(n) = n.into_string() else { continue };
                    if let Some(key) = conflict_key(&n) {
                        found.entry(key).or_insert(n);
                    }
                }
            }
            self.listed.insert(dir_rel.to_owned(), found);
        }
        let key = (stem.to_owned(), hash.to_owned());
        Ok(self.listed.get(dir_rel).and_then(|f| f.get(&key)).cloned())
    }

    fn add(&mut self, dir_rel: &str, name: &str) {
        if let Some(key) = conflict_key(name) {
            self.listed
                .entry(dir_rel.to_owned())
                .or_default()
                .insert(key, name.to_owned());
        }
    }
}

/// A conflict file's note (`STEM.conflict-…`) and hash (`…-HASH12.md`), as
/// sync and import name them.
fn conflict_key(name: &str) -> Option<(String, String)> {
    let (stem, rest) = name.split_once(".conflict-")?;
    let hash = rest.strip_suffix(".md")?;
    let (_, hash) = hash.rsplit_once('-')?;
    (hash.len() == 12).then(|| (stem.to_owned(), hash.to_owned()))
}

fn one(
    ws: &Workspace,
    p: &Planned,
    now: OffsetDateTime,
    wait: Wait,
    dry_run: bool,
    beside: &mut Beside,
    would_be: &mut HashMap<String, Vec<u8>>,
) -> Result<Done> {
    let path = ws.root.join(&p.rel);
    let fail = |op: &'static str, e: std::io::Error| io_error("failed to import", op, &path, e);
    let finish = |action, bytes| Done {
        path: p.rel.clone(),
        action,
        bytes,
        conflict: None,
        conflict_bytes: None,
    };
    let mut conflicted = |bytes: usize| -> Result<Done> {
        let (name, written) = keep_beside(ws, p, now, wait, dry_run, beside)?;
        Ok(Done {
            conflict: Some(name),
            conflict_bytes: Some(written),
            ..finish(Action::Conflict, bytes)
        })
    };
    if dry_run {
        let current = match would_be.get(&p.rel) {
            Some(text) => text.clone(),
            None => ws.read(&path)?.unwrap_or_default(),
        };
        return match decide(p.how, &current, &p.text) {
            Outcome::Keep => Ok(finish(Action::Unchanged, current.len())),
            Outcome::Write(t) => {
                let action = match current.is_empty() {
                    true => Action::Created,
                    false => Action::Merged,
                };
                let bytes = t.len();
                would_be.insert(p.rel.clone(), t);
                Ok(finish(action, bytes))
            }
            Outcome::Conflict => conflicted(current.len()),
        };
    }
    let (dir, name) = ws
        .file(&path, true)?
        .ok_or_else(|| fail("open", std::io::ErrorKind::NotFound.into()))?;
    let (mut file, created) =
        create_locked(&dir, &name, Open::Update, wait).map_err(|e| fail("open", e))?;
    let mut current = Vec::new();
    (&mut file)
        .take(READ_LIMIT + 1)
        .read_to_end(&mut current)
        .map_err(|e| fail("read", e))?;
    if current.len() as u64 > READ_LIMIT {
        return Err(Error::Input(format!(
            "{} is over {} MiB: not a note, left as it is",
            p.rel,
            READ_LIMIT >> 20
        )));
    }
    let outcome = decide(p.how, &current, &p.text);
    let write = |text: &[u8]| {
        replace(&file, &dir, &name, |tmp, _| tmp.write_all(text)).map_err(|e| fail("replace", e))
    };
    match outcome {
        Outcome::Keep => {
            if created && current.is_empty() {
                // Nothing to write (an empty import): the file this call
                // made goes again. We still hold its lock.
                let _ = dir.remove(&name);
            }
            Ok(finish(Action::Unchanged, current.len()))
        }
        Outcome::Write(text) => {
            write(&text)?;
            let action = match current.is_empty() {
                true => Action::Created,
                false => Action::Merged,
            };
            Ok(finish(action, text.len()))
        }
        Outcome::Conflict => conflicted(current.len()),
    }
}

/// Keeps `p`'s text in a conflict file beside its note, unless one with
/// the same text (the same hash in its name) is there already; its path
/// and the bytes written.
fn keep_beside(
    ws: &Workspace,
    p: &Planned,
    now: OffsetDateTime,
    wait: Wait,
    dry_run: bool,
    beside: &mut Beside,
) -> Result<(String, usize)> {
    let rel = conflict::path_for(&p.rel, "import", now, &p.text);
    let path = ws.root.join(&rel);
    let fail = |op: &'static str, e: std::io::Error| io_error("failed to import", op, &path, e);
    let hash = &sha256_hex(&p.text)[..12];
    let (dir_rel, file_name) = rel.rsplit_once('/').unwrap_or(("", &rel));
    let stem = file_name.split(".conflict-").next().unwrap_or_default();
    if let Some(n) = beside.find(ws, dir_rel, stem, hash)? {
        let found = match dir_rel.is_empty() {
            true => n,
            false => format!("{dir_rel}/{n}"),
        };
        return Ok((found, 0));
    }
    beside.add(dir_rel, file_name);
    if dry_run {
        return Ok((rel, p.text.len()));
    }
    let (dir, name) = ws
        .file(&path, true)?
        .ok_or_else(|| fail("open", std::io::ErrorKind::NotFound.into()))?;
    let (file, _) = create_locked(&dir, &name, Open::Update, wait).map_err(|e| fail("open", e))?;
    replace(&file, &dir, &name, |tmp, _| tmp.write_all(&p.text)).map_err(|e| fail("replace", e))?;
    Ok((rel, p.text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_the_larger_side_and_conflict_otherwise() {
        let keep = |c: &[u8], n: &[u8]| matches!(decide(How::Lines, c, n), Outcome::Keep);
        assert!(keep(b"a\nb\nc\n", b"a\nc\n"));
        assert!(matches!(
            decide(How::Lines, b"a\nc\n", b"a\nb\nc\n"),
            Outcome::Write(_)
        ));
        assert!(matches!(
            decide(How::Lines, b"a\nx\n", b"a\ny\n"),
            Outcome::Conflict
        ));
        // A missing final newline is no line of its own; nor is an empty
        // text a line.
        assert!(keep(b"a\nb", b"a\nb\n"));
        assert!(keep(b"a\nb\n", b"a\nb"));
        assert!(keep(b"a\n", b""));
        assert!(matches!(
            decide(How::Lines, b"a\nb", b"a\nb\nc\n"),
            Outcome::Write(_)
        ));
        let daily = b"# 2026-01-01\n\n## 09:00\n\nx\n";
        let more = b"# 2026-01-01\n\n## 10:00\n\ny\n";
        let Outcome::Write(m) = decide(How::Daily, daily, more) else {
            panic!()
        };
        assert_eq!(m, b"# 2026-01-01\n\n## 09:00\n\nx\n\n## 10:00\n\ny\n");
        assert!(matches!(decide(How::Daily, &m, more), Outcome::Keep));
    }
}
