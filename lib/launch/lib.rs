//! The `axe-*` executables as launchers of `axe`. Every command lives in
//! the one `axe` executable (it runs `axe-NAME` when started under that
//! name, busybox-style); each `axe-NAME` only replaces itself with the
//! `axe` beside it, started as `axe-NAME`. So the library is linked into
//! five executables (`axe` and the four below), not 30: the install is a
//! fraction of the size and links less, and `axe-NAME` and `axe NAME` are
//! the same program. What it costs is
//! one exec, about a millisecond on a slow machine (bench/RESULTS.md).
//! So the three memory writes scripts and hooks make on every event
//! (`axe-mem-append`, `axe-notes-remember`, `axe-state-record`) and the
//! state block hooks print before every prompt (`axe-state-context`)
//! stay whole programs: each links only what it runs.
//!
//! Nothing here touches the command line or the environment: the
//! process keeps its id, stdin, stdout, stderr, signals and exit code.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use axe_base::error::{Error, describe_io};

/// Runs the command `name` (`axe-mem-load`) in the `axe` beside this
/// executable; returns only when that cannot start.
pub fn main(name: &str) -> ExitCode {
    let axe = beside();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let err = Command::new(&axe).arg0(name).args(args).exec();
    let line = format!("failed to run {}: {}", axe.display(), describe_io(&err));
    let failed = Error::caused(Error::Child(line), err);
    axe_base::stderr::note(format_args!("{failed}"));
    ExitCode::from(failed.exit_code())
}

/// `axe` in this executable's directory (symbolic links followed, so a
/// link to `axe-run` on `PATH` finds the `axe` of its installation);
/// `axe` on `PATH` where the system cannot say where this one is.
fn beside() -> PathBuf {
    match std::env::current_exe() {
        Ok(exe) => exe.with_file_name("axe"),
        Err(_) => PathBuf::from("axe"),
    }
}
