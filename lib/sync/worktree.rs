//! The memory files in the repository's work tree, read and written the
//! way every memory command does: through directory handles from the
//! root (`beneath`), under each file's lock (`memory::lock`), replaced
//! atomically (`memory::replace`). git itself never writes one: a commit
//! reads a file whole under its shared lock, and a merge rewrites it under
//! its exclusive lock, merged with whatever was appended meanwhile. No
//! path git would refuse (`.git` in any spelling, `..`) is ever opened.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use super::error::{Result, SyncError};
use super::paths::refusal;
use axe_base::beneath::{Dir, Open};
use axe_memory::append;
use axe_memory::lock::{Mode, Wait, create_locked, open_locked};
use axe_memory::replace::replace;

/// The work tree, opened at its root.
pub struct Tree {
    root: Dir,
    /// How long a file's lock is waited for.
    wait: Wait,
}

impl Tree {
    pub fn open(root: &Path, wait: Wait) -> Result<Tree> {
        let root = Dir::root(root, true)
            .map_err(|e| SyncError::io("open", root, e))?
            .ok_or_else(|| SyncError::Missing(root.to_owned()))?;
        Ok(Tree { root, wait })
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.root.join(rel)
    }

    fn holding(&self, rel: &str, create: bool) -> Result<Option<(Dir, OsString)>> {
        // The callers leave such paths out already; this is the last
        // guard that nothing is read or written through `.git`.
        if let Some(reason) = refusal(rel) {
            return Err(SyncError::Refused {
                path: rel.to_owned(),
                reason,
            });
        }
        self.root
            .file(Path::new(rel), create)
            .map_err(|e| SyncError::io("open", self.path(rel), e))
    }

    /// The file `rel` as a whole, read under its shared lock (up to its
    /// last whole entry, should an append have died mid-entry); `None`
    /// when there is none.
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>> {
        let fail = |op: &'static str, e: io::Error| SyncError::io(op, self.path(rel), e);
        let Some((dir, name)) = self.holding(rel, false)? else {
            return Ok(None);
        };
        let Some(file) = open_locked(&dir, &name, Open::Read, Mode::Shared, self.wait)
            .map_err(|e| fail("open", e))?
        else {
            return Ok(None);
        };
        read_whole(&dir, &name, &file)
            .map(Some)
            .map_err(|e| fail("read", e))
    }

    /// Changes the file `rel` under its exclusive lock: `change` gets what
    /// it holds now (`None`: no file) and says what it should hold
    /// (`None`: removed). Nothing is written when that is what it holds,
    /// and nothing is created for a file that should not exist.
    pub fn update(
        &self,
        rel: &str,
        mut change: impl FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>>,
    ) -> Result<()> {
        let fail = |op: &'static str, e: io::Error| SyncError::Io {
            context: "failed to merge",
            op,
            path: self.path(rel),
            source: e,
        };
        let existing = match self.holding(rel, false)? {
            Some((dir, name)) => open_locked(&dir, &name, Open::Read, Mode::Exclusive, self.wait)
                .map_err(|e| fail("open", e))?
                .map(|file| (dir, name, file)),
            None => None,
        };
        let (dir, name, file, created) = match existing {
            Some((dir, name, file)) => (dir, name, file, false),
            None => {
                if change(None)?.is_none() {
                    return Ok(());
                }
                let (dir, name) = self
                    .holding(rel, true)?
                    .ok_or_else(|| fail("open", io::ErrorKind::NotFound.into()))?;
                let (file, created) = create_locked(&dir, &name, Open::Update, self.wait)
                    .map_err(|e| fail("open", e))?;
                (dir, name, file, created)
            }
        };
        let now = read_whole(&dir, &name, &file).map_err(|e| fail("read", e))?;
        // A file we just made is no file; one another writer made first is.
        let now = (!created || !now.is_empty()).then_some(now);
        let wanted = match change(now.as_deref()) {
            Ok(wanted) => wanted,
            Err(e) => {
                if created {
                    let _ = dir.remove(&name);
                }
                return Err(e);
            }
        };
        match wanted {
            None => dir.remove(&name).map_err(|e| fail("remove", e)),
            Some(bytes) if Some(&bytes) == now.as_ref() => Ok(()),
            Some(bytes) => replace(&file, &dir, &name, |tmp, _| tmp.write_all(&bytes))
                .map_err(|e| fail("replace", e)),
        }
    }
}

/// All of an open, locked file up to its last whole append.
fn read_whole(dir: &Dir, name: &OsString, file: &File) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(axe_base::beneath::not_regular());
    }
    let len = append::whole_len(dir, name, file, meta.len());
    let mut bytes = Vec::with_capacity(len as usize);
    let reader: &File = file;
    reader.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
}
