//! How `run_command` holds a command: inside bubblewrap (`bwrap`, the
//! sandbox Flatpak uses) where it is installed and can make namespaces,
//! else only the Go `axe`'s check of the command's text, which is not a
//! boundary ([`super::heuristic`]).
//!
//! Inside bubblewrap the command sees the whole filesystem read-only, the
//! user's home, axe's config and data directories (keys, other agents'
//! memory) and `/run` (sockets) as empty directories, a private `/tmp`,
//! and only the workdir (and the artifact directory) writable; it has its
//! own process, IPC, UTS and network namespaces (no network unless
//! `[sandbox] network = true`), a new session (no typing into our
//! terminal), and dies with us. With the network it is in the host's
//! network namespace, loopback included, and may make no Unix socket
//! ([`super::seccomp`]): abstract ones live in that namespace.

use crate::error::ToolError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use axe_base::dirs::Dirs;

/// Where the sockets are.
const RUN: &str = "/run";
/// What systemd-resolved keeps there for name lookups.
const RESOLVED: &str = "/run/systemd/resolve";
/// Where NixOS and Guix keep the system's programs (their `PATH`).
const SYSTEM: &str = "/run/current-system";

/// How commands run for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sandbox {
    /// Inside bubblewrap, found at `program`; `whole` when the workdir is
    /// `/`, so that the whole filesystem is writable (named so: see
    /// [`super::workdir`]).
    Bwrap {
        program: PathBuf,
        network: bool,
        whole: bool,
    },
    /// Without it, for the reason given: Go's text check alone.
    Heuristic { why: String },
}

/// Whether bubblewrap works here: its path, or why not. Found once per
/// process, and only when a command tool is given.
fn probe() -> &'static Result<PathBuf, ToolError> {
    static FOUND: OnceLock<Result<PathBuf, ToolError>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let program = std::env::split_paths(&path)
            .map(|dir| dir.join("bwrap"))
            .find(|p| is_executable(p))
            .ok_or("bubblewrap (bwrap) is not on PATH")?;
        // Some containers forbid the namespaces it needs: try once.
        let tried = Command::new(&program)
            .args(["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent"])
            .args(["--new-session", "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        match tried {
            Ok(out) if out.status.success() => Ok(program),
            Ok(out) => Err(format!(
                "{} cannot make namespaces here ({})",
                program.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into()),
            Err(e) => Err(format!(
                "{} would not start: {}",
                program.display(),
                axe_base::error::describe_io(&e)
            )
            .into()),
        }
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The sandbox for an agent's commands in `workdir`: bubblewrap when it
/// works, else the text check; `Err` when `require` and it does not.
pub fn choose(require: bool, network: bool, workdir: &Path) -> Result<Sandbox, ToolError> {
    match probe() {
        Ok(program) => Ok(Sandbox::Bwrap {
            program: program.clone(),
            network,
            whole: super::workdir::whole_filesystem(workdir),
        }),
        Err(why) if require => Err(format!(
            "run_command needs bubblewrap ([sandbox] require = true), but {why}"
        )
        .into()),
        Err(why) => Ok(Sandbox::Heuristic {
            why: why.to_string(),
        }),
    }
}

impl Sandbox {
    /// One line on what holds commands, for `-v` and `--dry-run`.
    pub fn describe(&self) -> String {
        match self {
            Sandbox::Bwrap { network, whole, .. } => format!(
                "bubblewrap ({}, private /tmp, network {})",
                match whole {
                    // The workdir's bind covers the read-only root; only
                    // the hidden directories, deeper, stay out.
                    true =>
                        "workdir /: the whole filesystem writable, but for the hidden home, axe's directories and /run",
                    false => "read-only filesystem, writable workdir",
                },
                match (network, super::seccomp::program().is_some()) {
                    (false, _) => "off",
                    // Nothing but a network stack of its own could keep
                    // the host's loopback out: see README.
                    (true, true) => {
                        "on: the host's, its loopback services included; no Unix sockets"
                    }
                    (true, false) => {
                        "on: the host's, its loopback services and abstract Unix sockets included"
                    }
                }
            ),
            Sandbox::Heuristic { why } => format!(
                "none: {why}; run_command only checks the command's text, which is not a boundary"
            ),
        }
    }

    /// The process that runs `command` with `sh -c` in `workdir`, with
    /// `writable` the directories it may write besides and `dirs` axe's
    /// own, which it may not read; its standard input is set (empty, for
    /// the command).
    pub fn command(
        &self,
        dirs: &Dirs,
        workdir: &Path,
        writable: &[&Path],
        command: &str,
    ) -> std::io::Result<Command> {
        let Sandbox::Bwrap {
            program, network, ..
        } = self
        else {
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(command).current_dir(workdir);
            cmd.stdin(Stdio::null());
            return Ok(cmd);
        };
        let mut cmd = Command::new(program);
        cmd.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        cmd.args(["--tmpfs", "/tmp"]);
        // Each place is as the deepest of these that holds it says: a
        // workdir inside a hidden directory is there, and a hidden one
        // inside the workdir stays hidden (the default workdir is the
        // current directory, often the home that holds the keys). Mounts
        // made later cover earlier ones, so shallower go first; at the
        // same place, the bind goes last (a workdir that is the home).
        // Depths are of the real paths: a mount lands where a symlink leads.
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut mounts: Vec<(PathBuf, bool)> =
            hidden(dirs).iter().map(|h| (real(h), false)).collect();
        mounts.extend(
            std::iter::once(workdir)
                .chain(writable.iter().copied())
                .map(|w| (real(w), true)),
        );
        mounts.sort_by_key(|(path, bind)| (path.components().count(), *bind));
        for (path, bind) in mounts {
            match bind {
                true => cmd.arg("--bind").arg(&path).arg(&path),
                false => cmd.arg("--tmpfs").arg(&path),
            };
        }
        // The shell is the first process of the sandbox's own process
        // namespace, not a child of bubblewrap's init: when it ends, the
        // kernel ends every process it left before bubblewrap sees it go,
        // so nothing of a command outlives our wait for it.
        cmd.args([
            "--unshare-all",
            "--as-pid-1",
            "--die-with-parent",
            "--new-session",
        ]);
        // Programs, read-only, where the system keeps them under `/run`.
        cmd.args(["--ro-bind-try", SYSTEM, SYSTEM]);
        cmd.stdin(Stdio::null());
        let filter = network.then(super::seccomp::program).flatten();
        if *network {
            cmd.arg("--share-net");
            // Name lookups may go through `/run` (a resolv.conf that
            // links to systemd-resolved's), hidden with the sockets.
            cmd.args(["--ro-bind-try", RESOLVED, RESOLVED]);
        }
        if let Some(filter) = &filter {
            // Given on standard input, the one descriptor a child gets
            // without unsafe code or leaking it to other children; the
            // program fits a pipe's buffer. bubblewrap reads it to the end
            // and closes it, so the command's standard input is opened
            // again, empty, below.
            let (reader, mut writer) = std::io::pipe()?;
            writer.write_all(filter)?;
            drop(writer);
            cmd.stdin(reader).args(["--seccomp", "0"]);
        }
        cmd.arg("--chdir").arg(workdir);
        match filter {
            // `$0` is `sh` either way, as for a plain `sh -c`.
            Some(_) => cmd
                .args(["--", "sh", "-c", "exec sh -c \"$1\" </dev/null", "sh"])
                .arg(command),
            None => cmd.args(["--", "sh", "-c"]).arg(command),
        };
        Ok(cmd)
    }
}

/// Directories a command has no business reading: the user's home and
/// axe's own (config with its keys, every agent's memory), and `/run`,
/// where the system's and the user's sockets are: a Unix socket is
/// reached through the filesystem, read-only or not, whatever the
/// network namespace, and the session bus (`systemd-run --user`) or
/// docker's runs anything outside the sandbox. Only those that exist:
/// bubblewrap cannot make a mount point on a read-only root.
fn hidden(own: &Dirs) -> Vec<PathBuf> {
    let dirs = [
        Some(PathBuf::from(RUN)),
        std::env::var_os("HOME").map(PathBuf::from),
        own.config().ok(),
        own.data().ok(),
    ];
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in dirs.into_iter().flatten() {
        if dir.is_absolute() && dir.is_dir() && dir != Path::new("/") && !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}
