//! What a tool is, and what it sees of the conversation that calls it.

use serde_json::Value;

use crate::llm::{Deadline, ToolCall, ToolDef};
use crate::run::prepared::Prepared;
use crate::run::session::Session;

/// One tool.
pub struct Tool {
    pub name: &'static str,
    /// Its definition, when the agent of `ctx` is offered it.
    pub offer: fn(&Context) -> Option<ToolDef>,
    /// The result of one call, or the error text the model gets instead.
    pub run: fn(&Context, &ToolCall) -> Result<String, String>,
    /// What the model is told if the call panicked.
    pub crashed: &'static str,
}

/// The hashes of the notes files a conversation has read, so that its
/// rewrites never overwrite what it did not see.
#[derive(Debug, Default)]
pub struct NotesSeen {
    /// MEMORY.md's SHA-256 at the last recall or reflect.
    pub memory: Option<String>,
    /// `(topic, SHA-256)` of world topics recalled or learned.
    pub world: Vec<(String, String)>,
}

/// Runs a sub-agent: `(name, user message, depth, deadline)` to its answer
/// or what went wrong.
pub type SubAgent<'a> = dyn Fn(&str, &str, u32, Deadline) -> Result<String, String> + Sync + 'a;

/// A conversation's view for its tools.
pub struct Context<'a> {
    pub session: &'a Session,
    pub agent: &'a Prepared,
    pub depth: u32,
    pub deadline: Deadline,
    /// Runs a sub-agent's whole conversation: `(name, user message, depth,
    /// deadline)` to its answer. Passed in, so that tools need not import
    /// the conversation loop that calls them.
    pub sub_agent: &'a SubAgent<'a>,
    /// What the notes tools have read in this conversation.
    pub notes_seen: &'a std::sync::Mutex<NotesSeen>,
}

/// A string argument of a tool call; other JSON values as their text.
pub fn arg(call: &ToolCall, key: &str) -> String {
    match call.arguments.get(key) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
