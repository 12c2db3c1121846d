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

use axe_base::beneath::{Dir, Open};
use axe_base::signals;

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
    // Without a marker (a directory we may not write, a name too long for
    // one more suffix, something in its way we cannot remove) the append
    // still goes ahead, whole under the held signals, as a plain append
    // always did: only a `kill -9` mid-write would go unrepaired.
    let marked = write_marker(dir, &marker, before, &meta).is_ok();
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
        if file.set_len(before).is_ok() && marked {
            let _ = dir.remove(&marker);
        }
        return Err(e);
    }
    if marked {
        dir.remove(&marker)?;
    }
    drop(hold);
    Ok(())
}

/// The marker: the length before the append and the file it is for (so a
/// file replaced meanwhile by another program is never cut).
fn write_marker(dir: &Dir, marker: &OsStr, len: u64, meta: &std::fs::Metadata) -> io::Result<()> {
    let mut file = dir
        .open(marker, Open::New)?
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    // One write: formatted into the file directly, it would be six.
    file.write_all(format!("{len} {} {}\n", meta.dev(), meta.ino()).as_bytes())
}

/// What is at a marker's name.
enum Marker {
    None,
    /// A marker for this file: the length to cut back to.
    For(u64),
    /// Something else: a marker for another file, one we cannot trust, or
    /// junk. Never acted on.
    Other,
}

/// What `marker` in `dir` says of `file`. A marker is trusted only when
/// it is a regular file with one link, made by the file's owner or by
/// root: anyone else who may write the directory (a shared one) could
/// otherwise plant one and have the owner's next write cut the file.
fn marked(dir: &Dir, marker: &OsStr, file: &File) -> Marker {
    match file.metadata() {
        Ok(m) => marked_for(dir, marker, (m.uid(), m.dev(), m.ino())),
        Err(_) => Marker::Other,
    }
}

/// [`marked`] for the file whose owner, device and inode are `target`.
fn marked_for(dir: &Dir, marker: &OsStr, target: (u32, u64, u64)) -> Marker {
    let (uid, dev, ino) = target;
    let mut f = match dir.open(marker, Open::Read) {
        Ok(Some(f)) => f,
        Ok(None) => return Marker::None,
        // A symlink, a FIFO, something we may not read: not ours.
        Err(_) => return Marker::Other,
    };
    let Ok(meta) = f.metadata() else {
        return Marker::Other;
    };
    let trusted = meta.is_file() && meta.nlink() == 1 && (meta.uid() == uid || meta.uid() == 0);
    let mut text = Vec::new();
    // A marker is a few dozen bytes; anything else there is not ours.
    if !trusted || (&mut f).take(128).read_to_end(&mut text).is_err() {
        return Marker::Other;
    }
    let text = String::from_utf8_lossy(&text);
    let mut parts = text.split_whitespace().map(str::parse::<u64>);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(len)), Some(Ok(d)), Some(Ok(i))) if d == dev && i == ino => Marker::For(len),
        _ => Marker::Other,
    }
}

/// Cuts `file` (`name` in `dir`) back to the length an append that died
/// mid-entry found it at, and removes that append's marker (or whatever
/// else is in its way, when it can). Call it only while holding the
/// file's exclusive lock.
pub fn recover(dir: &Dir, name: &OsStr, file: &File) -> io::Result<()> {
    let marker = marker_name(name);
    match marked(dir, &marker, file) {
        Marker::None => return Ok(()),
        Marker::Other => {}
        Marker::For(len) => {
            if file.metadata()?.len() > len {
                // Through a handle of our own: the caller's may be
                // read-only (a trim reads the old file and writes a new
                // one).
                let writable = dir
                    .open(name, Open::Write)?
                    .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
                if writable.metadata()?.ino() != file.metadata()?.ino() {
                    return Err(io::Error::other("replaced while locked"));
                }
                writable.set_len(len)?;
            }
        }
    }
    // Not ours to insist on: a directory or another user's file there
    // stays, and appends go on without a marker.
    let _ = dir.remove(&marker);
    Ok(())
}

/// The length of `file` (`name` in `dir`) up to its last whole append: its
/// length, unless an append died mid-entry and no writer has cut it back
/// yet. For readers, which cannot cut.
pub fn whole_len(dir: &Dir, name: &OsStr, file: &File, len: u64) -> u64 {
    match marked(dir, &marker_name(name), file) {
        Marker::For(marked) => marked.min(len),
        _ => len,
    }
}

/// [`whole_len`] for the file `name` in `dir` read without a lock or a
/// handle kept (a daily log a recall read): how much of `bytes` read
/// from it is whole.
pub fn whole_read(dir: &Dir, name: &OsStr, bytes: u64) -> u64 {
    let Ok(Some(e)) = dir.entry(name) else {
        return bytes;
    };
    match marked_for(dir, &marker_name(name), (e.uid, e.dev, e.ino)) {
        Marker::For(marked) => marked.min(bytes),
        _ => bytes,
    }
}
