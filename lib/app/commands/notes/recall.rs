//! `axe-notes-recall`: what an agent knows, as its `recall` tool shows it.

use std::io::Write;

use serde::Serialize;
use time::OffsetDateTime;

use super::AGENT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};
use axe_memory::notes::{self, Kind};

pub const COMMAND: Command = Command {
    name: "axe-notes-recall",
    about: "Print what an agent knows: world facts, MEMORY.md, recent days",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[DAYS, JSON],
    rules: &[crate::commands::args::AGENT_REQUIRED],
    description: "\
Prints the world topics of the agent's workspace, its MEMORY.md and its
daily logs of the last N days (today included, UTC), as agnx lays them out:
\"# World Knowledge\", \"# Your Memory\" and \"# Recent Experiences\", apart
by \"---\". This is what the recall tool gives the model.

The whole stays within the agent's notes.recall_chars characters, the
note at its end included: when it would not, whole files are left out, the
oldest daily logs first, then world topics from the end of the alphabet,
MEMORY.md last, and the note names each file left out (as many as fit,
counting the rest). A file that cannot be read is skipped and the note
says so. With --json the sections come with their paths and sha256
(reflect --if-match takes MEMORY.md's).",
    run: Run::Action(run),
};

const DAYS: Flag = Flag::with_value(
    "days",
    "N",
    "Daily logs of the last N days, today included [default: the agent's notes.recall_days]",
)
.int();

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, workspace, days, budget, chars, memory_sha256, sections, left_out} as JSON",
);

#[derive(Serialize)]
struct Json<'a> {
    agent: &'a str,
    workspace: String,
    days: u64,
    budget: usize,
    chars: usize,
    /// Null when MEMORY.md was not read.
    memory_sha256: Option<&'a str>,
    sections: Vec<Section>,
    left_out: Vec<LeftOut>,
    /// Only when something could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unreadable: Vec<super::Skipped>,
}

#[derive(Serialize)]
struct Section {
    kind: Kind,
    path: String,
    sha256: String,
    chars: usize,
    text: String,
}

#[derive(Serialize)]
struct LeftOut {
    kind: Kind,
    path: String,
    bytes: u64,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    // --days is read before the agent, as cobra parsed flags first: a
    // malformed one is the error even when the agent file is broken.
    let days = m.number::<u64>(&DAYS)?;
    let json = m.flag(&JSON);
    let target = super::of_agent(m)?;
    let days = days.unwrap_or_else(|| target.cfg.recall_days.get());
    let budget = target.cfg.recall_chars.as_usize();
    let today = OffsetDateTime::now_utc().date();
    let agent = target.agent();
    let r = notes::recall(&target.ws, agent, days, today, budget)?;
    let ws = &target.ws;
    if json {
        let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        return axe_cli::write_json(
            out,
            &Json {
                agent,
                workspace: ws.root.to_string_lossy().into_owned(),
                days,
                budget,
                chars: r.chars(),
                memory_sha256: r.memory_sha256.as_deref(),
                sections: r
                    .items
                    .iter()
                    .map(|i| Section {
                        kind: i.kind,
                        path: ws.relative(&i.path),
                        sha256: i.sha256.clone(),
                        chars: i.chars,
                        text: lossy(&i.text),
                    })
                    .collect(),
                left_out: r
                    .left_out
                    .iter()
                    .map(|i| LeftOut {
                        kind: i.kind,
                        path: ws.relative(&i.path),
                        bytes: i.bytes,
                    })
                    .collect(),
                unreadable: super::skipped(ws, &r.unreadable),
            },
        );
    }
    // The recall tool's answer, as a line of output.
    let mut text = notes::answer(ws, &r);
    text.push(b'\n');
    out.write_all(&text).map_err(Error::Output)
}
