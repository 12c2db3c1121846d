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
    /// Its arguments have been checked against the schema of `offer`.
    pub run: fn(&Context, &Call) -> Result<String, String>,
    /// What the model is told if the call panicked.
    pub crashed: &'static str,
}

/// The hashes of the notes files the model has seen whole, so that its
/// rewrites never overwrite what it did not see. A recall sets them anew
/// (a file it left out, or could not read, is not seen); a rewrite adds
/// what it wrote.
#[derive(Debug, Default, Clone)]
pub struct NotesSeen {
    /// MEMORY.md's SHA-256, as the last recall showed it or the last
    /// reflect wrote it.
    pub memory: Option<String>,
    /// `(topic, SHA-256)` of world topics shown whole or learned.
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

/// A call whose arguments match its tool's schema, as its tool runs it.
pub struct Call<'a> {
    pub call: &'a ToolCall,
    /// What the model had seen when the reply holding this call came:
    /// every call of one reply carries the same hashes, so of several
    /// rewrites of one file in a reply at most one can win.
    pub seen: &'a NotesSeen,
}

impl Call<'_> {
    /// A string argument; empty when an optional one is left out.
    pub fn str(&self, key: &str) -> &str {
        self.call
            .arguments
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// An integer argument that the schema keeps at 0 or more; `None`
    /// when left out.
    pub fn count(&self, key: &str) -> Option<u64> {
        let n = super::schema::integer(self.call.arguments.get(key)?)?;
        Some(u64::try_from(n).unwrap_or(0))
    }
}
