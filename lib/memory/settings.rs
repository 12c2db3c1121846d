//! An agent's memory settings: the sections of its file that each kind
//! reads (`[memory]` the run log's, `[notes]`, `[state]`), and
//! `[context]`, the one budget over them all. An agent file takes
//! [`Settings`] whole: its fields are the sections, by their TOML keys.

use serde::{Deserialize, Serialize, Serializer};

use crate::error::MemoryError;
pub use crate::kind::MemoryKind;
pub use crate::log::settings::LogConfig;
pub use crate::notes::settings::NotesConfig;
pub use crate::state::settings::StateConfig;
use axe_base::count::{Count, non_negative};
use axe_base::error::Result;

/// The memory sections of an agent file, as the kinds read them: one
/// field a kind, named by its section, and `[context]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct Settings {
    /// `[memory]`, the run log's section (Go's name).
    #[serde(rename = "memory")]
    pub log: LogConfig,
    pub notes: NotesConfig,
    pub state: StateConfig,
    pub context: ContextConfig,
    /// The toy kind's section, in test builds only; not shown until set.
    #[cfg(feature = "test-hooks")]
    #[serde(skip_serializing_if = "crate::toy::settings::ToyConfig::is_unset")]
    pub toy: crate::toy::settings::ToyConfig,
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

impl ContextConfig {
    /// The budget's check, which the agent's validation makes with the
    /// other kinds' numbers.
    pub fn validate_budget(&self) -> Result<()> {
        non_negative(&[("context.budget", self.budget.unwrap_or_default())])
    }

    /// The order's check, which the agent's validation makes last, as
    /// the Go order of its messages has it: a kind listed twice.
    pub fn validate_order(&self) -> Result<()> {
        let order = &self.order;
        let Some((i, kind)) = order
            .iter()
            .enumerate()
            .find(|(i, k)| order[..*i].contains(k))
        else {
            return Ok(());
        };
        Err(MemoryError::OrderTwice {
            kind: kind.name(),
            first: order.iter().position(|k| k == kind).unwrap_or(0) + 1,
            again: i + 1,
        }
        .into())
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(result: axe_base::error::Result<()>) -> String {
        match result {
            Err(e) if matches!(e.as_reported(), axe_base::error::Error::AgentInvalid(_)) => {
                e.to_string()
            }
            other => panic!("not refused as an invalid agent: {other:?}"),
        }
    }

    #[test]
    fn each_kind_checks_its_own_section_first_failure_first() {
        let mut log = LogConfig::default();
        log.validate().unwrap();
        log.max_entries = Count(-1);
        assert_eq!(
            refused(log.validate()),
            "memory.max_entries must be non-negative"
        );
        log.last_n = Count(-1);
        assert_eq!(
            refused(log.validate()),
            "memory.last_n must be non-negative"
        );

        let mut notes = NotesConfig::default();
        notes.validate().unwrap();
        notes.max_topic_chars = Count(-1);
        assert_eq!(
            refused(notes.validate()),
            "notes.max_topic_chars must be non-negative"
        );
        notes.recall_days = Count(-2);
        assert_eq!(
            refused(notes.validate()),
            "notes.recall_days must be non-negative"
        );

        let mut state = StateConfig::default();
        state.validate().unwrap();
        state.context_budget = Count(-1);
        assert_eq!(
            refused(state.validate()),
            "state.context_budget must be non-negative"
        );

        let mut context = ContextConfig::default();
        context.validate_budget().unwrap();
        context.validate_order().unwrap();
        context.budget = Some(Count(-1));
        assert_eq!(
            refused(context.validate_budget()),
            "context.budget must be non-negative"
        );
        context.order = vec![MemoryKind::Log, MemoryKind::State, MemoryKind::Log];
        assert_eq!(
            refused(context.validate_order()),
            "context.order lists \"log\" twice (at 1 and 3)"
        );
    }
}
