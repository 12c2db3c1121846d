//! `axe-state-context`: the Session Memory block, within a budget.

use std::io::Write;

use serde::Serialize;

use super::TASK;
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};
use axe_memory::block::{Block, Part};
use axe_memory::state::{self, Current};

pub const COMMAND: Command = Command {
    name: "axe-state-context",
    about: "Print an agent's Session Memory block within a character budget",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[TASK, PHASE, BUDGET, WAIT, JSON],
    rules: &[crate::commands::args::AGENT_REQUIRED],
    description: "\
Prints the state as a \"## Session Memory\" block for a prompt, its items
in priority order: the current task (--task) with its pending steps, other
open tasks, unresolved errors (those of --phase first, then newest
first), decisions (newest first), key facts.
Each item goes in if it fits in the budget with the heading it needs; one
that does not is left out, and smaller ones after it may still go in. The
block never passes the budget; --json lists what went in and what did
not, with their sizes. Nothing is printed when nothing fits.",
    run: Run::Action(run),
};

const BUDGET: Flag = Flag::with_value(
    "budget",
    "N",
    "The most characters [default: the agent's state.context_budget]",
)
.int();

const PHASE: Flag = Flag::with_value(
    "phase",
    "P",
    "The phase the next run is in: unresolved errors met in it come first",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, budget, chars, text, included, left_out} as JSON",
);

#[derive(Serialize)]
struct Json<'a> {
    agent: &'a str,
    budget: usize,
    chars: usize,
    text: &'a str,
    included: &'a [Part<'a>],
    left_out: &'a [Part<'a>],
}

/// `axe-state-context`'s command line, read before any file is touched.
struct Args<'m> {
    agent: &'m str,
    wait: axe_memory::Wait,
    budget: Option<usize>,
    json: bool,
    now: Current<'m>,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        Ok(Args {
            agent: crate::commands::args::required_agent(m)?,
            wait: crate::commands::args::wait(m)?,
            budget: m.number::<usize>(&BUDGET)?,
            json: m.flag(&JSON),
            now: Current {
                task: m.string(&TASK)?,
                phase: m.string(&PHASE)?,
            },
        })
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let Args {
        agent,
        wait,
        budget,
        json,
        now,
    } = Args::read(m)?;
    let t = super::open(agent)?;
    let budget = budget.unwrap_or_else(|| t.cfg.context_budget.as_usize());
    let bytes = state::read(&t.path, wait)?;
    let view = state::view(&t.path, &bytes)?;
    let block = match json {
        true => Block::listing(budget),
        false => Block::new(budget),
    };
    let built = state::build(&view, now, block);
    if json {
        return axe_cli::write_json(
            out,
            &Json {
                agent: &t.agent,
                budget,
                chars: built.chars(),
                text: &built.text,
                included: &built.included,
                left_out: &built.left_out,
            },
        );
    }
    out.write_all(built.text.as_bytes()).map_err(Error::Output)
}
