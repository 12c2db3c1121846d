//! Replacing a memory file whole, while its writers' lock is held.
//!
//! The new content goes to a temp file beside the target, named after it
//! (`.reviewer.md.axe-new`), which is synced and renamed over the target
//! with the target's mode, owner and group; then the directory is synced.
//! At every instant the target is the old file or the new one.
//!
//! The temp file's name is fixed per target because only the holder of
//! the target's exclusive lock ever writes it: so whoever holds that lock
//! knows a temp file already there is a leftover of a writer that died
//! (`kill -9`, a crash, power loss), and [`sweep`] removes it. `SIGINT`,
//! `SIGTERM` and `SIGHUP` are held while the temp file exists, so an
//! interrupted replace removes it itself before the process dies.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::signals::{self, Hold};

/// The temp file for `target` (a real path, not a symlink).
fn temp_path(target: &Path) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(".axe-new");
    target.with_file_name(name)
}

/// Removes what a replace of `path` that died left behind. Call it only
/// while holding `path`'s exclusive lock.
pub fn sweep(path: &Path) {
    // Best effort: a leftover costs space, never correctness.
    if let Ok(target) = fs::canonicalize(path) {
        let _ = fs::remove_file(temp_path(&target));
    }
}

/// Replaces the file at `path` (the one a symlink there points to), whose
/// open, exclusively locked handle is `current`, with what `write` puts
/// into the new file. `write` gets the [`Hold`] so a long copy can stop
/// early when the process is asked to end.
pub fn replace(
    current: &File,
    path: &Path,
    write: impl FnOnce(&mut File, &Hold) -> io::Result<()>,
) -> io::Result<()> {
    let target = fs::canonicalize(path)?;
    let temp = temp_path(&target);
    let hold = signals::hold();
    // Ours to remove: we hold the lock, so its writer is gone.
    match fs::remove_file(&temp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let result = write_new(current, &temp, &hold, write)
        .and_then(|()| atomicwrites::replace_atomic(&temp, &target));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    // A signal that arrived meanwhile ends the process here, temp file gone.
    drop(hold);
    result
}

fn write_new(
    current: &File,
    temp: &Path,
    hold: &Hold,
    write: impl FnOnce(&mut File, &Hold) -> io::Result<()>,
) -> io::Result<()> {
    let meta = current.metadata()?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(temp)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Keeps a log owned by another user (trimmed by root) theirs. Only
        // root may give a file away, so elsewhere this fails and the file
        // stays the caller's, as any rewrite would leave it.
        let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
    }
    // After chown, which clears set-id bits; not at creation, where the
    // umask would mask it.
    file.set_permissions(meta.permissions())?;
    write(&mut file, hold)?;
    if hold.interrupted() {
        return Err(io::ErrorKind::Interrupted.into());
    }
    file.sync_all()
}
