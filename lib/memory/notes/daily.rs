//! `remember`: one timestamped entry appended to today's daily log, in
//! agnx's format:
//!
//! ```text
//! # 2026-11-22
//!
//! ## 14:05
//!
//! Deploys use blue-green switching.
//! ```
//!
//! A line of the text that is spaces and then `## ` is stored with one
//! space more (as the run log stores its results), so no text can forge
//! an entry header; markdown renders it the same, and it is shown as
//! stored.

use std::path::PathBuf;

use time::OffsetDateTime;

use super::workspace::{Workspace, day};
use crate::append::write_whole;
use crate::error::MemoryError;
use crate::lock::{Wait, create_locked};
use crate::log::escape_headers;
use crate::secrets::{Kind, Secrets};
use axe_base::beneath::Open;
use axe_base::error::Result;

/// The characters of `content` as an entry holds them and the limit
/// counts them: without the white space it ends with.
pub fn entry_chars(content: &[u8]) -> usize {
    String::from_utf8_lossy(content.trim_ascii_end())
        .chars()
        .count()
}

/// What a remember wrote.
#[derive(Debug, Clone)]
pub struct Remembered {
    pub path: PathBuf,
    /// The entry's characters, as the limit counts them.
    pub chars: usize,
    /// The secrets taken out of it.
    pub redacted: Vec<Kind>,
}

/// Appends `content` to `agent`'s log of the day of `at` (UTC), creating
/// the file with its `# <date>` line. The entry is one write under the
/// file's exclusive lock, cut off again if it cannot finish. Content over
/// `limit` characters (once `secrets` took out what it finds) is refused,
/// not cut.
pub fn remember(
    ws: &Workspace,
    agent: &str,
    content: &[u8],
    at: OffsetDateTime,
    limit: usize,
    secrets: &Secrets,
    wait: Wait,
) -> Result<Remembered> {
    let redacted = secrets.redact(content);
    // No line git takes for a conflict marker (see `crate::markers`).
    let content = crate::markers::neutralise(&redacted.text);
    let content = content.trim_ascii_end();
    if content.trim_ascii().is_empty() {
        return Err(MemoryError::EmptyEntry.into());
    }
    let chars = entry_chars(content);
    if chars > limit {
        return Err(MemoryError::EntryTooLong { chars, limit }.into());
    }
    let at = at.to_offset(time::UtcOffset::UTC);
    let path = ws.daily(agent, at.date());
    let fail = |op: &'static str, e: std::io::Error| {
        crate::error::io_error("failed to remember", op, &path, e)
    };
    let (dir, name) = ws
        .file(&path, true)?
        .ok_or_else(|| fail("open", std::io::ErrorKind::NotFound.into()))?;
    let (file, created) =
        create_locked(&dir, &name, Open::Append, wait).map_err(|e| fail("open", e))?;
    let mut entry = Vec::new();
    if file.metadata().map_err(|e| fail("stat", e))?.len() == 0 {
        entry.extend_from_slice(format!("# {}\n", day(at.date())).as_bytes());
    }
    entry.extend_from_slice(format!("\n## {:02}:{:02}\n\n", at.hour(), at.minute()).as_bytes());
    // A `## HH:MM` line in the text would start an entry of its own, which
    // a sync merge would then place another machine's entries before:
    // escaped as the run log escapes its results (one space more, the same
    // markdown), every `## ` line, as headings are no entries either.
    escape_headers(content, &mut entry);
    entry.push(b'\n');
    if let Err(e) = write_whole(&dir, &name, &file, &entry) {
        if created {
            // Still holding the lock: nobody wrote to it but us.
            let _ = dir.remove(&name);
        }
        return Err(fail("write", e));
    }
    // Written in place: the index's journal says so to the next search.
    super::journal::note_written(ws, &path);
    Ok(Remembered {
        path,
        chars,
        redacted: redacted.kinds,
    })
}
