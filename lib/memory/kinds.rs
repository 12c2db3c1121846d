//! The kinds of memory an agent keeps, as values. A kind is its folder
//! (`log/`, `notes/`, `state/`), and the folder says what it is in one
//! [`Kind`], `pub const KIND` beside its settings: its agent-file
//! section, whether an agent's [`Settings`] turn it on, its checks, its
//! `agents show` lines and template text. [`KINDS`] lists them. Each part
//! of a kind that the shared block and the memory repository see (the
//! notes kind has three: MEMORY.md, world topics, daily logs) is a [`Row`]
//! of [`ROWS`], named by a [`MemoryKind`]: its name (`[context] order`,
//! `--json`, warnings), its heading in the shared block and how it offers
//! its items there, where its files lie in the memory repository (as path
//! components and as a git pattern) and how `axe-sync` merges them, and
//! its MCP resources.
//!
//! The layers above ask through these values, not by a kind's name: the
//! agent's validation calls each `KIND`'s checks, `agents show` its lines,
//! the template adds its text, the shared block calls each row's `offer`,
//! `.gitattributes` is made from the rows, `axe-mcp` lists and reads a
//! row's `resources`. The tools are the one thing a kind cannot carry:
//! memory is below `axe-tools`, so a kind's tools are rows of
//! `axe_tools::MEMORY` there.
//!
//! A new kind is its folder, a variant here, its `KIND` in `KINDS` and its
//! rows in `ROWS` (and its field of `Settings`): [`MemoryKind::rank`] is a
//! match, so the variant does not compile until it has a place, and the
//! checks below fail the build until `ROWS` holds each part at its place
//! and [`MemoryKind::ORDER`] each kind of a release build. The toy kind of
//! a test build (`crate::toy`, feature `test-hooks`) is the proof: nothing
//! outside its folder names it but this file and `Settings`.

pub use crate::kind::MemoryKind;
use crate::notes::Kind as NoteKind;
use crate::offer::{offer_log, offer_notes, offer_state};
pub use crate::row::{Kind, Listed, Merge, Read, Resources, Row, Shown};
use crate::settings::Settings;
use axe_base::error::Result;

/// Every kind by its folder, in the order of their sections in an agent
/// file, its template, `agents show` and `.gitattributes`.
#[cfg(not(feature = "test-hooks"))]
pub const KINDS: &[&Kind] = &[&crate::log::KIND, &crate::notes::KIND, &crate::state::KIND];
/// The same with the toy kind a test adds (`crate::toy`).
#[cfg(feature = "test-hooks")]
pub const KINDS: &[&Kind] = &[
    &crate::log::KIND,
    &crate::notes::KIND,
    &crate::state::KIND,
    &crate::toy::KIND,
];

/// The parts of a release build's kinds, at their [`MemoryKind::rank`].
const BUILT_IN: [Row; 5] = [
    Row {
        kind: MemoryKind::State,
        name: "state",
        section: &crate::state::KIND,
        note: None,
        heading: "# Session Memory\n",
        offer: offer_state,
        merge: Merge::State,
        holds: |p| matches!(p, ["state", n] if n.ends_with(".json")),
        pattern: "state/*.json",
        mime: "application/json",
        uri: "axe://state/",
        resources: None,
    },
    Row {
        kind: MemoryKind::Memory,
        name: "memory",
        section: &crate::notes::KIND,
        note: Some(NoteKind::Memory),
        heading: "# Your Memory\n",
        offer: offer_notes,
        merge: Merge::Lines,
        holds: |p| matches!(p, [.., "agents", _, "MEMORY.md"]),
        pattern: "**/agents/*/MEMORY.md",
        mime: "text/markdown",
        uri: "axe://notes/",
        resources: None,
    },
    Row {
        kind: MemoryKind::Log,
        name: "log",
        section: &crate::log::KIND,
        note: None,
        heading: "# Recent Runs\n",
        offer: offer_log,
        merge: Merge::RunLog,
        holds: |p| matches!(p, ["memory", n] if n.ends_with(".md")),
        pattern: "memory/*.md",
        mime: "text/markdown",
        uri: "axe://log/",
        resources: None,
    },
    Row {
        kind: MemoryKind::World,
        name: "world",
        section: &crate::notes::KIND,
        note: Some(NoteKind::World),
        heading: "# World Knowledge\n",
        offer: offer_notes,
        merge: Merge::Lines,
        holds: |p| matches!(p, [.., "world", n] if n.ends_with(".md")),
        pattern: "**/world/*.md",
        mime: "text/markdown",
        uri: "axe://notes/",
        resources: None,
    },
    Row {
        kind: MemoryKind::Daily,
        name: "daily",
        section: &crate::notes::KIND,
        note: Some(NoteKind::Daily),
        heading: "# Recent Experiences\n",
        offer: offer_notes,
        merge: Merge::Daily,
        holds: |p| matches!(p, [.., "daily", n] if is_day(n)),
        pattern: "**/daily/*.md",
        mime: "text/markdown",
        uri: "axe://notes/",
        resources: None,
    },
];

/// Every part of every kind, at its [`MemoryKind::rank`].
#[cfg(not(feature = "test-hooks"))]
pub const ROWS: &[Row] = &BUILT_IN;
/// The same with the toy kind's row last.
#[cfg(feature = "test-hooks")]
pub const ROWS: &[Row] = &with::<5, 6>(BUILT_IN, crate::toy::ROW);

/// `rows` and `last` after them.
#[cfg(feature = "test-hooks")]
const fn with<const N: usize, const M: usize>(rows: [Row; N], last: Row) -> [Row; M] {
    let mut out = [last; M];
    let mut i = 0;
    while i < N {
        out[i] = rows[i];
        i += 1;
    }
    out
}

impl MemoryKind {
    /// Its row of [`ROWS`].
    pub const fn row(self) -> &'static Row {
        &ROWS[self.rank()]
    }

    /// The kind of the file at `rel` in the memory repository (`/`
    /// between components); `None` for a file no kind lays out (a
    /// conflict file, a note someone put there).
    pub fn of_file(rel: &str) -> Option<MemoryKind> {
        let parts: Vec<&str> = rel.split('/').collect();
        ROWS.iter().find(|r| (r.holds)(&parts)).map(|r| r.kind)
    }
}

impl Settings {
    /// Every kind's checks, in [`KINDS`]' order; the first failure wins.
    pub fn validate_kinds(&self) -> Result<()> {
        KINDS.iter().try_for_each(|kind| (kind.validate)(self))
    }
}

/// `ROWS` lists each kind at its rank; `ORDER` each kind of a release
/// build (a test's toy kind joins the block when its `[context] order`
/// names it).
const _: () = {
    let mut i = 0;
    while i < ROWS.len() {
        assert!(ROWS[i].kind.rank() == i);
        i += 1;
    }
    let mut i = 0;
    while i < MemoryKind::ORDER.len() {
        assert!(MemoryKind::ORDER[i].rank() == i);
        i += 1;
    }
    assert!(MemoryKind::each_once(&MemoryKind::ORDER));
};

/// `YYYY-MM-DD.md`, a daily log's name.
fn is_day(name: &str) -> bool {
    let b = name.as_bytes();
    name.len() == 13
        && name.ends_with(".md")
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_known_by_the_kind_that_lays_them_out() {
        for (rel, kind) in [
            ("memory/reviewer.md", Some(MemoryKind::Log)),
            (
                "notes/agents/a/daily/2026-11-22.md",
                Some(MemoryKind::Daily),
            ),
            ("agents/a/daily/2026-11-22.md", Some(MemoryKind::Daily)),
            ("state/a.json", Some(MemoryKind::State)),
            ("notes/agents/a/MEMORY.md", Some(MemoryKind::Memory)),
            ("agents/a/MEMORY.md", Some(MemoryKind::Memory)),
            ("notes/world/deploys.md", Some(MemoryKind::World)),
            ("world/deploys.md", Some(MemoryKind::World)),
            ("notes/agents/a/daily/notes.md", None),
            ("memory/sub/x.md", None),
            ("state/a.json.lock", None),
            ("a/state/a.json", None),
        ] {
            assert_eq!(MemoryKind::of_file(rel), kind, "{rel}");
        }
    }

    #[test]
    fn a_kind_is_found_by_its_own_files_only() {
        // No file is two kinds' at once: each row's example is its own.
        for rel in [
            "memory/a.md",
            "state/a.json",
            "notes/agents/a/MEMORY.md",
            "notes/world/t.md",
            "notes/agents/a/daily/2026-01-02.md",
        ] {
            let parts: Vec<&str> = rel.split('/').collect();
            let holders = ROWS.iter().filter(|r| (r.holds)(&parts)).count();
            assert_eq!(holders, 1, "{rel}");
        }
    }

    #[test]
    fn each_once_wants_every_kind_once() {
        use MemoryKind::*;
        assert!(MemoryKind::each_once(&[Daily, World, Log, Memory, State]));
        assert!(!MemoryKind::each_once(&[State, Memory, Log, World]));
        assert!(!MemoryKind::each_once(&[State, Memory, Log, World, World]));
    }

    #[test]
    fn note_kinds_are_their_rows() {
        for row in ROWS {
            if let Some(note) = row.note {
                assert_eq!(MemoryKind::of_note(note), row.kind);
                assert_eq!(row.section, &crate::notes::KIND);
            }
        }
    }
}
