//! `[memory]` of an agent file: the run log's settings.

use serde::{Deserialize, Serialize};

use axe_base::count::Count;

/// `[memory]`: the run log's settings (the section keeps Go's name), and
/// what holds for all of the agent's memory.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct LogConfig {
    pub enabled: bool,
    pub path: String,
    pub last_n: Count,
    pub max_entries: Count,
    /// Whether credentials are redacted from everything the agent's
    /// memory keeps (run log, notes, state); unset: config.toml's
    /// `[memory] redact`, else on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redact: Option<bool>,
}

impl LogConfig {
    /// The trim target of `axe gc` (M7 3.11): `last_n` when positive, else
    /// `max_entries` when positive, else none.
    pub fn trim_target(&self) -> Option<u64> {
        [self.last_n.get(), self.max_entries.get()]
            .into_iter()
            .find(|&n| n > 0)
    }
}
