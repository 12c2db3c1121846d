//! The run log's executables (`axe-mem-*`), and what they share: `AGENT`
//! or `--file PATH`, which log a command works on.

pub mod append;
pub mod count;
pub mod load;
pub mod path;
pub mod trim;

use std::path::PathBuf;

use serde::Serialize;

use super::args::{AGENT, agent_arg};
use axe_agent::Agents;
use axe_base::error::{Error, Result};
use axe_cli::{Complete, Flag, Item, Matches, Rule};
use axe_memory::settings::LogConfig;

pub const FILE: Flag = Flag::with_value(
    "file",
    "PATH",
    "Work on the log at PATH instead of an agent's",
)
.completes(Complete::File);

/// `AGENT` or `--file`, not both: the rules every log command starts with.
pub const NOT_BOTH: Rule = Rule::Conflict(Item::Flag(&FILE), Item::Arg(&AGENT));
pub const ONE: Rule = Rule::Either(Item::Arg(&AGENT), Item::Flag(&FILE));

/// The usage lines every memory command shares.
pub const USAGE: &[&str] = &["[OPTIONS] <AGENT>", "[OPTIONS] --file <PATH>"];

/// A resolved log.
pub struct Target {
    /// The agent name, unless `--file` was used.
    pub agent: Option<String>,
    /// The agent's run log settings (`[memory]`), unless `--file` was used.
    pub run_log: Option<LogConfig>,
    pub path: PathBuf,
    /// The directories and agents the command reads, built once.
    pub agents: Agents,
}

/// The fields every memory command's JSON starts with.
#[derive(Serialize)]
pub struct Base {
    pub agent: Option<String>,
    pub path: String,
}

impl Target {
    pub fn base(&self) -> Base {
        Base {
            agent: self.agent.clone(),
            path: self.path.to_string_lossy().into_owned(),
        }
    }
}

/// Which log the command line names, read with the other flags before
/// any file is touched: a malformed flag is the error even when the agent
/// is broken, as cobra parsed flags first in Go.
pub enum Given<'m> {
    Agent(&'m str),
    File(&'m std::path::Path),
}

impl<'m> Given<'m> {
    /// Reads `AGENT` or `--file`.
    pub fn read(m: &'m Matches) -> Result<Given<'m>> {
        match (agent_arg(m)?, m.value(&FILE)) {
            // Only when a command left out the rules above.
            (Some(_), Some(_)) | (None, None) => Err(Error::Usage(ONE.message())),
            (None, Some(path)) => Ok(Given::File(std::path::Path::new(path))),
            (Some(name), None) => Ok(Given::Agent(name)),
        }
    }

    /// The log, and its agent's settings. An agent without an agent file
    /// has the log `axe-mcp` serves for its name (see
    /// [`super::args::memory_agent`]).
    pub fn resolve(self) -> Result<Target> {
        match self {
            Given::File(path) => Ok(Target {
                agent: None,
                run_log: None,
                path: path.to_path_buf(),
                agents: super::args::env_agents(),
            }),
            Given::Agent(name) => {
                let agents = super::args::env_agents();
                let (cfg, _) = super::args::memory_agent(&agents, name)?;
                let path = axe_memory::log::file_path(agents.dirs(), name, &cfg.memory.log.path)?;
                Ok(Target {
                    agent: Some(name.to_owned()),
                    run_log: Some(cfg.memory.log),
                    path,
                    agents,
                })
            }
        }
    }
}

/// Reads `AGENT` or `--file` and resolves it: for the commands with no
/// other flag to read first.
pub fn resolve(m: &Matches) -> Result<Target> {
    Given::read(m)?.resolve()
}
