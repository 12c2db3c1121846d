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

use serde::{Deserialize, Serialize};

use crate::notes::Kind as NoteKind;
use crate::settings::Settings;
use axe_base::dirs::Dirs;
use axe_base::error::Result;

/// A kind of memory. A name not here is a parse error of `[context]
/// order` naming the ones that are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
    /// The toy kind a test adds (`[toy]`), in test builds only.
    #[cfg(feature = "test-hooks")]
    Toy,
}

/// A kind of memory as its folder offers it (`log::KIND`,
/// `notes::KIND`, `state::KIND`): its agent-file section and what the
/// layers above do with it through this value, never by its name.
#[derive(Debug)]
pub struct Kind {
    /// Its section of an agent file, as [`Settings`] takes it whole: the
    /// TOML key (`memory`, `notes`, `state`).
    pub section: &'static str,
    /// Whether the agent's settings turn it on.
    pub enabled: fn(&Settings) -> bool,
    /// Its section's checks, in Go's order and words, the first failure
    /// winning (the agent's validation calls each kind's in [`KINDS`]'
    /// order).
    pub validate: fn(&Settings) -> Result<()>,
    /// Its lines in `agents show`: label, whether shown, value (the
    /// directories, for paths in effect).
    pub show: fn(&Dirs, &Settings) -> Vec<Shown>,
    /// Its commented section in the `agents init` template, whole lines,
    /// after the template's own. Empty for the three kinds of a release
    /// build, whose sections the template lays out line by line in Go's
    /// order with what `agents init`'s flags fill in
    /// (`axe_agent::scaffold`).
    pub template: &'static str,
}

/// A line of `agents show`: its label, whether it is shown, its value.
pub type Shown = (&'static str, bool, String);

/// A resource's bytes.
pub type Read = Vec<u8>;

/// A resource: the rest of its URI after its row's `uri`, and its title.
pub type Listed = (String, String);

impl PartialEq for Kind {
    /// One kind a section: the section names it.
    fn eq(&self, other: &Kind) -> bool {
        self.section == other.section
    }
}

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

impl Merge {
    /// The name of its git merge driver (`merge=axe-<driver>` in
    /// `.gitattributes`).
    pub const fn driver(self) -> &'static str {
        match self {
            Merge::RunLog => "runlog",
            Merge::Daily => "daily",
            Merge::State => "state",
            Merge::Lines => "lines",
        }
    }
}

/// One part of a kind, to the code outside its folder: what the shared
/// block, `[context] order`, `axe-sync` and the MCP resources ask of it.
/// The notes kind has three (MEMORY.md, world topics, daily logs); the
/// others one.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub kind: MemoryKind,
    /// As `[context] order`, `axe-context --json`'s `kinds` and warnings
    /// name it.
    pub name: &'static str,
    /// The kind whose folder lays these files out and whose section turns
    /// them on.
    pub section: &'static Kind,
    /// The notes kind of its files, for a kind the notes workspace holds.
    pub note: Option<NoteKind>,
    /// Its heading in the shared block.
    pub heading: &'static str,
    /// How it offers its items to the shared block, under its heading.
    pub offer: crate::shared_block::Offer,
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
    /// What `axe-mcp` lists and reads of it, for an agent served whole
    /// that keeps it. `None` for the five kinds of a release build, whose
    /// listing `axe-mcp` does itself (`resources.rs`: the notes workspace
    /// it holds, each kind's own bounds).
    pub resources: Option<Resources>,
}

/// A kind's MCP resources through its row.
#[derive(Debug, Clone, Copy)]
pub struct Resources {
    /// Its resources now: the rest of each URI after the row's `uri`, and
    /// its title.
    pub list: fn(&Dirs, &str, &Settings) -> Vec<Listed>,
    /// The resource at the rest of a URI; `None` for none there.
    pub read: fn(&Dirs, &str, &Settings, &str) -> Result<Option<Read>>,
}

/// The parts of a release build's kinds, at their [`MemoryKind::rank`].
const BUILT_IN: [Row; 5] = [
    Row {
        kind: MemoryKind::State,
        name: "state",
        section: &crate::state::KIND,
        note: None,
        heading: "# Session Memory\n",
        offer: crate::shared_block::offer_state,
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
        offer: crate::shared_block::offer_notes,
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
        offer: crate::shared_block::offer_log,
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
        offer: crate::shared_block::offer_notes,
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
        offer: crate::shared_block::offer_notes,
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
            #[cfg(feature = "test-hooks")]
            MemoryKind::Toy => 5,
        }
    }

    /// The names a `[context] order` is told of when it names none:
    /// [`Self::ORDER`]'s.
    const NAMES: [&'static str; 5] = {
        let mut names = [""; 5];
        let mut i = 0;
        while i < names.len() {
            names[i] = Self::ORDER[i].name();
            i += 1;
        }
        names
    };

    /// Its row of [`ROWS`].
    pub const fn row(self) -> &'static Row {
        &ROWS[self.rank()]
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
        ROWS.iter().find(|r| (r.holds)(&parts)).map(|r| r.kind)
    }

    /// Whether `kinds` holds every kind of a release build once: for a
    /// place that goes through the kinds in an order of its own, checked
    /// where it stands (`const _: () = assert!(MemoryKind::each_once(&...))`).
    /// The toy kind of a test build is in no such list: it is reached
    /// through its row alone.
    pub const fn each_once(kinds: &[MemoryKind]) -> bool {
        if kinds.len() != BUILT_IN.len() {
            return false;
        }
        let mut seen = [false; ROWS.len()];
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

/// A kind by its row's name; serde's own words for a name that is none.
impl<'de> Deserialize<'de> for MemoryKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = MemoryKind;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a kind of memory")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<MemoryKind, E> {
                ROWS.iter()
                    .find(|r| r.name == v)
                    .map(|r| r.kind)
                    .ok_or_else(|| E::unknown_variant(v, &MemoryKind::NAMES))
            }
        }
        d.deserialize_str(Name)
    }
}

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
