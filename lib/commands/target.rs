//! `AGENT` or `--file PATH`: which log a memory command works on.

use std::path::PathBuf;

use serde::Serialize;

use crate::agent::{self, MemoryConfig};
use crate::cli::{Arg, Complete, Flag, Matches};
use crate::error::{Error, Result};
use crate::memory;

pub const AGENT: Arg = Arg {
    name: "AGENT",
    help: "The agent's name: its file in the agents directory, without .toml",
    complete: Complete::Agent,
    many: false,
};

pub const FILE: Flag = Flag::with_value(
    "file",
    "PATH",
    "Work on the log at PATH instead of an agent's",
)
.completes(Complete::File);

/// The usage lines every memory command shares.
pub const USAGE: &[&str] = &["[OPTIONS] <AGENT>", "[OPTIONS] --file <PATH>"];

/// A resolved log.
pub struct Target {
    /// The agent name, unless `--file` was used.
    pub agent: Option<String>,
    /// The agent's `[memory]` settings, unless `--file` was used.
    pub memory: Option<MemoryConfig>,
    pub path: PathBuf,
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

/// Reads `AGENT` or `--file`. An agent must have an agent file, as for
/// `axe-run`: a typo in a name is an error, never a new, empty log.
/// The AGENT argument, when given; the parser allows one at most.
pub fn agent_arg(m: &Matches) -> Result<Option<&str>> {
    m.args()
        .first()
        .map(|name| {
            name.to_str().ok_or_else(|| {
                Error::InvalidAgentName(format!(
                    "agent name \"{}\" is not valid UTF-8",
                    name.to_string_lossy()
                ))
            })
        })
        .transpose()
}

/// The words after AGENT (a task, a note), joined by spaces; `None` when
/// there are none.
pub fn words_after_agent(m: &Matches) -> Option<String> {
    let words: Vec<String> = m
        .args()
        .get(1..)?
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The AGENT argument of a command that cannot do without one.
pub fn required_agent(m: &Matches) -> Result<&str> {
    agent_arg(m)?.ok_or_else(|| Error::Usage("agent name is required".into()))
}

/// `--timeout SECONDS` of `axe-llm`, `axe-run` and `axe-gc` [default: 120]:
/// positive, fractions allowed, at most [`timeout::MAX_SECONDS`].
pub fn timeout(m: &Matches, flag: &Flag) -> Result<std::time::Duration> {
    let seconds = m.number::<f64>(flag)?.unwrap_or(120.0);
    crate::timeout::from_seconds(seconds).map_err(|why| Error::Usage(format!("--timeout {why}")))
}

pub fn resolve(m: &Matches) -> Result<Target> {
    let file = m.value(&FILE);
    match (agent_arg(m)?, file) {
        (Some(_), Some(_)) => Err(Error::Usage(
            "cannot specify both --file and an agent name".to_owned(),
        )),
        (None, None) => Err(Error::Usage(
            "agent name is required (or use --file)".to_owned(),
        )),
        (None, Some(path)) => Ok(Target {
            agent: None,
            memory: None,
            path: PathBuf::from(path),
        }),
        (Some(name), None) => {
            let cfg = agent::load(name)?;
            let path = memory::file_path(name, &cfg.memory.path)?;
            Ok(Target {
                agent: Some(name.to_owned()),
                memory: Some(cfg.memory),
                path,
            })
        }
    }
}
