//! Opening an agent's memory for `axe-mcp` ([`Opening`]), and the
//! memories `axe-mcp --http` serves, opened once per agent and kept
//! while the files they were opened from are unchanged ([`Opened`]).
//!
//! A stateless request (the 2026-07-28 revision: no session) opens its
//! agent's memory anew; reading and parsing the agent file and
//! config.toml, finding the agents directories and gathering the keys
//! memory keeps out was 7% of the server's time a call (perf, one
//! client on the bench's mix). Kept, a request costs the `stat`s of those paths
//! ([`Sources`]): an edited agent file, a new one in an earlier agents
//! directory, a changed config.toml are read at the next request, as
//! before. What is kept is what opening reads, never what a client was
//! shown: each request still gets a [`Memory`] of its own.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axe_agent::{AgentConfig, Agents};
use axe_base::dirs::Dirs;
use axe_base::error::Result;
use axe_base::fresh::Sources;
use axe_base::lock::Recover;
use axe_memory::Wait;
use axe_memory::notes::Workspace;
use axe_tools::Memory;
use axe_tools::{NotesSeen, Served};

/// Agents kept at most: a server of more names opens the others anew
/// each time, as it did before, rather than grow without bound on names
/// clients make up.
const MOST: usize = 1024;

pub struct Opened {
    agents: Agents,
    kept: Mutex<HashMap<String, Arc<Kept>>>,
    /// The agents whose own memory paths were said to be passed over.
    noted: Mutex<HashSet<String>>,
}

struct Kept {
    sources: Sources,
    opening: Opening,
}

impl Opened {
    pub fn new(agents: Agents) -> Opened {
        Opened {
            agents,
            kept: Mutex::default(),
            noted: Mutex::default(),
        }
    }

    /// The memory of the agent `name` for one request, and what its
    /// client is told of it.
    pub fn open(&self, name: &str) -> Result<(Memory, String)> {
        let kept = self.kept.lock().recover().get(name).cloned();
        let kept = match kept {
            Some(kept) if kept.sources.unchanged() => kept,
            _ => {
                // Stamped before reading: a change while it is read is a
                // change at the next request.
                let sources = Sources::of(self.agents.sources(name)?);
                let opening = open_served(&self.agents, name, &self.noted)?;
                let kept = Arc::new(Kept { sources, opening });
                let mut all = self.kept.lock().recover();
                if all.len() < MOST || all.contains_key(name) {
                    all.insert(name.to_owned(), Arc::clone(&kept));
                }
                kept
            }
        };
        let memory = kept.opening.memory(self.agents.dirs());
        Ok((memory, kept.opening.instructions.clone()))
    }
}

/// [`Opening::read`] of the agent `name` as the HTTP server offers it:
/// in the served data directory, whatever paths the agent file gives its
/// notes, run log and state (those are where the owner's own agent keeps
/// them; following them would serve the owner's memory to every token
/// reaching the agent). Said once per agent on stderr.
fn open_served(
    agents: &Agents,
    name: &str,
    noted: &Mutex<std::collections::HashSet<String>>,
) -> Result<Opening> {
    // Over HTTP no connection stands for one conversation: a stateless
    // request has no session, and a session may be shared by many (a
    // team's gateway, opencode serve).
    Opening::read(agents, name, true, &mut |cfg: &mut AgentConfig| {
        let set = !cfg.memory.notes.workspace.is_empty()
            || !cfg.memory.log.path.is_empty()
            || !cfg.memory.state.path.is_empty();
        cfg.memory.notes.workspace.clear();
        cfg.memory.log.path.clear();
        cfg.memory.state.path.clear();
        if set && noted.lock().recover().insert(name.to_owned()) {
            axe_base::stderr::note(format_args!(
                "axe-mcp: the agent file of \"{name}\" names where its memory lives; over HTTP its memory is the served one's, in {}",
                agents
                    .dirs()
                    .data()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default()
            ));
        }
    })
}

/// What opening an agent's memory reads (its agent file, config.toml's
/// keys), from which each request's [`Memory`] is made.
pub struct Opening {
    name: String,
    cfg: AgentConfig,
    notes: Option<Workspace>,
    pub instructions: String,
    secrets: axe_memory::secrets::Secrets,
    needs_if_match: bool,
}

impl Opening {
    /// Reads the agent `name`'s settings as `adjust` leaves them.
    pub fn read(
        agents: &Agents,
        name: &str,
        needs_if_match: bool,
        adjust: &mut dyn FnMut(&mut AgentConfig),
    ) -> Result<Opening> {
        let (mut cfg, own_file) = super::args::memory_agent(agents, name)?;
        adjust(&mut cfg);
        let notes = match cfg.memory.notes.enabled {
            // search_notes ranks as axe-notes-search does: by meaning too
            // when an embedding model is configured.
            true => Some(
                Workspace::of(agents.dirs(), &cfg.memory.notes)?
                    .with_meaning(axe_agent::config::embeddings(agents.dirs())?),
            ),
            false => None,
        };
        Ok(Opening {
            name: name.to_owned(),
            instructions: instructions(name, &cfg, own_file, needs_if_match),
            secrets: axe_agent::config::secrets(agents, cfg.memory.log.redact),
            cfg,
            notes,
            needs_if_match,
        })
    }

    /// A memory of its own for one client or request: nothing seen yet.
    pub fn memory(&self, dirs: &Dirs) -> Memory {
        Memory {
            agent: self.name.clone(),
            dirs: dirs.clone(),
            notes_cfg: self.cfg.memory.notes.clone(),
            notes: self.notes.clone(),
            seen: Mutex::new(NotesSeen::default()),
            at_reply: Mutex::default(),
            verbose: false,
            report: std::sync::Arc::new(axe_base::report::Stderr),
            secrets: self.secrets.clone(),
            redacted: Mutex::default(),
            served: Some(Served {
                cfg: self.cfg.memory.clone(),
            }),
            deadline: None,
            wait: Wait::default(),
            needs_if_match: self.needs_if_match,
        }
    }
}

/// What the client is told at `initialize`: whose memory, and how to use it.
fn instructions(name: &str, cfg: &AgentConfig, own_file: bool, needs_if_match: bool) -> String {
    let mut kinds = Vec::new();
    let notes = format!(
        "notes (recall before you start; remember what is worth keeping; search_notes finds older notes; reflect rewrites MEMORY.md and learn_fact a shared topic, only over what a recall showed you whole: pass the sha256 the recall gave for that file (memory_sha256 for MEMORY.md; each file's is also on a line after the recall's text) as if_match{})",
        match needs_if_match {
            true =>
                ", which this server needs to overwrite any file that has text, since it cannot tell which conversation calls",
            false => ", which a client without a session must",
        }
    );
    if cfg.memory.notes.enabled {
        kinds.push(notes.as_str());
    }
    if cfg.memory.state.enabled {
        kinds.push("a structured state (state_context to read it; state_record for AXE_MEMORY: signal lines and outcomes)");
    }
    if cfg.memory.log.enabled {
        kinds.push("a run log (log_recent, log_append)");
    }
    let whose = match own_file {
        true => format!("The memory of the agent \"{name}\""),
        false => format!(
            "The memory of \"{name}\" (no agent file of that name: every kind on, with the defaults)"
        ),
    };
    match kinds.is_empty() {
        true => {
            format!("{whose} keeps none of notes, state or a run log: only context is offered.")
        }
        false => format!(
            "{whose}: {}. context gives one block of all of it within a budget.",
            kinds.join("; ")
        ),
    }
}
