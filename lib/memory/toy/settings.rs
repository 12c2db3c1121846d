//! `[toy]`, the toy kind's section.

use serde::{Deserialize, Serialize};

use axe_base::count::Count;

/// `[toy]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct ToyConfig {
    pub enabled: bool,
    /// Its one item in the shared block.
    pub text: String,
    /// A count, for a check of its own.
    pub size: Count,
}

impl ToyConfig {
    /// Nothing set: left out of `agents show --json`, so the other
    /// tests' JSON does not change in a test build.
    pub fn is_unset(&self) -> bool {
        *self == ToyConfig::default()
    }
}
