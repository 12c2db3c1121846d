//! `axe-mcp`: an agent's memory over the Model Context Protocol (stdio).

use std::io::Write;
use std::sync::Mutex;

use super::args::AGENT;
use crate::agent::{self, NotesConfig};
use crate::cli::{Command, Flag, Matches, Run};
use crate::error::{Error, Result};
use crate::mcp::Server;
use crate::memory::notes::Workspace;
use crate::tools::{Memory, NotesSeen};

pub const COMMAND: Command = Command {
    name: "axe-mcp",
    about: "Serve an agent's memory to any MCP client over stdin and stdout",
    usage: &["[OPTIONS] [AGENT]"],
    args: &[AGENT],
    flags: &[READ_ONLY],
    rules: &[],
    description: "\
Speaks the Model Context Protocol on standard input and output (one
JSON-RPC message a line; diagnostics on standard error; the initialize
handshake and the stateless 2026-07-28 revision) and offers the
notes tools a model gets inside axe-run: recall, remember, reflect,
learn_fact and search_notes, over the agent's notes workspace, with the
same locks, budgets and caps. Ends when standard input ends.

AGENT names an agent file whose [notes] settings are used; without one of
that name (or without AGENT: \"mcp\"), notes are on with their defaults in
<data>/axe/notes, under that name.

Register it with a client:

  claude mcp add axe -- axe-mcp claude
  # Codex, ~/.codex/config.toml:
  #   [mcp_servers.axe]
  #   command = \"axe-mcp\"
  #   args = [\"codex\"]
  # Cursor, .cursor/mcp.json:
  #   {\"mcpServers\": {\"axe\": {\"command\": \"axe-mcp\", \"args\": [\"cursor\"]}}}

Two clients given the same AGENT share one memory; each runs its own
axe-mcp, and the files' locks keep every write whole.",
    run: Run::Action(run),
};

const READ_ONLY: Flag = Flag::switch("read-only", "Offer only the tools that do not write");

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let name = super::args::agent_arg(m)?.unwrap_or("mcp").to_owned();
    agent::check_name(&name)?;
    let (notes_cfg, own_file) = match agent::load(&name) {
        Ok(cfg) => (cfg.notes, true),
        Err(Error::AgentNotFound { .. }) => (
            NotesConfig {
                enabled: true,
                ..NotesConfig::default()
            },
            false,
        ),
        Err(e) => return Err(e),
    };
    let notes = match notes_cfg.enabled {
        true => Some(Workspace::of(&notes_cfg)?),
        false => None,
    };
    let instructions = match (&notes, own_file) {
        (None, _) => format!(
            "The agent \"{name}\" keeps no notes ([notes] is off in its file): no tools are offered."
        ),
        (Some(ws), own) => format!(
            "The notes of \"{name}\" in {}{}: call recall before you start, remember what is worth keeping, reflect to rewrite MEMORY.md (recall first: a file you have not seen whole is never overwritten), learn_fact for facts every agent shares, search_notes for older notes.",
            ws.root.display(),
            if own {
                ""
            } else {
                " (no agent file of that name: notes on, with the defaults)"
            }
        ),
    };
    let server = Server {
        memory: Memory {
            agent: name,
            notes_cfg,
            notes,
            seen: Mutex::new(NotesSeen::default()),
            verbose: false,
        },
        read_only: m.flag(&READ_ONLY),
        instructions,
    };
    let stdin = std::io::stdin();
    server.serve(&mut stdin.lock(), out).map_err(Error::Output)
}
