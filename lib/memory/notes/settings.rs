//! `[notes]` of an agent file.

use serde::{Deserialize, Serialize};

use axe_base::count::Count;
use axe_base::count::non_negative;
use axe_base::error::{Error, Result};

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
    /// How often `axe-run` consolidates the notes after a successful run
    /// (`24h`, `90m`, `2d`); empty: never on its own.
    pub consolidate_every: String,
    /// The fewest new daily-log entries worth an automatic consolidation.
    pub consolidate_min_entries: Count,
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
            consolidate_every: String::new(),
            consolidate_min_entries: Count::new(5),
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
            (
                "notes.consolidate_min_entries",
                self.consolidate_min_entries,
            ),
        ])?;
        self.consolidate_every().map(|_| ())
    }

    /// `consolidate_every` as seconds; `None` when it is empty (off).
    pub fn consolidate_every(&self) -> Result<Option<u64>> {
        let given = self.consolidate_every.trim();
        if given.is_empty() {
            return Ok(None);
        }
        every(given).map(Some).ok_or_else(|| {
            Error::AgentInvalid(format!(
                "notes.consolidate_every: \"{given}\" is not a period such as 24h, 90m or 2d"
            ))
        })
    }
}

/// `90m`, `24h` or `2d` as seconds: a positive whole number and its unit.
fn every(given: &str) -> Option<u64> {
    let unit = match given.chars().last()? {
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    let number = &given[..given.len() - 1];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = number.parse().ok().filter(|n| *n > 0)?;
    n.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::every;

    #[test]
    fn periods() {
        assert_eq!(every("24h"), Some(86_400));
        assert_eq!(every("90m"), Some(5_400));
        assert_eq!(every("2d"), Some(172_800));
        for bad in [
            "0h",
            "h",
            "24",
            "-1h",
            "+1h",
            "1.5h",
            "24 h",
            "1w",
            "99999999999999999999d",
        ] {
            assert_eq!(every(bad), None, "{bad}");
        }
    }
}
