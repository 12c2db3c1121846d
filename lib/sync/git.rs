//! Running the `git` program on the memory repository.
//!
//! git is found on PATH, checked once to be new enough ([`MIN_VERSION`]),
//! and always run on the one repository we name: `GIT_DIR` and
//! `GIT_WORK_TREE` are set, and every other `GIT_*` variable that could
//! point it elsewhere or change what it reads (an index, an object store,
//! a config file, a namespace) is cleared. It never prompts
//! (`GIT_TERMINAL_PROMPT=0`, ssh in batch mode unless the user set their
//! own ssh command), never pages, and its messages are the C locale's, so
//! an error we pass on reads the same everywhere. A step that talks to a
//! remote has a deadline, after which git and whatever it started (ssh, a
//! remote helper) are killed as one process group.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::error::{GitFailed, Result, SyncError};

/// `git init -b` (2.28) is the newest thing relied on.
pub const MIN_VERSION: (u32, u32) = (2, 28);

/// Variables kept from the caller's environment although they start with
/// `GIT_`: how to reach a remote, which is the user's to say.
const KEPT: &[&str] = &[
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_PROXY_COMMAND",
];

/// The memory repository, as git is run on it.
pub struct Git {
    pub root: PathBuf,
    git_dir: PathBuf,
    /// Once a sync holds the repository: the file each git it starts
    /// holds a lock on for its life ([`super::running`]).
    running: OnceLock<Arc<File>>,
}

/// What a git run gave back.
pub struct Output {
    pub ok: bool,
    /// The exit code; `None` when a signal ended git.
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    /// stdout as the NUL-separated paths of a `-z` listing.
    pub fn paths(&self) -> impl Iterator<Item = String> + '_ {
        self.stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
    }

    /// stdout as text, its last newline removed.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim_end().to_owned()
    }

    /// The failure of the git command `args` that gave this output.
    pub fn failure(&self, args: &[impl AsRef<OsStr>]) -> GitFailed {
        GitFailed {
            command: subcommand(args),
            code: self.code,
            stderr: String::from_utf8_lossy(&self.stderr).into_owned(),
        }
    }
}

impl Git {
    /// The repository whose work tree is `root`; git is checked to be on
    /// PATH and new enough.
    pub fn at(root: &Path) -> Result<Git> {
        let git = Git {
            root: root.to_owned(),
            git_dir: root.join(".git"),
            running: OnceLock::new(),
        };
        git.check_version()?;
        Ok(git)
    }

    /// From now on, each git started holds its lock on `file` for its
    /// life ([`super::running`]).
    pub fn mark_running(&self, file: File) {
        let _ = self.running.set(Arc::new(file));
    }

    /// `.git` of the repository.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The commit the ref `name` (`HEAD`, `refs/heads/main`) points to,
    /// `None` when there is none. A branch is read from its file under
    /// `.git` or from `packed-refs`, as git keeps them, which spares a
    /// process on every sync; anything else (a symbolic ref other than
    /// HEAD, a reftable repository) is asked of `git rev-parse`.
    pub fn resolve(&self, name: &str) -> Result<Option<String>> {
        let direct = |name: &str| -> Option<String> {
            let text = std::fs::read_to_string(self.git_dir.join(name)).ok();
            let packed = || {
                let packed = std::fs::read_to_string(self.git_dir.join("packed-refs")).ok()?;
                packed.lines().find_map(|l| {
                    let (oid, r) = l.split_once(' ')?;
                    (r == name).then(|| oid.to_owned())
                })
            };
            let oid = match text {
                Some(t) => t.trim().to_owned(),
                None => packed()?,
            };
            let hex = matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b.is_ascii_hexdigit());
            hex.then_some(oid)
        };
        let target = match name {
            "HEAD" => std::fs::read_to_string(self.git_dir.join("HEAD"))
                .ok()
                .and_then(|t| t.trim().strip_prefix("ref: ").map(str::to_owned)),
            _ => Some(name.to_owned()),
        };
        let refs = self.git_dir.join("refs");
        if let Some(target) = target.filter(|t| t.starts_with("refs/") && refs.is_dir())
            && let Some(oid) = direct(&target)
        {
            return Ok(Some(oid));
        }
        let out = self.output(
            &["rev-parse", "-q", "--verify", &format!("{name}^{{commit}}")],
            None,
        )?;
        Ok(out.ok.then(|| out.text()))
    }

    /// Whether the repository exists yet.
    pub fn exists(&self) -> bool {
        self.git_dir.join("HEAD").is_file()
    }

    /// Checks git's version, once per git program: the check is
    /// remembered in `.git/axe-sync/git-version` against the program's
    /// path, size and modification time, so a sync with nothing to do
    /// spends no process on it.
    fn check_version(&self) -> Result<()> {
        let seen = self.git_dir.join("axe-sync").join("git-version");
        let program = program_stamp();
        if program.is_some() && std::fs::read_to_string(&seen).ok() == program {
            return Ok(());
        }
        self.ask_version()?;
        if let Some(stamp) = program
            && seen.parent().is_some_and(Path::is_dir)
        {
            // Best effort: without it the next sync asks again.
            let _ = std::fs::write(&seen, stamp);
        }
        Ok(())
    }

    fn ask_version(&self) -> Result<()> {
        let out = self.output(&["--version"], None)?;
        let text = out.text();
        let version = text
            .strip_prefix("git version ")
            .and_then(parse_version)
            .ok_or_else(|| SyncError::GitUnknown { said: text.clone() })?;
        if version < MIN_VERSION {
            return Err(SyncError::GitTooOld {
                version,
                needed: MIN_VERSION,
            });
        }
        Ok(())
    }

    /// The command for `args`, with the environment described above.
    fn command(&self, args: &[impl AsRef<OsStr>]) -> Command {
        let mut cmd = Command::new("git");
        for (key, _) in std::env::vars_os() {
            let clear = key
                .to_str()
                .is_some_and(|k| k.starts_with("GIT_") && !KEPT.contains(&k));
            if clear {
                cmd.env_remove(&key);
            }
        }
        if std::env::var_os("GIT_SSH_COMMAND").is_none() && std::env::var_os("GIT_SSH").is_none() {
            cmd.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
        }
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.root)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("LC_ALL", "C")
            .current_dir(&self.root)
            .args(["--no-pager", "-c", "core.quotepath=false"])
            .args(args);
        if let Some(file) = self.running.get() {
            let file = Arc::clone(file);
            // The crate's one unsafe block (the workspace's lints deny the rest).
            // SAFETY: the closure runs in the forked child before exec,
            // where only async-signal-safe work is allowed: `hold` makes
            // two `fcntl` calls on a descriptor the child inherited, and
            // neither allocates nor takes a lock of this process.
            #[allow(unsafe_code)]
            unsafe {
                cmd.pre_exec(move || super::running::hold(&file));
            }
        }
        cmd
    }

    /// Runs git with `args` (and `input` on stdin) to the end.
    pub fn output(&self, args: &[impl AsRef<OsStr>], input: Option<&[u8]>) -> Result<Output> {
        self.run(args, input, None)
    }

    /// [`Git::output`], killing git and what it started when it is not
    /// done by `deadline`.
    pub fn run(
        &self,
        args: &[impl AsRef<OsStr>],
        input: Option<&[u8]>,
        deadline: Option<Instant>,
    ) -> Result<Output> {
        let mut cmd = self.command(args);
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        let mut child = cmd.spawn().map_err(SyncError::GitStart)?;
        let writer = input.map(|bytes| {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            let bytes = bytes.to_vec();
            // A thread: git may fill its stdout before it reads all input.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            })
        });
        let out = collect(&mut child, deadline, args)?;
        if let Some(w) = writer {
            let _ = w.join();
        }
        Ok(out)
    }

    /// Runs git and gives its stdout; a failure is an error naming the
    /// command and git's reason.
    pub fn ok(&self, args: &[impl AsRef<OsStr>], input: Option<&[u8]>) -> Result<Output> {
        let out = self.output(args, input)?;
        match out.ok {
            true => Ok(out),
            false => Err(failed(args, &out)),
        }
    }
}

/// The git command `args` run: its first word that is not an option or
/// the value of a `-c`.
fn subcommand(args: &[impl AsRef<OsStr>]) -> String {
    let mut words = args.iter().map(|a| a.as_ref().to_string_lossy());
    while let Some(w) = words.next() {
        if w == "-c" {
            words.next();
        } else if !w.starts_with('-') {
            return w.into_owned();
        }
    }
    String::new()
}

/// The error of a git command that failed.
pub fn failed(args: &[impl AsRef<OsStr>], out: &Output) -> SyncError {
    SyncError::Git(out.failure(args))
}

/// Waits for `child`, reading its output, until it ends or `deadline`.
fn collect(
    child: &mut Child,
    deadline: Option<Instant>,
    args: &[impl AsRef<OsStr>],
) -> Result<Output> {
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let status = match deadline {
        None => child.wait().map(Some),
        Some(deadline) => wait_until(child, deadline),
    };
    let status = status.map_err(SyncError::GitWait)?;
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    match status {
        Some(status) => Ok(Output {
            ok: status.success(),
            code: status.code(),
            stdout,
            stderr,
        }),
        None => Err(SyncError::Timeout {
            command: subcommand(args),
        }),
    }
}

/// The child's status, or `None` when it was killed at `deadline`.
fn wait_until(
    child: &mut Child,
    deadline: Instant,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // The group: ssh or a remote helper holds the pipes open too.
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// The git program on PATH as `<path> <size> <mtime>`, `None` when none
/// is found (then asking it fails with the clear error).
fn program_stamp() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        let git = dir.join("git");
        let meta = std::fs::metadata(&git).ok()?;
        (meta.is_file() && meta.mode() & 0o111 != 0).then(|| {
            format!(
                "{} {} {}.{}\n",
                git.display(),
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec()
            )
        })
    })
}

/// `2.47.3` or `2.39.2.windows.1` as (major, minor).
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = parts.next()?.trim().parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_major_and_minor() {
        assert_eq!(parse_version("2.47.3"), Some((2, 47)));
        assert_eq!(parse_version("2.39.2.windows.1"), Some((2, 39)));
        assert_eq!(parse_version("junk"), None);
        assert!(parse_version("2.27.0").unwrap() < MIN_VERSION);
    }
}
