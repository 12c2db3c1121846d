//! An agent's memory settings: the sections of its file that each kind
//! reads (`[memory]` the run log's, `[notes]`, `[state]`), and
//! `[context]`, the one budget over them all.

use serde::{Deserialize, Serialize, Serializer};

pub use crate::kinds::MemoryKind;
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
    /// [`MemoryKind::ORDER`]. JSON shows the order in effect.
    #[serde(serialize_with = "order_in_effect")]
    pub order: Vec<MemoryKind>,
}

/// The kinds were first the shared block's; the name stays for callers
/// that still use it.
pub type ContextKind = MemoryKind;

impl ContextConfig {
    /// The kinds in the order they are wanted.
    pub fn order(&self) -> &[MemoryKind] {
        match self.order.is_empty() {
            true => &MemoryKind::ORDER,
            false => &self.order,
        }
    }
}

fn order_in_effect<S: Serializer>(order: &[MemoryKind], s: S) -> Result<S::Ok, S::Error> {
    match order.is_empty() {
        true => MemoryKind::ORDER.serialize(s),
        false => order.serialize(s),
    }
}
