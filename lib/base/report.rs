//! Where the libraries' lines go. Nothing below the commands writes to
//! stderr itself: what a run, a tool or a server has to say goes to the
//! [`Report`] its caller gave, so a caller that wants the lines (a test,
//! a process serving another) gets them, and the commands give
//! [`Stderr`], which writes them as [`crate::stderr::note`] always did.

use std::fmt;
use std::sync::Mutex;

use crate::lock::Recover;

/// A sink for one-line notes (warnings, `-v` lines). Shared between the
/// threads of a run's parallel tool calls, so one takes `&self`.
pub trait Report: Send + Sync {
    fn note(&self, line: fmt::Arguments);
}

/// Each line to stderr, escaped, whole ([`crate::stderr::note`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stderr;

impl Report for Stderr {
    fn note(&self, line: fmt::Arguments) {
        crate::stderr::note(line);
    }
}

/// Each line kept, in the order it came.
#[derive(Debug, Default)]
pub struct Collected(Mutex<Vec<String>>);

impl Collected {
    /// The lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().recover().clone()
    }
}

impl Report for Collected {
    fn note(&self, line: fmt::Arguments) {
        self.0.lock().recover().push(line.to_string());
    }
}
