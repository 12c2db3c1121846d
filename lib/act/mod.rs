//! Built-in tools: what an agent does to the world besides its memory,
//! offered when its file lists them in `tools = [...]`. Like the memory
//! tools they are rows of a table ([`BUILTIN`]) over a context of their
//! own ([`Act`]: whose workdir, which artifact directory, which hosts,
//! which sandbox, until when), so they run outside a conversation too.
//!
//! Every path a model names is walked from the directory's handle
//! ([`crate::beneath`]), so `..`, absolute paths, symlinks and a swap
//! mid-call stay inside; commands run in bubblewrap where it works
//! ([`sandbox`]); `url_fetch` connects only to addresses it checked
//! ([`fetch`]).

pub mod artifacts;
mod command;
mod fetch;
mod files;
mod heuristic;
mod hosts;
mod html;
mod http_get;
pub mod names;
mod paths;
pub mod sandbox;
mod search;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

pub use artifacts::{Artifact, Artifacts};
pub use sandbox::Sandbox;

use crate::llm::ToolDef;
use crate::tools::{Reply, Tool};

/// The built-in tools, in the order they are offered.
pub const BUILTIN: &[Tool<Act>] = &[
    files::LIST_DIRECTORY,
    files::READ_FILE,
    files::WRITE_FILE,
    files::EDIT_FILE,
    command::RUN_COMMAND,
    fetch::URL_FETCH,
    search::WEB_SEARCH,
];

/// What a built-in tool sees of its caller.
pub struct Act {
    /// The agent's name, which its artifacts are recorded under.
    pub agent: String,
    /// The tools it was given (`tools = [...]`); only these are offered.
    pub tools: Vec<String>,
    pub workdir: PathBuf,
    /// The run's artifact directory, when it has one.
    pub artifacts: Option<Arc<Artifacts>>,
    /// `write_file` writes to the artifact directory unless told not to.
    pub default_write: bool,
    /// Hosts `url_fetch` may reach; empty: any public host.
    pub allowed_hosts: Vec<String>,
    /// How `run_command` runs.
    pub sandbox: Sandbox,
    /// When the run must be over: a command still running then is killed
    /// with everything it started.
    pub deadline: Instant,
}

impl Act {
    /// Whether the tool `name` was given to this agent.
    fn gives(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t == name)
    }
}

/// The definition of the tool `name` when `act` gives it.
fn offer(
    act: &Act,
    name: &str,
    description: &str,
    properties: Value,
    required: &[&str],
) -> Option<ToolDef> {
    act.gives(name).then(|| ToolDef {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
        }),
    })
}

/// A reply of text alone, its data saying the same.
fn text(text: String) -> Reply {
    Reply {
        data: json!({ "text": text }),
        text,
    }
}

/// The output schema of [`text`]'s replies.
fn text_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
}

/// The parameter every file tool takes to work in the artifact directory.
fn artifact_param(what: &str) -> Value {
    json!({
        "type": "boolean",
        "description": format!("When true, {what} the artifact directory instead of the working directory."),
    })
}
