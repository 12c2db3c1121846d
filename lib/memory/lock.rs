//! Opening a memory file under an advisory lock (`flock`), making sure the
//! file locked is still the one at its name, and never waiting for a lock
//! past the process's deadline.
//!
//! A trim or rewrite replaces a file by renaming a new one over it while
//! holding the exclusive lock on the old one. A writer that opened the old
//! file before the rename and then waited for the lock would write to a
//! file nobody will read again, so after every lock we compare the open
//! file with what the name in its directory holds now and start over when
//! they differ. This keeps the lock on the file itself: no lock files next
//! to users' files.
//!
//! Lock waits are bounded. A process holding a lock for long is a stopped
//! one (Ctrl-Z on an `axe-state-ingest`) or a stuck one, and waiting for it
//! forever would make `axe-run --timeout 5` hang. Each command says its
//! [`Wait`] once (`axe-run`'s `--timeout` as [`Wait::Until`], the memory
//! tools' `--wait` as [`Wait::For`]) and hands it to every operation that
//! locks, so two commands in one process each keep their own; a wait
//! that reaches it fails with [`Busy`], which the error mapping turns into
//! one line and exit code 5. Nothing is written when a lock cannot be had.
//!
//! Whoever takes an exclusive lock first cleans up after a writer that
//! died holding it (`kill -9`): an append's torn entry is cut off
//! ([`append::recover`]) and a replace's temp file removed
//! ([`replace::sweep`]).

use std::ffi::OsStr;
use std::fs::{File, TryLockError};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::{append, replace};
use axe_base::beneath::{Dir, Open, not_regular};
pub use axe_base::error::Busy;

/// Shared for reading, exclusive for changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

/// How long a lock is waited for unless the executable says otherwise:
/// the memory tools' `--wait` default. Holds last milliseconds; this is
/// for a process stopped or stuck while holding one.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// How long a command waits for a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Each wait, at most this long.
    For(Duration),
    /// No wait past this moment: a run's deadline.
    Until(Instant),
}

impl Default for Wait {
    /// [`DEFAULT_WAIT`] for each wait.
    fn default() -> Wait {
        Wait::For(DEFAULT_WAIT)
    }
}

impl Wait {
    /// When a lock wait starting now gives up.
    pub fn deadline(self) -> Instant {
        match self {
            Wait::For(wait) => Instant::now() + wait,
            Wait::Until(deadline) => deadline,
        }
    }
}

/// Opens `name` in `dir` the way `how` says and locks it, waiting as `wait`
/// says. `Ok(None)` when
/// the file does not exist (only for [`Open::Read`] and [`Open::Write`]).
///
/// A FIFO, socket or device is an error, found without blocking: opening a
/// FIFO would otherwise wait for a writer forever, past any timeout. A
/// symlink is an error too: [`Dir::file`] resolved the name already, so
/// one here was put in its place since.
pub fn open_locked(
    dir: &Dir,
    name: &OsStr,
    how: Open,
    mode: Mode,
    wait: Wait,
) -> io::Result<Option<File>> {
    let deadline = wait.deadline();
    loop {
        let Some(file) = dir.open(name, how)? else {
            return Ok(None);
        };
        let meta = file.metadata()?;
        // A directory (opened for reading only) is left to the caller's
        // read to report.
        if !meta.is_file() && !meta.is_dir() {
            return Err(not_regular());
        }
        if locked(dir, name, &file, &meta, mode, deadline)? {
            return Ok(Some(file));
        }
    }
}

/// Opens `name` in `dir` for `how` ([`Open::Append`] or [`Open::Update`]),
/// creating it when missing, and locks it exclusively; true when this call
/// created the file and nobody wrote to it before our lock (another writer
/// may open and lock a new file between its creation and our lock), so
/// that a write that then fails or is refused can remove it again instead
/// of leaving a new empty file behind, and never takes another's entry
/// with it.
pub fn create_locked(dir: &Dir, name: &OsStr, how: Open, wait: Wait) -> io::Result<(File, bool)> {
    let deadline = wait.deadline();
    loop {
        if let Some(file) = dir.create(name, how)? {
            let meta = file.metadata()?;
            if locked(dir, name, &file, &meta, Mode::Exclusive, deadline)? {
                let untouched = file.metadata()?.len() == 0;
                return Ok((file, untouched));
            }
        } else if let Some(file) = open_locked(dir, name, how, Mode::Exclusive, wait)? {
            return Ok((file, false));
        }
    }
}

/// Locks `file`, opened as `name` in `dir` (`meta` is its metadata, for
/// its device and inode), and says whether the name still holds it;
/// holding an exclusive lock, cleans up after a writer that died with it.
fn locked(
    dir: &Dir,
    name: &OsStr,
    file: &File,
    meta: &std::fs::Metadata,
    mode: Mode,
    deadline: Instant,
) -> io::Result<bool> {
    lock(file, mode, deadline)?;
    let here = dir
        .entry(name)?
        .is_some_and(|e| e.dev == meta.dev() && e.ino == meta.ino());
    if here && mode == Mode::Exclusive {
        // No other writer is at work now: what one left, it left dying.
        append::recover(dir, name, file)?;
        replace::sweep(dir, name);
    }
    // Renamed away or deleted since we opened it: the caller opens again.
    Ok(here)
}

/// Takes the lock, polling until `deadline`: `flock` itself has no
/// timeout, and a signal to interrupt it would need a handler.
fn lock(file: &File, mode: Mode, deadline: Instant) -> io::Result<()> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let tried = match mode {
            Mode::Shared => file.try_lock_shared(),
            Mode::Exclusive => file.try_lock(),
        };
        match tried {
            Ok(()) => return Ok(()),
            Err(TryLockError::Error(e)) => return Err(e),
            Err(TryLockError::WouldBlock) => {}
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::other(Busy {
                waited: started.elapsed(),
            }));
        }
        sleep(pause.min(left));
        // Quick retries for the usual few-millisecond holds, then a
        // gentler pace for a long one.
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_held_lock_is_waited_for_until_the_deadline_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::root(tmp.path(), false).unwrap().unwrap();
        let name = OsStr::new("f");
        let held = open_locked(&dir, name, Open::Update, Mode::Exclusive, Wait::default())
            .unwrap()
            .unwrap();
        let file = dir.open(name, Open::Read).unwrap().unwrap();
        let err = lock(
            &file,
            Mode::Shared,
            Instant::now() + Duration::from_millis(30),
        )
        .unwrap_err();
        let busy = err.get_ref().and_then(|e| e.downcast_ref::<Busy>());
        assert!(
            busy.is_some_and(|b| b.waited >= Duration::from_millis(30)),
            "{err}"
        );
        drop(held);
        lock(&file, Mode::Shared, Instant::now()).unwrap();
        assert!(Path::new(&tmp.path().join("f")).exists());
    }

    /// Each command's wait is its own: one that waits not at all is not
    /// made to wait by another in the same process that waits long.
    #[test]
    fn two_commands_waits_do_not_interfere() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::root(tmp.path(), false).unwrap().unwrap();
        let name = OsStr::new("f");
        let _held = open_locked(&dir, name, Open::Update, Mode::Exclusive, Wait::default())
            .unwrap()
            .unwrap();
        let (none, long) = (Wait::For(Duration::ZERO), Wait::For(Duration::from_secs(3)));
        let started = Instant::now();
        let err = open_locked(&dir, name, Open::Read, Mode::Shared, none).unwrap_err();
        assert!(err.get_ref().is_some_and(|e| e.is::<Busy>()), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        let until = Wait::Until(Instant::now() + Duration::from_millis(30));
        let err = open_locked(&dir, name, Open::Read, Mode::Shared, until).unwrap_err();
        let busy = err.get_ref().and_then(|e| e.downcast_ref::<Busy>());
        assert!(
            busy.is_some_and(|b| b.waited >= Duration::from_millis(20)),
            "{err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{long:?} was not waited"
        );
    }
}
