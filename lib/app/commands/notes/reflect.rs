//! `axe-notes-reflect`: an agent's MEMORY.md, replaced.

use std::io::Write;

use super::AGENT;
use super::rewrite::{self, ALLOW_EMPTY, IF_MATCH, Who};
use crate::commands::args::WAIT;
use axe_base::error::Result;
use axe_cli::{Command, Flag, Item, Matches, Rule, Run};

pub const COMMAND: Command = Command {
    name: "axe-notes-reflect",
    about: "Replace an agent's MEMORY.md with standard input",
    usage: &["[OPTIONS] <AGENT> < MEMORY.md"],
    args: &[AGENT],
    flags: &[
        IF_MATCH,
        ALLOW_EMPTY,
        WAIT,
        crate::commands::args::QUIET,
        JSON,
    ],
    rules: &[
        crate::commands::args::AGENT_REQUIRED,
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&JSON)),
    ],
    description: "\
Writes standard input as agents/<AGENT>/MEMORY.md in the agent's notes
workspace and prints its path relative to the workspace. The file is
replaced atomically under its lock, keeping its mode and owner: readers see
the old text or the new, never part of either.

With --if-match, the write happens only if MEMORY.md still has that sha256
(axe-notes-recall --json or axe-notes-path --json report it; a missing file
has the empty file's). If someone changed it since, nothing is written
({exit:conflict}): read it again, merge, write again. Text longer than the
agent's notes.max_memory_chars is refused ({exit:error}), not cut.",
    run: Run::Action(run),
};

const JSON: Flag = super::WRITTEN_JSON;

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let flags = rewrite::Flags::read(m, &JSON)?;
    let mut sink = std::io::sink();
    let out = crate::commands::args::report_to(m, out, &mut sink);
    let target = super::of_agent(m)?;
    let agent = target.agent();
    let path = target.ws.memory(agent);
    let limit = (target.cfg.max_memory_chars.as_usize(), "max_memory_chars");
    let who = Who {
        agent: Some(agent),
        topic: None,
        secrets: target.secrets(),
        wait: flags.wait,
    };
    rewrite::from_stdin(&flags, out, &target.ws, &path, limit, who)
}
