//! How `run_command` holds a command: one of two engines keeping one
//! promise (the workdir writable, the rest read-only, secrets and axe's
//! own directories out of reach, no network unless asked, nothing
//! outliving the call), chosen by `[sandbox] engine`: bubblewrap
//! (`bwrap`, the sandbox Flatpak uses) where it is installed and can
//! make namespaces, else the kernel's Landlock ([`super::landlock`]),
//! else only the Go `axe`'s check of the command's text, which is not a
//! boundary ([`super::heuristic`]). The command is `/bin/sh -c`, by its
//! absolute path: `PATH` may name directories the sandbox cannot see.
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
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use axe_base::dirs::Dirs;
use axe_tool_settings::sandbox::Engine;

use super::seccomp::{self, Refuse};

/// Where the sockets are.
const RUN: &str = "/run";
/// What systemd-resolved keeps there for name lookups.
const RESOLVED: &str = "/run/systemd/resolve";
/// Where NixOS and Guix keep the system's programs (their `PATH`).
const SYSTEM: &str = "/run/current-system";
/// Each engine's own: bubblewrap mounts an empty one, Landlock grants
/// nothing there (`TMPDIR` is the workdir).
const TMP: &str = "/tmp";
/// The shell, by its path: `PATH` may lead where the sandbox cannot see.
const SHELL: &str = "/bin/sh";

/// Under Landlock, the shell that runs the command's: the group's leader,
/// told by the kernel (`PR_SET_PDEATHSIG`, SIGTERM) when `axe-run` ends
/// however it ends, even by SIGKILL, and then killing the whole group,
/// which nothing in it can leave. A signal that ends the command is its
/// exit code 128 + the signal's number.
const KEEPER: &str = "trap 'kill -KILL 0' TERM; /bin/sh -c \"$1\" sh & wait $!";

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
    /// Under Landlock at `abi`, with the seccomp filter.
    Landlock {
        abi: ::landlock::ABI,
        network: bool,
        whole: bool,
    },
    /// Without either, for the reason given: Go's text check alone.
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
            Ok(out) if out.status.success() => match bwrap_hidden() {
                Some(why) => Err(why.into()),
                None => Ok(program),
            },
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

/// `AXE_TEST_SANDBOX=landlock` or `none` (the tests' own builds only):
/// bubblewrap taken for absent, so the tests run each engine in turn.
#[cfg(feature = "test-hooks")]
fn bwrap_hidden() -> Option<String> {
    let asked = std::env::var("AXE_TEST_SANDBOX").ok()?;
    matches!(asked.as_str(), "landlock" | "none")
        .then(|| format!("bubblewrap is hidden (AXE_TEST_SANDBOX={asked})"))
}

#[cfg(not(feature = "test-hooks"))]
fn bwrap_hidden() -> Option<String> {
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The sandbox `engine` gives an agent's commands in `workdir`: Go's
/// text check where it gives none; `Err` when `require` and it gives none.
pub fn choose(
    engine: Engine,
    require: bool,
    network: bool,
    workdir: &Path,
) -> Result<Sandbox, ToolError> {
    let whole = super::workdir::whole_filesystem(workdir);
    let bwrap = || match probe() {
        Ok(program) => Ok(Sandbox::Bwrap {
            program: program.clone(),
            network,
            whole,
        }),
        Err(why) => Err(why.to_string()),
    };
    let landlock = || {
        // The filter keeps the process group whole and the sockets out.
        if seccomp::program(Refuse::default()).is_none() {
            return Err(
                "Landlock needs a seccomp filter this build has none of for this processor"
                    .to_owned(),
            );
        }
        super::landlock::probe().map(|abi| Sandbox::Landlock {
            abi,
            network,
            whole,
        })
    };
    let (chosen, needs) = match engine {
        Engine::Auto => (
            bwrap().or_else(|b| landlock().map_err(|l| format!("{b}, and {l}"))),
            "bubblewrap or Landlock",
        ),
        Engine::Bwrap => (bwrap(), "bubblewrap"),
        Engine::Landlock => (landlock(), "Landlock"),
    };
    match chosen {
        Ok(sandbox) => Ok(sandbox),
        Err(why) if require => {
            Err(format!("run_command needs {needs} ([sandbox] require = true), but {why}").into())
        }
        Err(why) => Ok(Sandbox::Heuristic { why }),
    }
}

/// The network of `[sandbox] network = true`, where the filter keeps Unix
/// sockets out.
const SHARED_NETWORK: &str = "on: the host's, its loopback services included; no Unix sockets";

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
                match (network, seccomp::program(Refuse::default()).is_some()) {
                    (false, _) => "off",
                    // Nothing but a network stack of its own could keep
                    // the host's loopback out: see README.
                    (true, true) => SHARED_NETWORK,
                    (true, false) => {
                        "on: the host's, its loopback services and abstract Unix sockets included"
                    }
                }
            ),
            Sandbox::Landlock {
                abi,
                network,
                whole,
            } => format!(
                "Landlock ABI {abi} ({}, network {}; it cannot hold {}{})",
                match whole {
                    true =>
                        "workdir /: the whole filesystem writable, but for the home, axe's directories, /run and /tmp, out of reach",
                    false =>
                        "read-only filesystem, writable workdir, the home, axe's directories, /run and /tmp out of reach",
                },
                match network {
                    false => "off",
                    true => SHARED_NETWORK,
                },
                // It grants access, never takes it away, and has no
                // namespaces: see README.
                "a read-only place inside the workdir, nor a PID namespace: other processes are in sight",
                match *abi < ::landlock::ABI::V6 {
                    true => ", nor signals to the user's other processes",
                    false => "",
                },
            ),
            Sandbox::Heuristic { why } => format!(
                "none: {why}; run_command only checks the command's text, which is not a boundary"
            ),
        }
    }

    /// The process that runs `command` with `sh -c` in `workdir`, with
    /// `writable` the directories it may write besides and `dirs` axe's
    /// own, which it may not read; its standard input is set (empty, for
    /// the command), and it leads a process group of its own.
    pub fn command(
        &self,
        dirs: &Dirs,
        workdir: &Path,
        writable: &[&Path],
        command: &str,
    ) -> std::io::Result<Command> {
        let (program, network) = match self {
            Sandbox::Bwrap {
                program, network, ..
            } => (program, *network),
            Sandbox::Landlock { abi, network, .. } => {
                let mut cmd = Command::new(SHELL);
                cmd.args(["-c", KEEPER, "sh"])
                    .arg(command)
                    .current_dir(workdir);
                cmd.stdin(Stdio::null());
                let seen: Vec<PathBuf> = std::iter::once(workdir)
                    .chain(writable.iter().copied())
                    .map(real)
                    .collect();
                let mut readable = vec![SYSTEM];
                if *network {
                    readable.push(RESOLVED);
                }
                let places = super::landlock::Places {
                    abi: *abi,
                    network: *network,
                    kept: &kept(dirs),
                    writable: &seen,
                    readable: &readable,
                };
                let refuse = Refuse {
                    every_socket: !network,
                    new_group: true,
                };
                let filter = seccomp::program(refuse)
                    .ok_or_else(|| std::io::Error::other("no seccomp filter for this processor"))?;
                // It makes a session of its own, and so its group.
                super::landlock::hold(&mut cmd, &places, filter)?;
                return Ok(cmd);
            }
            Sandbox::Heuristic { .. } => {
                let mut cmd = Command::new(SHELL);
                cmd.arg("-c").arg(command).arg("sh").current_dir(workdir);
                cmd.stdin(Stdio::null()).process_group(0);
                return Ok(cmd);
            }
        };
        let mut cmd = Command::new(program);
        cmd.process_group(0);
        cmd.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        cmd.args(["--tmpfs", "/tmp"]);
        // Each place is as the deepest of these that holds it says: a
        // workdir inside a hidden directory is there, and a hidden one
        // inside the workdir stays hidden (the default workdir is the
        // current directory, often the home that holds the keys). Mounts
        // made later cover earlier ones, so shallower go first; at the
        // same place, the bind goes last (a workdir that is the home).
        // Depths are of the real paths: a mount lands where a symlink leads.
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
        let filter = network
            .then(|| seccomp::program(Refuse::default()))
            .flatten();
        if network {
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
            // `$0` is `sh` either way, as for a plain `sh -c`: the shell
            // is named by its path, the command by `sh` after it.
            Some(_) => cmd
                .args([
                    "--",
                    SHELL,
                    "-c",
                    "exec /bin/sh -c \"$1\" sh </dev/null",
                    "sh",
                ])
                .arg(command),
            None => cmd.args(["--", SHELL, "-c"]).arg(command).arg("sh"),
        };
        Ok(cmd)
    }
}

impl Sandbox {
    /// The entries of `path` (a `PATH`) that a command cannot see: under
    /// a hidden directory or `/tmp`, and not in the workdir or one of the
    /// `writable` directories held deeper. A program found only there is
    /// "not found" inside.
    pub fn unseen(
        &self,
        dirs: &Dirs,
        workdir: &Path,
        writable: &[&Path],
        path: &std::ffi::OsStr,
    ) -> Vec<PathBuf> {
        let network = match self {
            Sandbox::Heuristic { .. } => return Vec::new(),
            Sandbox::Bwrap { network, .. } | Sandbox::Landlock { network, .. } => *network,
        };
        let kept = kept(dirs);
        let mut seen: Vec<PathBuf> = std::iter::once(workdir)
            .chain(writable.iter().copied())
            .chain(std::iter::once(Path::new(SYSTEM)))
            .chain(network.then_some(Path::new(RESOLVED)))
            .map(real)
            .collect();
        seen.dedup();
        std::env::split_paths(path)
            // A relative entry is the command's to resolve, in the workdir.
            .filter(|entry| entry.is_absolute())
            .filter(|entry| {
                let at = real(entry);
                let deepest = |places: &[PathBuf]| {
                    places
                        .iter()
                        .filter(|p| at.starts_with(p))
                        .map(|p| p.components().count())
                        .max()
                };
                // At the same depth the workdir wins: it is bound last.
                match (deepest(&kept), deepest(&seen)) {
                    (Some(k), Some(s)) => k > s,
                    (k, _) => k.is_some(),
                }
            })
            .collect()
    }
}

/// `path` with its symlinks resolved, where it exists: a mount lands, and
/// a Landlock rule holds, where a symlink leads.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What no engine lets a command see: the hidden directories and `/tmp`,
/// as real paths.
fn kept(dirs: &Dirs) -> Vec<PathBuf> {
    let mut kept: Vec<PathBuf> = hidden(dirs).iter().map(|h| real(h)).collect();
    kept.push(real(Path::new(TMP)));
    kept
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A `PATH` entry under `/tmp` is unseen, one in the workdir (there
    /// too) is seen, as are the system's and a relative one; outside a
    /// sandbox every entry is there.
    #[test]
    fn the_path_entries_a_sandbox_cannot_see() {
        let tmp = tempfile::tempdir_in(TMP).unwrap();
        let work = tmp.path().join("work");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(work.join("bin")).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let dirs = Dirs::given(
            Some(&tmp.path().join("config")),
            Some(&tmp.path().join("data")),
        )
        .unwrap();
        let path = std::env::join_paths([
            Path::new("/usr/bin"),
            &bin,
            &work.join("bin"),
            Path::new("rel"),
        ])
        .unwrap();
        let landlock = Sandbox::Landlock {
            abi: ::landlock::ABI::V6,
            network: false,
            whole: false,
        };
        assert_eq!(landlock.unseen(&dirs, &work, &[], &path), vec![bin.clone()]);
        let none = Sandbox::Heuristic { why: "test".into() };
        assert!(none.unseen(&dirs, &work, &[], &path).is_empty());
    }
}
