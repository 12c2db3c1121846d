//! What every agent of one run shares.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::details::Detail;
use crate::act::Artifacts;
use crate::agent::AgentConfig;
use crate::config::{Config, Endpoints};
use crate::error::Result;
use crate::llm::{Endpoint, Provider};

/// Deepest sub-agent nesting when `max_depth` is not 1..=5.
const DEFAULT_MAX_DEPTH: u32 = 3;

/// What every agent of one run shares: the global config, the depth limit
/// of the whole tree, how talkative to be, the artifact directory, and
/// what the top-level agent's tools were called with.
pub struct Session {
    endpoints: Endpoints,
    config_dir: PathBuf,
    /// The top-level agent's effective `max_depth`; it bounds the tree.
    pub max_depth: u32,
    pub verbose: bool,
    /// The run's artifact directory, every agent of the tree writing to
    /// the same one (each file recorded under its agent).
    pub artifacts: Option<Arc<Artifacts>>,
    /// The top-level agent's tool calls, for `--json`.
    pub details: Mutex<Vec<Detail>>,
}

impl Session {
    pub fn new(config: Config, config_dir: PathBuf, top: &AgentConfig, verbose: bool) -> Session {
        let depth = u32::try_from(top.sub_agents_config.max_depth.get())
            .ok()
            .filter(|d| (1..=5).contains(d));
        Session {
            endpoints: Endpoints::new(config),
            config_dir,
            max_depth: depth.unwrap_or(DEFAULT_MAX_DEPTH),
            verbose,
            artifacts: None,
            details: Mutex::new(Vec::new()),
        }
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// Where to send `provider`'s calls, with its key; an `api_key_cmd`
    /// runs once per run.
    pub fn endpoint(&self, provider: Provider) -> Result<Endpoint> {
        self.endpoints.get(provider)
    }
}
