//! Adding to the end of a file whole or not at all: shared by every memory
//! kind that appends (the run log, daily notes).
//!
//! An append is one `write` under the file's exclusive lock, cut back if it
//! fails halfway (disk full, a file size limit). `SIGINT`, `SIGTERM` and
//! `SIGHUP` are held meanwhile, so Ctrl-C cannot stop it halfway either.
//! Only `kill -9` (or a crash) can, and for that the length the file had
//! is written first to a marker beside it (`.<name>.axe-append`), removed
//! once the write is whole: the next holder of the exclusive lock that
//! finds a marker knows its writer died mid-entry and cuts the file back
//! to that length ([`recover`]), and readers stop there ([`whole_len`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;

use crate::beneath::{Dir, Open};
use crate::signals;

/// The marker's name for the file `name`.
fn marker_name(name: &OsStr) -> OsString {
    let mut marker = OsString::from(".");
    marker.push(name);
    marker.push(".axe-append");
    marker
}

/// Writes `bytes` at the end of `file` (`name` in `dir`), which the caller
/// holds the exclusive lock of, or nothing at all.
pub fn write_whole(dir: &Dir, name: &OsStr, mut file: &File, bytes: &[u8]) -> io::Result<()> {
    let meta = file.metadata()?;
    let before = meta.len();
    let marker = marker_name(name);
    let hold = signals::hold();
    write_marker(dir, &marker, before, &meta)?;
    let result = match file.write(bytes) {
        // The normal case: one write, so even a reader that ignores the
        // lock never sees half an entry.
        Ok(n) if n == bytes.len() => Ok(()),
        Ok(n) => file.write_all(&bytes[n..]),
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        // Best effort: the original error is the one worth reporting. Were
        // the cut to fail, the marker stays and the next writer cuts.
        if file.set_len(before).is_ok() {
            let _ = dir.remove(&marker);
        }
        return Err(e);
    }
    dir.remove(&marker)?;
    drop(hold);
    Ok(())
}

/// The marker: the length before the append and the file it is for (so a
/// file replaced meanwhile by another program is never cut).
fn write_marker(dir: &Dir, marker: &OsStr, len: u64, meta: &std::fs::Metadata) -> io::Result<()> {
    // A marker left by a writer that died was handled by `recover` when
    // the lock was taken, so none is here.
    let mut file = dir
        .open(marker, Open::New)?
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    writeln!(file, "{len} {} {}", meta.dev(), meta.ino())
}

/// The length a marker records for `file`: `None` when there is no
/// marker, `Some(None)` when there is one, but not for this file.
fn marked(dir: &Dir, marker: &OsStr, file: &File) -> io::Result<Option<Option<u64>>> {
    let Some(mut f) = dir.open(marker, Open::Read)? else {
        return Ok(None);
    };
    let mut text = String::new();
    // A marker is a few dozen bytes; anything else there is not ours.
    (&mut f).take(128).read_to_string(&mut text)?;
    let meta = file.metadata()?;
    let mut parts = text.split_whitespace().map(str::parse::<u64>);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(len)), Some(Ok(dev)), Some(Ok(ino))) if dev == meta.dev() && ino == meta.ino() => {
            Ok(Some(Some(len)))
        }
        _ => Ok(Some(None)),
    }
}

/// Cuts `file` (`name` in `dir`) back to the length an append that died
/// mid-entry found it at, and removes that append's marker. Call it only
/// while holding the file's exclusive lock.
pub fn recover(dir: &Dir, name: &OsStr, file: &File) -> io::Result<()> {
    let marker = marker_name(name);
    let Some(len) = marked(dir, &marker, file)? else {
        return Ok(());
    };
    if let Some(len) = len
        && file.metadata()?.len() > len
    {
        // Through a handle of our own: the caller's may be read-only (a
        // trim reads the old file and writes a new one).
        let writable = dir
            .open(name, Open::Write)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        if writable.metadata()?.ino() != file.metadata()?.ino() {
            return Err(io::Error::other("replaced while locked"));
        }
        writable.set_len(len)?;
    }
    dir.remove(&marker)
}

/// The length of `file` (`name` in `dir`) up to its last whole append: its
/// length, unless an append died mid-entry and no writer has cut it back
/// yet. For readers, which cannot cut.
pub fn whole_len(dir: &Dir, name: &OsStr, file: &File, len: u64) -> io::Result<u64> {
    Ok(match marked(dir, &marker_name(name), file)? {
        Some(Some(marked)) => marked.min(len),
        _ => len,
    })
}
