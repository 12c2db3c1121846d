//! Context files: an agent's `files` globs resolved inside its workdir.
//!
//! Rules (the Go `axe`'s, with containment made strict): matches are
//! de-duplicated by relative path and sorted by it (forward slashes); a
//! match is skipped when it is not a readable regular file, when it is
//! binary (a NUL byte in the first 512 bytes), when it is larger than
//! [`read::PROMPT_LIMIT`] (more than a model takes), or when it resolves
//! outside the workdir, be it through a symlinked file or a symlinked
//! directory.
//! `**` walks real directories only, so a symlink loop cannot trap it.
//! Text that is not UTF-8 is kept with U+FFFD in place of bad bytes, as
//! Go's JSON encoding sent it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::glob::{Pattern, Segment};
use crate::read;

/// One context file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Relative to the workdir, with `/` between segments.
    pub path: String,
    pub content: String,
}

/// The files matched by `patterns` inside `workdir`.
pub fn resolve(patterns: &[String], workdir: &Path) -> Result<Vec<ContextFile>> {
    if patterns.is_empty() {
        return Ok(Vec::new());
    }
    let compiled = patterns
        .iter()
        .map(|p| {
            Pattern::new(p).map_err(|e| Error::Config(format!("invalid glob pattern \"{p}\": {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let root = fs::canonicalize(workdir).map_err(|e| {
        Error::Config(format!(
            "failed to resolve workdir {}: {}",
            workdir.display(),
            crate::error::describe_io(&e)
        ))
    })?;
    let mut candidates = Vec::new();
    for pattern in compiled.iter().filter(|p| !p.escapes) {
        expand(&root, String::new(), &pattern.segments, &mut candidates);
    }
    // Sorted and de-duplicated by relative path; the first reading wins.
    let mut files = BTreeMap::new();
    for rel in candidates {
        if files.contains_key(&rel) {
            continue;
        }
        if let Some(content) = read_inside(&root, &root.join(&rel)) {
            files.insert(rel, content);
        }
    }
    Ok(files
        .into_iter()
        .map(|(path, content)| ContextFile { path, content })
        .collect())
}

/// Pushes the relative paths under `dir` (which is `rel`) that match
/// `segments`. Candidates may be directories or missing; reading sorts
/// them out.
fn expand(dir: &Path, rel: String, segments: &[Segment], out: &mut Vec<String>) {
    let Some((first, rest)) = segments.split_first() else {
        out.push(rel);
        return;
    };
    let join = |name: &str| {
        if rel.is_empty() {
            name.to_owned()
        } else {
            format!("{rel}/{name}")
        }
    };
    match first {
        Segment::Literal(name) => step(dir, join(name), name, rest, out),
        Segment::Wild(wild) => {
            for (name, _) in list(dir) {
                if wild.matches(&name) {
                    step(dir, join(&name), &name, rest, out);
                }
            }
        }
        Segment::Any => {
            // Zero directories, then one more for each real subdirectory.
            if !rest.is_empty() {
                expand(dir, rel.clone(), rest, out);
            }
            for (name, is_dir) in list(dir) {
                if is_dir {
                    expand(&dir.join(&name), join(&name), segments, out);
                } else if rest.is_empty() {
                    out.push(join(&name));
                }
            }
        }
    }
}

/// Goes on into `dir/name` with the `rest` of the pattern.
fn step(dir: &Path, rel: String, name: &str, rest: &[Segment], out: &mut Vec<String>) {
    if rest.is_empty() {
        out.push(rel);
    } else {
        let path = dir.join(name);
        if path.is_dir() {
            expand(&path, rel, rest, out);
        }
    }
}

/// The entries of `dir` as (name, is a real directory); names that are
/// not UTF-8 cannot match a pattern written in TOML and are left out.
fn list(dir: &Path) -> Vec<(String, bool)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            Some((e.file_name().into_string().ok()?, is_dir))
        })
        .collect()
}

/// The text of `path` when it is a regular, non-binary file of at most
/// [`read::PROMPT_LIMIT`] that resolves inside `root`.
fn read_inside(root: &Path, path: &Path) -> Option<String> {
    let real: PathBuf = fs::canonicalize(path).ok()?;
    if !real.starts_with(root) {
        return None;
    }
    // `real` has no symlinks: one put at its end since is not followed
    // out of the workdir.
    let bytes = read::bytes(&real, read::PROMPT_LIMIT, read::Links::Refuse).ok()?;
    if is_binary(&bytes) {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(512)].contains(&0)
}
