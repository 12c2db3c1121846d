//! Replacing a memory file whole, while its writers' lock is held.
//!
//! The new content goes to a temp file beside the target, named after it
//! (`.reviewer.md.axe-new`), which is synced and renamed over the target
//! with the target's mode, owner and group; then the directory is synced.
//! All of it goes through the handle of the directory that holds the
//! target ([`Dir`]), never through paths.
//! At every instant the target is the old file or the new one.
//!
//! The temp file's name is fixed per target because only the holder of
//! the target's exclusive lock ever writes it: so whoever holds that lock
//! knows a temp file already there is a leftover of a writer that died
//! (`kill -9`, a crash, power loss), and [`sweep`] removes it. `SIGINT`,
//! `SIGTERM` and `SIGHUP` are held while the temp file exists, so an
//! interrupted replace removes it itself before the process dies.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;

use axe_base::beneath::{Dir, Open};
use axe_base::signals::{self, Hold};

/// The temp file's name for the file `name`.
fn temp_name(name: &OsStr) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(".axe-new");
    temp
}

/// Removes what a replace of `name` in `dir` that died left behind. Call
/// it only while holding that file's exclusive lock.
pub fn sweep(dir: &Dir, name: &OsStr) {
    // Best effort: a leftover costs space, never correctness.
    let _ = dir.remove(&temp_name(name));
}

/// Replaces the file `name` in `dir`, whose open, exclusively locked
/// handle is `current`, with what `write` puts into the new file. `write`
/// gets the [`Hold`] so a long copy can stop early when the process is
/// asked to end. Everything happens through `dir`'s handle: the temp file
/// and the rename land in the directory that holds the locked file, even
/// if its path was swapped for a symlink meanwhile.
pub fn replace(
    current: &File,
    dir: &Dir,
    name: &OsStr,
    write: impl FnOnce(&mut File, &Hold) -> io::Result<()>,
) -> io::Result<()> {
    let temp = temp_name(name);
    let hold = signals::hold();
    // Ours to remove: we hold the lock, so its writer is gone. Something
    // that will not go (a directory, another user's file in a shared
    // directory) is named, since the error is otherwise the target's.
    dir.remove(&temp).map_err(|e| {
        io::Error::other(format!(
            "{} is in the way ({}): remove it",
            dir.join(&temp).display(),
            axe_base::error::describe_io(&e)
        ))
    })?;
    let result = write_new(current, dir, &temp, &hold, write)
        .and_then(|()| dir.rename(&temp, name))
        .and_then(|()| dir.sync());
    if result.is_err() {
        let _ = dir.remove(&temp);
    }
    // A signal that arrived meanwhile ends the process here, temp file gone.
    drop(hold);
    result
}

fn write_new(
    current: &File,
    dir: &Dir,
    temp: &OsStr,
    hold: &Hold,
    write: impl FnOnce(&mut File, &Hold) -> io::Result<()>,
) -> io::Result<()> {
    let meta = current.metadata()?;
    let mut file = dir
        .open(temp, Open::New)?
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    // Keeps a file owned by another user (trimmed by root) theirs. Only
    // root may give a file away, so elsewhere this fails and the file
    // stays the caller's, as any rewrite would leave it.
    let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
    // After chown, which clears set-id bits; not at creation, where the
    // umask would mask it.
    file.set_permissions(meta.permissions())?;
    write(&mut file, hold)?;
    if hold.interrupted() {
        return Err(io::ErrorKind::Interrupted.into());
    }
    file.sync_all()
}
