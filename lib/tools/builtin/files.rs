//! The file tools: `list_directory`, `read_file`, `write_file`,
//! `edit_file`, with the Go `axe`'s parameters, results and messages.
//! Every path goes through [`super::paths`]; a write replaces the file
//! whole (a temp file renamed over it), so a reader never sees half.

use crate::error::ToolError;
use std::ffi::OsStr;
use std::io::{Read, Write};

use super::act::{Act, artifact_param, text_schema};
use super::paths::{self, Base};
use crate::args::Args;
use crate::{Reply, Tool};
use axe_base::beneath::{self, Dir, Open};
use axe_memory::lock::{Mode, Wait};

/// The largest file `read_file` and `edit_file` take.
const READ_LIMIT: u64 = 10 << 20;
/// Bytes looked at for a NUL, as Go's check.
const BINARY_PEEK: usize = 512;

crate::args! {
    pub struct ListDirectory {
        path: String = "Relative path to the directory to list. Use \".\" to list the working directory root.",
        artifact: Option<bool> = artifact_param("list"),
    }
}

crate::args! {
    pub struct ReadFile {
        path: String = "Relative path to the file to read.",
        offset: Option<i64> = "1-indexed line number to start reading from. Defaults to 1.",
        limit: Option<i64> = "Maximum number of lines to return. Defaults to 2000.",
        artifact: Option<bool> = artifact_param("read from"),
    }
}

crate::args! {
    pub struct WriteFile {
        path: String = "Relative path to the file to write.",
        content: Option<String> = "The content to write to the file.",
        artifact: Option<bool> = artifact_param("write to"),
    }
}

crate::args! {
    pub struct EditFile {
        path: String = "Relative path to the file to edit.",
        old_string: String = "The exact text to find in the file.",
        new_string: String = "The text to replace old_string with.",
        replace_all: Option<bool> = "When true, all occurrences are replaced. Defaults to false (single replacement).",
        artifact: Option<bool> = artifact_param("edit in"),
    }
}

pub const LIST_DIRECTORY: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::LIST_DIRECTORY,
    description: "List the contents of a directory relative to the working directory. Returns one entry per line; subdirectories are suffixed with /.",
    offered: |act| act.gives(LIST_DIRECTORY.name),
    schema: ListDirectory::schema,
    run: |act, args| list_directory(act, ListDirectory::parse(args)?),
    output: text_schema,
    reads: true,
    workdir: true,
};

pub const READ_FILE: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::READ_FILE,
    description: "Read the contents of a file relative to the working directory. Returns line-numbered output in the format 'N: content' for each line.",
    offered: |act| act.gives(READ_FILE.name),
    schema: ReadFile::schema,
    run: |act, args| read_file(act, ReadFile::parse(args)?),
    output: text_schema,
    reads: true,
    workdir: true,
};

pub const WRITE_FILE: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::WRITE_FILE,
    description: "Create or overwrite a file relative to the working directory. Creates parent directories as needed. Overwrites the file if it already exists.",
    offered: |act| act.gives(WRITE_FILE.name),
    schema: WriteFile::schema,
    run: |act, args| write_file(act, WriteFile::parse(args)?),
    output: text_schema,
    reads: false,
    workdir: true,
};

pub const EDIT_FILE: Tool<Act> = Tool {
    name: axe_tool_settings::builtin::EDIT_FILE,
    description: "Find and replace exact text in an existing file relative to the working directory. Supports single replacement (default) and replace-all mode.",
    offered: |act| act.gives(EDIT_FILE.name),
    schema: EditFile::schema,
    run: |act, args| edit_file(act, EditFile::parse(args)?),
    output: text_schema,
    reads: false,
    workdir: true,
};

fn list_directory(act: &Act, args: ListDirectory) -> Result<Reply, ToolError> {
    let base = paths::base(act, args.artifact, false)?;
    let rel = args.path.as_str();
    let dir = paths::dir(&base, rel)?;
    let mut entries = dir.list().map_err(|e| paths::failed(&base, rel, e))?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let lines: Vec<String> = entries
        .into_iter()
        .map(|(name, kind)| {
            let slash = if kind == rustix::fs::FileType::Directory {
                "/"
            } else {
                ""
            };
            format!("{}{slash}", name.to_string_lossy())
        })
        .collect();
    Ok(Reply::text(lines.join("\n")))
}

/// The bytes of the file `rel` in `base`.
fn read_whole(base: &Base, rel: &str) -> Result<Vec<u8>, ToolError> {
    let (dir, name) = paths::file(base, rel, false)?;
    let mut buf = Vec::new();
    match dir.read_into(&name, &mut buf, READ_LIMIT) {
        Ok(true) => Ok(buf),
        Ok(false) => Err(missing(rel).into()),
        Err(e) => Err(unread(base, rel, e)),
    }
}

fn missing(rel: &str) -> String {
    format!("open {rel}: no such file or directory")
}

/// The message for a file that could not be opened or read.
fn unread(base: &Base, rel: &str, err: std::io::Error) -> ToolError {
    if err.kind() == std::io::ErrorKind::IsADirectory {
        return ToolError::caused("path is a directory, not a file", err);
    }
    // Swapped for a symlink since it was resolved.
    if beneath::is_link(&err) {
        return ToolError::caused(format!("path escapes {}", base.label), err);
    }
    paths::failed(base, rel, err)
}

fn read_file(act: &Act, args: ReadFile) -> Result<Reply, ToolError> {
    let base = paths::base(act, args.artifact, false)?;
    let rel = args.path.as_str();
    let content = read_whole(&base, rel)?;
    if content[..content.len().min(BINARY_PEEK)].contains(&0) {
        return Err("binary file detected".into());
    }
    // As given, negative included: the messages for bad values are Go's.
    let offset = args.offset.unwrap_or(1);
    if offset < 1 {
        return Err("offset must be >= 1".into());
    }
    let limit = args.limit.unwrap_or(2000);
    if limit < 1 {
        return Err("limit must be >= 1".into());
    }
    let (offset, limit) = (offset as usize, limit as usize);
    if content.is_empty() && offset == 1 {
        return Ok(Reply::text(String::new()));
    }
    let content = String::from_utf8_lossy(&content);
    // Go's split: a last newline ends the last line, it does not start
    // another.
    let lines: Vec<&str> = match content.is_empty() {
        true => Vec::new(),
        false => content
            .strip_suffix('\n')
            .unwrap_or(&content)
            .split('\n')
            .collect(),
    };
    if offset > lines.len() {
        return Err(format!(
            "offset {offset} exceeds file length of {} lines",
            lines.len()
        )
        .into());
    }
    let shown: Vec<String> = lines
        .iter()
        .enumerate()
        .skip(offset - 1)
        .take(limit)
        .map(|(i, line)| format!("{}: {line}", i + 1))
        .collect();
    Ok(Reply::text(shown.join("\n")))
}

fn write_file(act: &Act, args: WriteFile) -> Result<Reply, ToolError> {
    let base = paths::base(act, args.artifact, act.default_write)?;
    let rel = args.path.as_str();
    let content = args.content.as_deref().unwrap_or_default();
    let (dir, name) = paths::file(&base, rel, true)?;
    replace(&dir, &name, content.as_bytes(), act.wait())
        .map_err(|e| paths::failed(&base, rel, e))?;
    Ok(Reply::text(done(
        act,
        &base,
        rel,
        content.len(),
        format!("wrote {} bytes to {rel}", content.len()),
    )))
}

/// `message`, marked and recorded when the file is an artifact.
fn done(act: &Act, base: &Base, rel: &str, size: usize, message: String) -> String {
    match (base.artifact, &act.artifacts) {
        (true, Some(artifacts)) => {
            artifacts.record(rel, &act.agent, size as u64);
            format!("{message} (artifact)")
        }
        _ => message,
    }
}

fn edit_file(act: &Act, args: EditFile) -> Result<Reply, ToolError> {
    let base = paths::base(act, args.artifact, false)?;
    let rel = args.path.as_str();
    let (old, new) = (args.old_string.as_str(), args.new_string.as_str());
    if old.is_empty() {
        return Err("old_string is required".into());
    }
    let (dir, name) = paths::file(&base, rel, false)?;
    // Under the file's lock from reading to replacing: another edit of it
    // in the same turn (calls run at once) waits, and then edits what this
    // one wrote instead of having it overwritten.
    let current = locked(&dir, &name, Open::Write, act.wait())
        .map_err(|e| unread(&base, rel, e))?
        .ok_or_else(|| missing(rel))?;
    let mut content = Vec::new();
    (&current)
        .take(READ_LIMIT + 1)
        .read_to_end(&mut content)
        .map_err(|e| unread(&base, rel, e))?;
    if content.len() as u64 > READ_LIMIT {
        return Err(format!("{rel}: larger than the limit of {} MiB", READ_LIMIT >> 20).into());
    }
    let content = String::from_utf8(content).map_err(|e| {
        ToolError::caused(
            "the file is not UTF-8 text; edit_file changes text files",
            e,
        )
    })?;
    let count = content.matches(old).count();
    let all = args.replace_all.unwrap_or(false);
    if count == 0 {
        return Err("old_string not found in file".into());
    }
    if count > 1 && !all {
        return Err(format!(
            "old_string found {count} times; set replace_all to true or provide a more unique string"
        ).into());
    }
    let replaced = if all { count } else { 1 };
    // Worked out before it is made: a short `old_string` replaced all over
    // a large file by a long one would otherwise ask for more memory than
    // there is. No larger than a file these tools read.
    let grown = (new.len().saturating_sub(old.len())).saturating_mul(replaced);
    if content.len().saturating_add(grown) as u64 > READ_LIMIT {
        return Err(format!(
            "the edit would make {rel} larger than the limit of {} MiB",
            READ_LIMIT >> 20
        )
        .into());
    }
    let edited = match all {
        true => content.replace(old, new),
        false => content.replacen(old, new, 1),
    };
    write_over(&current, &dir, &name, edited.as_bytes())
        .map_err(|e| paths::failed(&base, rel, e))?;
    let message = format!("replaced {replaced} occurrence(s) in {rel}");
    Ok(Reply::text(done(act, &base, rel, edited.len(), message)))
}

/// Replaces the file `name` in `dir` with `data` (creating it, 0644, when
/// missing), keeping an existing file's mode.
fn replace(dir: &Dir, name: &OsStr, data: &[u8], wait: Wait) -> std::io::Result<()> {
    let current = locked(dir, name, Open::Update, wait)?
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
    write_over(&current, dir, name, data)
}

/// The file `name` in `dir` opened `how`, exclusively locked, as the
/// memory files are: writers of one file (calls of one turn run at once)
/// take turns, each replacing the file whole, since they share the one
/// temp file name beside it. Waits as `wait` says: no longer than the
/// run's deadline.
fn locked(
    dir: &Dir,
    name: &OsStr,
    how: Open,
    wait: Wait,
) -> std::io::Result<Option<std::fs::File>> {
    axe_memory::lock::open_locked(dir, name, how, Mode::Exclusive, wait)
}

/// Replaces the file `name` in `dir`, whose locked handle is `current`,
/// with `data`.
fn write_over(
    current: &std::fs::File,
    dir: &Dir,
    name: &OsStr,
    data: &[u8],
) -> std::io::Result<()> {
    if !current.metadata()?.is_file() {
        return Err(beneath::not_regular());
    }
    axe_memory::replace::replace(current, dir, name, |file, _| file.write_all(data))
}
