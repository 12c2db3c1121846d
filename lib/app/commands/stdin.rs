//! Standard input as the commands read it.
//!
//! `axe-run` and `axe-llm` read theirs under the run's deadline and within
//! a size limit: under cron or CI a pipe may never close, and a pipe may
//! hold far more than any prompt. A thread of its own reads it, so the
//! command waits only as long as its deadline; should that pass, the
//! command ends and the thread with it.

use std::io::Read;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Instant;

use axe_base::error::{Category, Error, Result};
use axe_cli::Flag;
use axe_llm::Deadline;

/// `-n/--no-stdin`, as `ssh -n`: standard input is not read at all, so a
/// command inside a `while read` loop leaves the loop its lines. `-p ""`
/// cannot say it: a blank prompt is "not given", as in Go.
pub const NO_STDIN: Flag = Flag::switch(
    "no-stdin",
    "Do not read standard input (for a loop that reads it, as `while read`)",
)
.short('n');

/// The most of standard input a prompt takes: what a prompt file may
/// hold ([`axe_base::read::PROMPT_LIMIT`], 16 MiB), more than the largest
/// context window.
pub const PROMPT_LIMIT: u64 = axe_base::read::PROMPT_LIMIT;

/// All of standard input, as text (bytes that are not UTF-8 become U+FFFD).
pub fn read_stdin() -> Result<String> {
    let bytes = read_stdin_bytes()?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Standard input when it is piped, nothing when it is a terminal; read
/// as [`read_until`] reads it, at most [`PROMPT_LIMIT`].
pub fn piped_stdin(deadline: Deadline) -> Result<String> {
    match piped(PROMPT_LIMIT) {
        Some(reading) => reading.text(deadline, "standard input"),
        None => Ok(String::new()),
    }
}

/// Standard input, being read, when it is not a terminal.
pub fn piped(limit: u64) -> Option<Reading> {
    use std::io::IsTerminal;
    (!std::io::stdin().is_terminal()).then(|| Reading::start(limit))
}

/// All of standard input, ended by `deadline` (a timeout error, exit 3)
/// and by `limit` (more is an input error, exit 1, as soon as it is
/// seen). `what` names the input in those errors.
pub fn read_until(deadline: Deadline, limit: u64, what: &str) -> Result<Vec<u8>> {
    Reading::start(limit).bytes(deadline, what)
}

/// Standard input being read by a thread of its own, from when the
/// command knows it needs it, while the command goes on with the rest.
pub struct Reading {
    got: Receiver<std::io::Result<Vec<u8>>>,
    limit: u64,
}

impl Reading {
    /// Starts reading at most `limit` bytes (and one more, to tell).
    pub fn start(limit: u64) -> Reading {
        let (tx, got) = channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = std::io::stdin()
                .lock()
                .take(limit.saturating_add(1))
                .read_to_end(&mut bytes);
            let _ = tx.send(read.map(|_| bytes));
        });
        Reading { got, limit }
    }

    /// What was read, once its end came before `deadline`; input that
    /// ended while the command did something else is there even when the
    /// deadline has passed since.
    pub fn bytes(self, deadline: Deadline, what: &str) -> Result<Vec<u8>> {
        let left = deadline.at.saturating_duration_since(Instant::now());
        match self.got.recv_timeout(left) {
            Ok(Ok(bytes)) => within(bytes, self.limit, what),
            Ok(Err(e)) => Err(Error::caused(
                Error::Input(format!(
                    "failed to read {what}: {}",
                    axe_base::error::describe_io(&e)
                )),
                e,
            )),
            Err(RecvTimeoutError::Timeout) => Err(Error::Api {
                category: Category::Timeout,
                message: format!(
                    "{what} did not end within {}s",
                    deadline.limit.as_secs_f64()
                ),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(Error::Input(format!(
                "failed to read {what}: its reader crashed"
            ))),
        }
    }

    /// [`Reading::bytes`] as text (bytes that are not UTF-8 become U+FFFD).
    pub fn text(self, deadline: Deadline, what: &str) -> Result<String> {
        let bytes = self.bytes(deadline, what)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The prompt words, then standard input after a blank line: the user
/// message of `axe-run` and `axe-llm` alike, so `echo FILE | axe-llm
/// "summarize this"` sends both, as `llm` does. Either may be missing;
/// blank standard input counts as none, as it does for Go's user message.
pub fn words_then(words: Option<&str>, stdin: &str) -> String {
    match (words, stdin.trim().is_empty()) {
        (None, _) => stdin.to_owned(),
        (Some(words), true) => words.to_owned(),
        (Some(words), false) => format!("{words}\n\n{stdin}"),
    }
}

/// The most of standard input a memory tool takes (`axe-notes-remember`,
/// `axe-notes-reflect`, `axe-notes-learn`, `axe-state-ingest`): what a
/// note or a state may hold when read back (64 MiB), so a pipe of
/// endless output is refused once it passes that, not held in memory.
/// These tools wait for their input's end as `cat` does: they have no
/// deadline.
pub const MEMORY_LIMIT: u64 = axe_memory::notes::READ_LIMIT;

/// All of standard input as bytes, kept exactly (notes that are not UTF-8
/// survive), at most [`MEMORY_LIMIT`] (more is an input error, exit 1, as
/// soon as it is seen).
pub fn read_stdin_bytes() -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MEMORY_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::stdin(&e))?;
    within(bytes, MEMORY_LIMIT, "standard input")
}

/// `bytes`, read with one byte past `limit` allowed so as to tell: more
/// than `limit` is an input error (exit 1) naming `what`.
fn within(bytes: Vec<u8>, limit: u64, what: &str) -> Result<Vec<u8>> {
    match bytes.len() as u64 > limit {
        true => Err(Error::Input(format!(
            "failed to read {what}: over the limit of {} MiB",
            limit >> 20
        ))),
        false => Ok(bytes),
    }
}
