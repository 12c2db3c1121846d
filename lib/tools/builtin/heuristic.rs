//! The Go `axe`'s check of a command's text, kept for where bubblewrap is
//! missing: it refuses `~` expansion, `..` that climbs out of the workdir
//! and absolute paths outside it (URLs masked first, `/dev/*` allowed, a
//! workdir of `/` allows all). It reads text, not what the shell will do:
//! `cat $(printf '\057etc\057passwd')` passes it, and so does a path
//! built from variables, as the Go project's issue #31 says. It is not a
//! boundary and axe says so.
//!
//! One difference from Go's pattern: a path starts only where a word
//! does, so `cat src/main.go` is not taken for the absolute `/main.go`.

use crate::error::ToolError;
use std::path::{Component, Path, PathBuf};

/// Why `command` is refused in `workdir`, in Go's words; `Ok` when the
/// check finds nothing.
pub fn check(workdir: &Path, command: &str) -> Result<(), ToolError> {
    let workdir = clean(workdir);
    if workdir == Path::new("/") {
        return Ok(());
    }
    if let Some(token) = tilde(command) {
        return Err(format!(
            "command rejected: home directory expansion {token:?} is not allowed; use relative paths from the working directory instead"
        ).into());
    }
    for token in tokens(command) {
        let climbs = token.split('/').any(|part| part == "..");
        if climbs && !clean(&workdir.join(token.trim_start_matches('/'))).starts_with(&workdir) {
            return Err(format!(
                "command rejected: parent traversal in {token:?} escapes the working directory {:?}; use relative paths that stay within the workdir",
                workdir.display().to_string()
            ).into());
        }
    }
    let masked = mask_urls(command);
    for path in absolute_paths(&masked) {
        if path.contains("..") || path.starts_with("/dev/") {
            continue;
        }
        if !clean(Path::new(path)).starts_with(&workdir) {
            return Err(format!(
                "command rejected: absolute path {path:?} is outside the working directory {:?}; use relative paths instead",
                workdir.display().to_string()
            ).into());
        }
    }
    Ok(())
}

/// `~` where the shell expands it: at the start of a word (or after `=`
/// or `:`), followed by `/`, a space or the end.
fn tilde(command: &str) -> Option<&str> {
    let bytes = command.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'~' {
            continue;
        }
        let starts = i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'=' | b':');
        let next = bytes.get(i + 1);
        if starts && matches!(next, None | Some(b'/' | b' ' | b'\t' | b'\n')) {
            let end = if next == Some(&b'/') { i + 2 } else { i + 1 };
            return Some(&command[i..end]);
        }
    }
    None
}

/// The words of `command`, an assignment's value apart from its name.
fn tokens(command: &str) -> impl Iterator<Item = &str> {
    command
        .split_whitespace()
        .flat_map(|word| word.splitn(2, '='))
        .filter(|t| !t.is_empty())
}

/// `command` with every `http://` and `https://` URL blanked out.
fn mask_urls(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    let mut rest = command;
    while let Some(at) = ["http://", "https://"]
        .iter()
        .filter_map(|s| rest.find(s))
        .min()
    {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`'))
            .map_or(rest.len(), |n| at + n);
        out.extend(std::iter::repeat_n('_', end - at));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every run of path characters that starts with `/` where a word starts.
fn absolute_paths(text: &str) -> Vec<&str> {
    let path_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-');
    let mut found = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut prev: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        if c == '/' && !prev.is_some_and(path_char) {
            let end = text[i..]
                .find(|c: char| !path_char(c))
                .map_or(text.len(), |n| i + n);
            found.push(&text[i..end]);
            while chars.peek().is_some_and(|(j, _)| *j < end) {
                chars.next();
            }
            prev = text[..end].chars().next_back();
            continue;
        }
        prev = Some(c);
    }
    found
}

/// `path` with `.` and `..` worked out by its text, as Go's `filepath.Clean`.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_cases() {
        let w = Path::new("/work/dir");
        for bad in [
            "cat /etc/passwd",
            "ls /tmp",
            "echo hello > /tmp/out",
            "FOO=/etc/passwd cmd",
            "cat ../../etc/passwd",
            "cat ~/secrets",
            "ls ~/",
            "FOO=~/bar cmd",
            "echo ok | tee /tmp/out",
            "curl https://example.com/api/v2 > /tmp/out",
            "curl ftp://example.com/etc/passwd",
            "echo \"/etc/passwd\"",
        ] {
            assert!(check(w, bad).is_err(), "{bad}");
        }
        for good in [
            "cat /work/dir/file.txt",
            "ls /work/dir",
            "cat subdir/../file.txt",
            "cat file~backup",
            "cat file..bak",
            "ls | grep foo",
            "dd if=/dev/zero bs=1024 count=1",
            "curl https://api.example.com/api/v2/data",
            "node -e 'fetch(\"https://youtube.com/api/v2/transcripts\")'",
            "cat src/main.go",
        ] {
            assert!(check(w, good).is_ok(), "{good}");
        }
        assert!(check(Path::new("/"), "cat /etc/passwd").is_ok());
        assert_eq!(
            check(w, "cat /etc/passwd").unwrap_err().to_string(),
            "command rejected: absolute path \"/etc/passwd\" is outside the working directory \"/work/dir\"; use relative paths instead"
        );
        // Not a boundary: the shell builds a path the check never sees.
        assert!(check(w, r"cat $(printf '\057etc\057passwd')").is_ok());
    }
}
