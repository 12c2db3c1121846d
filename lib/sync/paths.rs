//! Which paths a sync takes from a tree, or from the work tree: none that
//! git itself would refuse to check out.
//!
//! A remote is shared, and `git mktree` writes any name: a tree can hold
//! `.git/config`, `.GIT/hooks/...` or `..`, and git checks none of them on
//! push or fetch unless told to. Written into the work tree, `.git/...`
//! lands in the repository's own `.git` (a `commondir` or a config naming
//! an fsmonitor is code the next `git status` runs). So a path is taken
//! only when git's `verify_path` would take it, with both its NTFS and
//! its HFS+ protections on (git turns the latter on only on macOS; a
//! memory repository has no use for either spelling), and is valid UTF-8
//! (a lossy name would be written under another name than the tree's).
//! Anything else is left out and reported, never an error: one bad entry
//! must not stop every later sync.

use std::collections::BTreeMap;

use serde::Serialize;

/// A path a sync left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    pub path: String,
    pub reason: &'static str,
}

/// Why `rel` (relative to the work tree, `/`-separated) is refused, or
/// `None` when a sync may read and write it.
pub fn refusal(rel: &str) -> Option<&'static str> {
    if rel.contains('\u{FFFD}') {
        return Some("its name is not UTF-8");
    }
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Some("an empty, . or .. path component");
        }
        if is_ntfs_dotgit(part) || is_hfs_dotgit(part) || eq_dotgit(part) {
            return Some("a .git path component (git's own directory, in one of its spellings)");
        }
    }
    None
}

/// Takes the refused paths out of `changes`, in path order.
pub fn take_refused<T>(changes: &mut BTreeMap<String, T>) -> Vec<Refused> {
    let mut refused = Vec::new();
    changes.retain(|path, _| match refusal(path) {
        Some(reason) => {
            refused.push(Refused {
                path: path.clone(),
                reason,
            });
            false
        }
        None => true,
    });
    refused
}

/// `.git` in any case (git's `verify_dotfile`).
fn eq_dotgit(part: &str) -> bool {
    part.eq_ignore_ascii_case(".git")
}

/// git's `is_ntfs_dotgit`: `.git` or its short name `git~1`, in any case,
/// followed by nothing but spaces and dots, up to the end, a backslash
/// (a separator on Windows) or a colon (an NTFS stream).
fn is_ntfs_dotgit(part: &str) -> bool {
    let b = part.as_bytes();
    let rest = if b.len() >= 4 && b[0] == b'.' && b[1..4].eq_ignore_ascii_case(b"git") {
        &b[4..]
    } else if b.len() >= 5 && b[..3].eq_ignore_ascii_case(b"git") && &b[3..5] == b"~1" {
        &b[5..]
    } else {
        return false;
    };
    for &c in rest {
        match c {
            b'\\' | b':' => return true,
            b'.' | b' ' => {}
            _ => return false,
        }
    }
    true
}

/// git's `is_hfs_dotgit`: `.git` in any case once the code points HFS+
/// ignores (zero-width joiners, direction marks, a BOM) are dropped.
fn is_hfs_dotgit(part: &str) -> bool {
    let ignored = |c: &char| {
        matches!(
            *c as u32,
            0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff
        )
    };
    let folded: String = part.chars().filter(|c| !ignored(c)).collect();
    eq_dotgit(&folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_git_refuses_is_refused() {
        for bad in [
            ".git/config",
            ".GIT/hooks/pre-push",
            ".Git",
            "notes/.git/x",
            ".git./x",
            ".git ./x",
            ".git...",
            "git~1/x",
            "GIT~1",
            ".git:stream",
            ".git\\config",
            "git~1\\x",
            ".g\u{200c}it/x",
            "\u{feff}.git",
            ".git\u{200e}/x",
            "../x",
            "notes/../x",
            "./x",
            "x/",
            "/x",
            "a//b",
            "",
            "bad\u{FFFD}name",
        ] {
            assert!(refusal(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn memory_paths_and_near_misses_are_taken() {
        for good in [
            "notes/agents/a/MEMORY.md",
            "notes/world/deploys.md",
            ".gitignore",
            ".gitattributes",
            ".github/x",
            "git/x",
            "git~2/x",
            ".gitx",
            "x.git",
            "a\\b",
            "...",
            "..x",
            "notes/agents/a/daily/2026-01-01.md",
        ] {
            assert_eq!(refusal(good), None, "{good:?}");
        }
    }

    #[test]
    fn refused_paths_are_taken_out_and_named() {
        let mut changes: BTreeMap<String, u8> = [("a.md", 1), ("../x", 2), (".git/config", 3)]
            .into_iter()
            .map(|(p, v)| (p.to_owned(), v))
            .collect();
        let refused = take_refused(&mut changes);
        assert_eq!(changes.keys().collect::<Vec<_>>(), ["a.md"]);
        let paths: Vec<&str> = refused.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["../x", ".git/config"]);
    }
}
