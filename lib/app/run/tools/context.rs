//! What a conversation's tools see of it.

use std::sync::Mutex;

use super::mcp::Servers;
use crate::run::prepared::Prepared;
use crate::run::session::Session;
use axe_llm::Deadline;
use axe_tools::builtin::Act;
use axe_tools::{Memory, NotesSeen};

/// Runs a sub-agent: `(name, user message, depth, deadline, the caller's
/// allowed_hosts)` to its answer or what went wrong.
pub type SubAgent<'a> =
    dyn Fn(&str, &str, u32, Deadline, &[String]) -> Result<String, String> + Sync + 'a;

/// A conversation's view for its tools.
pub struct Context<'a> {
    pub session: &'a Session,
    pub agent: &'a Prepared,
    pub depth: u32,
    pub deadline: Deadline,
    /// Runs a sub-agent's whole conversation. Passed in, so that tools
    /// need not import the conversation loop that calls them.
    pub sub_agent: &'a SubAgent<'a>,
    /// The agent's memory, for the memory tools, with what they have read
    /// in this conversation.
    pub memory: Memory,
    /// The agent's MCP servers, once [`super::connect`] started them.
    pub mcp: Servers,
    /// What the built-in tools the agent was given work on.
    pub act: Act,
}

/// The memory tools' view of `agent`'s memory, nothing seen yet, until
/// `deadline` (none for a listing of the tools).
pub fn memory(session: &Session, agent: &Prepared, deadline: Option<Deadline>) -> Memory {
    Memory {
        agent: agent.name.clone(),
        notes_cfg: agent.cfg.notes.clone(),
        notes: agent.notes.clone(),
        seen: Mutex::new(NotesSeen::default()),
        verbose: session.verbose,
        secrets: session.secrets(&agent.cfg),
        redacted: Mutex::default(),
        served: None,
        deadline: deadline.map(|d| d.at),
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
    }
}
