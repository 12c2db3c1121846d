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
//!
//! Every directory is listed and every file read through handles walked
//! from the workdir's ([`axe_base::beneath`]), never through a path looked up
//! again: a directory swapped for a symlink out of the workdir between
//! the walk and the read makes the read fail, never leads it outside. What
//! is read is what was checked: the regular file, its size and its bytes
//! are those of the one handle opened (without blocking, so a FIFO cannot
//! hang the run).
//!
//! A checked-out tree can be anything, so the walk is bounded: no
//! directory deeper than [`MAX_DEPTH`] below the workdir is walked, no
//! more than [`MAX_FILES`] matches are taken nor [`MAX_LISTED`] names
//! looked at, and the files together hold at most [`TOTAL_LIMIT`] bytes.
//! What a bound left out is said ([`Resolved::left_out`]), for
//! `--dry-run` and `-v`; so is every other file that changes or goes
//! without a word otherwise: a pattern that matched nothing, a name that
//! is not there, a binary or unreadable file (left out, with why), and a
//! file sent with U+FFFD for bytes that were not UTF-8
//! ([`Resolved::converted`]). A directory a pattern matches is no file
//! and is not said: `*` matches every directory of the workdir.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use rustix::fs::FileType;

use crate::glob::{Pattern, Segment};
use axe_base::beneath::Dir;
use axe_base::error::{Error, Result};
use axe_base::read;

/// How many directories below the workdir a walk goes: far more than a
/// source tree nests, few enough that a tree made to be deep ends soon.
pub const MAX_DEPTH: usize = 32;

/// The most files the globs match: far more than a prompt can hold.
pub const MAX_FILES: usize = 10_000;

/// The most names a walk looks at (`**` over a tree of a million files).
pub const MAX_LISTED: usize = 1_000_000;

/// The most bytes of all context files together: what one may hold, as
/// no prompt holds more.
pub const TOTAL_LIMIT: u64 = read::PROMPT_LIMIT;

/// One context file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Relative to the workdir, with `/` between segments.
    pub path: String,
    pub content: String,
}

/// The files the globs matched, what was left out, and what was changed.
#[derive(Debug, Default)]
pub struct Resolved {
    pub files: Vec<ContextFile>,
    /// One line for each pattern, file or bound that left something out,
    /// naming it and why: `*.md: matched no file`, `a/b: deeper than 32
    /// directories below the workdir, not walked`.
    pub left_out: Vec<String>,
    /// One line for each file sent with U+FFFD in place of bytes that
    /// were not UTF-8.
    pub converted: Vec<String>,
}

/// What a file that was not UTF-8 is said to have become.
const CONVERTED: &str = "not UTF-8, its bad bytes sent as U+FFFD";

/// The files matched by `patterns` inside `workdir`.
pub fn resolve(patterns: &[String], workdir: &Path) -> Result<Resolved> {
    if patterns.is_empty() {
        return Ok(Resolved::default());
    }
    let compiled = patterns
        .iter()
        .map(|p| {
            Pattern::new(p).map_err(|e| {
                Error::caused(
                    Error::Config(format!("invalid glob pattern \"{p}\": {e}")),
                    e,
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let unresolved = |e: std::io::Error| {
        Error::caused(
            Error::Config(format!(
                "failed to resolve workdir {}: {}",
                workdir.display(),
                axe_base::error::describe_io(&e)
            )),
            e,
        )
    };
    let real = fs::canonicalize(workdir).map_err(unresolved)?;
    let root = Dir::root(&real, false)
        .map_err(unresolved)?
        .ok_or_else(|| unresolved(std::io::ErrorKind::NotFound.into()))?;
    let mut walk = Walk {
        root: &root,
        matched: BTreeSet::new(),
        listed: 0,
        hits: 0,
        too_deep: Vec::new(),
        stopped: None,
    };
    let mut left_out = Vec::new();
    for (text, pattern) in patterns.iter().zip(&compiled) {
        if pattern.escapes {
            left_out.push(format!("{text}: outside the workdir"));
            continue;
        }
        let before = walk.hits;
        walk.expand(&root, String::new(), 0, &pattern.segments);
        // Once the walk stopped, what a pattern did not match is the
        // bound's to say.
        if walk.hits == before && walk.stopped.is_none() {
            left_out.push(format!("{text}: matched no file"));
        }
    }
    if let Some(first) = walk.too_deep.first() {
        let more = match walk.too_deep.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        left_out.push(format!(
            "{first}{more}: deeper than {MAX_DEPTH} directories below the workdir, not walked"
        ));
    }
    left_out.extend(walk.stopped.take());
    // Sorted by relative path; each read once.
    let mut files = Vec::new();
    let mut converted = Vec::new();
    let mut total = 0u64;
    let matched: Vec<String> = std::mem::take(&mut walk.matched).into_iter().collect();
    for (i, rel) in matched.iter().enumerate() {
        let content = match read_inside(&root, rel) {
            Ok(Text::Utf8(text)) => text,
            Ok(Text::Converted(text)) => {
                converted.push(format!("{rel}: {CONVERTED}"));
                text
            }
            Err(Skip::Directory) => continue,
            Err(Skip::Because(why)) => {
                left_out.push(format!("{rel}: {why}"));
                continue;
            }
        };
        total += content.len() as u64;
        if total > TOTAL_LIMIT {
            let more = match matched.len() - i - 1 {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            left_out.push(format!(
                "{rel}{more}: past the {} MiB of all context files",
                TOTAL_LIMIT >> 20
            ));
            break;
        }
        files.push(ContextFile {
            path: rel.clone(),
            content,
        });
    }
    Ok(Resolved {
        files,
        left_out,
        converted,
    })
}

/// A walk of the globs from the workdir's handle, within its bounds.
struct Walk<'a> {
    root: &'a Dir,
    /// Relative paths matched so far: files, or names reading sorts out.
    matched: BTreeSet<String>,
    /// Names looked at so far.
    listed: usize,
    /// Matches so far, the same path again included: a pattern that
    /// adds none matched nothing.
    hits: usize,
    /// The directories not walked for their depth.
    too_deep: Vec<String>,
    /// Why the walk stopped before its end, when it did.
    stopped: Option<String>,
}

impl Walk<'_> {
    /// Matches the relative paths under `dir` (which is `rel`, `depth`
    /// below the workdir) against `segments`.
    fn expand(&mut self, dir: &Dir, rel: String, depth: usize, segments: &[Segment]) {
        if self.stopped.is_some() {
            return;
        }
        let Some((first, rest)) = segments.split_first() else {
            self.matched(rel);
            return;
        };
        match first {
            Segment::Literal(name) => self.step(dir, &rel, depth, name, rest),
            Segment::Wild(wild) => {
                for (name, kind) in self.list(dir) {
                    if !wild.matches(&name) {
                        continue;
                    }
                    match (rest.is_empty(), kind) {
                        (true, _) => self.matched(join(&rel, &name)),
                        (false, FileType::Directory | FileType::Symlink) => {
                            self.descend(dir, &rel, depth, &name, rest)
                        }
                        (false, _) => {}
                    }
                }
            }
            Segment::Any => {
                // Zero directories, then one more for each real subdirectory.
                if !rest.is_empty() {
                    self.expand(dir, rel.clone(), depth, rest);
                }
                for (name, kind) in self.list(dir) {
                    if kind == FileType::Directory {
                        self.descend(dir, &rel, depth, &name, segments);
                    } else if rest.is_empty() {
                        self.matched(join(&rel, &name));
                    }
                }
            }
        }
    }

    /// Goes on into `name` in `dir` with the `rest` of the pattern.
    fn step(&mut self, dir: &Dir, rel: &str, depth: usize, name: &str, rest: &[Segment]) {
        match rest.is_empty() {
            true => self.matched(join(rel, name)),
            false => self.descend(dir, rel, depth, name, rest),
        }
    }

    /// Walks the directory `name` in `dir` with `segments`: a symlink is
    /// followed inside the workdir only, and a name that is no directory
    /// matches nothing below it.
    fn descend(&mut self, dir: &Dir, rel: &str, depth: usize, name: &str, segments: &[Segment]) {
        let rel = join(rel, name);
        if depth >= MAX_DEPTH {
            self.too_deep.push(rel);
            return;
        }
        if let Ok(Some(sub)) = dir.dir(Path::new(name), false) {
            self.expand(&sub, rel, depth + 1, segments);
        }
    }

    /// The entries of `dir` by name, as they are (a symlink is a
    /// symlink); names that are not UTF-8 cannot match a pattern written
    /// in TOML and are left out.
    fn list(&mut self, dir: &Dir) -> Vec<(String, FileType)> {
        let Ok(entries) = dir.list() else {
            return Vec::new();
        };
        self.listed += entries.len();
        if self.listed > MAX_LISTED {
            self.stop(format!(
                "{}: past {MAX_LISTED} names looked at, the walk stopped",
                self.shown(dir)
            ));
            return Vec::new();
        }
        let mut entries: Vec<(String, FileType)> = entries
            .into_iter()
            .filter_map(|(name, kind)| Some((name.into_string().ok()?, kind)))
            .collect();
        // In name order, so what a bound leaves out is the same each time.
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        entries
    }

    fn matched(&mut self, rel: String) {
        if self.stopped.is_some() {
            return;
        }
        self.hits += 1;
        if self.matched.contains(&rel) {
            return;
        }
        if self.matched.len() == MAX_FILES {
            self.stop(format!(
                "{rel} and the files after it: past {MAX_FILES} files"
            ));
            return;
        }
        self.matched.insert(rel);
    }

    fn stop(&mut self, why: String) {
        self.stopped.get_or_insert(why);
    }

    /// `dir` relative to the workdir, for a message.
    fn shown(&self, dir: &Dir) -> String {
        let (Some(at), Some(root)) = (dir.real_path(), self.root.real_path()) else {
            return ".".to_owned();
        };
        match at.strip_prefix(&root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => ".".to_owned(),
        }
    }
}

fn join(rel: &str, name: &str) -> String {
    match rel.is_empty() {
        true => name.to_owned(),
        false => format!("{rel}/{name}"),
    }
}

/// A context file's text.
enum Text {
    Utf8(String),
    /// With U+FFFD in place of bytes that were not UTF-8.
    Converted(String),
}

/// Why a match is not sent.
enum Skip {
    /// Not a file: not worth a line.
    Directory,
    Because(String),
}

/// The text of `rel` when it is a regular, non-binary file of at most
/// [`read::PROMPT_LIMIT`] inside `root`: walked from its handle, a
/// symlink resolved inside it, and checked on the handle that is read.
fn read_inside(root: &Dir, rel: &str) -> std::result::Result<Text, Skip> {
    let failed = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::IsADirectory => Skip::Directory,
        _ => Skip::Because(axe_base::error::describe_io(&e)),
    };
    let gone = || Skip::Because("no such file".to_owned());
    let (dir, name) = root
        .file(Path::new(rel), false)
        .map_err(failed)?
        .ok_or_else(gone)?;
    let mut bytes = Vec::new();
    if !dir
        .read_into(OsStr::new(&name), &mut bytes, read::PROMPT_LIMIT)
        .map_err(failed)?
    {
        return Err(gone());
    }
    if is_binary(&bytes) {
        return Err(Skip::Because(
            "binary (a NUL byte in its first 512 bytes)".to_owned(),
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(s) => Text::Utf8(s),
        Err(e) => Text::Converted(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    })
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(512)].contains(&0)
}
