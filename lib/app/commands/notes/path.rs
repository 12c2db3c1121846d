//! `axe-notes-path`: where an agent's notes are.

use std::io::Write;

use serde::Serialize;

use super::AGENT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};
use axe_memory::hash::sha256_hex;

pub const COMMAND: Command = Command {
    name: "axe-notes-path",
    about: "Print the notes workspace of an agent",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[JSON],
    rules: &[crate::commands::args::AGENT_REQUIRED],
    description: "\
Prints the workspace of the agent's [notes] (default <data>/axe/notes; a
relative workspace is taken from the agents directory). Nothing is created.
With --json, also the agent's MEMORY.md (its path, whether it exists and
its sha256, which axe-notes-reflect --if-match takes), its daily log
directory and the shared world directory.",
    run: Run::Action(run),
};

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, workspace, memory: {path, exists, sha256}, daily, world} as JSON",
);

#[derive(Serialize)]
struct Json {
    agent: String,
    workspace: String,
    memory: Memory,
    daily: String,
    world: String,
}

#[derive(Serialize)]
struct Memory {
    path: String,
    exists: bool,
    sha256: String,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let notes = super::of_agent(m)?;
    let (ws, agent) = (&notes.ws, notes.agent());
    if !m.flag(&JSON) {
        return writeln!(out, "{}", ws.root.display()).map_err(Error::Output);
    }
    let path = ws.memory(agent);
    let bytes = ws.read(&path)?;
    let shown = |p: std::path::PathBuf| p.to_string_lossy().into_owned();
    axe_cli::write_json(
        out,
        &Json {
            agent: agent.to_owned(),
            workspace: shown(ws.root.clone()),
            memory: Memory {
                exists: bytes.is_some(),
                sha256: sha256_hex(bytes.as_deref().unwrap_or_default()),
                path: shown(path),
            },
            daily: shown(ws.daily_dir(agent)),
            world: shown(ws.world()),
        },
    )
}
