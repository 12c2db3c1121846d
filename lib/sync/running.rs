//! The gits a sync starts, known to the next sync without lending them
//! the sync lock.
//!
//! The sync lock (`.git/axe-sync/lock`, an `flock`) is close-on-exec, so
//! no program gets it: an `flock` belongs to the open file, and a program
//! git starts that lives on (a credential cache daemon, an ssh
//! ControlPersist master) would hold it for its whole life, every later
//! sync busy. Yet a sync killed with `kill -9` can leave a git running (a
//! fetch beside the commit step), and the next sync must wait for it
//! rather than race it for git's own locks (`index.lock`, a ref's lock).
//!
//! So each git holds, for its life, a POSIX record lock (`fcntl`,
//! `F_RDLCK`) on `.git/axe-sync/running`, taken in the child between fork
//! and exec. Such a lock belongs to a process: it survives the exec and
//! is never inherited by a fork, so git holds it and nothing git starts
//! does. A new sync, once it has the sync lock, takes the write lock on
//! the file (waiting as long as any lock is waited for, then busy) and
//! lets it go: by then every git of an earlier sync has ended. Nothing is
//! lost in between: the child of a sync killed right after its fork still
//! holds the inherited sync lock until its exec, and takes this one
//! first.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, fcntl_lock};
use rustix::io::{FdFlags, fcntl_setfd};

use super::error::{Result, SyncError};

/// Waits until no git an earlier sync started is running, then returns
/// the file each git this sync starts holds its lock on.
pub fn settle(dir: &Path, deadline: Instant) -> Result<File> {
    let path = dir.join("running");
    let fail = |e: io::Error| SyncError::io("lock", &path, e);
    // Opened close-on-exec, as std opens every file: only [`hold`], in
    // the one child that is git, makes it inheritable.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(fail)?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match fcntl_lock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(e) if e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::ACCESS => {}
            Err(e) => return Err(fail(e.into())),
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(SyncError::GitStillRunning {
                waited: started.elapsed(),
            });
        }
        sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    // Held, our own gits could not take theirs.
    fcntl_lock(&file, FlockOperation::NonBlockingUnlock).map_err(|e| fail(e.into()))?;
    Ok(file)
}

/// In a child between fork and exec: keeps `file` open across the exec
/// and takes the shared lock on it, which the process keeps until it
/// ends. Two system calls, no allocation: all a forked child of a
/// threaded process may do.
pub fn hold(file: &File) -> io::Result<()> {
    fcntl_setfd(file.as_fd(), FdFlags::empty())?;
    fcntl_lock(file.as_fd(), FlockOperation::NonBlockingLockShared)?;
    Ok(())
}
