//! The one error type of the toolkit and its mapping to exit codes.
//!
//! Every fallible operation of the toolkit ends up as an [`Error`]: a crate
//! with errors of its own (`axe_sync::SyncError`) converts them at its
//! boundary into the variant each is reported as, carrying the typed error
//! for its causes ([`Error::Caused`]). The runner in [`axe_cli`] prints it
//! as one line on stderr and exits with [`Error::exit_code`]. The codes are the Go `axe`'s (1 agent error,
//! 2 config error, 3 API error, 4 token budget exceeded) and three of ours
//! (5 busy, 6 conflict, 7 unresolved sync conflict), all in [`EXIT_CODES`].

use std::fmt;
use std::io;
use std::path::Path;

/// What went wrong, with enough detail for a one-line message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line was wrong: unknown flag, missing value, bad number.
    #[error("{0}")]
    Usage(String),
    /// An agent name that could reach outside its directory.
    #[error("{0}")]
    InvalidAgentName(String),
    /// No `<config>/agents/<name>.toml`; `near` is an agent that exists
    /// with a name close to it.
    #[error("agent config not found: {name}{}", did_you_mean(.near))]
    AgentNotFound { name: String, near: Option<String> },
    /// The agent file exists but is not valid TOML of the right shape.
    #[error("failed to parse agent config \"{name}\": {message}")]
    AgentParse { name: String, message: String },
    /// The agent file parsed but failed validation (the message is Go's).
    #[error("{0}")]
    AgentInvalid(String),
    /// The config or data directory could not be determined, or a config
    /// file could not be read.
    #[error("{0}")]
    Config(String),
    /// A memory file could not be read or written; the message names the
    /// operation and the path.
    #[error("{0}")]
    Memory(String),
    /// Our input could not be read or made no sense: stdin, a `--request`
    /// file.
    #[error("{0}")]
    Input(String),
    /// A provider call failed; shown as `<category>: <message>` like Go's
    /// `ProviderError`.
    #[error("{category}: {message}")]
    Api { category: Category, message: String },
    /// No connection to the provider, or it broke before a reply: the
    /// message names the URL and the cause, with no category before it
    /// (Go's `server:` said the server failed, when none was reached).
    #[error("{0}")]
    Connection(String),
    /// A run that did not finish: the conversation outlasted its turn
    /// limit, or some agents of `axe-gc --all` failed.
    #[error("{0}")]
    Agent(String),
    /// A model string that is not `provider/model-name`; the message is Go's.
    #[error("{0}")]
    BadModel(String),
    /// A provider axe does not speak; `supported` lists those it does.
    #[error("unsupported provider \"{name}\": supported providers are {supported}")]
    UnknownProvider { name: String, supported: String },
    /// No API key for a provider that needs one.
    /// `file` says what config.toml had: no file, no section, or a
    /// section without a key.
    #[error("API key for provider \"{provider}\" is not configured: {env} is not set, and {file}")]
    MissingKey {
        provider: String,
        env: String,
        file: String,
    },
    /// A provider's `api_key_cmd` failed.
    #[error("{0}")]
    KeyCommand(String),
    /// An MCP server the agent requires did not start, connect or list
    /// its tools.
    #[error("{0}")]
    ToolServer(String),
    /// A program we run for the user (`$EDITOR`, a subcommand's
    /// executable) is unset, would not start, or failed.
    #[error("{0}")]
    Child(String),
    /// Writing our own output failed. A closed pipe is not reported.
    #[error("failed to write output: {}", describe_io(.0))]
    Output(io::Error),
    /// A rewrite whose `--if-match` hash no longer matches: someone else
    /// changed the file since it was read.
    #[error("{0}")]
    Conflict(String),
    /// A search found nothing: exit 1 as grep's, with nothing on stderr.
    #[error("no match")]
    NoMatch,
    /// Another process held a memory file's lock until our deadline
    /// (`--wait`, `--timeout`) passed; nothing was written.
    #[error("{0}")]
    Busy(String),
    /// A run used up its `[budget] max_tokens` (`--budget-tokens`): its
    /// partial answer is printed, nothing is remembered.
    #[error("budget exceeded: used {used} of {max} tokens")]
    Budget { used: u64, max: u64 },
    /// A prompt whose estimated size alone is over the run's budget:
    /// refused before any call (`run::budget` says how it is estimated).
    #[error(
        "budget exceeded before any call: the prompt alone is about {estimate} tokens \
         (1 per 4 characters), over the budget of {max}"
    )]
    PromptOverBudget { estimate: u64, max: u64 },
    /// `axe-sync` left a note's other side beside it (a conflict file)
    /// that nobody has merged in yet; the message lists the files.
    #[error("{0}")]
    Unresolved(String),
    /// A failure typed by the crate it happened in (`axe_sync::SyncError`),
    /// kept whole so that its causes can be followed
    /// ([`std::error::Error::source`]). It is shown, and exits, as the
    /// variant that crate reports it as ([`Caused::reported`]).
    #[error(transparent)]
    Caused(Box<Caused>),
}

/// A crate's typed error and the variant of [`Error`] it is reported as:
/// shown as that variant, its source the typed error.
#[derive(Debug, thiserror::Error)]
#[error("{reported}")]
pub struct Caused {
    /// Its one-line message and, through its variant, its exit code:
    /// never another `Caused`.
    pub reported: Error,
    /// The typed error, whose `source()` leads on to its cause.
    #[source]
    pub error: Box<dyn std::error::Error + Send + Sync + 'static>,
}

/// The I/O error of a lock wait that reached its deadline, carried inside
/// an `io::Error` up to [`Error::memory`], which makes it [`Error::Busy`].
#[derive(Debug, thiserror::Error)]
#[error("another process holds its lock (waited {:.1} s)", .waited.as_secs_f64())]
pub struct Busy {
    pub waited: std::time::Duration,
}

/// One exit code and what it means.
pub struct ExitCode {
    pub code: u8,
    /// One word, for `--help`.
    pub name: &'static str,
    /// What it covers, for the man pages and the README.
    pub meaning: &'static str,
}

/// Every exit code of the toolkit: the one table the man pages, `--help`
/// and the reference's table (docs/reference.md, checked by a test) are made from.
/// [`Error::exit_code`] gives no other code (a test checks that too).
pub const EXIT_CODES: [ExitCode; 8] = [
    ExitCode {
        code: 0,
        name: "success",
        meaning: "success, including \"nothing to do\"; also when the reader of stdout goes away (`| head`)",
    },
    ExitCode {
        code: 1,
        name: "error",
        meaning: "bad arguments (including a `--timeout` over a day), a bad model string or unknown provider, a request the provider rejected (`bad_request`), a memory file that cannot be read or written or is not a regular file (disk full, file size limit), an unknown subcommand, an editor or subcommand that fails to start or fails; `axe-notes-search` finding nothing, as grep",
    },
    ExitCode {
        code: 2,
        name: "config",
        meaning: "agent not found or invalid (an unknown tool in `tools`), `[sandbox] require = true` where bubblewrap cannot run, an artifact directory that cannot be made, an invalid agent name, a bad `config.toml`, no API key for a provider that needs one, an API key with a control character in it, a base URL with a user name or password, without http:// or https://, or with a query string, an unreadable system file, the config or data directory cannot be determined or written, an agent file `agents init` would overwrite; an unset `${VAR}` in an MCP server's headers or env, one tool name on two MCP servers; a `response_format` the provider cannot honour; an `axe-import claude-code` PATH holding no Claude Code memory",
    },
    ExitCode {
        code: 3,
        name: "API",
        meaning: "API errors: auth, rate limit, overload, server errors, timeouts, unreachable server, bad or empty reply, a streamed reply that ended before its end marker; a required MCP server that does not start, connect or list its tools; a git remote that did not answer within `axe-sync`'s `--timeout`",
    },
    ExitCode {
        code: 4,
        name: "budget",
        meaning: "the token budget (`[budget] max_tokens`, `axe-run --budget-tokens`) ran out or was passed: the partial answer is printed, nothing is remembered (the Go `axe`'s code); or the prompt's estimate alone was over it, and nothing was sent",
    },
    ExitCode {
        code: 5,
        name: "busy",
        meaning: "busy: another process held a memory file's lock past `--wait` (or `axe-run`'s `--timeout`), or another `axe-sync` the repository's; nothing was written",
    },
    ExitCode {
        code: 6,
        name: "conflict",
        meaning: "a conflict: `axe-notes-reflect` or `axe-notes-learn --if-match` found the file changed since it was read; nothing was written. `axe-notes-consolidate`: a rewrite lost to a concurrent one (its entries stay new), or `--undo` found a file changed since the consolidation (nothing restored)",
    },
    ExitCode {
        code: 7,
        name: "unresolved",
        meaning: "`axe-sync`: a note both machines changed on the same lines kept its local text and has the other side's beside it in a conflict file (listed); everything else was synced; `axe-import`: a note that differs from the imported text kept its text and has the imported one beside it in a conflict file (listed); everything else was imported; merge the text in and delete the file",
    },
];

/// What went wrong with a provider call, as Go's `ErrorCategory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Auth,
    RateLimit,
    Timeout,
    Overloaded,
    BadRequest,
    Server,
}

impl Category {
    /// A bad request is the caller's mistake (1); the rest are the API's (3).
    pub fn exit_code(self) -> u8 {
        match self {
            Category::BadRequest => 1,
            _ => 3,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Category::Auth => "auth",
            Category::RateLimit => "rate_limit",
            Category::Timeout => "timeout",
            Category::Overloaded => "overloaded",
            Category::BadRequest => "bad_request",
            Category::Server => "server",
        })
    }
}

impl Error {
    /// The process exit code for this error: the one place where errors
    /// meet exit codes.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_)
            | Error::Memory(_)
            | Error::Input(_)
            | Error::Output(_)
            | Error::NoMatch
            | Error::Agent(_)
            | Error::Child(_)
            | Error::BadModel(_)
            | Error::UnknownProvider { .. } => 1,
            Error::Api { category, .. } => category.exit_code(),
            Error::Connection(_) | Error::KeyCommand(_) | Error::ToolServer(_) => 3,
            Error::Budget { .. } | Error::PromptOverBudget { .. } => 4,
            Error::Busy(_) => 5,
            Error::Conflict(_) => 6,
            Error::Unresolved(_) => 7,
            Error::Caused(c) => c.reported.exit_code(),
            Error::InvalidAgentName(_)
            | Error::AgentNotFound { .. }
            | Error::AgentParse { .. }
            | Error::AgentInvalid(_)
            | Error::MissingKey { .. }
            | Error::Config(_) => 2,
        }
    }

    /// True when nothing is to be said about it: a search that found
    /// nothing, which its exit code alone reports.
    pub fn is_quiet(&self) -> bool {
        match self {
            Error::Caused(c) => c.reported.is_quiet(),
            e => matches!(e, Error::NoMatch),
        }
    }

    /// True when the error is our reader going away (`axe-mem-load x | head`),
    /// which ends the command quietly and successfully, as in ripgrep.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Error::Caused(c) => c.reported.is_broken_pipe(),
            Error::Output(e) => e.kind() == io::ErrorKind::BrokenPipe,
            _ => false,
        }
    }

    /// The variant this error is reported as: itself, or for a crate's
    /// typed error ([`Error::Caused`]) the variant it carries. What a
    /// caller matches on to tell a conflict or a busy lock, whichever
    /// crate typed it.
    pub fn as_reported(&self) -> &Error {
        match self {
            Error::Caused(c) => &c.reported,
            e => e,
        }
    }

    /// `error`, a crate's typed error, reported as `reported` (its message
    /// and variant): what the crate's `From` impl into [`Error`] makes.
    pub fn caused(reported: Error, error: impl std::error::Error + Send + Sync + 'static) -> Error {
        // One level: the variant reported is never itself a wrapper.
        let reported = match reported {
            Error::Caused(c) => c.reported,
            other => other,
        };
        Error::Caused(Box::new(Caused {
            reported,
            error: Box::new(error),
        }))
    }

    /// Standard input could not be read.
    pub fn stdin(err: &io::Error) -> Error {
        Error::Input(format!(
            "failed to read standard input: {}",
            describe_io(err)
        ))
    }

    /// A memory I/O error in Go's `<context>: <op> <path>: <reason>` shape.
    pub fn memory(context: &str, op: &str, path: &Path, err: &io::Error) -> Error {
        let message = io_message(context, op, path, err);
        match err.get_ref().is_some_and(|e| e.is::<Busy>()) {
            true => Error::Busy(message),
            false => Error::Memory(message),
        }
    }
}

/// The message of [`Error::memory`]: Go's `<context>: <op> <path>:
/// <reason>`, the context and its colon left out when empty.
pub fn io_message(context: &str, op: &str, path: &Path, err: &io::Error) -> String {
    let prefix = if context.is_empty() {
        String::new()
    } else {
        format!("{context}: ")
    };
    format!("{prefix}{op} {}: {}", path.display(), describe_io(err))
}

/// `AgentNotFound`'s hint: ` (did you mean "<near>"?)`, when there is one.
fn did_you_mean(near: &Option<String>) -> String {
    near.as_ref()
        .map(|near| format!(" (did you mean \"{near}\"?)"))
        .unwrap_or_default()
}

/// The reason of an I/O error the way Go prints it: `permission denied`,
/// not `Permission denied (os error 13)`, so messages match the Go `axe`.
pub fn describe_io(err: &io::Error) -> String {
    // Wrappers (tempfile adds the temp file's path) hide the OS reason;
    // when it cannot be dug out, its kind says the same.
    let err = os_cause(err).unwrap_or(err);
    let text = if err.raw_os_error().is_none()
        && err.get_ref().is_some()
        && err.kind() != io::ErrorKind::Other
    {
        err.kind().to_string()
    } else {
        err.to_string()
    };
    let text = match text.rfind(" (os error ") {
        Some(i) if err.raw_os_error().is_some() => &text[..i],
        _ => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The innermost OS error in `err`'s chain, if it is not `err` itself.
fn os_cause(err: &io::Error) -> Option<&io::Error> {
    if err.raw_os_error().is_some() {
        return None;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = err.get_ref().map(|e| e as _);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && io.raw_os_error().is_some()
        {
            return Some(io);
        }
        cause = e.source();
    }
    None
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_go_scheme() {
        assert_eq!(Error::Usage("x".into()).exit_code(), 1);
        assert_eq!(Error::Memory("x".into()).exit_code(), 1);
        assert_eq!(
            Error::AgentNotFound {
                name: "x".into(),
                near: None
            }
            .exit_code(),
            2
        );
        assert_eq!(Error::AgentInvalid("x".into()).exit_code(), 2);
        assert_eq!(Error::Config("x".into()).exit_code(), 2);
    }

    #[test]
    fn every_exit_code_is_in_the_table() {
        let errors = [
            Error::Usage(String::new()),
            Error::InvalidAgentName(String::new()),
            Error::AgentNotFound {
                name: String::new(),
                near: None,
            },
            Error::AgentParse {
                name: String::new(),
                message: String::new(),
            },
            Error::AgentInvalid(String::new()),
            Error::Config(String::new()),
            Error::Memory(String::new()),
            Error::Input(String::new()),
            Error::Agent(String::new()),
            Error::BadModel(String::new()),
            Error::UnknownProvider {
                name: String::new(),
                supported: String::new(),
            },
            Error::MissingKey {
                provider: String::new(),
                env: String::new(),
                file: String::new(),
            },
            Error::KeyCommand(String::new()),
            Error::Connection(String::new()),
            Error::ToolServer(String::new()),
            Error::Child(String::new()),
            Error::Output(io::Error::other("x")),
            Error::Conflict(String::new()),
            Error::NoMatch,
            Error::Busy(String::new()),
            Error::Budget { used: 0, max: 0 },
            Error::PromptOverBudget {
                estimate: 0,
                max: 0,
            },
            Error::Unresolved(String::new()),
            Error::caused(Error::Busy(String::new()), io::Error::other("x")),
        ];
        for e in &errors {
            // A match with no wildcard: a new variant must be listed above.
            match e {
                Error::Usage(_)
                | Error::InvalidAgentName(_)
                | Error::AgentNotFound { .. }
                | Error::AgentParse { .. }
                | Error::AgentInvalid(_)
                | Error::Config(_)
                | Error::Memory(_)
                | Error::Input(_)
                | Error::Api { .. }
                | Error::Agent(_)
                | Error::BadModel(_)
                | Error::UnknownProvider { .. }
                | Error::MissingKey { .. }
                | Error::KeyCommand(_)
                | Error::Connection(_)
                | Error::ToolServer(_)
                | Error::Child(_)
                | Error::Output(_)
                | Error::Conflict(_)
                | Error::NoMatch
                | Error::Busy(_)
                | Error::Budget { .. }
                | Error::PromptOverBudget { .. }
                | Error::Unresolved(_)
                | Error::Caused(_) => {}
            }
            assert!(EXIT_CODES.iter().any(|c| c.code == e.exit_code()), "{e:?}");
        }
        for category in [Category::Auth, Category::BadRequest, Category::Server] {
            let code = category.exit_code();
            assert!(EXIT_CODES.iter().any(|c| c.code == code));
        }
        for (i, c) in EXIT_CODES.iter().enumerate() {
            assert_eq!(usize::from(c.code), i, "in order, none missing");
        }
    }

    #[test]
    fn io_reasons_read_like_go() {
        let e = io::Error::from_raw_os_error(13);
        assert_eq!(describe_io(&e), "permission denied");
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(describe_io(&e), "no such file or directory");
        let e = io::Error::other("Custom thing (os error 5)");
        assert_eq!(describe_io(&e), "custom thing (os error 5)");
        let wrapped = io::Error::new(
            io::ErrorKind::PermissionDenied,
            io::Error::from_raw_os_error(13),
        );
        assert_eq!(describe_io(&wrapped), "permission denied");
    }

    #[test]
    fn a_caused_error_is_shown_and_exits_as_reported_and_keeps_its_cause() {
        use std::error::Error as _;
        let cause = io::Error::from_raw_os_error(13);
        let e = Error::caused(Error::Busy("held".into()), cause);
        assert_eq!((e.to_string(), e.exit_code()), ("held".to_owned(), 5));
        let source = e.source().and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(source.and_then(io::Error::raw_os_error), Some(13));
        // Wrapped again, still one level, as its crate reported it.
        let again = Error::caused(e, io::Error::other("outer"));
        let Error::Caused(c) = &again else {
            panic!("{again:?}")
        };
        assert!(matches!(c.reported, Error::Busy(_)), "{again:?}");
        let pipe = Error::Output(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(Error::caused(pipe, io::Error::other("x")).is_broken_pipe());
        assert!(Error::caused(Error::NoMatch, io::Error::other("x")).is_quiet());
    }

    #[test]
    fn broken_pipe_is_recognised_only_on_output() {
        let e = Error::Output(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(e.is_broken_pipe());
        assert!(!Error::Memory("broken pipe".into()).is_broken_pipe());
    }
}
