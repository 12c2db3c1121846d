//! Standard input as the commands read it.
//!
//! `axe-run` and `axe-llm` read theirs under the run's deadline and within
//! a size limit: under cron or CI a pipe may never close, and a pipe may
//! hold far more than any prompt. A thread of its own reads it, so the
//! command waits only as long as its deadline; should that pass, the
//! command ends and the thread with it.

use std::io::Read;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Instant;

use crate::error::{Category, Error, Result};
use crate::llm::Deadline;

/// The most of standard input a prompt takes: what a prompt file may
/// hold ([`crate::read::PROMPT_LIMIT`], 16 MiB), more than the largest
/// context window.
pub const PROMPT_LIMIT: u64 = crate::read::PROMPT_LIMIT;

/// All of standard input, as text (bytes that are not UTF-8 become U+FFFD).
pub fn read_stdin() -> Result<String> {
    let bytes = read_stdin_bytes()?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Standard input when it is piped, nothing when it is a terminal; read
/// as [`read_until`] reads it, at most [`PROMPT_LIMIT`].
pub fn piped_stdin(deadline: Deadline) -> Result<String> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Ok(String::new());
    }
    let bytes = read_until(deadline, PROMPT_LIMIT, "standard input")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// All of standard input, ended by `deadline` (a timeout error, exit 3)
/// and by `limit` (more is an input error, exit 1, as soon as it is
/// seen). `what` names the input in those errors.
pub fn read_until(deadline: Deadline, limit: u64, what: &str) -> Result<Vec<u8>> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes);
        let _ = tx.send(read.map(|_| bytes));
    });
    let left = deadline.at.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(Ok(bytes)) if bytes.len() as u64 > limit => Err(Error::Input(format!(
            "failed to read {what}: over the limit of {} MiB",
            limit >> 20
        ))),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => Err(Error::Input(format!(
            "failed to read {what}: {}",
            crate::error::describe_io(&e)
        ))),
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

/// All of standard input as bytes, kept exactly (notes that are not UTF-8
/// survive).
pub fn read_stdin_bytes() -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| Error::stdin(&e))?;
    Ok(bytes)
}
