//! What can go wrong in a sync, typed, with its cause.
//!
//! Every fallible step of the crate returns [`SyncError`]: a variant per
//! failure, holding what a caller may want to act on (the path, the git
//! command and what it said, the remote) and the error that caused it,
//! reachable through [`std::error::Error::source`]. Its `Display` is the
//! one line a user is shown. At the crate's boundary it becomes the
//! toolkit's [`Error`] (`From`, used by `?` in the commands): [`SyncError::reported`]
//! says which variant of it each failure is reported as, so the exit code
//! is still decided by [`Error::exit_code`] alone, and the typed error
//! rides along inside it ([`Error::Caused`]) for its chain.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use axe_base::error::{Category, Error, describe_io, io_message};

/// A failure of `axe-sync`; see the module's documentation.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A file of the repository (or of git's directory) could not be
    /// opened, read, written or locked: `op` on `path`, in Go's
    /// `<context>: <op> <path>: <reason>` shape. A lock whose wait ran out
    /// ([`axe_base::error::Busy`] inside `source`) is reported busy.
    #[error("{}", io_message(.context, .op, .path, .source))]
    Io {
        context: &'static str,
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The directory to make the repository in could not be made.
    // The OS's own words, as this message always had them.
    #[error("failed to create {}: {source}", .path.display())]
    CreateDir { path: PathBuf, source: io::Error },
    /// No working directory for the merge driver, which git runs in the
    /// work tree.
    #[error("no working directory: {0}")]
    NoWorkingDir(#[source] io::Error),
    /// The directory is not a repository `axe-sync init` made.
    #[error("{} is not a sync repository: run `axe-sync init` first", .0.display())]
    NotARepository(PathBuf),
    /// HEAD names no branch, so there is nothing to commit onto.
    #[error(
        "{} is on no branch (a detached HEAD): check out a branch to sync",
        .0.display()
    )]
    Detached(PathBuf),
    /// The work tree does not exist (any more).
    #[error("{} does not exist", .0.display())]
    Missing(PathBuf),
    /// A path git itself would refuse; the last guard before a read or
    /// write (the callers leave such paths out already).
    #[error("refused {path:?}: {reason}")]
    Refused { path: String, reason: &'static str },
    /// A file to commit holds git's conflict markers.
    #[error(
        "{path} holds git conflict markers (<<<<<<< … >>>>>>>): resolve them by hand; nothing was committed"
    )]
    ConflictMarkers { path: String },
    /// A file to commit holds what looks like a credential: its kinds and
    /// the line of the first, never the value.
    #[error(
        "{path} holds what looks like a secret ({}; the first on line {line}): take it out (or set [memory] redact = false in config.toml); nothing was committed",
        .kinds.join(", ")
    )]
    Secret {
        path: String,
        kinds: Vec<&'static str>,
        line: usize,
    },
    /// A file's name holds what looks like a credential; `shown` is the
    /// name with it redacted.
    #[error(
        "{shown}: its name holds what looks like a secret ({}): rename or remove the file; nothing was committed",
        .kinds.join(", ")
    )]
    SecretInName {
        shown: String,
        kinds: Vec<&'static str>,
    },
    /// Conflict files are left beside their notes: the sync is done, but
    /// a person has text to merge in.
    #[error(
        "unresolved sync conflict: {} (another machine's text beside the note; merge it in and delete the file)",
        .0.join(", ")
    )]
    Unresolved(Vec<String>),
    /// The repository's sync lock was free, but a git an earlier sync
    /// started still ran when the wait ran out.
    #[error(
        "another axe-sync is running: a git an earlier axe-sync started has not ended (waited {:.1} s)",
        .waited.as_secs_f64()
    )]
    GitStillRunning { waited: Duration },
    /// The remote kept moving: every push was rejected.
    #[error(
        "the remote rejected {attempts} pushes: other machines kept pushing meanwhile; run axe-sync again"
    )]
    PushesRejected { attempts: u32 },
    /// `init --remote URL`: git could not use the remote.
    #[error("cannot use {url} as the remote: {}", .source.reason())]
    RemoteUnusable { url: String, source: GitFailed },
    /// git could not be started (`source`'s kind `NotFound`: it is not on
    /// PATH).
    #[error("{}", git_start(.0))]
    GitStart(#[source] io::Error),
    /// git was started but could not be waited for.
    #[error("failed to wait for git: {0}")]
    GitWait(#[source] io::Error),
    /// `git --version` said something that is not a version.
    #[error("git --version said {said:?}: not a git axe-sync knows")]
    GitUnknown { said: String },
    /// git is older than axe-sync needs (`crate::git::MIN_VERSION`).
    #[error(
        "git {}.{} is too old for axe-sync: it needs {}.{} or newer",
        .version.0,
        .version.1,
        .needed.0,
        .needed.1
    )]
    GitTooOld {
        version: (u32, u32),
        needed: (u32, u32),
    },
    /// A git command failed.
    /// A failed git is the failure itself, no cause: its command, exit
    /// code and stderr are in the variant.
    #[error("{0}")]
    Git(GitFailed),
    /// A git command talking to the remote outlasted the deadline and was
    /// killed with what it started.
    /// As the toolkit shows an API error: its category first.
    #[error("{}: {}", Category::Timeout, timed_out(.command))]
    Timeout { command: String },
    /// `git hash-object` gave fewer ids than it was given files.
    #[error("git hash-object gave fewer ids than files")]
    HashObjectShort,
    /// `git cat-file --batch` gave a header it should not (`Some`), or
    /// ended before the blob it announced (`None`).
    #[error("{}", cat_file(.header))]
    CatFile { header: Option<String> },
    /// A helper thread of the sync panicked.
    #[error("git {what}: its thread failed")]
    Thread { what: &'static str },
}

/// A git command that ran and failed: which one, how it ended, and what
/// it wrote to stderr.
#[derive(Debug, Clone, thiserror::Error)]
#[error("git {command} failed: {}", self.reason())]
pub struct GitFailed {
    /// The subcommand (`fetch`, `merge-file`).
    pub command: String,
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stderr: String,
}

impl GitFailed {
    /// Git's reason, from what it wrote to stderr: its first `fatal:` or
    /// `error:` line (the advice after it says less), else its last line.
    pub fn reason(&self) -> &str {
        let lines = || self.stderr.lines().map(str::trim).filter(|l| !l.is_empty());
        let said = lines().find_map(|l| {
            l.strip_prefix("fatal: ")
                .or_else(|| l.strip_prefix("error: "))
        });
        said.or_else(|| lines().next_back())
            .unwrap_or("(no message)")
    }
}

impl SyncError {
    /// `op` on `path` failed with `source`, in no context.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> SyncError {
        SyncError::Io {
            context: "",
            op,
            path: path.into(),
            source,
        }
    }

    /// The toolkit's error this one is reported as: its message, and
    /// through its variant the exit code.
    pub fn reported(&self) -> Error {
        let line = || self.to_string();
        match self {
            SyncError::Io {
                context,
                op,
                path,
                source,
            } => Error::memory(context, op, path, source),
            SyncError::CreateDir { .. } | SyncError::NotARepository(_) | SyncError::Detached(_) => {
                Error::Config(line())
            }
            SyncError::Missing(_)
            | SyncError::Refused { .. }
            | SyncError::ConflictMarkers { .. }
            | SyncError::Secret { .. }
            | SyncError::SecretInName { .. } => Error::Memory(line()),
            SyncError::Unresolved(_) => Error::Unresolved(line()),
            SyncError::GitStillRunning { .. } => Error::Busy(line()),
            SyncError::Timeout { command } => Error::Api {
                category: Category::Timeout,
                message: timed_out(command),
            },
            SyncError::NoWorkingDir(_)
            | SyncError::PushesRejected { .. }
            | SyncError::RemoteUnusable { .. }
            | SyncError::GitStart(_)
            | SyncError::GitWait(_)
            | SyncError::GitUnknown { .. }
            | SyncError::GitTooOld { .. }
            | SyncError::Git(_)
            | SyncError::HashObjectShort
            | SyncError::CatFile { .. }
            | SyncError::Thread { .. } => Error::Child(line()),
        }
    }
}

/// The line of a git that would not start: a missing git is named so.
fn git_start(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => {
            "git was not found on PATH: axe-sync needs git (2.28 or newer)".to_owned()
        }
        _ => format!("failed to run git: {}", describe_io(e)),
    }
}

/// `git cat-file`'s line: the header it should not have given, or that
/// it ended early.
fn cat_file(header: &Option<String>) -> String {
    match header {
        Some(h) => format!("git cat-file: {h}"),
        None => "git cat-file ended early".to_owned(),
    }
}

/// What a git command killed at the deadline is said to have done.
fn timed_out(command: &str) -> String {
    format!("git {command} did not finish within its timeout; it was stopped")
}

impl From<GitFailed> for SyncError {
    fn from(failed: GitFailed) -> SyncError {
        SyncError::Git(failed)
    }
}

/// The crate's boundary: a sync failure becomes the toolkit's error it is
/// reported as, keeping the typed error for its chain.
impl From<SyncError> for Error {
    fn from(e: SyncError) -> Error {
        Error::caused(e.reported(), e)
    }
}

pub type Result<T, E = SyncError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::fs;
    use std::time::Instant;

    use axe_memory::lock::Wait;
    use axe_memory::secrets::Secrets;

    use super::*;

    /// An init that cannot start: `dir` under a regular file.
    fn failed_init(remote: Option<&str>, dir: &std::path::Path) -> SyncError {
        let deadline = Instant::now() + Duration::from_secs(30);
        let program = ["axe-sync".to_owned()];
        match crate::init(
            dir,
            remote,
            deadline,
            Secrets::off(),
            &program,
            Wait::default(),
        ) {
            Ok(_) => panic!("init in {} succeeded", dir.display()),
            Err(e) => e,
        }
    }

    #[test]
    fn a_sync_failure_carries_its_cause_through_the_toolkits_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, "").unwrap();
        let dir = file.join("memory");
        let err = failed_init(None, &dir);
        let SyncError::CreateDir { path, source } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(path, &dir);
        assert_eq!(source.kind(), io::ErrorKind::NotADirectory);
        let line = format!(
            "failed to create {}: Not a directory (os error 20)",
            dir.display()
        );
        assert_eq!(err.to_string(), line);
        let reported = Error::from(err);
        assert_eq!(reported.to_string(), line, "the same line");
        assert_eq!(reported.exit_code(), 2, "a config error, as before");
        // The chain: the toolkit's error, the sync's, the OS's.
        let sync = reported.source().expect("the typed error");
        assert!(sync.is::<SyncError>(), "{sync:?}");
        let os = sync.source().expect("its cause");
        let os = os.downcast_ref::<io::Error>().expect("an io::Error");
        assert_eq!(
            os.raw_os_error(),
            Some(rustix::io::Errno::NOTDIR.raw_os_error())
        );
    }

    #[test]
    fn a_remote_git_cannot_use_is_refused_with_gits_failure_as_its_cause() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        if !std::env::split_paths(&path).any(|d| d.join("git").is_file()) {
            assert!(
                std::env::var_os("AXE_TEST_ALL").is_none(),
                "git is not on PATH and AXE_TEST_ALL asks for every test"
            );
            eprintln!("skipped: git is not on PATH (set AXE_TEST_ALL=1 to fail instead)");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        let nowhere = tmp.path().join("nowhere.git");
        let url = nowhere.to_string_lossy().into_owned();
        let err = failed_init(Some(&url), &dir);
        assert!(!dir.exists(), "the failed init took back what it made");
        let reported = Error::from(err);
        assert_eq!(reported.exit_code(), 1);
        assert_eq!(
            reported.to_string(),
            format!(
                "cannot use {url} as the remote: '{url}' does not appear to be a git repository"
            )
        );
        let sync = reported.source().unwrap();
        let Some(SyncError::RemoteUnusable { source: git, .. }) = sync.downcast_ref() else {
            panic!("{sync:?}");
        };
        assert_eq!(git.command, "ls-remote");
        assert_eq!(git.code, Some(128));
        assert!(git.stderr.starts_with("fatal: "), "{}", git.stderr);
        let cause = sync.source().unwrap();
        assert!(cause.is::<GitFailed>(), "{cause:?}");
    }

    #[test]
    fn each_failure_is_reported_as_its_line_with_its_exit_code() {
        let busy = io::Error::other(axe_base::error::Busy {
            waited: Duration::from_millis(1500),
        });
        let cases = [
            (
                SyncError::io("read", "/m/x.md", io::Error::from_raw_os_error(13)),
                "read /m/x.md: permission denied",
                1,
            ),
            (
                SyncError::Io {
                    context: "another axe-sync is running",
                    op: "lock",
                    path: "/m/.git/axe-sync/lock".into(),
                    source: busy,
                },
                "another axe-sync is running: lock /m/.git/axe-sync/lock: another process holds its lock (waited 1.5 s)",
                5,
            ),
            (
                SyncError::GitStillRunning {
                    waited: Duration::from_millis(2000),
                },
                "another axe-sync is running: a git an earlier axe-sync started has not ended (waited 2.0 s)",
                5,
            ),
            (
                SyncError::Timeout {
                    command: "fetch".into(),
                },
                "timeout: git fetch did not finish within its timeout; it was stopped",
                3,
            ),
            (
                SyncError::NotARepository("/m".into()),
                "/m is not a sync repository: run `axe-sync init` first",
                2,
            ),
            (
                SyncError::Unresolved(vec!["a.md".into(), "b.md".into()]),
                "unresolved sync conflict: a.md, b.md (another machine's text beside the note; merge it in and delete the file)",
                7,
            ),
            (
                SyncError::Git(GitFailed {
                    command: "push".into(),
                    code: Some(1),
                    stderr: "hint: x\nerror: failed to push\nhint: y\n".into(),
                }),
                "git push failed: failed to push",
                1,
            ),
            (
                SyncError::GitStart(io::ErrorKind::NotFound.into()),
                "git was not found on PATH: axe-sync needs git (2.28 or newer)",
                1,
            ),
            (
                SyncError::Refused {
                    path: ".git/config".into(),
                    reason: "r",
                },
                "refused \".git/config\": r",
                1,
            ),
        ];
        for (err, line, code) in cases {
            assert_eq!(err.to_string(), line);
            let reported = Error::from(err);
            assert_eq!(reported.to_string(), line);
            assert_eq!(reported.exit_code(), code, "{line}");
        }
    }
}
