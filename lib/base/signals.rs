//! The signals that could otherwise cut a write short.
//!
//! - `SIGXFSZ` (a `ulimit -f` reached) kills a process by default in the
//!   middle of its `write`, before the append can cut its half entry off
//!   again. Every executable catches it at start, so the write fails with
//!   `EFBIG` instead and the roll-back runs.
//! - `SIGINT`, `SIGTERM` and `SIGHUP` are held while a file is being
//!   replaced ([`hold`]), so the temp file is removed before the process
//!   dies; outside a [`Hold`] they kill as they always do. A server that
//!   answers what is in flight before it ends holds them with [`drain`]:
//!   then a write already begun is finished, not cut short.
//! - Programs we start in their own process group (an MCP server over
//!   stdio, [`spawn_group`]) are stopped when an ending signal ends us: a
//!   thread holds the signals from the first such start on, stops every
//!   group still running, then lets the signal end the process.
//! - A scratch directory ([`remove_on_end`]) is removed by the same thread
//!   before an ending signal ends the process, so a copy of notes made for
//!   a dry run is not left in the temp directory by a Ctrl-C.
//!
//! Handlers only store to atomics (signal-hook's `flag` module) or wake a
//! thread (its `iterator`), so nothing here needs unsafe code. A caught
//! signal is reset to its default by `exec`, so programs we start
//! (`$EDITOR`, `api_key_cmd`, MCP servers) are unaffected.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
use signal_hook::iterator::Signals;
use signal_hook::{flag, low_level};

use crate::lock::Recover;

/// Makes a file size limit an error (`EFBIG`) instead of a kill. Called
/// once at the start of every executable.
pub fn survive_file_size_limit() {
    // Without the handler, a limit kills as before: no worse than today.
    let _ = flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)));
}

/// The signals that end a process and are held during a replace.
const ENDING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

struct Held {
    /// True when an ending signal should kill at once (no hold is active).
    die: Arc<AtomicBool>,
    /// One per [`ENDING`] signal: it arrived during a hold.
    caught: [Arc<AtomicBool>; 3],
    /// How many holds are active (threads may replace files at once).
    holds: Mutex<usize>,
    /// How many of them are [`drain`]s.
    draining: AtomicUsize,
}

/// Registered on first use: a process that never replaces a file keeps
/// the kernel's own handling of these signals.
fn held() -> Option<&'static Held> {
    static HELD: OnceLock<Option<Held>> = OnceLock::new();
    HELD.get_or_init(|| {
        let held = Held {
            die: Arc::new(AtomicBool::new(true)),
            caught: std::array::from_fn(|_| Arc::new(AtomicBool::new(false))),
            holds: Mutex::new(0),
            draining: AtomicUsize::new(0),
        };
        for (sig, caught) in ENDING.iter().zip(&held.caught) {
            // The default action must be registered first: while `die` is
            // true it ends the process before the flag is set.
            flag::register_conditional_default(*sig, Arc::clone(&held.die)).ok()?;
            flag::register(*sig, Arc::clone(caught)).ok()?;
        }
        Some(held)
    })
    .as_ref()
}

/// While alive, `SIGINT`, `SIGTERM` and `SIGHUP` are noted instead of
/// ending the process. Dropping the last hold re-delivers a noted signal
/// with its default action, so the process then dies of it as it would
/// have, only after the caller cleaned up.
pub struct Hold {
    held: Option<&'static Held>,
    drains: bool,
}

/// Starts holding the ending signals.
pub fn hold() -> Hold {
    start(false)
}

/// Starts holding the ending signals for a process that answers what it
/// was asked before it ends (a server): while this hold lives, no hold
/// counts as [`Hold::interrupted`], so a write in flight finishes (after
/// waiting for its lock as long as it otherwise would) instead of failing
/// half done; the drain itself asks [`Hold::signalled`] when to stop
/// taking more.
pub fn drain() -> Hold {
    start(true)
}

fn start(drains: bool) -> Hold {
    let held = held();
    if let Some(h) = held {
        let mut holds = h.holds.lock().recover();
        *holds += 1;
        if drains {
            h.draining.fetch_add(1, Ordering::SeqCst);
        }
        h.die.store(false, Ordering::SeqCst);
    }
    Hold { held, drains }
}

impl Hold {
    /// Whether an ending signal arrived since the hold began and work is
    /// worth stopping early: not while a [`drain`] lives.
    pub fn interrupted(&self) -> bool {
        self.held
            .is_some_and(|h| h.draining.load(Ordering::SeqCst) == 0)
            && self.signalled()
    }

    /// Whether an ending signal arrived since the hold began.
    pub fn signalled(&self) -> bool {
        self.held
            .is_some_and(|h| h.caught.iter().any(|c| c.load(Ordering::SeqCst)))
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let Some(h) = self.held else { return };
        let mut holds = h.holds.lock().recover();
        if self.drains {
            h.draining.fetch_sub(1, Ordering::SeqCst);
        }
        *holds -= 1;
        if *holds > 0 {
            return;
        }
        h.die.store(true, Ordering::SeqCst);
        for (sig, caught) in ENDING.iter().zip(&h.caught) {
            if caught.swap(false, Ordering::SeqCst) {
                // Dies here for the ending signals; exit as a shell would
                // report it if emulating the default failed.
                let _ = low_level::emulate_default_handler(*sig);
                low_level::exit(128 + sig);
            }
        }
    }
}

/// Process groups started by [`spawn_group`] and not yet stopped.
fn groups() -> MutexGuard<'static, Vec<u32>> {
    static GROUPS: OnceLock<Mutex<Vec<u32>>> = OnceLock::new();
    let groups = GROUPS.get_or_init(|| {
        // Held from here on, so an ending signal waits for the thread below,
        // which stops the groups and then drops the hold: the process dies
        // of the signal then (or when a write in progress is whole).
        let hold = hold();
        if let Ok(mut signals) = Signals::new(ENDING) {
            std::thread::spawn(move || {
                if signals.forever().next().is_some() {
                    let running = groups();
                    running.iter().for_each(|g| stop_group(*g, Stop::Term));
                    std::thread::sleep(Duration::from_millis(200));
                    running.iter().for_each(|g| stop_group(*g, Stop::Kill));
                    for dir in scratch_dirs().iter() {
                        let _ = std::fs::remove_dir_all(dir);
                    }
                    drop(hold);
                    // Only reached while another hold finishes its write.
                    std::thread::park();
                }
            });
        }
        Mutex::new(Vec::new())
    });
    groups.lock().recover()
}

/// Starts `cmd` as the leader of a process group of its own (so a Ctrl-C
/// meant for us does not reach it first), which is stopped if an ending
/// signal ends this process. The list is locked across the start, so a
/// signal comes either before it (nothing started) or after (stopped).
pub fn spawn_group(cmd: &mut Command) -> std::io::Result<Child> {
    let mut running = groups();
    let child = cmd.process_group(0).spawn()?;
    running.push(child.id());
    Ok(child)
}

/// Directories [`remove_on_end`] was given and not yet dropped.
fn scratch_dirs() -> MutexGuard<'static, Vec<PathBuf>> {
    static DIRS: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    DIRS.get_or_init(Mutex::default).lock().recover()
}

/// While the returned guard lives, the directory `dir` is removed (with
/// everything in it) should an ending signal end this process; the guard
/// removes nothing itself.
pub fn remove_on_end(dir: PathBuf) -> RemovedOnEnd {
    // Starts the thread that acts on an ending signal.
    drop(groups());
    scratch_dirs().push(dir.clone());
    RemovedOnEnd { dir }
}

/// See [`remove_on_end`].
#[derive(Debug)]
pub struct RemovedOnEnd {
    dir: PathBuf,
}

impl Drop for RemovedOnEnd {
    fn drop(&mut self) {
        let mut dirs = scratch_dirs();
        if let Some(at) = dirs.iter().position(|d| *d == self.dir) {
            dirs.remove(at);
        }
    }
}

/// How to stop a group.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    Term,
    Kill,
}

/// Sends every process of group `group` the signal of `how`; a group that
/// is gone already is no error.
pub fn stop_group(group: u32, how: Stop) {
    let signal = match how {
        Stop::Term => Signal::TERM,
        Stop::Kill => Signal::KILL,
    };
    if let Some(pid) = i32::try_from(group).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, signal);
    }
}

/// Group `group` is stopped for good: no signal needs to reach it.
pub fn forget_group(group: u32) {
    groups().retain(|g| *g != group);
}
