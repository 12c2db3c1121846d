//! `axe-notes-remember`: an entry on an agent's daily log.

use std::io::Write;

use time::OffsetDateTime;

use super::{AGENT, Written};
use crate::commands::args::WAIT;
use axe_base::error::Result;
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::notes;
use axe_memory::secrets::{self, Place};

pub const COMMAND: Command = Command {
    name: "axe-notes-remember",
    about: "Add an entry to an agent's daily log",
    usage: &["[OPTIONS] <AGENT> [TEXT]..."],
    args: &[
        AGENT,
        Arg {
            name: "TEXT",
            noun: "text",
            help: "What to remember, as words joined by spaces [default: standard input]",
            complete: Complete::Nothing,
            many: true,
        },
    ],
    flags: &[WAIT, crate::commands::args::QUIET, JSON],
    rules: &[
        crate::commands::args::AGENT_REQUIRED,
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&JSON)),
    ],
    description: "\
Appends a \"## HH:MM\" entry (UTC) to agents/<AGENT>/daily/<date>.md in the
agent's notes workspace, creating the file with its \"# <date>\" line. The
entry is one write under the file's lock and is cut off again if it cannot
finish, so concurrent writers never tear or lose one. Text longer than the
agent's notes.max_memory_chars is refused.

Prints the log's path relative to the workspace, as reflect and learn print
theirs; with --json, their document too, with topic and sha256 null (an
append takes no --if-match) and chars the entry's.",
    run: Run::Action(run),
};

const JSON: Flag = super::WRITTEN_JSON;

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let wait = crate::commands::args::wait(m)?;
    let mut sink = std::io::sink();
    let out = crate::commands::args::report_to(m, out, &mut sink);
    let target = super::of_agent(m)?;
    let content = match crate::commands::args::words_after_agent(m) {
        Some(words) => words.into_bytes(),
        None => crate::commands::stdin::read_stdin_bytes()?,
    };
    let limit = target.cfg.max_memory_chars.as_usize();
    let agent = target.agent();
    let done = notes::remember(
        &target.ws,
        agent,
        &content,
        OffsetDateTime::now_utc(),
        limit,
        &target.secrets(),
        wait,
    )?;
    let written = Written {
        agent: Some(agent),
        topic: None,
        path: done.path.to_string_lossy().into_owned(),
        sha256: None,
        chars: done.chars,
        redacted: secrets::at(Place::DailyLog, &done.redacted),
    };
    written.print(out, &target.ws, &done.path, m.flag(&JSON))
}
