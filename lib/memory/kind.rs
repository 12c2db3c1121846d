//! The kinds of memory by name: [`MemoryKind`], its place in the shared
//! block's default order and its name in `[context] order`. Below
//! everything else about a kind (`kinds`, its row and its folder), so
//! settings, the block and the rows can name a kind without a circle.

use serde::{Deserialize, Serialize};

use crate::notes::Kind as NoteKind;

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

impl MemoryKind {
    /// Every kind, at its rank.
    #[cfg(not(feature = "test-hooks"))]
    pub const ALL: [MemoryKind; 5] = Self::ORDER;
    /// Every kind with the toy kind a test adds, at its rank.
    #[cfg(feature = "test-hooks")]
    pub const ALL: [MemoryKind; 6] = [
        MemoryKind::State,
        MemoryKind::Memory,
        MemoryKind::Log,
        MemoryKind::World,
        MemoryKind::Daily,
        MemoryKind::Toy,
    ];

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

    /// Its place in [`Self::ORDER`] and `kinds::ROWS`: a match, so a new kind
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

    /// As `[context] order`, `axe-context --json`'s `kinds` and warnings
    /// name it (and its row of `kinds::ROWS`).
    pub const fn name(self) -> &'static str {
        match self {
            MemoryKind::State => "state",
            MemoryKind::Memory => "memory",
            MemoryKind::Log => "log",
            MemoryKind::World => "world",
            MemoryKind::Daily => "daily",
            #[cfg(feature = "test-hooks")]
            MemoryKind::Toy => "toy",
        }
    }

    /// The kind whose files lie in `kind`'s part of the notes workspace.
    pub fn of_note(kind: NoteKind) -> MemoryKind {
        match kind {
            NoteKind::Memory => MemoryKind::Memory,
            NoteKind::World => MemoryKind::World,
            NoteKind::Daily => MemoryKind::Daily,
        }
    }

    /// Whether `kinds` holds every kind of a release build once: for a
    /// place that goes through the kinds in an order of its own, checked
    /// where it stands (`const _: () = assert!(MemoryKind::each_once(&...))`).
    /// The toy kind of a test build is in no such list: it is reached
    /// through its row alone.
    pub const fn each_once(kinds: &[MemoryKind]) -> bool {
        if kinds.len() != Self::ORDER.len() {
            return false;
        }
        let mut seen = [false; Self::ALL.len()];
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

/// Each kind at its place in [`MemoryKind::ALL`] and the default order.
const _: () = {
    let mut i = 0;
    while i < MemoryKind::ALL.len() {
        assert!(MemoryKind::ALL[i].rank() == i);
        i += 1;
    }
};

/// A kind by its name; serde's own words for a name that is none.
impl<'de> Deserialize<'de> for MemoryKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = MemoryKind;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a kind of memory")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<MemoryKind, E> {
                MemoryKind::ALL
                    .into_iter()
                    .find(|k| k.name() == v)
                    .ok_or_else(|| E::unknown_variant(v, &MemoryKind::NAMES))
            }
        }
        d.deserialize_str(Name)
    }
}
