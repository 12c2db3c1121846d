//! `axe-context`: one block of everything an agent remembers, within one
//! character budget; the assembly is `memory::context`.

use std::io::Write;

use serde::Serialize;

use super::args::WAIT;
use super::args::{AGENT, AGENT_REQUIRED, required_agent};
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};
use axe_memory::shared_block::{self, Assembled, Request};
use axe_memory::state::{self, Current};

pub const COMMAND: Command = Command {
    name: "axe-context",
    about: "Print everything an agent remembers as one block within a character budget",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[BUDGET, TASK, PHASE, WAIT, JSON],
    rules: &[AGENT_REQUIRED],
    description: "\
Prints the block axe-run puts after the task when the agent has a
[context] budget: its structured state, MEMORY.md, the run log's last
memory.last_n entries, world topics and the daily logs of the last
notes.recall_days days, kind by kind in the agent's [context] order
(default: state, memory, log, world, daily) and item by item within a
kind, most wanted first. Only the kinds the agent keeps are offered
([state], [memory], [notes] enabled).

An item goes in if it fits in what is left of the budget, with its
section heading when it is the first of its kind; one that does not fit
is left out, and smaller ones after it may still go in. The block never
passes the budget. --json lists every item that went in and every one
left out: a note file too large for the room left is listed by its size
in bytes, unread.

A kind that cannot be read (a corrupt state file, an unreadable log) is
an error here (exit 1); axe-run warns and leaves that kind out.",
    run: Run::Action(run),
};

const BUDGET: Flag = Flag::with_value(
    "budget",
    "N",
    "The most characters [default: the agent's context.budget, else 8000]",
)
.int();

const TASK: Flag = Flag::with_value(
    "task",
    "ID",
    "The state's current task, shown first [default: main]",
);

const PHASE: Flag = Flag::with_value(
    "phase",
    "P",
    "The phase the run is in: the state's errors met in it come first",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, budget, chars, kinds, text, included, left_out} as JSON",
);

/// The budget when neither `--budget` nor `[context] budget` gives one.
pub const DEFAULT_BUDGET: usize = 8000;

#[derive(Serialize)]
struct Json<'a> {
    agent: &'a str,
    #[serde(flatten)]
    block: &'a Assembled,
}

/// `axe-context`'s command line, read before any file is touched: a
/// malformed flag is the error even when the agent file is broken, as
/// cobra parsed flags first in Go.
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
            wait: super::args::wait(m)?,
            agent: required_agent(m)?,
            budget: m.number::<usize>(&BUDGET)?,
            json: m.flag(&JSON),
            now: Current {
                task: Some(m.string(&TASK)?.unwrap_or(state::DEFAULT_TASK)),
                phase: m.string(&PHASE)?,
            },
        })
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let Args {
        agent: name,
        wait,
        budget,
        json,
        now,
    } = Args::read(m)?;
    let agents = super::args::env_agents();
    let (cfg, _) = super::args::memory_agent(&agents, name)?;
    let budget = budget.unwrap_or_else(|| {
        cfg.memory
            .context
            .budget
            .map_or(DEFAULT_BUDGET, |b| b.as_usize())
    });
    let request = Request {
        dirs: agents.dirs(),
        wait,
        budget,
        now,
        listing: json,
        log: None,
        today: time::OffsetDateTime::now_utc().date(),
    };
    let mut first = None;
    let built = shared_block::assemble(name, &cfg.memory, &request, &mut |_, e| {
        first.get_or_insert(e);
    });
    if let Some(e) = first {
        return Err(e);
    }
    if json {
        return axe_cli::write_json(
            out,
            &Json {
                agent: name,
                block: &built,
            },
        );
    }
    out.write_all(built.text.as_bytes()).map_err(Error::Output)
}

#[cfg(test)]
mod tests {
    use axe_memory::MemoryKind;

    #[test]
    fn the_description_names_the_default_order_of_the_kinds() {
        let order: Vec<&str> = MemoryKind::ORDER.iter().map(|k| k.name()).collect();
        let said = format!("(default: {})", order.join(", "));
        let text = super::COMMAND.description.replace('\n', " ");
        assert!(text.contains(&said), "{said} not in the description");
    }
}
