//! `[memory]` of an agent file: the run log's settings.

use serde::{Deserialize, Serialize};

use axe_base::count::Count;
use axe_base::count::non_negative;
use axe_base::error::Result;

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
    /// Checks the section as the agent's validation does, in the Go
    /// order; the first failure wins.
    pub fn validate(&self) -> Result<()> {
        non_negative(&[
            ("memory.last_n", self.last_n),
            ("memory.max_entries", self.max_entries),
        ])
    }

    /// The trim target of `axe gc` (Go's): `last_n` when positive, else
    /// `max_entries` when positive, else none.
    pub fn trim_target(&self) -> Option<u64> {
        [self.last_n.get(), self.max_entries.get()]
            .into_iter()
            .find(|&n| n > 0)
    }
}

impl LogConfig {
    /// Its lines in `agents show`. With the log on, the limits in effect
    /// are worth seeing even when the file leaves them at 0.
    pub(crate) fn show(&self) -> Vec<(&'static str, bool, String)> {
        let effective = |n: u64, zero: &str| match n {
            0 => format!("0 ({zero})"),
            n => n.to_string(),
        };
        vec![
            ("Memory Enabled:", self.enabled, "true".into()),
            ("Memory Path:", !self.path.is_empty(), self.path.clone()),
            (
                "Memory LastN:",
                self.enabled || self.last_n.get() != 0,
                effective(self.last_n.get(), "all entries"),
            ),
            (
                "Memory MaxEntries:",
                self.enabled || self.max_entries.get() != 0,
                effective(self.max_entries.get(), "no limit"),
            ),
            // Set only to say something else than config.toml does.
            (
                "Memory Redact:",
                self.redact.is_some(),
                self.redact.unwrap_or(true).to_string(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_target_prefers_last_n() {
        let m = |last_n, max_entries| LogConfig {
            last_n: Count(last_n),
            max_entries: Count(max_entries),
            ..Default::default()
        };
        assert_eq!(m(5, 100).trim_target(), Some(5));
        assert_eq!(m(5, 0).trim_target(), Some(5));
        assert_eq!(m(0, 100).trim_target(), Some(100));
        assert_eq!(m(0, 0).trim_target(), None);
        assert_eq!(m(10, 5).trim_target(), Some(10));
    }
}
