//! The memories `axe-mcp --http` serves, opened once per agent and kept
//! while the files they were opened from are unchanged.
//!
//! A stateless request (the 2026-07-28 revision: no session) opens its
//! agent's memory anew; reading and parsing the agent file and
//! config.toml, finding the agents directories and gathering the keys
//! memory keeps out was a tenth of the server's time a call under load
//! (bench/RESULTS.md). Kept, a request costs the `stat`s of those paths
//! ([`Sources`]): an edited agent file, a new one in an earlier agents
//! directory, a changed config.toml are read at the next request, as
//! before. What is kept is what opening reads, never what a client was
//! shown: each request still gets a [`Memory`] of its own.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::mcp::{Opening, open_served};
use axe_agent::Agents;
use axe_base::error::Result;
use axe_base::fresh::Sources;
use axe_base::lock::Recover;
use axe_tools::Memory;

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
