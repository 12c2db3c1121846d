//! `axe-run --dry-run`: the resolved context, as the Go `axe` printed it,
//! or as one JSON document.

use std::io::Write;

use serde::Serialize;

use super::prepared::Prepared;
use super::session::Session;
use super::tools;
use crate::error::{Error, Result};
use crate::timeout::Seconds;

/// Everything `--dry-run` shows besides the agent itself.
pub struct Shown<'a> {
    pub timeout: Seconds,
    pub stdin: &'a str,
}

/// Go's text layout (reference, "Dry-run output").
pub fn text(out: &mut dyn Write, session: &Session, agent: &Prepared, s: &Shown) -> Result<()> {
    out.write_all(layout(session, agent, s).as_bytes())
        .map_err(Error::Output)
}

/// The text of [`text`].
fn layout(session: &Session, agent: &Prepared, s: &Shown) -> String {
    let cfg = &agent.cfg;
    let mut out = format!(
        "=== Dry Run ===\n\nModel:    {}\nWorkdir:  {}\nTimeout:  {}s\nParams:   temperature={}, max_tokens={}\n\n",
        agent.model_string(),
        agent.workdir.display(),
        s.timeout,
        cfg.params.temperature,
        cfg.params.max_tokens
    );
    out += &format!("--- System Prompt ---\n{}\n\n", agent.system);
    out += &format!("--- Skill ---\n{}\n\n", or_none(&agent.skill));
    out += &format!("--- Files ({}) ---\n", agent.files.len());
    if agent.files.is_empty() {
        out += "(none)\n";
    }
    for f in &agent.files {
        out += &format!("{}\n", f.path);
    }
    out += "\n";
    let stdin = if s.stdin.trim().is_empty() {
        "(none)"
    } else {
        s.stdin
    };
    out += &format!("--- Stdin ---\n{stdin}\n\n");
    if let Some(r) = &agent.recall {
        out += &match &r.error {
            Some(e) => format!("--- Memory ---\n(error: {e})\n\n"),
            None => format!("--- Memory ---\n{}\n\n", or_none(&r.entries)),
        };
    }
    if let Some(ws) = &agent.notes {
        out += &format!(
            "--- Notes ---\nWorkspace: {}\nTools:     {}\n\n",
            ws.root.display(),
            tools::names(session, agent, 0).join(", ")
        );
    }
    out += "--- Sub-Agents ---\n";
    if cfg.sub_agents.is_empty() {
        out += "(none)\n";
    } else {
        out += &format!(
            "{}\nMax Depth: {}\nParallel:  {}\nTimeout:   {}s\n",
            cfg.sub_agents.join(", "),
            session.max_depth,
            if agent.parallel() { "yes" } else { "no" },
            cfg.sub_agents_config.timeout
        );
    }
    out
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
    temperature: f64,
    max_tokens: i64,
    system_prompt: &'a str,
    skill: &'a str,
    files: Vec<&'a str>,
    stdin: &'a str,
    /// `null` when memory is disabled.
    memory: Option<Memory<'a>>,
    sub_agents: &'a [String],
    max_depth: u32,
    parallel: bool,
    sub_agent_timeout: u64,
    /// `null` when notes are disabled.
    notes: Option<Notes>,
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
    crate::cli::write_json(
        out,
        &Json {
            agent: &agent.name,
            model: agent.model_string(),
            workdir: agent.workdir.display().to_string(),
            timeout: s.timeout,
            temperature: cfg.params.temperature,
            max_tokens: cfg.params.max_tokens,
            system_prompt: &agent.system,
            skill: &agent.skill,
            files: agent.files.iter().map(|f| f.path.as_str()).collect(),
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
            notes: agent.notes.as_ref().map(|ws| Notes {
                workspace: ws.root.display().to_string(),
                tools: tools::names(session, agent, 0),
            }),
        },
    )
}
