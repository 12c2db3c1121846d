//! `[notes]` of an agent file.

use serde::{Deserialize, Serialize};

use axe_base::count::Count;
use axe_base::count::non_negative;
use axe_base::error::Result;

/// `[notes]`: the notes workspace and the tools that read and write it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct NotesConfig {
    pub enabled: bool,
    /// Empty: `<data>/notes`; relative: from the agents directory.
    pub workspace: String,
    /// Days of daily logs a recall reads, today included.
    pub recall_days: Count,
    /// The most characters a recall returns; what does not fit is left
    /// out (oldest daily logs first) and named.
    pub recall_chars: Count,
    /// The largest MEMORY.md a reflect may write.
    pub max_memory_chars: Count,
    /// The largest world topic a learn may write.
    pub max_topic_chars: Count,
}

impl Default for NotesConfig {
    fn default() -> NotesConfig {
        NotesConfig {
            enabled: false,
            workspace: String::new(),
            recall_days: Count::new(3),
            recall_chars: Count::new(24_000),
            max_memory_chars: Count::new(10_000),
            max_topic_chars: Count::new(10_000),
        }
    }
}

impl NotesConfig {
    /// Checks the section as the agent's validation does; the first
    /// failure wins.
    pub fn validate(&self) -> Result<()> {
        non_negative(&[
            ("notes.recall_days", self.recall_days),
            ("notes.recall_chars", self.recall_chars),
            ("notes.max_memory_chars", self.max_memory_chars),
            ("notes.max_topic_chars", self.max_topic_chars),
        ])
    }
}
