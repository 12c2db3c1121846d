//! A consolidation's record of what its tools wrote, kept as they write.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use axe_base::error::Result;
use axe_base::lock::Recover;
use axe_memory::Wait;
use axe_memory::hash::sha256_hex;
use axe_memory::notes::history::{self, Kept, Record};
use axe_memory::notes::{Witness, Workspace};
use axe_memory::secrets::Secrets;

use super::Changed;

/// A consolidation's record of what its tools wrote, told by the workspace
/// they write through (a [`Witness`]), under each file's lock. It holds
/// exactly what the consolidation itself wrote: for each file, the bytes
/// there at its first write (not at the start of the run: a change made
/// meanwhile by someone else is theirs, and is the text replaced) and the
/// hash of its last. A file it did not write is never in it, so an undo
/// never touches one.
pub(super) struct Journal {
    /// Where the tools write (the notes, or a dry run's copy), to name
    /// the files relative to it.
    pub(super) written: Workspace,
    /// Where the record goes; `None` for a dry run.
    pub(super) record: Option<OnDisk>,
    pub(super) state: Mutex<Journaled>,
}

/// The record's place and what writing it takes.
pub(super) struct OnDisk {
    pub(super) ws: Workspace,
    pub(super) path: PathBuf,
    pub(super) at: String,
    pub(super) secrets: Secrets,
    pub(super) wait: Wait,
}

impl OnDisk {
    /// The record of `wrote`, not done, no entry taken in.
    pub(super) fn record(&self, wrote: &[&Wrote]) -> Record {
        Record {
            at: self.at.clone(),
            done: false,
            entries: Vec::new(),
            files: wrote.iter().map(|w| w.kept()).collect(),
            at_write: true,
        }
    }
}

#[derive(Default)]
pub(super) struct Journaled {
    pub(super) files: Vec<Wrote>,
    /// Each file's entry before the write under way, put back should it
    /// not happen (one write of a file at a time: its lock).
    pending: Vec<(String, Option<Wrote>)>,
    /// The files whose write was refused because they held what this
    /// consolidation had written itself.
    pub(super) own_refusals: Vec<String>,
    /// Whether the record is on disk.
    pub(super) stored: bool,
}

/// One file the consolidation wrote.
#[derive(Clone)]
pub(super) struct Wrote {
    path: String,
    /// What it held just before the first write; `None`: it did not exist.
    before: Option<Vec<u8>>,
    /// What the last write put in.
    after: Vec<u8>,
    /// The hash of every text written, the last one last.
    hashes: Vec<String>,
}

impl Wrote {
    pub(super) fn changed(&self) -> bool {
        self.before.as_deref() != Some(self.after.as_slice())
    }

    fn kept(&self) -> Kept {
        Kept {
            path: self.path.clone(),
            before: self.before.clone(),
            sha256_before: sha256_hex(self.before.as_deref().unwrap_or_default()),
            sha256_after: Some(sha256_hex(&self.after)),
        }
    }

    pub(super) fn changed_file(&self) -> Changed {
        Changed {
            path: self.path.clone(),
            sha256_before: self.before.as_deref().map(sha256_hex),
            sha256_after: Some(sha256_hex(&self.after)),
            before: self.before.clone().unwrap_or_default(),
            after: self.after.clone(),
        }
    }
}

impl Journal {
    fn state(&self) -> std::sync::MutexGuard<'_, Journaled> {
        self.state.lock().recover()
    }

    /// The record with what is journaled now, on disk (a dry run keeps none).
    fn store(&self, state: &mut Journaled) -> Result<()> {
        let Some(on_disk) = &self.record else {
            return Ok(());
        };
        let wrote: Vec<&Wrote> = state.files.iter().collect();
        let record = on_disk.record(&wrote);
        history::write(
            &on_disk.ws,
            &on_disk.path,
            &record,
            &on_disk.secrets,
            on_disk.wait,
        )?;
        state.stored = true;
        Ok(())
    }
}

impl Witness for Journal {
    fn writing(&self, path: &Path, before: Option<&[u8]>, after: &[u8]) -> Result<()> {
        let rel = self.written.relative(path);
        let mut state = self.state();
        let at = state.files.iter().position(|w| w.path == rel);
        let was = at.map(|i| state.files[i].clone());
        state.pending.retain(|(p, _)| *p != rel);
        state.pending.push((rel.clone(), was));
        match at {
            Some(i) => {
                let w = &mut state.files[i];
                w.after = after.to_vec();
                w.hashes.push(sha256_hex(after));
            }
            None => state.files.push(Wrote {
                path: rel.clone(),
                before: before.map(<[u8]>::to_vec),
                after: after.to_vec(),
                hashes: vec![sha256_hex(after)],
            }),
        }
        let stored = self.store(&mut state);
        if stored.is_err() {
            // Not recorded, so not written: the file keeps its text.
            put_back(&mut state, &rel);
        }
        stored
    }

    fn not_written(&self, path: &Path) {
        let rel = self.written.relative(path);
        let mut state = self.state();
        put_back(&mut state, &rel);
        // Best effort: a record that names a write that did not happen
        // only makes an undo refuse (the file holds neither text).
        let _ = self.store(&mut state);
    }

    fn refused(&self, path: &Path, now: &str) {
        let rel = self.written.relative(path);
        let mut state = self.state();
        let own = state
            .files
            .iter()
            .any(|w| w.path == rel && w.hashes.iter().any(|h| h.eq_ignore_ascii_case(now)));
        if own {
            state.own_refusals.push(rel);
        }
    }
}

/// `rel`'s entry as it was before the write announced last.
fn put_back(state: &mut Journaled, rel: &str) {
    let Some(i) = state.pending.iter().position(|(p, _)| p == rel) else {
        return;
    };
    let (_, was) = state.pending.remove(i);
    state.files.retain(|w| w.path != rel);
    if let Some(was) = was {
        state.files.push(was);
    }
}
