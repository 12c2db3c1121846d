//! The kinds of memory an agent keeps, as one table: each [`MemoryKind`]
//! is one [`Row`] of [`KINDS`], which says everything the code outside
//! the kind's folder asks of it: its name (`[context] order`, `--json`,
//! warnings), the agent-file section that turns it on, its heading in
//! the shared block, where its files lie in the memory repository (as
//! path components and as a git pattern) and how `axe-sync` merges them,
//! and where its MCP resources' URIs start and their MIME type.
//!
//! A new kind is its folder, a variant here and its row: [`MemoryKind::rank`]
//! is a match, so the variant does not compile until it has a place, and
//! the checks below fail the build until [`KINDS`] and
//! [`MemoryKind::ORDER`] hold it at that place. The few places that do a
//! kind's own work (how the shared block offers its items, how an MCP
//! resource reads it) match on the kind, so the compiler names them too.

use serde::{Deserialize, Serialize};

use crate::notes::Kind as NoteKind;

/// A kind of memory. A name not here is a parse error of `[context]
/// order` naming the ones that are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryKind {
    /// The structured state's Session Memory items (`[state]`).
    State,
    /// MEMORY.md (`[notes]`).
    Memory,
    /// The last `memory.last_n` run-log entries (`[memory]`).
    Log,
    /// World topics (`[notes]`).
    World,
    /// Daily logs of the last `notes.recall_days` days (`[notes]`).
    Daily,
}

/// The agent-file section that turns a kind on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `[memory]`, the run log's.
    Log,
    /// `[notes]`.
    Notes,
    /// `[state]`.
    State,
}

/// How two versions of one of a kind's files merge (`axe-sync` and its
/// git merge drivers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Entries united, laid out as a run log.
    RunLog,
    /// Entries united, laid out as a daily log.
    Daily,
    /// Merged by meaning, as a state.
    State,
    /// Line by line, a conflict kept beside.
    Lines,
}

/// What a kind is, to the code outside its folder.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub kind: MemoryKind,
    /// As `[context] order`, `axe-context --json`'s `kinds` and warnings
    /// name it.
    pub name: &'static str,
    pub section: Section,
    /// The notes kind of its files, for a kind the notes workspace holds.
    pub note: Option<NoteKind>,
    /// Its heading in the shared block.
    pub heading: &'static str,
    pub merge: Merge,
    /// Whether a file at these path components of the memory repository
    /// (the data directory, or a notes workspace synced with `--dir`) is
    /// one of its files: the layout `log::file_path`, `state::file_path`
    /// and the notes workspace give them.
    pub holds: fn(&[&str]) -> bool,
    /// The same files as a git pattern (`.gitattributes`, where the
    /// merge driver of each kind is named).
    pub pattern: &'static str,
    /// Its MIME type as an MCP resource.
    pub mime: &'static str,
    /// Where its MCP resources' URIs start: the notes workspace's kinds
    /// share `axe://notes/`, the URIs mirroring where the files are.
    pub uri: &'static str,
}

/// Every kind, at its [`MemoryKind::rank`].
pub const KINDS: &[Row; 5] = &[
    Row {
        kind: MemoryKind::State,
        name: "state",
        section: Section::State,
        note: None,
        heading: "# Session Memory\n",
        merge: Merge::State,
        holds: |p| matches!(p, ["state", n] if n.ends_with(".json")),
        pattern: "state/*.json",
        mime: "application/json",
        uri: "axe://state/",
    },
    Row {
        kind: MemoryKind::Memory,
        name: "memory",
        section: Section::Notes,
        note: Some(NoteKind::Memory),
        heading: "# Your Memory\n",
        merge: Merge::Lines,
        holds: |p| matches!(p, [.., "agents", _, "MEMORY.md"]),
        pattern: "**/agents/*/MEMORY.md",
        mime: "text/markdown",
        uri: "axe://notes/",
    },
    Row {
        kind: MemoryKind::Log,
        name: "log",
        section: Section::Log,
        note: None,
        heading: "# Recent Runs\n",
        merge: Merge::RunLog,
        holds: |p| matches!(p, ["memory", n] if n.ends_with(".md")),
        pattern: "memory/*.md",
        mime: "text/markdown",
        uri: "axe://log/",
    },
    Row {
        kind: MemoryKind::World,
        name: "world",
        section: Section::Notes,
        note: Some(NoteKind::World),
        heading: "# World Knowledge\n",
        merge: Merge::Lines,
        holds: |p| matches!(p, [.., "world", n] if n.ends_with(".md")),
        pattern: "**/world/*.md",
        mime: "text/markdown",
        uri: "axe://notes/",
    },
    Row {
        kind: MemoryKind::Daily,
        name: "daily",
        section: Section::Notes,
        note: Some(NoteKind::Daily),
        heading: "# Recent Experiences\n",
        merge: Merge::Daily,
        holds: |p| matches!(p, [.., "daily", n] if is_day(n)),
        pattern: "**/daily/*.md",
        mime: "text/markdown",
        uri: "axe://notes/",
    },
];

impl MemoryKind {
    /// The default order of the shared block: what the agent is doing,
    /// what it chose to keep, what it did lately, what it knows of the
    /// world, its diary. Kept in step with [`Self::rank`] by a check at
    /// compile time.
    pub const ORDER: [MemoryKind; 5] = [
        MemoryKind::State,
        MemoryKind::Memory,
        MemoryKind::Log,
        MemoryKind::World,
        MemoryKind::Daily,
    ];

    /// Its place in [`Self::ORDER`] and [`KINDS`]: a match, so a new kind
    /// does not compile until it is given a place, and the checks below
    /// fail until both hold each kind at its place.
    pub const fn rank(self) -> usize {
        match self {
            MemoryKind::State => 0,
            MemoryKind::Memory => 1,
            MemoryKind::Log => 2,
            MemoryKind::World => 3,
            MemoryKind::Daily => 4,
        }
    }

    /// Its row of [`KINDS`].
    pub const fn row(self) -> &'static Row {
        &KINDS[self.rank()]
    }

    pub const fn name(self) -> &'static str {
        self.row().name
    }

    /// The kind whose files lie in `kind`'s part of the notes workspace.
    pub fn of_note(kind: NoteKind) -> MemoryKind {
        match kind {
            NoteKind::Memory => MemoryKind::Memory,
            NoteKind::World => MemoryKind::World,
            NoteKind::Daily => MemoryKind::Daily,
        }
    }

    /// The kind of the file at `rel` in the memory repository (`/`
    /// between components); `None` for a file no kind lays out (a
    /// conflict file, a note someone put there).
    pub fn of_file(rel: &str) -> Option<MemoryKind> {
        let parts: Vec<&str> = rel.split('/').collect();
        KINDS.iter().find(|r| (r.holds)(&parts)).map(|r| r.kind)
    }

    /// Whether `kinds` holds every kind once: for a place that goes
    /// through the kinds in an order of its own, checked where it stands
    /// (`const _: () = assert!(MemoryKind::each_once(&...))`).
    pub const fn each_once(kinds: &[MemoryKind]) -> bool {
        if kinds.len() != KINDS.len() {
            return false;
        }
        let mut seen = [false; KINDS.len()];
        let mut i = 0;
        while i < kinds.len() {
            let r = kinds[i].rank();
            if seen[r] {
                return false;
            }
            seen[r] = true;
            i += 1;
        }
        true
    }
}

/// `ORDER` and `KINDS` list each kind at its rank, and as many as there
/// are ranks; a note kind belongs to one kind only.
const _: () = {
    let mut i = 0;
    while i < KINDS.len() {
        assert!(MemoryKind::ORDER[i].rank() == i);
        assert!(KINDS[i].kind.rank() == i);
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
            let holders = KINDS.iter().filter(|r| (r.holds)(&parts)).count();
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
        for row in KINDS {
            if let Some(note) = row.note {
                assert_eq!(MemoryKind::of_note(note), row.kind);
                assert_eq!(row.section, Section::Notes);
            }
        }
    }
}
