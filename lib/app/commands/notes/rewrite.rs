//! What `axe-notes-reflect` and `axe-notes-learn` share: the new text from
//! standard input, `--if-match`, and the report of what was written.

use std::io::Write;
use std::path::Path;

use super::Written;
use axe_base::error::{Error, Result};
use axe_cli::{Flag, Matches};
use axe_memory::Wait;
use axe_memory::notes::{self, Workspace};
use axe_memory::secrets::{self, Place, Secrets};

pub const IF_MATCH: Flag = Flag::with_value(
    "if-match",
    "SHA256",
    "Write only if the file still has this sha256 (from recall --json or path --json); else exit 6",
);

pub const ALLOW_EMPTY: Flag = Flag::switch(
    "allow-empty",
    "Write even when standard input is empty (else refused: a failed pipeline must not erase memory)",
);

/// Who wrote what, for the report, and what the write does with
/// credentials.
pub struct Who<'a> {
    pub agent: Option<&'a str>,
    pub topic: Option<&'a str>,
    pub secrets: Secrets,
    /// How long the file's lock is waited for (`--wait`).
    pub wait: Wait,
}

/// The flags of a rewrite, read before the agent or standard input is,
/// as cobra parsed flags first: a `--if-match` that is not UTF-8 is the
/// error even when the agent file is broken.
pub struct Flags<'m> {
    pub wait: Wait,
    pub allow_empty: bool,
    pub if_match: Option<&'m str>,
    pub json: bool,
}

impl<'m> Flags<'m> {
    pub fn read(m: &'m Matches, json: &Flag) -> Result<Flags<'m>> {
        Ok(Flags {
            wait: crate::commands::args::wait(m)?,
            allow_empty: m.flag(&ALLOW_EMPTY),
            if_match: m.string(&IF_MATCH)?,
            json: m.flag(json),
        })
    }
}

/// Replaces `path` with standard input, within `limit`, and reports it
/// as every notes write does ([`Written`]).
pub fn from_stdin(
    flags: &Flags,
    out: &mut dyn Write,
    ws: &Workspace,
    path: &Path,
    limit: (usize, &str),
    who: Who,
) -> Result<()> {
    let content = crate::commands::stdin::read_stdin_bytes()?;
    let shown = ws.relative(path);
    // `gen | axe-notes-reflect a` with `gen` failing sends nothing: that
    // must not erase what the agent knows.
    if content.trim_ascii().is_empty() && !flags.allow_empty {
        return Err(Error::Input(format!(
            "standard input is empty: {shown} left as it was (--allow-empty writes it empty)"
        )));
    }
    let done = notes::rewrite(
        ws,
        path,
        &content,
        flags.if_match,
        limit,
        &who.secrets,
        who.wait,
    )?;
    let place = match who.topic {
        Some(_) => Place::Topic,
        None => Place::MemoryFile,
    };
    let written = Written {
        agent: who.agent,
        topic: who.topic,
        path: path.to_string_lossy().into_owned(),
        sha256: Some(done.sha256),
        chars: done.chars,
        redacted: secrets::at(place, &done.redacted),
    };
    written.print(out, ws, path, flags.json)
}
