//! `axe-run --dry-run`: the resolved context, built once as data
//! ([`DryRun`]) and rendered as the Go `axe` printed it ([`DryRun::text`])
//! or as one JSON document ([`DryRun::json`]), so the two cannot show
//! different things.

use std::io::Write;

use serde::Serialize;

use super::injected::Injected;
use super::prepared::Prepared;
use super::session::Session;
use super::tools;
use axe_base::error::{Error, Result};
use axe_base::timeout::Seconds;
use axe_llm::Message;
use axe_memory::shared_block::Assembled;

/// Everything `--dry-run` shows besides the agent itself.
pub struct Shown<'a> {
    pub timeout: Seconds,
    /// The PROMPT words, when given; standard input follows them.
    pub task: Option<&'a str>,
    /// Standard input, empty when it is a terminal or sent nothing.
    pub stdin: &'a str,
    /// The memory block after the task.
    pub memory: &'a Injected,
    /// The turns before the task, with `--messages`.
    pub history: Option<&'a [Message]>,
}

/// What `--dry-run` shows, worked out once: the `--dry-run --json`
/// document, and the few things only the text shows.
#[derive(Serialize)]
pub struct DryRun<'a> {
    agent: &'a str,
    model: String,
    workdir: String,
    timeout: Seconds,
    /// What is sent; `null`: not sent.
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    system_prompt: &'a str,
    skill: &'a str,
    files: Vec<&'a str>,
    /// What was left out, and why; only when something was.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    files_left_out: &'a [String],
    /// The files sent with U+FFFD for bytes that were not UTF-8; only
    /// when there were some.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    files_converted: &'a [String],
    /// The PROMPT words; `null` when none were given.
    task: Option<&'a str>,
    stdin: &'a str,
    /// `null` when memory is disabled.
    memory: Option<Memory<'a>>,
    sub_agents: &'a [String],
    max_depth: u32,
    parallel: bool,
    sub_agent_timeout: u64,
    /// `null` when notes are disabled.
    notes: Option<Notes>,
    /// `null` when state is disabled or a `[context] budget` is set.
    session_memory: Option<&'a str>,
    /// `null` without a `[context] budget`.
    context: Option<&'a Assembled>,
    /// Every tool the model would be offered.
    tools: Vec<String>,
    /// What holds `run_command`; `null` without it.
    sandbox: Option<String>,
    allowed_hosts: &'a [String],
    /// The turns before the task; only with `--messages`.
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<&'a [Message]>,
    /// The servers a run would start; none is started.
    mcp_servers: Vec<McpServer<'a>>,
    /// The text's `Params:` line.
    #[serde(skip)]
    params: String,
    /// The system prompt without the run log's entries that end it: the
    /// text shows those in a section of their own.
    #[serde(skip)]
    persona: &'a str,
    /// Whether the agent was given built-in tools: only then does the
    /// text have a Tools section, so the layout of the others stays Go's.
    #[serde(skip)]
    gives_tools: bool,
    /// Whether a `[context] budget` is set: then the run log's entries
    /// are in its block, and the text has no Memory section.
    #[serde(skip)]
    shared_budget: bool,
}

#[derive(Serialize)]
struct McpServer<'a> {
    name: &'a str,
    transport: &'a str,
    required: bool,
}

#[derive(Serialize)]
struct Notes {
    workspace: String,
    tools: Vec<String>,
}

#[derive(Serialize)]
struct Memory<'a> {
    path: Option<String>,
    entries_loaded: u64,
    entries: &'a str,
    error: Option<&'a str>,
}

impl<'a> DryRun<'a> {
    /// What a dry run of `agent` in `session` shows, with `s`.
    pub fn new(session: &Session, agent: &'a Prepared, s: &Shown<'a>) -> DryRun<'a> {
        let cfg = &agent.cfg;
        let (temperature, max_tokens) = agent.params_sent();
        DryRun {
            agent: &agent.name,
            model: agent.model_string(),
            workdir: agent.workdir.display().to_string(),
            timeout: s.timeout,
            temperature,
            max_tokens,
            system_prompt: &agent.system,
            skill: &agent.skill,
            files: agent.files.iter().map(|f| f.path.as_str()).collect(),
            files_left_out: &agent.files_left_out,
            files_converted: &agent.files_converted,
            task: s.task,
            stdin: s.stdin,
            memory: agent.recall.as_ref().map(|r| Memory {
                path: r.path.as_ref().map(|p| p.display().to_string()),
                entries_loaded: r.loaded,
                entries: &r.entries,
                error: r.error.as_deref(),
            }),
            sub_agents: &cfg.sub_agents,
            max_depth: session.max_depth,
            parallel: agent.parallel(),
            sub_agent_timeout: cfg.sub_agents_config.timeout.get(),
            session_memory: match s.memory {
                Injected::State(block) => Some(block),
                _ => None,
            },
            context: match s.memory {
                Injected::Context(c) => Some(c),
                _ => None,
            },
            mcp_servers: cfg
                .mcp_servers
                .iter()
                .map(|s| McpServer {
                    name: &s.name,
                    transport: &s.transport,
                    required: s.required(),
                })
                .collect(),
            tools: tools::names(session, agent, 0),
            sandbox: agent.sandbox.as_ref().map(|s| s.describe()),
            allowed_hosts: &agent.allowed_hosts,
            notes: agent.notes.as_ref().map(|ws| Notes {
                workspace: ws.root.display().to_string(),
                tools: tools::memory_names(session, agent),
            }),
            messages: s.history,
            params: agent.params_line(),
            persona: agent.system.get(..agent.system_stable).unwrap_or_default(),
            gives_tools: !cfg.tools.is_empty(),
            shared_budget: cfg.memory.context.budget.is_some(),
        }
    }

    /// The `--dry-run --json` document.
    pub fn json(&self, out: &mut dyn Write) -> Result<()> {
        axe_cli::write_json(out, self)
    }

    /// Go's text layout (reference, "Dry-run output").
    pub fn text(&self, out: &mut dyn Write) -> Result<()> {
        let mut to = Stream { out, failed: None };
        self.layout(&mut to);
        to.failed.map_or(Ok(()), |e| Err(Error::Output(e)))
    }

    /// The text of [`DryRun::text`], written to `out`; an error there is
    /// kept by it, so the results of the writes are not looked at here.
    fn layout(&self, out: &mut impl std::fmt::Write) {
        let _ = write!(
            out,
            "=== Dry Run ===\n\nModel:    {}\nWorkdir:  {}\nTimeout:  {}s\nParams:   {}\n\n",
            self.model, self.workdir, self.timeout, self.params
        );
        let _ = write!(out, "--- System Prompt ---\n{}\n\n", self.persona);
        let _ = write!(out, "--- Skill ---\n{}\n\n", or_none(self.skill));
        let _ = writeln!(out, "--- Files ({}) ---", self.files.len());
        if self.files.is_empty() {
            let _ = out.write_str("(none)\n");
        }
        for path in &self.files {
            let _ = writeln!(out, "{path}");
        }
        if !self.files_converted.is_empty() {
            let _ = writeln!(out, "Converted ({}):", self.files_converted.len());
        }
        for line in self.files_converted {
            let _ = writeln!(out, "- {line}");
        }
        if !self.files_left_out.is_empty() {
            let _ = writeln!(out, "Left out ({}):", self.files_left_out.len());
        }
        for line in self.files_left_out {
            let _ = writeln!(out, "- {line}");
        }
        let _ = out.write_str("\n");
        // Go's layout had no words to show: the section is there only when
        // there are some, so a run without them looks as it did.
        if let Some(task) = self.task {
            let _ = write!(out, "--- Task ---\n{task}\n\n");
        }
        let stdin = if self.stdin.trim().is_empty() {
            "(none)"
        } else {
            self.stdin
        };
        let _ = write!(out, "--- Stdin ---\n{stdin}\n\n");
        if let Some(history) = self.messages {
            let _ = write!(
                out,
                "--- Messages ---\n{} message(s) before the task\n\n",
                history.len()
            );
        }
        // With a shared budget the entries are in its block, shown below.
        if let Some(m) = self.memory.as_ref().filter(|_| !self.shared_budget) {
            let _ = match m.error {
                Some(e) => write!(out, "--- Memory ---\n(error: {e})\n\n"),
                None => write!(out, "--- Memory ---\n{}\n\n", or_none(m.entries)),
            };
        }
        if let Some(notes) = &self.notes {
            let _ = write!(
                out,
                "--- Notes ---\nWorkspace: {}\nTools:     {}\n\n",
                notes.workspace,
                notes.tools.join(", ")
            );
        }
        if let Some(block) = self.session_memory {
            let _ = write!(
                out,
                "--- Session Memory ---\n{}\n\n",
                or_none(block.trim_end())
            );
        }
        if let Some(c) = self.context {
            let _ = write!(
                out,
                "--- Context ({} of {} characters: {}) ---\n{}\n",
                c.chars,
                c.budget,
                c.kinds.join(", "),
                or_none(c.text.trim_end())
            );
            if !c.left_out.is_empty() {
                let _ = writeln!(out, "Left out ({}):", c.left_out.len());
            }
            for p in &c.left_out {
                let size = match (p.chars, p.bytes) {
                    (Some(n), _) => format!("{n} characters"),
                    (None, Some(n)) => format!("{n} bytes"),
                    (None, None) => String::new(),
                };
                let _ = writeln!(out, "- {}: {} ({size})", p.kind, p.item);
            }
            let _ = out.write_str("\n");
        }
        if self.gives_tools {
            let _ = write!(out, "--- Tools ---\n{}\n", self.tools.join(", "));
            if let Some(sandbox) = &self.sandbox {
                let _ = writeln!(out, "Sandbox:       {sandbox}");
            }
            if !self.allowed_hosts.is_empty() {
                let _ = writeln!(out, "Allowed hosts: {}", self.allowed_hosts.join(", "));
            }
            let _ = out.write_str("\n");
        }
        // Listed, never started: a dry run runs nothing.
        if !self.mcp_servers.is_empty() {
            let _ = out.write_str("--- MCP Servers ---\n");
            for server in &self.mcp_servers {
                let optional = if server.required { "" } else { ", optional" };
                let _ = writeln!(out, "{} ({}{optional})", server.name, server.transport);
            }
            let _ = out.write_str("\n");
        }
        let _ = out.write_str("--- Sub-Agents ---\n");
        if self.sub_agents.is_empty() {
            let _ = out.write_str("(none)\n");
        } else {
            let _ = writeln!(
                out,
                "{}\nMax Depth: {}\nParallel:  {}\nTimeout:   {}s",
                self.sub_agents.join(", "),
                self.max_depth,
                if self.parallel { "yes" } else { "no" },
                self.sub_agent_timeout
            );
        }
    }
}

/// Formatting straight into our output, the first error kept: the text
/// holds every context file, so it is not built in memory first.
struct Stream<'a> {
    out: &'a mut dyn Write,
    failed: Option<std::io::Error>,
}

impl std::fmt::Write for Stream<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.failed.is_some() {
            return Err(std::fmt::Error);
        }
        self.out.write_all(s.as_bytes()).map_err(|e| {
            self.failed = Some(e);
            std::fmt::Error
        })
    }
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}
