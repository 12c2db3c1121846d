//! What a built-in tool sees of its caller ([`Act`]), and what the tools
//! share to describe themselves.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use axe_base::dirs::Dirs;
use axe_memory::lock::Wait;

use super::artifacts::Artifacts;
use super::sandbox::Sandbox;

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
    /// How `run_command` runs, when the agent has it.
    pub sandbox: Option<Sandbox>,
    /// When the run must be over: a command still running then is killed
    /// with everything it started.
    pub deadline: Instant,
    /// axe's own directories, which the tools keep out of.
    pub dirs: Dirs,
    /// The run's HTTP client (`web_search`; `url_fetch` pins its
    /// addresses on it).
    pub client: axe_net::Client,
}

impl Act {
    /// How long a file's lock is waited for: no longer than the run.
    pub fn wait(&self) -> Wait {
        Wait::Until(self.deadline)
    }

    /// Whether the tool `name` was given to this agent.
    pub fn gives(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t == name)
    }
}

/// The description of the parameter every file tool takes to work in the
/// artifact directory.
pub fn artifact_param(what: &str) -> String {
    format!("When true, {what} the artifact directory instead of the working directory.")
}

/// The output schema of [`Reply::text`]'s replies.
pub fn text_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
}
