//! `reflect` and `learn`: a notes file replaced whole, under its lock,
//! atomically, with mode and owner kept; with an expected hash, only if
//! nobody changed it since it was read.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;

use super::workspace::Workspace;
use crate::error::{Error, Result};
use crate::memory::append::{create_dirs, set_mode};
use crate::memory::hash::sha256_hex;
use crate::memory::lock::{Mode, open_locked};
use crate::memory::replace::replace;

/// What a rewrite wrote.
#[derive(Debug, Clone)]
pub struct Rewritten {
    /// The SHA-256 of the new content: the next `--if-match`.
    pub sha256: String,
    pub chars: usize,
}

/// Replaces the file at `path` in `ws` (shown as `what`) with `content`.
/// `if_match` is the SHA-256 the file must still have (the empty file's
/// when it did not exist); `limit` caps the content in characters, named
/// `limit_name` in the refusal.
pub fn rewrite(
    ws: &Workspace,
    path: &Path,
    content: &[u8],
    if_match: Option<&str>,
    (limit, limit_name): (usize, &str),
) -> Result<Rewritten> {
    let what = ws.relative(path);
    let chars = String::from_utf8_lossy(content).chars().count();
    if chars > limit {
        return Err(Error::Input(format!(
            "{what} would be {chars} characters, over {limit_name} ({limit}): keep what matters and write it again"
        )));
    }
    let fail = |op: &str, e: std::io::Error| Error::memory("failed to rewrite", op, path, &e);
    if let Some(dir) = path.parent() {
        create_dirs(dir).map_err(|e| fail("mkdir", e))?;
    }
    ws.check_inside(path)?;
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true);
    set_mode(&mut options, 0o644);
    let mut file = open_locked(path, &options, Mode::Exclusive)
        .map_err(|e| fail("open", e))?
        .ok_or_else(|| fail("open", std::io::ErrorKind::NotFound.into()))?;
    if let Some(expected) = if_match {
        let mut current = Vec::new();
        file.read_to_end(&mut current)
            .map_err(|e| fail("read", e))?;
        let now = sha256_hex(&current);
        if !now.eq_ignore_ascii_case(expected.trim()) {
            return Err(Error::Conflict(format!(
                "{what} changed since it was read (its sha256 is now {now}, not {}): read it again, merge, and write again",
                expected.trim()
            )));
        }
    }
    replace(&file, path, |tmp, _| tmp.write_all(content)).map_err(|e| fail("replace", e))?;
    Ok(Rewritten {
        sha256: sha256_hex(content),
        chars,
    })
}
