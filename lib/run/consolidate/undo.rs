//! `--undo`: the last consolidation's files given back their previous
//! texts, while they still hold what it wrote.

use serde::Serialize;

use axe_base::error::{Error, Result};
use axe_memory::Wait;
use axe_memory::hash::sha256_hex;
use axe_memory::notes::history::{self, Kept};
use axe_memory::notes::{self, Workspace};
use axe_memory::secrets::Secrets;

/// What `--undo` restored.
#[derive(Debug, Serialize)]
pub struct Undone {
    pub agent: String,
    /// The record undone, relative to the workspace.
    pub history: String,
    /// The files given back their previous text (or removed, when the
    /// consolidation created them).
    pub restored: Vec<String>,
    /// The files an older record says it created, left as they are: such
    /// a record cannot tell a topic it created from one it rewrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
    /// The entries that count as new again.
    pub entries: usize,
}

/// Restores the files the last consolidation of `agent` changed, when
/// none changed since; then its record goes, so its entries are new again.
/// A file changed since is a conflict, and nothing is written.
pub fn undo(ws: &Workspace, agent: &str, secrets: &Secrets, wait: Wait) -> Result<Undone> {
    let last = match history::newest(ws, agent)? {
        None => {
            return Err(Error::Input(format!(
                "nothing to undo: no consolidation of \"{agent}\" is on record in {}",
                ws.relative(&history::dir(ws, agent))
            )));
        }
        Some((path, Err(why))) => {
            return Err(Error::Input(format!(
                "{} is not a consolidation record ({why}): nothing was restored",
                ws.relative(&path)
            )));
        }
        Some((path, Ok(record))) => history::Stored { path, record },
    };
    let last = &last;
    // A record may have come from another machine: it names only this
    // agent's MEMORY.md and world topics, or nothing is restored.
    let memory = ws.relative(&ws.memory(agent));
    for k in &last.record.files {
        let topic = k
            .path
            .strip_prefix("world/")
            .and_then(|t| t.strip_suffix(".md"))
            .filter(|t| notes::topic_file_name(t).is_ok_and(|s| s == *t));
        if k.path != memory && topic.is_none() {
            return Err(Error::Input(format!(
                "{} names {:?}, which is not {memory} or a world topic: nothing was restored",
                ws.relative(&last.path),
                k.path
            )));
        }
    }
    let current = |k: &Kept| -> Result<String> {
        Ok(sha256_hex(
            &ws.read(&ws.root.join(&k.path))?.unwrap_or_default(),
        ))
    };
    // A file back at its text before (an undo cut short by a conflict on
    // the next file, or given back by hand) is left as it is, so undoing
    // again finishes the rest rather than refusing for good.
    let mut back = Vec::new();
    for k in &last.record.files {
        let now = current(k)?;
        let expected = k.sha256_after.as_deref().unwrap_or(&k.sha256_before);
        if now != expected && k.sha256_after.is_some() && now == k.sha256_before {
            back.push(k.path.clone());
            continue;
        }
        if now != expected && k.sha256_after.is_none() {
            // Its run ended before it could say what it wrote (killed, a
            // crash): its rewrite and another writer's look the same.
            return Err(Error::Conflict(format!(
                "the consolidation of {} did not finish, and {} changed since it started (by it or by another writer): nothing was restored; its previous text is kept in {}",
                last.record.at,
                k.path,
                ws.relative(&last.path)
            )));
        }
        if now != expected {
            return Err(Error::Conflict(format!(
                "{} changed since the consolidation of {} (its sha256 is now {now}, not {expected}): nothing was restored",
                k.path, last.record.at
            )));
        }
    }
    let mut restored = Vec::new();
    let mut left = Vec::new();
    for k in &last.record.files {
        let Some(after) = k.sha256_after.as_ref().filter(|_| !back.contains(&k.path)) else {
            continue;
        };
        let path = ws.root.join(&k.path);
        match &k.before {
            Some(bytes) => {
                notes::rewrite(
                    ws,
                    &path,
                    bytes,
                    Some(after),
                    (usize::MAX, ""),
                    secrets,
                    wait,
                )?;
            }
            // An older record took its texts as the run started, so its
            // "did not exist" may name a topic someone made meanwhile:
            // every agent's, it is left rather than removed.
            None if !last.record.at_write && k.path != memory => {
                left.push(k.path.clone());
                continue;
            }
            None => {
                if !history::remove_if(ws, &path, after, wait)? {
                    return Err(Error::Conflict(format!(
                        "{} changed while the consolidation of {} was being undone, so it was kept; the record {} is kept",
                        k.path,
                        last.record.at,
                        ws.relative(&last.path)
                    )));
                }
            }
        }
        restored.push(k.path.clone());
    }
    history::remove(ws, &last.path)?;
    Ok(Undone {
        agent: agent.to_owned(),
        history: ws.relative(&last.path),
        restored,
        left,
        entries: if last.record.done {
            last.record.entries.len()
        } else {
            0
        },
    })
}
