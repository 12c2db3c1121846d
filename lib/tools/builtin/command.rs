//! `run_command`: `sh -c` in the workdir, inside the agent's [`Sandbox`],
//! with an environment of PATH, LANG, LC_ALL, USER, LOGNAME and TERM
//! alone (HOME and TMPDIR are the workdir: no key of ours reaches it),
//! its output (stdout and stderr as they came) cut at 100 KB.
//!
//! The command leads a process group of its own. When the shell ends,
//! what it left running in that group is killed: a tool call leaves
//! nothing behind. When the run's deadline comes first, or `axe-run` is
//! asked to stop (SIGINT, SIGTERM, SIGHUP), the whole group is killed
//! there and then (inside bubblewrap, the whole sandbox with it; under
//! Landlock the command cannot leave its group: [`super::seccomp`]).

use crate::error::ToolError;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::act::{Act, text_schema};
use super::heuristic;
use super::sandbox::Sandbox;
use crate::args::Args;
use crate::{Reply, Tool};
use axe_base::lock::Recover;
use axe_base::signals::{self, Stop};

/// How often a running command's wait looks for an ending signal.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// How long bubblewrap has to exit once its sandbox is killed.
const GRACE: Duration = Duration::from_secs(5);

/// The most output kept, as Go's.
const OUTPUT_LIMIT: usize = 100 * 1024;

/// What reaches the command from our environment.
const INHERITED: [&str; 6] = ["PATH", "LANG", "LC_ALL", "USER", "LOGNAME", "TERM"];

crate::args! {
    pub struct RunCommand {
        command: String = "The shell command to execute.",
    }
}

pub const RUN_COMMAND: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::RUN_COMMAND,
    description: "Execute a shell command in the agent's working directory via sh -c and return the combined stdout/stderr output. Commands are sandboxed to the working directory: absolute paths outside it are rejected, parent traversal (..) escaping it is rejected, and all file operations should use relative paths.",
    offered: |act| act.gives(RUN_COMMAND.name),
    schema: RunCommand::schema,
    run: |act, args| run_command(act, RunCommand::parse(args)?),
    output: text_schema,
    reads: false,
    workdir: true,
};

fn run_command(act: &Act, args: RunCommand) -> Result<Reply, ToolError> {
    let command = args.command.as_str();
    if command.is_empty() {
        return Err("command is required".into());
    }
    // Chosen with the agent whenever it has this tool.
    let Some(sandbox) = &act.sandbox else {
        return Err("run_command: no sandbox was chosen for this agent".into());
    };
    // Inside bubblewrap the sandbox is the boundary; the text check would
    // only refuse harmless reads there.
    if let Sandbox::Heuristic { .. } = sandbox {
        heuristic::check(&act.workdir, command)?;
    }
    let writable: Vec<&Path> = act.artifacts.iter().map(|a| a.dir.as_path()).collect();
    let mut cmd = sandbox
        .command(&act.dirs, &act.workdir, &writable, command)
        .map_err(failed)?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let unseen = sandbox.unseen(&act.dirs, &act.workdir, &writable, &path);
    let (reader, writer) = std::io::pipe().map_err(failed)?;
    let writer2 = writer.try_clone().map_err(failed)?;
    cmd.env_clear()
        .envs(environment(&act.workdir))
        .stdout(writer)
        .stderr(writer2);
    // An ending signal (Ctrl-C, `kill`) is held from before the command
    // starts until it is gone, so that the command goes with us: it leads
    // a group of its own, which the terminal's Ctrl-C does not reach, and
    // without bubblewrap's or Landlock's tie to our life nothing else
    // would end it. Held only once it was running, a signal that came as
    // it started ended us and left it.
    let hold = signals::hold();
    let child = cmd.spawn().map_err(failed);
    // Our copies of the pipe's write end go, or it would never end.
    drop(cmd);
    let mut child = child?;
    let group = child.id();
    let output = Arc::new(Mutex::new(Vec::new()));
    let (read_tx, read_rx) = mpsc::channel();
    let kept = Arc::clone(&output);
    thread::spawn(move || {
        drain(reader, &kept);
        let _ = read_tx.send(());
    });
    let (wait_tx, wait_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = wait_tx.send(child.wait());
    });
    let (status, ended) = loop {
        let left = act.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break (
                stop(sandbox, group, &wait_rx),
                Some("at the run's deadline"),
            );
        }
        match wait_rx.recv_timeout(left.min(SIGNAL_POLL)) {
            Ok(status) => break (status, None),
            Err(_) if hold.interrupted() => {
                break (stop(sandbox, group, &wait_rx), Some("as axe was stopped"));
            }
            Err(_) => {}
        }
    };
    // Whatever it left running goes too.
    signals::stop_group(group, Stop::Kill);
    if let Sandbox::Landlock { .. } = sandbox {
        // Its processes are not our children: a killed one is gone only
        // once the kernel has ended it, a moment after the kill.
        until_gone(group, Instant::now() + GRACE);
    }
    // Dropping the hold after a signal ends the process here.
    let result = finish(status, ended, &output, &read_rx, act.deadline, &unseen);
    drop(hold);
    result
}

/// Ends the command leading the process group `group`, at the deadline,
/// and what `waited` then says of it.
fn stop(
    sandbox: &Sandbox,
    group: u32,
    waited: &mpsc::Receiver<std::io::Result<ExitStatus>>,
) -> std::io::Result<ExitStatus> {
    if let Sandbox::Bwrap { .. } = sandbox {
        // The sandbox's first process (the shell) is bubblewrap's child:
        // once it is killed, the kernel ends every process of the sandbox
        // before bubblewrap sees it go and exits itself. Killing bubblewrap
        // alone would leave that to happen a moment after we returned.
        kill_children(group);
        if let Ok(status) = waited.recv_timeout(GRACE) {
            return status;
        }
    }
    signals::stop_group(group, Stop::Kill);
    waited
        .recv()
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// The result of a command that ended with `status` (killed, when
/// `ended` says why), with what it wrote: read until its pipe closes, but
/// not past `deadline`, nor long after the command ended (a process that
/// left its group and kept the pipe is not waited for); `unseen`, the
/// `PATH` entries the sandbox cannot see, are named when the shell found
/// no program it could run.
fn finish(
    status: std::io::Result<ExitStatus>,
    ended: Option<&str>,
    output: &Mutex<Vec<u8>>,
    read_rx: &mpsc::Receiver<()>,
    deadline: Instant,
    unseen: &[PathBuf],
) -> Result<Reply, ToolError> {
    let left = deadline.saturating_duration_since(Instant::now());
    let _ = read_rx.recv_timeout(left.min(GRACE));
    let output = shown(&output.lock().recover());
    let status = status.map_err(failed)?;
    if let Some(why) = ended {
        return Err(format!("command killed {why}, with everything it started\n{output}").into());
    }
    match exit(status) {
        None => Ok(Reply::text(output)),
        // Not found (bubblewrap), or found but refused (Landlock).
        Some(code @ (126 | 127)) => {
            Err(format!("exit code {code}\n{output}{}", not_found(unseen, &output)).into())
        }
        Some(code) => Err(format!("exit code {code}\n{output}").into()),
    }
}

/// What a command that ended with 127 (the shell found no such program)
/// or 126 (it found one it may not run) adds: the `PATH` entries the
/// sandbox cannot see, when there are any.
fn not_found(unseen: &[PathBuf], output: &str) -> String {
    if unseen.is_empty() {
        return String::new();
    }
    let names: Vec<String> = unseen.iter().map(|p| p.display().to_string()).collect();
    let line = if output.ends_with('\n') { "" } else { "\n" };
    format!(
        "{line}(the sandbox cannot see these PATH entries: {})",
        names.join(", ")
    )
}

/// The command's environment.
fn environment(workdir: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    let mut env = vec![("HOME", workdir.into()), ("TMPDIR", workdir.into())];
    for key in INHERITED {
        if let Some(value) = std::env::var_os(key).filter(|v| !v.is_empty()) {
            env.push((key, value));
        }
    }
    env
}

/// Reads the pipe to its end, keeping the first bytes past the limit
/// (enough to know it was passed) and dropping the rest.
fn drain(mut reader: std::io::PipeReader, kept: &Mutex<Vec<u8>>) {
    let mut buf = [0; 16 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                let mut kept = kept.lock().recover();
                let room = (OUTPUT_LIMIT + 1).saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The output as the model gets it: text, cut at the limit with Go's
/// marker.
fn shown(bytes: &[u8]) -> String {
    if bytes.len() <= OUTPUT_LIMIT {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut text = String::from_utf8_lossy(&bytes[..OUTPUT_LIMIT]).into_owned();
    text.push_str("\n... [output truncated, exceeded 100KB]");
    text
}

/// The exit code of a command that failed, `None` when it succeeded; a
/// signal is -1, as Go reports it.
fn exit(status: ExitStatus) -> Option<i32> {
    if status.success() {
        return None;
    }
    Some(status.code().unwrap_or(-1))
}

/// Waits until no live process is left in the process group `group`
/// (one the kernel has ended but nobody reaped yet is not live), or
/// `until`.
fn until_gone(group: u32, until: Instant) {
    let in_group = |stat: &str| {
        // After the name, which may hold anything, in parentheses:
        // state, parent, group.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1);
        !matches!(state, Some("Z" | "X")) && pgrp == Some(group.to_string().as_str())
    };
    loop {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        let left = entries.flatten().any(|e| {
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| in_group(&stat))
        });
        if !left || Instant::now() >= until {
            return;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Kills the children of the process `parent`, when the kernel says
/// which they are.
fn kill_children(parent: u32) {
    let Ok(children) = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
    else {
        return;
    };
    for pid in children.split_whitespace().filter_map(|p| p.parse().ok()) {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

fn failed(err: std::io::Error) -> ToolError {
    ToolError::caused(
        format!("run_command: {}", axe_base::error::describe_io(&err)),
        err,
    )
}
