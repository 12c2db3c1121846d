//! `axe-notes-learn`: a shared world topic, replaced.

use std::io::Write;

use super::rewrite::{self, ALLOW_EMPTY, IF_MATCH, Who};
use super::{AGENT_FLAG, WORKSPACE};
use crate::commands::args::WAIT;
use axe_base::error::Result;
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::notes;

const TOPIC: Arg = Arg {
    name: "TOPIC",
    noun: "topic",
    help: "The topic; its file name keeps letters and digits, lower-cased, and dashes",
    complete: Complete::Nothing,
    many: false,
};

pub const COMMAND: Command = Command {
    name: "axe-notes-learn",
    about: "Replace a shared world topic with standard input",
    usage: &[
        "[OPTIONS] <TOPIC> < TEXT",
        "[OPTIONS] --agent <AGENT> <TOPIC> < TEXT",
    ],
    args: &[TOPIC],
    flags: &[
        AGENT_FLAG,
        WORKSPACE,
        IF_MATCH,
        ALLOW_EMPTY,
        WAIT,
        crate::commands::args::QUIET,
        JSON,
    ],
    rules: &[
        Rule::Required(Item::Arg(&TOPIC)),
        Rule::Conflict(Item::Flag(&AGENT_FLAG), Item::Flag(&WORKSPACE)),
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&JSON)),
    ],
    description: "\
Writes standard input as world/<topic>.md in the workspace (the agent's
with --agent, DIR with --workspace, else <data>/axe/notes), where every
agent of the workspace sees it, and prints the file's path relative to the
workspace, which shows the name the topic got: letters and digits are
kept, lower-cased, every other run of characters becomes one dash, and
dashes at either end go (\"Deploy Process!\" is deploy-process, \"../etc\"
is etc). A topic without a letter or digit is refused, and so is one
whose name holds what looks like a secret (a file name is never
redacted).

The file is replaced atomically under its lock; --if-match writes only if
the file still has that sha256: if not, nothing is written
({exit:conflict}). Text longer than notes.max_topic_chars (the agent's,
else 10000) is refused ({exit:error}).",
    run: Run::Action(run),
};

const JSON: Flag = super::WRITTEN_JSON;

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let flags = rewrite::Flags::read(m, &JSON)?;
    let mut sink = std::io::sink();
    let out = crate::commands::args::report_to(m, out, &mut sink);
    let topic = m
        .args()
        .first()
        .map(|t| t.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = super::of_flags(m, &AGENT_FLAG, &WORKSPACE)?;
    let secrets = target.secrets();
    let name = notes::topic_name(&topic, &secrets)?;
    let path = target.ws.topic(&name);
    let limit = (target.cfg.max_topic_chars.as_usize(), "max_topic_chars");
    let who = Who {
        agent: target.agent.as_deref(),
        topic: Some(&name),
        secrets,
        wait: flags.wait,
    };
    rewrite::from_stdin(&flags, out, &target.ws, &path, limit, who)
}
