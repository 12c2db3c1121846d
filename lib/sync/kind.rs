//! What a file of the memory repository is, and merging two versions of
//! it by what it is: the one merge `axe-sync` and the git merge drivers
//! share.

use std::path::Path;

use super::entries::{self, Layout};
use super::error::Result;
use super::git::Git;
use super::lines;
use axe_memory::kinds::{MemoryKind, Merge};
use axe_memory::state;

/// How a file merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Entries united: a run log or a daily log.
    Entries(Layout),
    /// A state file: merged by meaning.
    State,
    /// Anything else (MEMORY.md, world topics): line by line, a conflict
    /// kept beside.
    Lines,
}

impl Kind {
    /// The kinds by the names the merge drivers are given.
    pub const NAMES: [(&'static str, Kind); 4] = [
        ("runlog", Kind::Entries(Layout::RunLog)),
        ("daily", Kind::Entries(Layout::Daily)),
        ("state", Kind::State),
        ("lines", Kind::Lines),
    ];

    pub fn named(name: &str) -> Option<Kind> {
        Kind::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
    }

    /// The kind of the file at `rel` in the repository (the memory data
    /// directory, or a notes workspace given with `--dir`): the merge of
    /// the memory kind that lays such files out, lines for any other.
    pub fn of(rel: &str) -> Kind {
        MemoryKind::of_file(rel).map_or(Kind::Lines, |k| Kind::from(k.row().merge))
    }
}

impl From<Merge> for Kind {
    /// The merge its driver's name is.
    fn from(merge: Merge) -> Kind {
        Kind::named(merge.driver()).unwrap_or(Kind::Lines)
    }
}

/// A merge's outcome: the file's new content (`None`: removed), and, for
/// a line conflict, the other side's whole text to keep beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: Option<Vec<u8>>,
    pub conflict: Option<Vec<u8>>,
}

impl Merged {
    fn clean(text: Option<&[u8]>) -> Merged {
        Merged {
            text: text.map(<[u8]>::to_vec),
            conflict: None,
        }
    }
}

/// `ours` and `theirs` (`None`: no such file) merged against `base`.
pub fn merge(
    git: &Git,
    kind: Kind,
    rel: &str,
    base: Option<&[u8]>,
    ours: Option<&[u8]>,
    theirs: Option<&[u8]>,
) -> Result<Merged> {
    if ours == theirs || theirs == base {
        return Ok(Merged::clean(ours));
    }
    if ours == base {
        return Ok(Merged::clean(theirs));
    }
    let b = base.unwrap_or_default();
    if let Kind::Entries(layout) = kind {
        // A file removed on one side (a pruned daily log) is no entries
        // there: the entries added on the other side are kept, those the
        // removal took stay gone, and with none left the file goes.
        let (o, t) = (ours.unwrap_or_default(), theirs.unwrap_or_default());
        let merged = entries::merge(layout, b, o, t);
        let any = entries::count(layout, &merged) > 0;
        return Ok(Merged::clean(any.then_some(merged.as_slice())));
    }
    // Changed on one side, removed on the other: the change is kept.
    let (Some(o), Some(t)) = (ours, theirs) else {
        return Ok(Merged::clean(ours.or(theirs)));
    };
    match kind {
        Kind::State => match state::merge(Path::new(rel), b, o, t) {
            Ok(text) => Ok(Merged::clean(Some(&text))),
            // A side that is no state (edited by hand and broken) cannot
            // be merged by meaning; by lines, nothing is lost either.
            Err(_) => merge(git, Kind::Lines, rel, base, ours, theirs),
        },
        // (Entries were merged above.)
        Kind::Lines | Kind::Entries(_) => {
            let (text, conflicted) = lines::merge(git, b, o, t)?;
            Ok(Merged {
                text: Some(text),
                conflict: conflicted.then(|| t.to_vec()),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axe_memory::kinds::ROWS;

    #[test]
    fn gitattributes_of_the_release_kinds_are_as_they_were_written() {
        // Made from the rows now; a repository set up before reads the same.
        let before = "\
# Written by axe-sync init: merge memory by entry, not by line.
*.md merge=axe-lines
memory/*.md merge=axe-runlog
**/daily/*.md merge=axe-daily
state/*.json merge=axe-state
";
        assert!(
            crate::ATTRIBUTES.starts_with(before),
            "{}",
            *crate::ATTRIBUTES
        );
        #[cfg(not(feature = "test-hooks"))]
        assert_eq!(*crate::ATTRIBUTES, before);
    }

    #[test]
    fn gitattributes_names_the_merge_of_every_kind() {
        // git merges a kind's files with the driver its row's merge is,
        // `axe-sync` with the same merge: the two cannot part.
        for row in ROWS {
            let kind = Kind::from(row.merge);
            let (name, _) = Kind::NAMES.iter().find(|(_, k)| *k == kind).unwrap();
            let line = match kind {
                // `*.md merge=axe-lines` covers them.
                Kind::Lines => format!("*.md merge=axe-{name}"),
                _ => format!("{} merge=axe-{name}", row.pattern),
            };
            assert!(
                crate::ATTRIBUTES.lines().any(|l| l == line),
                "{line:?} is not in .gitattributes"
            );
        }
    }

    #[test]
    fn files_are_known_by_where_they_are() {
        assert_eq!(
            Kind::of("memory/reviewer.md"),
            Kind::Entries(Layout::RunLog)
        );
        assert_eq!(
            Kind::of("notes/agents/a/daily/2026-11-22.md"),
            Kind::Entries(Layout::Daily)
        );
        assert_eq!(
            Kind::of("agents/a/daily/2026-11-22.md"),
            Kind::Entries(Layout::Daily)
        );
        assert_eq!(Kind::of("state/a.json"), Kind::State);
        assert_eq!(Kind::of("notes/agents/a/MEMORY.md"), Kind::Lines);
        assert_eq!(Kind::of("notes/world/deploys.md"), Kind::Lines);
        assert_eq!(Kind::of("notes/agents/a/daily/notes.md"), Kind::Lines);
    }
}
