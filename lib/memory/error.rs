//! What can go wrong with a memory file, typed, with its cause.
//!
//! As `axe_sync::SyncError` (docs/architecture.md, "Errors"): a variant
//! per failure, holding what a caller may act on and the error beneath it
//! ([`std::error::Error::source`]); its `Display` is the one line a user
//! is shown, Go's wording. At the crate's boundary it becomes the
//! toolkit's [`Error`] through [`Error::caused`]: [`MemoryError::reported`]
//! names the variant it is reported as, so [`Error::exit_code`] still
//! decides the exit code alone.

use std::borrow::Cow;
use std::io;
use std::path::PathBuf;

use axe_base::error::{Error, io_message};

/// A failure of a memory kind; see the module's documentation.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A memory file or directory could not be opened, read, written or
    /// locked: `op` on `path`, in Go's `<context>: <op> <path>: <reason>`
    /// shape. A lock whose wait ran out ([`axe_base::error::Busy`] inside
    /// `source`) is reported busy.
    #[error("{}", io_message(.context, .op, .path, .source))]
    Io {
        context: Cow<'static, str>,
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// A state file that is not a state: where, and the reason (serde_json's
    /// error, or the UTF-8 error).
    #[error(
        "state file {} is not a valid state: line {line}, column {column}: {source}",
        .path.display()
    )]
    InvalidState {
        path: PathBuf,
        line: usize,
        column: usize,
        source: InvalidText,
    },
    /// A topic with nothing in it to name a file by.
    #[error("topic \"{topic}\" has no letters or digits to name a file")]
    TopicUnnamed { topic: String },
    /// A topic whose file name would be longer than `max` bytes.
    #[error("topic name is too long: {bytes} bytes once made a file name, over the limit of {max}")]
    TopicTooLong { bytes: usize, max: usize },
    /// A topic, or the file name made of it, holding what looks like a
    /// secret: the kinds found, never the text.
    #[error(
        "the topic's name holds what looks like a secret ({}): a file name is never redacted; name the topic for what it is about; nothing was written",
        .kinds.join(", ")
    )]
    TopicSecret { kinds: Vec<&'static str> },
    /// A note to rewrite whose new text is over its limit.
    #[error(
        "{what} would be {chars} characters, over {limit_name} ({limit}): keep what matters and write it again"
    )]
    OverLimit {
        what: String,
        chars: usize,
        limit_name: String,
        limit: usize,
    },
    /// A daily entry to remember that is empty once redacted.
    #[error("nothing to remember: the text is empty")]
    EmptyEntry,
    /// A daily entry over `max_memory_chars`.
    #[error(
        "the entry is {chars} characters, over the limit of {limit} (max_memory_chars): remember less at a time"
    )]
    EntryTooLong { chars: usize, limit: usize },
    /// A rewrite's `--if-match` that no longer matches the file.
    #[error(
        "{what} changed since it was read (its sha256 is now {now}, not {expected}): read it again, merge, and write again"
    )]
    Changed {
        what: String,
        now: String,
        expected: String,
    },
    /// A path that leads outside the notes workspace `root`.
    #[error(
        "{} leads outside the notes workspace {}",
        .path.display(),
        .root.display()
    )]
    Outside { path: PathBuf, root: PathBuf },
    /// `context.order` lists a kind twice, at these places (from 1).
    #[error("context.order lists \"{kind}\" twice (at {first} and {again})")]
    OrderTwice {
        kind: &'static str,
        first: usize,
        again: usize,
    },
}

/// Why a state file's text is no state: not UTF-8, or not the JSON of one.
#[derive(Debug, thiserror::Error)]
pub enum InvalidText {
    #[error("invalid UTF-8")]
    Utf8(#[source] std::str::Utf8Error),
    #[error("{}", without_position(.0))]
    Json(#[source] serde_json::Error),
}

/// serde_json's message without the position it ends with, which the
/// line says already.
fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&suffix) {
        Some(kept) => kept.to_owned(),
        None => message,
    }
}

impl MemoryError {
    /// `op` on `path` failed with `source`, under `context` (Go's prefix,
    /// empty for none).
    pub fn io(
        context: impl Into<Cow<'static, str>>,
        op: &'static str,
        path: impl Into<PathBuf>,
        source: io::Error,
    ) -> MemoryError {
        MemoryError::Io {
            context: context.into(),
            op,
            path: path.into(),
            source,
        }
    }

    /// The toolkit's error this one is reported as: its message, and
    /// through its variant the exit code. No wildcard: a new failure is
    /// asked for here.
    pub fn reported(&self) -> Error {
        let line = || self.to_string();
        match self {
            MemoryError::Io {
                context,
                op,
                path,
                source,
            } => Error::memory(context, op, path, source),
            MemoryError::InvalidState { .. } => Error::Memory(line()),
            MemoryError::TopicUnnamed { .. }
            | MemoryError::TopicTooLong { .. }
            | MemoryError::TopicSecret { .. }
            | MemoryError::OverLimit { .. }
            | MemoryError::EmptyEntry
            | MemoryError::EntryTooLong { .. }
            | MemoryError::Outside { .. } => Error::Input(line()),
            MemoryError::Changed { .. } => Error::Conflict(line()),
            MemoryError::OrderTwice { .. } => Error::AgentInvalid(line()),
        }
    }
}

impl From<MemoryError> for Error {
    fn from(e: MemoryError) -> Error {
        Error::caused(e.reported(), e)
    }
}

/// [`MemoryError::io`] as the toolkit's error: what the kinds' `map_err`
/// closures make.
pub fn io_error(
    context: impl Into<Cow<'static, str>>,
    op: &'static str,
    path: impl Into<PathBuf>,
    source: io::Error,
) -> Error {
    MemoryError::io(context, op, path, source).into()
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// A real failure (opening a file in a directory that is not there)
    /// keeps its io::Error through source(), and is reported with Go's
    /// line and exit 1; a state file that is no JSON keeps serde_json's.
    #[test]
    fn a_memory_error_keeps_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone/MEMORY.md");
        let io = std::fs::File::open(&path).unwrap_err();
        let e = io_error("failed to open memory file", "open", &path, io);
        assert_eq!(
            e.to_string(),
            format!(
                "failed to open memory file: open {}: no such file or directory",
                path.display()
            )
        );
        assert_eq!(e.exit_code(), 1);
        let typed = e.source().unwrap();
        assert!(typed.is::<MemoryError>());
        let cause = typed.source().and_then(|c| c.downcast_ref::<io::Error>());
        assert_eq!(cause.map(io::Error::kind), Some(io::ErrorKind::NotFound));

        let path = dir.path().join("state.json");
        std::fs::write(&path, "{\"tasks\": [").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let e = crate::state::view(&path, &bytes).unwrap_err();
        assert!(
            e.to_string().contains("is not a valid state: line 1"),
            "{e}"
        );
        let reason = e.source().and_then(|s| s.source()).unwrap();
        assert!(reason.source().unwrap().is::<serde_json::Error>());
    }

    /// A state file whose lock another holder keeps past the wait: busy
    /// (exit 5), with the lock's Busy (how long it waited) inside the
    /// io::Error beneath the typed error.
    #[test]
    fn a_lock_held_past_the_wait_is_busy_with_its_cause() {
        use axe_base::beneath::{Dir, Open};
        use std::ffi::OsStr;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let root = Dir::root(dir.path(), false).unwrap().unwrap();
        std::fs::write(&path, "{}").unwrap();
        let _held = crate::lock::open_locked(
            &root,
            OsStr::new("state.json"),
            Open::Update,
            crate::lock::Mode::Exclusive,
            crate::Wait::default(),
        )
        .unwrap()
        .unwrap();
        let wait = crate::Wait::For(std::time::Duration::ZERO);
        let e = crate::state::read(&path, wait).unwrap_err();
        assert_eq!(e.exit_code(), 5, "{e}");
        let typed = e.source().unwrap();
        assert!(matches!(
            typed.downcast_ref::<MemoryError>(),
            Some(MemoryError::Io { op: "open", .. })
        ));
        let io = typed.source().and_then(|c| c.downcast_ref::<io::Error>());
        let busy = io.and_then(|io| io.get_ref()?.downcast_ref::<axe_base::error::Busy>());
        assert!(busy.is_some(), "{typed:?}");
    }
}
