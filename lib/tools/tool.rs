//! What a tool is, and what a memory tool sees of its caller.

use crate::error::ToolError;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Map, Value};

use axe_base::dirs::Dirs;
use axe_base::lock::Recover;
use axe_base::report::Report;
use axe_memory::lock::Wait;
use axe_memory::notes::Workspace;
use axe_memory::secrets::{self, Kind, Place, Redaction, Secrets};
use axe_memory::settings::NotesConfig;

/// One tool, over a context `C` of its kind: a row of a table.
pub struct Tool<C> {
    pub name: &'static str,
    pub description: &'static str,
    /// Whether it is offered in `ctx`.
    pub offered: fn(&C) -> bool,
    /// The JSON Schema of its arguments: its argument struct's
    /// ([`crate::args!`]).
    pub schema: fn() -> Value,
    /// The result of one call, or the error text the model gets instead.
    /// Its arguments have been checked against `schema`, and it reads
    /// them into its argument struct.
    pub run: fn(&C, &Map<String, Value>) -> Result<Reply, ToolError>,
    /// The JSON Schema of [`Reply::data`], for callers that list it (an
    /// MCP client's `outputSchema`).
    pub output: fn() -> Value,
    /// Whether it only reads: offered under `axe-mcp --read-only`, and
    /// said in MCP's annotations.
    pub reads: bool,
    /// Whether it works in the agent's working directory (the file tools
    /// and `run_command`): what a workdir the user did not name is
    /// checked for.
    pub workdir: bool,
}

/// What a tool answers: text for a model, and the same as data for a
/// caller that takes it (MCP's `structuredContent`). The data says all
/// the text does, the memory's texts included, not only their hashes,
/// paths and counts: some clients (Claude Code, Codex) show their model
/// the data in place of the text.
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub data: Value,
}

impl Reply {
    /// A reply of text alone, its data saying the same.
    pub fn text(text: String) -> Reply {
        Reply {
            data: serde_json::json!({ "text": text }),
            text,
        }
    }
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
    /// Whether a recall was made: then a topic it neither showed nor left
    /// out did not exist, and one that exists now was made since.
    pub recalled: bool,
    /// Topics the last recall left out or could not read: not seen.
    pub unseen_world: Vec<String>,
}

/// What a memory tool needs: whose memory, its settings, and what this
/// caller (a conversation, a client) has seen of it. Owned, so that a
/// table of tools over it is one constant for every caller.
pub struct Memory {
    /// The agent's name, which names its own files.
    pub agent: String,
    /// Where its files are: the command's directories.
    pub dirs: Dirs,
    pub notes_cfg: NotesConfig,
    /// The notes workspace, when the agent keeps notes.
    pub notes: Option<Workspace>,
    /// What the caller's notes tools have read.
    pub seen: Mutex<NotesSeen>,
    /// What had been read when the reply (or request) being answered
    /// came: every call of one reply carries the same hashes, so of
    /// several rewrites of one file in a reply at most one can win.
    pub at_reply: Mutex<NotesSeen>,
    /// Whether to say each call (`-v`), to `report`.
    pub verbose: bool,
    /// Where the tools' lines go: the caller's reporter.
    pub report: Arc<dyn Report>,
    /// What the tools' writes do with credentials.
    pub secrets: Secrets,
    /// The secrets the tools' writes took out so far, for the caller's
    /// report (`axe-run -v` and `--json`).
    pub redacted: Mutex<Vec<Redaction>>,
    /// The rest of the agent's memory, when it is served to another agent
    /// (`axe-mcp`): its run log, state and the one budgeted block become
    /// tools too. Inside a run they are in the prompt already: `None`.
    pub served: Option<Served>,
    /// When the caller's time is up: the run's deadline inside `axe-run`
    /// (a search stops there). `None` for `axe-mcp`, where each search has
    /// a limit of its own instead.
    pub deadline: Option<Instant>,
    /// How long a memory file's lock is waited for: the run's deadline
    /// inside `axe-run`, the default for `axe-mcp`.
    pub wait: Wait,
    /// Whether the caller cannot stand for one conversation, so that what
    /// it was shown says nothing of what any one model saw (`axe-mcp
    /// --http`, where a request may have no session and one session may
    /// serve many conversations, and `axe-mcp --require-if-match` for a
    /// client such as `opencode serve` whose one connection serves all its
    /// sessions): then an existing MEMORY.md or topic is overwritten only
    /// with `if_match`, the hash a recall showed, never on what was seen.
    pub needs_if_match: bool,
}

impl Memory {
    /// A reply came with calls: they all start from what was seen now.
    pub fn reply_came(&self) {
        let now = self.seen.lock().recover().clone();
        *self.at_reply.lock().recover() = now;
    }

    /// What had been read when the reply being answered came.
    pub fn seen_at_reply(&self) -> NotesSeen {
        self.at_reply.lock().recover().clone()
    }

    /// Notes that a write to `place` took out `kinds`, and says it as a
    /// tool's reply does: the sentence for the model (empty when nothing
    /// was taken out) and the list for its data.
    pub fn took_out(&self, place: Place, kinds: &[Kind]) -> (String, Value) {
        let done = secrets::at(place, kinds);
        let sentence = secrets::lines(&done)
            .into_iter()
            .map(|l| format!(" Before writing, {l}: the marker stays in its place."))
            .collect();
        let data = serde_json::to_value(&done).unwrap_or_default();
        self.redacted.lock().recover().extend(done);
        (sentence, data)
    }
}

/// The JSON Schema of a write's `redacted`, in every writing tool's data.
pub fn redacted_schema() -> Value {
    serde_json::json!({
        "type": "array",
        "description": "Secrets taken out before writing, each replaced by [redacted: <kind>]",
        "items": {"type": "object", "properties": {
            "kind": {"type": "string"},
            "where": {"type": "string"},
        }, "required": ["kind", "where"]},
    })
}

/// An agent's whole memory, served: its configuration says which kinds
/// it keeps and where.
pub struct Served {
    pub cfg: axe_memory::Settings,
}
