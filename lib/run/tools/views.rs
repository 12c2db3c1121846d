//! What a conversation's tools see of it: the views the memory and
//! built-in tools work on.

use std::sync::Mutex;

use crate::prepared::Prepared;
use crate::session::Session;
use axe_llm::Deadline;
use axe_tools::Memory;
use axe_tools::builtin::Act;

/// The memory tools' view of `agent`'s memory, seen what its prompt
/// showed whole (nothing, for a run), until
/// `deadline` (none for a listing of the tools).
pub fn memory(session: &Session, agent: &Prepared, deadline: Option<Deadline>) -> Memory {
    Memory {
        agent: agent.name.clone(),
        dirs: agent.dirs.clone(),
        notes_cfg: agent.cfg.memory.notes.clone(),
        notes: agent.notes.clone(),
        seen: Mutex::new(agent.notes_seen.clone()),
        at_reply: Mutex::default(),
        verbose: session.verbose,
        report: session.reporter(),
        secrets: session.secrets(&agent.cfg),
        redacted: Mutex::default(),
        served: None,
        deadline: deadline.map(|d| d.at),
        wait: agent.wait,
        // A run is one conversation: what its model was shown is known.
        needs_if_match: false,
    }
}

/// The built-in tools' view of `agent` in this run, until `deadline`.
pub fn act(session: &Session, agent: &Prepared, deadline: Deadline) -> Act {
    Act {
        agent: agent.name.clone(),
        tools: agent.cfg.tools.clone(),
        workdir: agent.workdir.clone(),
        artifacts: session.artifacts.clone(),
        default_write: agent.cfg.artifacts.default_write,
        allowed_hosts: agent.allowed_hosts.clone(),
        sandbox: agent.sandbox.clone(),
        deadline: deadline.at,
        dirs: agent.dirs.clone(),
        client: session.client.clone(),
    }
}
