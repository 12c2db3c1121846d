//! Opening a log under an advisory lock (`flock`), and making sure the file
//! locked is still the one at the path.
//!
//! A trim replaces the log by renaming a new file over it while holding the
//! exclusive lock on the old one. A writer that opened the old file before
//! the rename and then waited for the lock would append to a file nobody
//! will read again, so after every lock we compare the open file with what
//! the path names now and start over when they differ. This keeps the lock
//! on the log itself: no lock files next to users' logs.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Shared for reading, exclusive for changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

/// Opens `path` with `options` and locks it. `Ok(None)` when the file does
/// not exist (only possible without `create`).
///
/// A FIFO, socket or device at `path` is an error, found without blocking:
/// opening a FIFO would otherwise wait for a writer forever, past any
/// timeout. (A directory is left to the caller's read or write to report.)
pub fn open_locked(path: &Path, options: &OpenOptions, mode: Mode) -> io::Result<Option<File>> {
    let mut options = options.clone();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    loop {
        let file = match options.open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            // A FIFO without a reader cannot be opened for writing at all.
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Err(not_regular()),
            Err(e) => return Err(e),
        };
        let kind = file.metadata()?.file_type();
        if !kind.is_file() && !kind.is_dir() {
            return Err(not_regular());
        }
        match mode {
            Mode::Shared => file.lock_shared()?,
            Mode::Exclusive => file.lock()?,
        }
        if still_at(&file, path)? {
            return Ok(Some(file));
        }
    }
}

fn not_regular() -> io::Error {
    io::Error::other("not a regular file")
}

/// Whether `file` is the file `path` names now.
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let open = file.metadata()?;
    match std::fs::metadata(path) {
        Ok(now) => Ok(open.dev() == now.dev() && open.ino() == now.ino()),
        // Renamed away or deleted since we opened it: open again.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Windows cannot rename over an open file, so a locked file is never
/// replaced under us there.
#[cfg(not(unix))]
fn still_at(_file: &File, _path: &Path) -> io::Result<bool> {
    Ok(true)
}
