//! `[state]` of an agent file.

use serde::{Deserialize, Serialize};

use axe_base::count::Count;
use axe_base::count::non_negative;
use axe_base::error::Result;

/// `[state]`: structured state (task progress, decisions, errors, facts).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct StateConfig {
    pub enabled: bool,
    /// Empty: `<data>/state/<agent>.json`; else used as is.
    pub path: String,
    /// The most decisions and errors kept; the oldest go first.
    pub max_entries: Count,
    /// The most characters of the Session Memory block.
    pub context_budget: Count,
}

impl Default for StateConfig {
    fn default() -> StateConfig {
        StateConfig {
            enabled: false,
            path: String::new(),
            max_entries: Count::new(100),
            context_budget: Count::new(3000),
        }
    }
}

impl StateConfig {
    /// Checks the section as the agent's validation does; the first
    /// failure wins.
    pub fn validate(&self) -> Result<()> {
        non_negative(&[
            ("state.max_entries", self.max_entries),
            ("state.context_budget", self.context_budget),
        ])
    }
}
