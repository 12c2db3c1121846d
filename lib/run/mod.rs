//! Running an agent: its context resolved into a system prompt, the
//! conversation with its model (with sub-agents as a tool), and its memory.
//!
//! `axe-run` is a thin layer over this; a sub-agent called through the
//! `call_agent` tool goes through the same [`Prepared::new`] and
//! [`converse`], so both behave alike.

mod converse;
pub mod dry_run;
pub mod recall;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use converse::{Outcome, TextSink, converse};
pub use recall::Recall;

use crate::agent::AgentConfig;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::files::{self, ContextFile};
use crate::llm::{Endpoint, Provider};
use crate::prompt;

/// Deepest sub-agent nesting when `max_depth` is not 1..=5.
const DEFAULT_MAX_DEPTH: u32 = 3;

/// What every agent of one run shares: the global config, the depth limit
/// of the whole tree, and how talkative to be.
pub struct Session {
    config: Config,
    config_dir: PathBuf,
    /// The top-level agent's effective `max_depth`; it bounds the tree.
    pub max_depth: u32,
    pub verbose: bool,
    /// Endpoints already resolved, so an `api_key_cmd` runs once per run.
    endpoints: Mutex<Vec<Endpoint>>,
}

impl Session {
    pub fn new(config: Config, config_dir: PathBuf, top: &AgentConfig, verbose: bool) -> Session {
        let depth = top.sub_agents_config.max_depth;
        Session {
            config,
            config_dir,
            max_depth: if (1..=5).contains(&depth) {
                depth as u32
            } else {
                DEFAULT_MAX_DEPTH
            },
            verbose,
            endpoints: Mutex::new(Vec::new()),
        }
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// Where to send `provider`'s calls, with its key.
    pub fn endpoint(&self, provider: Provider) -> Result<Endpoint> {
        let mut known = self.endpoints.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = known.iter().find(|e| e.provider == provider) {
            return Ok(e.clone());
        }
        let endpoint = self.config.endpoint(provider)?;
        known.push(endpoint.clone());
        Ok(endpoint)
    }
}

/// An agent ready to talk: everything its first request needs.
pub struct Prepared {
    /// The name it was called by (the file stem), which names its log.
    pub name: String,
    pub cfg: AgentConfig,
    pub provider: Provider,
    pub model: String,
    pub workdir: PathBuf,
    pub skill: String,
    pub files: Vec<ContextFile>,
    /// Persona, skill, files and memory.
    pub system: String,
    /// Present when memory is enabled.
    pub recall: Option<Recall>,
}

/// Which step of [`Prepared::new`] failed, for the sub-agent's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Files,
    Skill,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::Files => "resolve files",
            Step::Skill => "load skill",
        })
    }
}

impl Prepared {
    /// Resolves the files and skill of `cfg` (whose model is already
    /// checked) and builds the system prompt, memory included.
    pub fn new(
        name: &str,
        cfg: AgentConfig,
        (provider, model): (Provider, String),
        workdir: PathBuf,
        config_dir: &Path,
    ) -> Result<Prepared, (Step, Error)> {
        let files = files::resolve(&cfg.files, &workdir).map_err(|e| (Step::Files, e))?;
        let skill = prompt::load_skill(&cfg.skill, config_dir).map_err(|e| (Step::Skill, e))?;
        let mut system = prompt::system(&cfg.system_prompt, &skill, &files);
        let recall = cfg.memory.enabled.then(|| recall::load(name, &cfg.memory));
        if let Some(r) = &recall {
            prompt::add_memory(&mut system, &r.entries);
        }
        Ok(Prepared {
            name: name.to_owned(),
            cfg,
            provider,
            model,
            workdir,
            skill,
            files,
            system,
            recall,
        })
    }

    /// `provider/model` as given.
    pub fn model_string(&self) -> String {
        format!("{}/{}", self.provider.name(), self.model)
    }

    /// Whether this agent may call sub-agents at `depth`.
    pub fn offers_tools(&self, session: &Session, depth: u32) -> bool {
        !self.cfg.sub_agents.is_empty() && depth < session.max_depth
    }

    /// Whether several calls in one reply run at the same time.
    pub fn parallel(&self) -> bool {
        self.cfg.sub_agents_config.parallel.unwrap_or(true)
    }
}

/// The current directory as a path to show, for agents without a workdir.
pub fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}
