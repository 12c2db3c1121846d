//! `axe-state-show`: an agent's structured state, whole.

use std::io::Write;

use super::TASK;
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};
use axe_memory::block::Block;
use axe_memory::state;

pub const COMMAND: Command = Command {
    name: "axe-state-show",
    about: "Print an agent's structured state: tasks, errors, decisions, facts",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[TASK, WAIT, JSON],
    rules: &[crate::commands::args::AGENT_REQUIRED],
    description: "\
Prints everything the state holds as the Session Memory block lays it out
(tasks, unresolved errors, decisions newest first, key facts), with no
budget; with --json the state document as stored, fields of newer versions
included. A missing file is an empty state; a file that is not a state is
an error naming it and the position (exit 1).",
    run: Run::Action(run),
};

const JSON: Flag = Flag::switch("json", "Print the state document as JSON");

/// `axe-state-show`'s command line, read before any file is touched.
struct Args<'m> {
    agent: &'m str,
    wait: axe_memory::Wait,
    json: bool,
    task: Option<&'m str>,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        Ok(Args {
            agent: crate::commands::args::required_agent(m)?,
            wait: crate::commands::args::wait(m)?,
            json: m.flag(&JSON),
            task: m.string(&TASK)?,
        })
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let args = Args::read(m)?;
    let t = super::open(args.agent)?;
    let s = state::load(&t.path, args.wait)?;
    if args.json {
        return axe_cli::write_json(out, &s);
    }
    let view = s.view();
    let now = state::Current {
        task: args.task,
        phase: None,
    };
    let built = state::build(&view, now, Block::new(usize::MAX));
    let text = if built.text.is_empty() {
        "(no state)\n".to_owned()
    } else {
        format!("Iteration: {}\n\n{}", s.iteration, built.text)
    };
    out.write_all(text.as_bytes()).map_err(Error::Output)
}
