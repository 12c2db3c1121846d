//! Reading files we did not write: agent files, `config.toml`, skills,
//! `axe-llm --system-file` and `--request` files; the caps of context files.
//!
//! A path there can name anything, so every such read goes through here:
//! - the open does not block (`O_NONBLOCK`): opening a FIFO would wait
//!   for a writer forever, past every timeout;
//! - the opened handle must be a regular file (`not a regular file`
//!   otherwise): a device such as `/dev/zero` never ends, a FIFO may not;
//! - at most a cap is read, and a larger file is refused naming its size
//!   and the cap, so a log named as a skill by mistake, or `/proc` files
//!   that report no size, cannot fill memory. The caps are far above any
//!   file of that kind a user writes.
//!
//! Where each file may be ("its root") is its caller's rule, not this
//! module's: an agent file is `<config>/agents/<name>.toml` with a checked
//! name (a symlink there is followed: dotfiles managers make them);
//! `config.toml` is a fixed path; a skill is wherever the agent file or
//! `--skill` says (relative to the config directory, or absolute, as in
//! Go: the user names it); `--system-file` and `--request` are named on
//! the command line. Context files are not read here: they must resolve
//! inside the workdir, as a checked-out repository may hold symlinks
//! pointing anywhere, so [`axe::files`] reads them through
//! [`crate::beneath`]'s handles.
//!
//! Memory files (the run log, notes, state) have readers of their own in
//! [`axe_memory`], with locking.

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Agent files and `config.toml`: a few kilobytes each in practice.
pub const TOML_LIMIT: u64 = 1 << 20;

/// A skill, a system-prompt file, one context file: text for a model's
/// prompt. The largest context windows hold about 2 million tokens, some
/// 8 MB of text, so a larger file cannot be meant for one.
pub const PROMPT_LIMIT: u64 = 16 << 20;

/// An `axe-llm --request` file: a whole conversation, JSON-escaped, with
/// tool results; a few times [`PROMPT_LIMIT`].
pub const REQUEST_LIMIT: u64 = 64 << 20;

/// The bytes of the regular file at `path`, at most `limit` of them.
///
/// Errors keep the OS error (a missing file is `NotFound`); a file that is
/// not regular is `not a regular file` (a directory `is a directory`), and
/// one over `limit` is `<size> bytes, over the limit of <N> MiB`.
pub fn bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    let file = options.open(path)?;
    // The handle's own type: the path may have changed since anyone
    // looked at it. O_NONBLOCK means nothing to a regular file's reads.
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::ErrorKind::IsADirectory.into());
    }
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    if meta.len() > limit {
        return Err(too_large(Some(meta.len()), limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // One byte past the limit tells a file that grew, or one that reports
    // no size (`/proc`), from one that fits.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None, limit));
    }
    Ok(bytes)
}

/// [`bytes`] as UTF-8 text; other bytes are an error, as
/// `fs::read_to_string` has it.
pub fn text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(bytes(path, limit)?)
        .map_err(|_| io::Error::other("stream did not contain valid UTF-8"))
}

/// [`bytes`] as text with U+FFFD for bytes that are not UTF-8, as Go's
/// JSON encoding sent them.
pub fn lossy_text(path: &Path, limit: u64) -> io::Result<String> {
    Ok(match String::from_utf8(bytes(path, limit)?) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn too_large(size: Option<u64>, limit: u64) -> io::Error {
    let limit = match limit % (1 << 20) {
        0 if limit > 0 => format!("{} MiB", limit >> 20),
        _ => format!("{limit} bytes"),
    };
    io::Error::other(match size {
        Some(size) => format!("{size} bytes, over the limit of {limit}"),
        None => format!("over the limit of {limit}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::describe_io;

    #[test]
    fn limits_are_whole_mebibytes_so_messages_state_them_exactly() {
        for limit in [TOML_LIMIT, PROMPT_LIMIT, REQUEST_LIMIT] {
            assert_eq!(limit % (1 << 20), 0);
        }
    }

    #[test]
    fn a_file_at_the_limit_reads_and_one_byte_more_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'a'; 1 << 20]).unwrap();
        assert_eq!(bytes(&path, 1 << 20).unwrap().len(), 1 << 20);
        let err = bytes(&path, (1 << 20) - 1).unwrap_err();
        assert_eq!(
            describe_io(&err),
            "1048576 bytes, over the limit of 1048575 bytes"
        );
    }

    #[test]
    fn a_file_that_reports_no_size_is_still_bounded() {
        // /proc files are regular and report a size of 0.
        let path = Path::new("/proc/self/maps");
        if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let err = bytes(path, 0).unwrap_err();
            assert_eq!(describe_io(&err), "over the limit of 0 bytes");
            assert!(!bytes(path, 1 << 20).unwrap().is_empty());
        }
    }

    #[test]
    fn devices_and_directories_are_refused_and_missing_files_stay_not_found() {
        let err = bytes(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(describe_io(&err), "not a regular file");
        let dir = tempfile::tempdir().unwrap();
        let err = bytes(dir.path(), 1 << 20).unwrap_err();
        assert_eq!(describe_io(&err), "is a directory");
        let err = bytes(&dir.path().join("none"), 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(bytes(&link, 1).unwrap(), b"x");
    }

    #[test]
    fn text_is_strict_and_lossy_text_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"a\xffb").unwrap();
        let err = text(&path, 1 << 20).unwrap_err();
        assert_eq!(describe_io(&err), "stream did not contain valid UTF-8");
        assert_eq!(lossy_text(&path, 1 << 20).unwrap(), "a\u{fffd}b");
    }
}
