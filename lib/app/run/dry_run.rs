//! `axe-run --dry-run`: the resolved context, as the Go `axe` printed it,
//! or as one JSON document.

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

/// Go's text layout (reference, "Dry-run output").
pub fn text(out: &mut dyn Write, session: &Session, agent: &Prepared, s: &Shown) -> Result<()> {
    let mut to = Stream { out, failed: None };
    layout(&mut to, session, agent, s);
    to.failed.map_or(Ok(()), |e| Err(Error::Output(e)))
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

/// The text of [`text`], written to `out`; an error there is kept by it,
/// so the results of the writes are not looked at here.
fn layout(out: &mut impl std::fmt::Write, session: &Session, agent: &Prepared, s: &Shown) {
    let cfg = &agent.cfg;
    let _ = write!(
        out,
        "=== Dry Run ===\n\nModel:    {}\nWorkdir:  {}\nTimeout:  {}s\nParams:   {}\n\n",
        agent.model_string(),
        agent.workdir.display(),
        s.timeout,
        agent.params_line()
    );
    // The run log's entries end the system prompt; they have a section
    // of their own below, so they are not shown twice.
    let persona = agent.system.get(..agent.system_stable).unwrap_or_default();
    let _ = write!(out, "--- System Prompt ---\n{persona}\n\n");
    let _ = write!(out, "--- Skill ---\n{}\n\n", or_none(&agent.skill));
    let _ = writeln!(out, "--- Files ({}) ---", agent.files.len());
    if agent.files.is_empty() {
        let _ = out.write_str("(none)\n");
    }
    for f in &agent.files {
        let _ = writeln!(out, "{}", f.path);
    }
    if !agent.files_converted.is_empty() {
        let _ = writeln!(out, "Converted ({}):", agent.files_converted.len());
    }
    for line in &agent.files_converted {
        let _ = writeln!(out, "- {line}");
    }
    if !agent.files_left_out.is_empty() {
        let _ = writeln!(out, "Left out ({}):", agent.files_left_out.len());
    }
    for line in &agent.files_left_out {
        let _ = writeln!(out, "- {line}");
    }
    let _ = out.write_str("\n");
    // Go's layout had no words to show: the section is there only when
    // there are some, so a run without them looks as it did.
    if let Some(task) = s.task {
        let _ = write!(out, "--- Task ---\n{task}\n\n");
    }
    let stdin = if s.stdin.trim().is_empty() {
        "(none)"
    } else {
        s.stdin
    };
    let _ = write!(out, "--- Stdin ---\n{stdin}\n\n");
    if let Some(history) = s.history {
        let _ = write!(
            out,
            "--- Messages ---\n{} message(s) before the task\n\n",
            history.len()
        );
    }
    // With a shared budget the entries are in its block, shown below.
    if let Some(r) = agent
        .recall
        .as_ref()
        .filter(|_| agent.cfg.context.budget.is_none())
    {
        let _ = match &r.error {
            Some(e) => write!(out, "--- Memory ---\n(error: {e})\n\n"),
            None => write!(out, "--- Memory ---\n{}\n\n", or_none(&r.entries)),
        };
    }
    if let Some(ws) = &agent.notes {
        let _ = write!(
            out,
            "--- Notes ---\nWorkspace: {}\nTools:     {}\n\n",
            ws.root.display(),
            tools::memory_names(session, agent).join(", ")
        );
    }
    match s.memory {
        Injected::None => {}
        Injected::State(block) => {
            let _ = write!(
                out,
                "--- Session Memory ---\n{}\n\n",
                or_none(block.trim_end())
            );
        }
        Injected::Context(c) => {
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
    }
    // Only for agents given built-in tools: the layout of the others
    // stays Go's.
    if !cfg.tools.is_empty() {
        let _ = write!(
            out,
            "--- Tools ---\n{}\n",
            tools::names(session, agent, 0).join(", ")
        );
        if let Some(sandbox) = &agent.sandbox {
            let _ = writeln!(out, "Sandbox:       {}", sandbox.describe());
        }
        if !agent.allowed_hosts.is_empty() {
            let _ = writeln!(out, "Allowed hosts: {}", agent.allowed_hosts.join(", "));
        }
        let _ = out.write_str("\n");
    }
    // Listed, never started: a dry run runs nothing.
    if !cfg.mcp_servers.is_empty() {
        let _ = out.write_str("--- MCP Servers ---\n");
        for server in &cfg.mcp_servers {
            let optional = if server.required() { "" } else { ", optional" };
            let _ = writeln!(out, "{} ({}{optional})", server.name, server.transport);
        }
        let _ = out.write_str("\n");
    }
    let _ = out.write_str("--- Sub-Agents ---\n");
    if cfg.sub_agents.is_empty() {
        let _ = out.write_str("(none)\n");
    } else {
        let _ = writeln!(
            out,
            "{}\nMax Depth: {}\nParallel:  {}\nTimeout:   {}s",
            cfg.sub_agents.join(", "),
            session.max_depth,
            if agent.parallel() { "yes" } else { "no" },
            cfg.sub_agents_config.timeout
        );
    }
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}

/// The `--dry-run --json` document.
#[derive(Serialize)]
struct Json<'a> {
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

pub fn json(out: &mut dyn Write, session: &Session, agent: &Prepared, s: &Shown) -> Result<()> {
    let cfg = &agent.cfg;
    let (temperature, max_tokens) = agent.params_sent();
    axe_cli::write_json(
        out,
        &Json {
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
        },
    )
}
