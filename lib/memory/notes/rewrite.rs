//! `reflect` and `learn`: a notes file replaced whole, under its lock,
//! atomically, with mode and owner kept; with an expected hash, only if
//! nobody changed it since it was read.

use std::io::{Read, Write};
use std::path::Path;

use super::workspace::Workspace;
use crate::error::MemoryError;
use crate::hash::sha256_hex;
use crate::lock::{Wait, create_locked};
use crate::replace::replace;
use crate::secrets::{Kind, Secrets};
use axe_base::beneath::Open;
use axe_base::error::Result;

/// What a rewrite wrote.
#[derive(Debug, Clone)]
pub struct Rewritten {
    /// The SHA-256 of the new content: the next `--if-match`.
    pub sha256: String,
    pub chars: usize,
    /// The secrets taken out of the content.
    pub redacted: Vec<Kind>,
}

/// Replaces the file at `path` in `ws` (shown as `what`) with `content`.
/// `if_match` is the SHA-256 the file must still have (the empty file's
/// when it did not exist); `limit` caps the content in characters, named
/// `limit_name` in the refusal. The content goes through `secrets` first,
/// then keeps its conflict-marker lines one space in
/// ([`crate::markers`]); the hash returned is of what was written.
pub fn rewrite(
    ws: &Workspace,
    path: &Path,
    content: &[u8],
    if_match: Option<&str>,
    (limit, limit_name): (usize, &str),
    secrets: &Secrets,
    wait: Wait,
) -> Result<Rewritten> {
    let redacted = secrets.redact(content);
    let content = crate::markers::neutralise(&redacted.text);
    let content: &[u8] = &content;
    let what = ws.relative(path);
    let chars = String::from_utf8_lossy(content).chars().count();
    if chars > limit {
        return Err(MemoryError::OverLimit {
            what,
            chars,
            limit_name: limit_name.to_string(),
            limit,
        }
        .into());
    }
    let fail = |op: &'static str, e: std::io::Error| {
        crate::error::io_error("failed to rewrite", op, path, e)
    };
    let (dir, name) = ws
        .file(path, true)?
        .ok_or_else(|| fail("open", std::io::ErrorKind::NotFound.into()))?;
    let (mut file, created) =
        create_locked(&dir, &name, Open::Update, wait).map_err(|e| fail("open", e))?;
    let witness = ws.witness();
    let written = (|| {
        let mut current = Vec::new();
        if if_match.is_some() || witness.is_some() {
            file.read_to_end(&mut current)
                .map_err(|e| fail("read", e))?;
        }
        if let Some(expected) = if_match {
            let now = sha256_hex(&current);
            if !now.eq_ignore_ascii_case(expected.trim()) {
                if let Some(w) = witness {
                    w.refused(path, &now);
                }
                return Err(MemoryError::Changed {
                    what: what.clone(),
                    now,
                    expected: expected.trim().to_string(),
                }
                .into());
            }
        }
        // Told under the lock, before the file changes: what it held is
        // what this write replaces, whoever wrote it meanwhile.
        if let Some(w) = witness {
            w.writing(path, (!created).then_some(current.as_slice()), content)?;
        }
        replace(&file, &dir, &name, |tmp, _| tmp.write_all(content)).map_err(|e| {
            if let Some(w) = witness {
                w.not_written(path);
            }
            fail("replace", e)
        })
    })();
    if let Err(e) = written {
        if created {
            // Refused or failed: the file this call made goes again, so
            // nothing shows a new, empty file. We still hold its lock.
            let _ = dir.remove(&name);
        }
        return Err(e);
    }
    // Renamed over: its directory's stamp shows it too, but not within
    // the same tick.
    super::journal::note_written(ws, path);
    Ok(Rewritten {
        sha256: sha256_hex(content),
        chars,
        redacted: redacted.kinds,
    })
}
