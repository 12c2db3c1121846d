//! The run log: one markdown file per agent, appended to after each run
//! and read back into the next, trimmed by `gc`, in the Go `axe`'s format. The operations
//! are here; `entry` is the format of one entry, `scan` finds entries.
//!
//! Concurrency rules, which go beyond the Go `axe` (docs/reference.md,
//! "Safety of memory files"):
//! - an append writes its whole entry with one `write` under the exclusive
//!   lock, and undoes a partial write, so entries never interleave or tear;
//! - a trim holds the exclusive lock from its read to its rename, so an
//!   append waits for it and then lands in the new file;
//! - readers take the shared lock only long enough to note the file's
//!   length, then read up to it without the lock: bytes before that length
//!   never change (appends add after it, a trim writes a new file), so a
//!   slow reader such as `axe-mem-load x | less` never blocks a run.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

mod entry;
pub mod kind;
mod scan;
pub mod settings;
pub use kind::KIND;
#[cfg(test)]
mod tests;

use entry::{Formatted, Record};

pub use entry::{RESULT_LIMIT, TASK_LIMIT, escape_headers};

use super::append::{self as appending, write_whole};
use super::lock::{Mode, Wait, open_locked};
use super::replace;
use crate::secrets::{Kind, Secrets};
use axe_base::beneath::{Dir, Open};
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::signals::Hold;

/// What an append wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub timestamp: String,
    pub bytes: u64,
    pub truncated: bool,
    pub task_truncated: bool,
    /// The secrets `secrets` took out of the task and the result.
    pub redacted: Vec<Kind>,
}

/// Appends one entry, creating the file (0644) and its directories (0755)
/// when missing. `at` is the entry's time: callers pass the clock. The
/// task and the result go through `secrets` first, whole, so a secret is
/// never cut in two by the length limit and half of it kept.
pub fn append(
    path: &Path,
    task: &[u8],
    result: &[u8],
    at: OffsetDateTime,
    secrets: &Secrets,
    wait: Wait,
) -> Result<Appended> {
    let (task, result) = (secrets.redact(task), secrets.redact(result));
    let Formatted {
        timestamp,
        bytes,
        truncated,
        task_truncated,
    } = entry::format(at, &task.text, &result.text);
    // No line git takes for a conflict marker (see `crate::markers`): the
    // entry's own lines are none, so only the result's can move.
    let bytes = crate::markers::neutralise(&bytes).into_owned();
    let (dir, name) = holding(path, true)?.ok_or_else(|| {
        let gone = io::Error::from(io::ErrorKind::NotFound);
        crate::error::io_error("failed to create memory directory", "mkdir", path, gone)
    })?;
    let file = open_locked(&dir, &name, Open::Append, Mode::Exclusive, wait)
        .map_err(|e| crate::error::io_error("failed to open memory file", "open", path, e))?
        .ok_or_else(|| {
            let gone = io::Error::from(io::ErrorKind::NotFound);
            crate::error::io_error("failed to open memory file", "open", path, gone)
        })?;
    write_whole(&dir, &name, &file, &bytes)
        .map_err(|e| crate::error::io_error("failed to write memory entry", "write", path, e))?;
    Ok(Appended {
        timestamp,
        bytes: bytes.len() as u64,
        truncated,
        task_truncated,
        redacted: task.kinds.into_iter().chain(result.kinds).collect(),
    })
}

/// A consistent view of the end of a log: the last entries as they were
/// when it was taken, whatever is appended or trimmed meanwhile.
pub struct Tail {
    path: PathBuf,
    reader: Option<io::Take<File>>,
    len: u64,
}

impl Tail {
    /// Copies the view to `out`; read errors name the log, write errors
    /// are [`Error::Output`] so a closed pipe can end the command quietly.
    pub fn copy_to(mut self, out: &mut dyn Write) -> Result<()> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(());
        };
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(crate::error::io_error("", "read", &self.path, e)),
            };
            out.write_all(&buf[..n]).map_err(Error::Output)?;
        }
    }

    /// The whole view in memory, as Go's `LoadEntries` returned it.
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len as usize);
        self.copy_to(&mut out)?;
        Ok(out)
    }

    /// The entries of the view one at a time, for `--json`. Text before the
    /// first header (possible with `last_n = 0`) is not an entry and is
    /// skipped. Memory use is one entry, not the log.
    pub fn records(self) -> Records {
        Records {
            path: self.path,
            reader: self.reader.map(|r| BufReader::with_capacity(64 * 1024, r)),
            current: Vec::new(),
            line: Vec::new(),
        }
    }
}

/// Iterator over the entries of a [`Tail`].
pub struct Records {
    path: PathBuf,
    reader: Option<BufReader<io::Take<File>>>,
    current: Vec<u8>,
    line: Vec<u8>,
}

impl Iterator for Records {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let reader = self.reader.as_mut()?;
            self.line.clear();
            match reader.read_until(b'\n', &mut self.line) {
                Ok(0) => {
                    self.reader = None;
                    return finish(&mut self.current);
                }
                Ok(_) => {}
                Err(e) => {
                    self.reader = None;
                    return Some(Err(crate::error::io_error("", "read", &self.path, e)));
                }
            }
            if self.line.starts_with(entry::HEADER) {
                let done = finish(&mut self.current);
                self.current.extend_from_slice(&self.line);
                if done.is_some() {
                    return done;
                }
            } else if !self.current.is_empty() {
                self.current.extend_from_slice(&self.line);
            }
        }
    }
}

/// The entry collected so far, if any, parsed; leaves `current` empty.
fn finish(current: &mut Vec<u8>) -> Option<Result<Record>> {
    if current.is_empty() {
        return None;
    }
    let record = entry::parse(current);
    current.clear();
    Some(Ok(record))
}

/// The directory holding the log at `path` and its name there; with
/// `create`, the directory is made when missing, else `None` then.
fn holding(path: &Path, create: bool) -> Result<Option<(Dir, std::ffi::OsString)>> {
    Dir::holding(path, create).map_err(|e| {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        match create {
            true => crate::error::io_error(
                "failed to create memory directory",
                "mkdir",
                dir.unwrap_or(path),
                e,
            ),
            false => crate::error::io_error("", "open", path, e),
        }
    })
}

/// Opens `path` for reading and notes its length under the shared lock
/// (up to its last whole entry, should an append have died mid-entry).
/// `None` when the file does not exist.
fn snapshot(path: &Path, wait: Wait) -> Result<Option<(File, u64)>> {
    let read_err = |op: &'static str, e: io::Error| crate::error::io_error("", op, path, e);
    let Some((dir, name)) = holding(path, false)? else {
        return Ok(None);
    };
    let Some(file) = open_locked(&dir, &name, Open::Read, Mode::Shared, wait)
        .map_err(|e| read_err("open", e))?
    else {
        return Ok(None);
    };
    let meta = file.metadata().map_err(|e| read_err("stat", e))?;
    if meta.is_dir() {
        return Err(read_err("read", io::ErrorKind::IsADirectory.into()));
    }
    let len = appending::whole_len(&dir, &name, &file, meta.len());
    file.unlock().map_err(|e| read_err("unlock", e))?;
    Ok(Some((file, len)))
}

/// The last `last_n` entries of the log at `path`; `0` means the whole file,
/// including any text before the first entry, as Go read it. A missing file is an
/// empty view. Reads from the end: the cost follows what is returned.
pub fn tail(path: &Path, last_n: u64, wait: Wait) -> Result<Tail> {
    let empty = || Tail {
        path: path.to_owned(),
        reader: None,
        len: 0,
    };
    let Some((mut file, len)) = snapshot(path, wait)? else {
        return Ok(empty());
    };
    let start = if last_n == 0 {
        0
    } else {
        let heads = scan::last_headers(&file, len, clamp(last_n))
            .map_err(|e| crate::error::io_error("", "read", path, e))?;
        match heads.last() {
            Some(&first) => first,
            None => return Ok(empty()),
        }
    };
    file.seek(SeekFrom::Start(start))
        .map_err(|e| crate::error::io_error("", "seek", path, e))?;
    Ok(Tail {
        path: path.to_owned(),
        reader: Some(file.take(len - start)),
        len: len - start,
    })
}

/// Go's `LoadEntries`: the last `last_n` entries (0 = all) as bytes.
pub fn load(path: &Path, last_n: u64, wait: Wait) -> Result<Vec<u8>> {
    tail(path, last_n, wait)?.into_bytes()
}

/// The size of a log and how many entries it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub entries: u64,
    pub bytes: u64,
}

/// Counts the entries (lines starting with `## `) of the log at `path`;
/// a missing file has none.
pub fn count(path: &Path, wait: Wait) -> Result<Counted> {
    let Some((file, len)) = snapshot(path, wait)? else {
        return Ok(Counted {
            entries: 0,
            bytes: 0,
        });
    };
    let entries = scan::count_headers(file.take(len))
        .map_err(|e| crate::error::io_error("", "read", path, e))?;
    Ok(Counted {
        entries,
        bytes: len,
    })
}

/// What a trim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    /// Nothing to remove: the log holds `entries`, no more than asked to keep
    /// (or `keep` was 0, which keeps everything).
    Within { entries: u64 },
    /// The log now holds its last `kept` entries. `removed` is the number of
    /// entries dropped when counting was asked for; `removed_bytes` always.
    Trimmed {
        kept: u64,
        removed: Option<u64>,
        removed_bytes: u64,
    },
}

/// What a trim says when there is nothing to trim to (Go's words).
pub const NO_TRIM_TARGET: &str =
    "No trim target configured (last_n and max_entries are both 0). Skipping trim.";

impl Trim {
    /// What `axe-mem-trim` and `axe-gc` print, in Go's words, for a trim to
    /// `keep` entries.
    pub fn message(&self, keep: u64) -> String {
        match *self {
            Trim::Within { entries } if keep == 0 => {
                format!("No trimming needed: --keep 0 keeps all {entries} entries.")
            }
            Trim::Within { entries } => {
                format!("No trimming needed: {entries} entries within limit ({keep}).")
            }
            Trim::Trimmed {
                kept,
                removed: Some(removed),
                ..
            } => format!("Trimmed: {removed} entries removed, {kept} entries kept."),
            Trim::Trimmed {
                kept,
                removed: None,
                removed_bytes,
            } => format!("Trimmed: {removed_bytes} bytes removed, {kept} entries kept."),
        }
    }
}

/// Keeps the last `keep` entries of the log at `path` and drops the rest,
/// along with any text before the first entry, as Go kept it. `keep == 0` keeps
/// everything.
///
/// The new file is written next to the old one, synced and renamed over it
/// (with the old file's permissions), all under the exclusive lock, so
/// the log is whole at every instant and no concurrent append is lost.
/// Only the kept part is read, unless `count_removed` asks for the number of
/// entries dropped; that count is taken after the lock is released.
pub fn trim(path: &Path, keep: u64, count_removed: bool, wait: Wait) -> Result<Trim> {
    if keep == 0 {
        return Ok(Trim::Within {
            entries: count(path, wait)?.entries,
        });
    }
    let fail = |op: &'static str, e: io::Error| {
        crate::error::io_error("failed to trim memory file", op, path, e)
    };
    let Some((dir, name)) = holding(path, false)? else {
        return Ok(Trim::Within { entries: 0 });
    };
    let Some(mut file) =
        open_locked(&dir, &name, Open::Read, Mode::Exclusive, wait).map_err(|e| fail("open", e))?
    else {
        return Ok(Trim::Within { entries: 0 });
    };
    let meta = file.metadata().map_err(|e| fail("stat", e))?;
    let len = meta.len();
    let heads = scan::last_headers(&file, len, clamp(keep).saturating_add(1))
        .map_err(|e| fail("read", e))?;
    if heads.len() as u64 <= keep {
        return Ok(Trim::Within {
            entries: heads.len() as u64,
        });
    }
    let start = heads[heads.len() - 2];

    replace::replace(&file, &dir, &name, |tmp, hold| {
        let mut old = &file;
        old.seek(SeekFrom::Start(start))?;
        copy_exact(&mut old.take(len - start), tmp, len - start, hold)
    })
    .map_err(|e| fail("replace", e))?;
    file.unlock().map_err(|e| fail("unlock", e))?;

    let removed = if count_removed {
        // The old file is ours alone now; its first `start` bytes are the
        // entries that were dropped.
        file.seek(SeekFrom::Start(0)).map_err(|e| fail("seek", e))?;
        Some(scan::count_headers((&file).take(start)).map_err(|e| fail("read", e))?)
    } else {
        None
    };
    Ok(Trim::Trimmed {
        kept: keep,
        removed,
        removed_bytes: start,
    })
}

/// Copies `len` bytes in pieces, stopping early when the process is asked
/// to end; each piece still goes through `io::copy`, which lets the kernel
/// copy file to file.
fn copy_exact(from: &mut impl Read, to: &mut File, len: u64, hold: &Hold) -> io::Result<()> {
    const PIECE: u64 = 8 << 20;
    let mut copied = 0;
    while copied < len {
        if hold.interrupted() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = io::copy(&mut from.take(PIECE.min(len - copied)), to)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        copied += n;
    }
    Ok(())
}

/// Entry counts beyond `usize` cannot exist in memory anyway.
fn clamp(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

pub use scan::entries;

/// How many entries a log (or part of one) read into memory holds.
pub fn count_entries(bytes: &[u8]) -> u64 {
    scan::count_in(bytes)
}

/// The log of `agent`: `custom` when non-empty (used as is, even when
/// relative, as in Go), else `<data>/memory/<agent>.md`. Creates nothing and
/// does not check the name; [`axe::agent::check_name`] does that before.
pub fn file_path(dirs: &Dirs, agent: &str, custom: &str) -> Result<PathBuf> {
    if !custom.is_empty() {
        return Ok(PathBuf::from(custom));
    }
    Ok(dirs.data()?.join("memory").join(format!("{agent}.md")))
}
