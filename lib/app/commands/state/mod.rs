//! The structured state's executables (`axe-state-*`), and what they
//! share: the state file a command works on, an agent's.

pub mod context;
pub mod ingest;
pub mod path;
pub mod record;
pub mod show;

use std::path::PathBuf;

use super::args::required_agent;
use axe_base::error::Result;
use axe_cli::{Flag, Matches};
use axe_memory::secrets::Secrets;
use axe_memory::settings::StateConfig;

/// `--task ID` of the commands that record into or show a task.
pub const TASK: Flag = Flag::with_value(
    "task",
    "ID",
    "The current task: signals about steps and files go to it [default: main]",
);

/// An agent's state file and settings.
pub struct Target {
    pub agent: String,
    pub cfg: StateConfig,
    pub path: PathBuf,
    /// What its saves do with credentials (`[memory] redact`).
    pub secrets: Secrets,
}

/// The agent named by AGENT, with or without an agent file (see
/// [`super::args::memory_agent`]), and its state file:
/// `[state] path`, else `<data>/state/<agent>.json`.
pub fn resolve(m: &Matches) -> Result<Target> {
    open(required_agent(m)?)
}

/// The state of `agent`, for a command that has read its flags first
/// (AGENT with [`required_agent`]): a malformed flag is the error even
/// when the agent is broken, as cobra parsed flags first in Go.
pub fn open(agent: &str) -> Result<Target> {
    let agent = agent.to_owned();
    let agents = super::args::env_agents();
    let (loaded, _) = super::args::memory_agent(&agents, &agent)?;
    let cfg = loaded.memory.state;
    let path = axe_memory::state::file_path(agents.dirs(), &agent, &cfg.path)?;
    Ok(Target {
        agent,
        cfg,
        path,
        secrets: axe_agent::config::secrets(&agents, loaded.memory.log.redact),
    })
}
