//! The notes' executables (`axe-notes-*`), and what they share: which
//! notes a command works on, an agent's (its `[notes]` workspace and
//! files) or a workspace named outright.

pub mod consolidate;
mod consolidate_diff;
pub mod learn;
pub mod path;
pub mod prune;
pub mod recall;
pub mod reflect;
pub mod remember;
mod rewrite;
pub mod search;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use axe_agent::Agents;
use axe_base::error::{Error, Result};
use axe_cli::{Arg, Complete, Flag, Matches};
use axe_memory::notes::Workspace;
use axe_memory::secrets::{Redaction, Secrets};
use axe_memory::settings::NotesConfig;

pub const AGENT: Arg = super::args::AGENT;

/// `--agent A` of the commands that may do without one.
pub const AGENT_FLAG: Flag = Flag::with_value(
    "agent",
    "AGENT",
    "Use this agent's notes workspace (and, for search, only its own files)",
)
.completes(Complete::Agent);

pub const WORKSPACE: Flag = Flag::with_value(
    "workspace",
    "DIR",
    "Use the notes workspace DIR [default: the agent's, else <data>/axe/notes]",
)
.completes(Complete::Dir);

/// A resolved workspace.
pub struct Notes {
    pub agent: Option<String>,
    pub cfg: NotesConfig,
    pub ws: Workspace,
    /// The agent's `[memory] redact`; `None` without an agent.
    pub redact: Option<bool>,
    /// Where the agent was found, and config.toml.
    pub agents: Agents,
}

/// The agent named by the AGENT argument, with or without an agent file
/// (see [`super::args::memory_agent`]), and its workspace.
pub fn of_agent(m: &Matches) -> Result<Notes> {
    let name = super::args::required_agent(m)?;
    named(name)
}

fn named(name: &str) -> Result<Notes> {
    let agents = super::args::env_agents();
    let (agent, _) = super::args::memory_agent(&agents, name)?;
    let ws = Workspace::of(agents.dirs(), &agent.memory.notes)?;
    Ok(Notes {
        agent: Some(name.to_owned()),
        cfg: agent.memory.notes,
        ws,
        redact: agent.memory.log.redact,
        agents,
    })
}

/// `--agent A` or `--workspace DIR` (the command's rules refuse both),
/// else the default workspace.
pub fn of_flags(m: &Matches, agent_flag: &Flag, workspace: &Flag) -> Result<Notes> {
    match (m.string(agent_flag)?, m.value(workspace)) {
        (Some(name), _) => named(name),
        (None, Some(dir)) => Ok(Notes {
            agent: None,
            cfg: NotesConfig::default(),
            ws: Workspace::at(PathBuf::from(dir)).cached(),
            redact: None,
            agents: super::args::env_agents(),
        }),
        (None, None) => {
            let cfg = NotesConfig::default();
            let agents = super::args::env_agents();
            let ws = Workspace::of(agents.dirs(), &cfg)?;
            Ok(Notes {
                agent: None,
                cfg,
                ws,
                redact: None,
                agents,
            })
        }
    }
}

impl Notes {
    /// The agent's name; only [`of_agent`] targets always have one.
    pub fn agent(&self) -> &str {
        self.agent.as_deref().unwrap_or_default()
    }

    /// What its writes do with credentials.
    pub fn secrets(&self) -> Secrets {
        axe_agent::config::secrets(&self.agents, self.redact)
    }
}

/// A file or directory that could not be read, in `--json`.
#[derive(serde::Serialize)]
pub struct Skipped {
    path: String,
    error: String,
}

/// `unreadable` as `--json` lists it: paths relative to `ws`.
pub fn skipped(ws: &Workspace, unreadable: &[axe_memory::notes::Unreadable]) -> Vec<Skipped> {
    unreadable
        .iter()
        .map(|u| Skipped {
            path: ws.relative(&u.path),
            error: u.why.clone(),
        })
        .collect()
}

/// `--json` of the notes writes: one shape for all three.
pub const WRITTEN_JSON: Flag = Flag::switch(
    "json",
    "Print {agent, topic, path, sha256, chars, redacted} as JSON",
);

/// What a notes write did, reported alike by `remember`, `reflect` and
/// `learn`: the file's path relative to the workspace on one line (which
/// shows the day a remember went to and the name a topic got), or with
/// `--json` one object of one shape, `{agent, topic, path, sha256,
/// chars, redacted}`; a line on stderr for each place secrets were
/// taken out of.
#[derive(Serialize)]
pub struct Written<'a> {
    /// `null` for a workspace named without an agent (`learn`).
    pub agent: Option<&'a str>,
    /// The topic's file name (`learn`), else `null`.
    pub topic: Option<&'a str>,
    /// The file written.
    pub path: String,
    /// The file's SHA-256 now, the next `--if-match`; `null` for an
    /// append (`remember`), which takes none.
    pub sha256: Option<String>,
    /// The characters written, as the command's limit counts them.
    pub chars: usize,
    /// The secrets taken out before the write.
    pub redacted: Vec<Redaction>,
}

impl Written<'_> {
    /// Prints the report of the write to `path` in `ws`.
    pub fn print(
        &self,
        out: &mut dyn Write,
        ws: &Workspace,
        path: &Path,
        json: bool,
    ) -> Result<()> {
        crate::commands::args::tell(&self.redacted);
        if json {
            return axe_cli::write_json(out, self);
        }
        writeln!(out, "{}", ws.relative(path)).map_err(Error::Output)
    }
}
