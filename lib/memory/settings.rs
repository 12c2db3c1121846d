//! An agent's memory settings: the sections of its file that each kind
//! reads (`[memory]` the run log's, `[notes]`, `[state]`), and
//! `[context]`, the one budget over them all.

use serde::{Deserialize, Serialize, Serializer};

pub use crate::log::settings::LogConfig;
pub use crate::notes::settings::NotesConfig;
pub use crate::state::settings::StateConfig;
use axe_base::count::Count;

/// The memory sections of an agent file, as the kinds read them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub memory: LogConfig,
    pub notes: NotesConfig,
    pub state: StateConfig,
    pub context: ContextConfig,
}

/// `[context]`: one character budget over every kind of memory the agent
/// keeps, filled in `order`, most wanted first.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct ContextConfig {
    /// The most characters of the shared block. Absent: no shared block;
    /// each kind goes into the prompt on its own, as before.
    pub budget: Option<Count>,
    /// The kinds, most wanted first; a kind not listed is left out. Empty:
    /// [`ContextKind::ORDER`]. JSON shows the order in effect.
    #[serde(serialize_with = "order_in_effect")]
    pub order: Vec<ContextKind>,
}

/// A kind of memory in the shared block. A name not here is a parse error
/// naming the ones that are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextKind {
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

impl ContextKind {
    /// The default order: what the agent is doing, what it chose to keep,
    /// what it did lately, what it knows of the world, its diary. Kept in
    /// step with [`Self::rank`] by a check at compile time.
    pub const ORDER: [ContextKind; 5] = [
        ContextKind::State,
        ContextKind::Memory,
        ContextKind::Log,
        ContextKind::World,
        ContextKind::Daily,
    ];

    /// Its place in [`Self::ORDER`]: a match, so a new kind does not
    /// compile until it is given a place, and the check below fails until
    /// `ORDER` holds each kind at its place.
    const fn rank(self) -> usize {
        match self {
            ContextKind::State => 0,
            ContextKind::Memory => 1,
            ContextKind::Log => 2,
            ContextKind::World => 3,
            ContextKind::Daily => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ContextKind::State => "state",
            ContextKind::Memory => "memory",
            ContextKind::Log => "log",
            ContextKind::World => "world",
            ContextKind::Daily => "daily",
        }
    }
}

/// `ORDER` lists each kind at its rank, and as many as there are ranks.
const _: () = {
    let mut i = 0;
    while i < ContextKind::ORDER.len() {
        assert!(ContextKind::ORDER[i].rank() == i);
        i += 1;
    }
};

impl ContextConfig {
    /// The kinds in the order they are wanted.
    pub fn order(&self) -> &[ContextKind] {
        match self.order.is_empty() {
            true => &ContextKind::ORDER,
            false => &self.order,
        }
    }
}

fn order_in_effect<S: Serializer>(order: &[ContextKind], s: S) -> Result<S::Ok, S::Error> {
    match order.is_empty() {
        true => ContextKind::ORDER.serialize(s),
        false => order.serialize(s),
    }
}
