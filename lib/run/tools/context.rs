//! What a conversation's tools see of it.

use std::sync::Mutex;

use super::mcp::Servers;
use crate::llm::Deadline;
use crate::run::prepared::Prepared;
use crate::run::session::Session;
use crate::tools::{Memory, NotesSeen};

/// Runs a sub-agent: `(name, user message, depth, deadline)` to its answer
/// or what went wrong.
pub type SubAgent<'a> = dyn Fn(&str, &str, u32, Deadline) -> Result<String, String> + Sync + 'a;

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
}

/// The memory tools' view of `agent`'s memory, nothing seen yet.
pub fn memory(session: &Session, agent: &Prepared) -> Memory {
    Memory {
        agent: agent.name.clone(),
        notes_cfg: agent.cfg.notes.clone(),
        notes: agent.notes.clone(),
        seen: Mutex::new(NotesSeen::default()),
        verbose: session.verbose,
        secrets: session.secrets(&agent.cfg),
        redacted: Mutex::default(),
        served: None,
    }
}
