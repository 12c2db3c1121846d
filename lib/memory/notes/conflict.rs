//! Files a sync left beside a note it could not merge: the other
//! machine's whole text of MEMORY.md, a world topic or a daily log (one
//! whose lines both sides changed, or that arrived holding git's conflict
//! markers), named `MEMORY.conflict-<host>-<time>-<hash12>.md` beside
//! `MEMORY.md`. Recall and the memory block name them until someone
//! merges the text in and removes the file; search and recall never read
//! one as a topic.
//!
//! A daily log's goes beside the agent's MEMORY.md, not among the days,
//! as `daily-<date>.conflict-….md`: recall reads a calendar window of
//! days and never lists the daily directory (ten years of it cost a
//! recall half as much again), while the agent's own directory it lists
//! anyway.
//!
//! The name ends with the first 12 hex digits of the text's SHA-256: host
//! names repeat (containers, cloned machines, CI runners) and a second
//! holds many commits, so host and time alone would let one conflict file
//! take the place of another, the only copy of another machine's text.
//! With the hash, two texts never share a name, and the same merge done
//! again names the same file.

use time::OffsetDateTime;

use crate::hash::sha256_hex;

/// What marks a conflict file's name.
const MARK: &str = ".conflict-";

/// The conflict file for the note at `rel` (`agents/a/MEMORY.md`, a path
/// with `/`), beside it: `text`, the other side's, merged on `host`, from
/// a commit made `at`.
pub fn path_for(rel: &str, host: &str, at: OffsetDateTime, text: &[u8]) -> String {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    // A day's: beside MEMORY.md, one directory up (see the module's note).
    let day;
    let (dir, name) = match dir.rsplit_once('/') {
        Some((agent, "daily")) => {
            day = format!("daily-{name}");
            (agent, day.as_str())
        }
        _ => (dir, name),
    };
    let stamp = format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    );
    let side = name_for(name, host, &stamp, &sha256_hex(text)[..12]);
    match dir.is_empty() {
        true => side,
        false => format!("{dir}/{side}"),
    }
}

/// The conflict file's name for the note `name` (`MEMORY.md`).
fn name_for(name: &str, host: &str, stamp: &str, hash: &str) -> String {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let host: String = host
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{stem}{MARK}{host}-{stamp}-{hash}.md")
}

/// Whether `name` is a conflict file's.
pub fn is_conflict(name: &str) -> bool {
    name.ends_with(".md") && name.contains(MARK)
}

/// One line that names the conflict files (relative to the workspace).
pub fn line(names: &[String]) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    Some(format!(
        "(Unresolved sync conflict: {} {} another machine's text of a note beside yours; merge it in and delete the file.)",
        names.join(", "),
        if names.len() == 1 { "holds" } else { "hold" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_names_are_recognised() {
        let at = OffsetDateTime::from_unix_timestamp(1_795_417_200).unwrap();
        let path = path_for("agents/a/MEMORY.md", "box.local", at, b"abc");
        assert_eq!(
            path,
            "agents/a/MEMORY.conflict-box-local-20261123T070000Z-ba7816bf8f01.md"
        );
        // Another text of the same host and second has a name of its own.
        assert_ne!(
            path_for("agents/a/MEMORY.md", "box.local", at, b"abd"),
            path
        );
        // A day's goes beside MEMORY.md, where recall lists anyway.
        assert_eq!(
            path_for("notes/agents/a/daily/2026-11-23.md", "h", at, b"abc"),
            "notes/agents/a/daily-2026-11-23.conflict-h-20261123T070000Z-ba7816bf8f01.md"
        );
        let name = path.rsplit('/').next().unwrap();
        assert!(is_conflict(name));
        assert!(!is_conflict("MEMORY.md"));
        assert!(!is_conflict("deploy-conflict-x.md"));
    }
}
