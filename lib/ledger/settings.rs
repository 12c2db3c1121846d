//! The ledger's sections of config.toml, `[log]` and `[pricing]`, read
//! by `crate::config` with the rest of the file.

use serde::Deserialize;

use axe_llm::Usage;

/// `[log]` of config.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct LogConfig {
    /// Keep each call's prompt and answer, redacted; off: no text at all.
    pub text: bool,
    /// The size past which a month's file is followed by another.
    pub max_bytes: Option<u64>,
    /// Keep every run's and `axe-llm` call's turn in a conversation, as
    /// `llm` does (on by default); off: only a command given `-c` or
    /// `--cid` (and `axe-chat`) keeps one.
    pub conversations: bool,
}

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig {
            text: false,
            max_bytes: None,
            conversations: true,
        }
    }
}

/// `[pricing."provider/model"]` of config.toml: US dollars per million
/// tokens, for providers that report no cost themselves.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Prompt tokens read from the cache; unset: `input`'s price.
    pub cache_read: Option<f64>,
    /// Prompt tokens written to the cache; unset: `input`'s price.
    pub cache_write: Option<f64>,
}

impl Price {
    /// What `usage` costs at this price; `None` when the reply said no
    /// token counts.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        if usage.input_tokens.is_none() && usage.output_tokens.is_none() {
            return None;
        }
        let input = usage.input_tokens.unwrap_or(0);
        let read = usage.cache_read_tokens.unwrap_or(0);
        let write = usage.cache_write_tokens.unwrap_or(0);
        // Input counts every prompt token, cached ones included.
        let plain = input.saturating_sub(read).saturating_sub(write);
        let cost = plain as f64 * self.input
            + read as f64 * self.cache_read.unwrap_or(self.input)
            + write as f64 * self.cache_write.unwrap_or(self.input)
            + usage.output_tokens.unwrap_or(0) as f64 * self.output;
        Some(cost / 1e6)
    }
}
