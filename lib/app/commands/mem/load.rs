//! `axe-mem-load`: the last entries of an agent's run log.

use std::io::Write;

use super::{FILE, USAGE};
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};

pub const COMMAND: Command = Command {
    name: "axe-mem-load",
    about: "Print the last entries of an agent's memory log",
    usage: USAGE,
    args: &[AGENT],
    flags: &[LAST, FILE, WAIT, JSON],
    rules: &[super::NOT_BOTH, super::ONE],
    description: "\
Prints the entries exactly as stored, which is what axe-run puts under
\"## Memory\" in the system prompt. With --last 0 the whole file is printed,
text before the first entry included. A missing log prints nothing.

The log is read from the end, so --last 10 costs the same on a log of ten
entries and of a million.",
    run: Run::Action(run),
};

const LAST: Flag = Flag::with_value(
    "last",
    "N",
    "Print the last N entries; 0 prints the whole file [default: the agent's memory.last_n, or 0 with --file]",
)
.short('n')
.int();

const JSON: Flag = Flag::switch("json", "Print a JSON array of {timestamp, task, result}");

/// `axe-mem-load`'s command line, read before any file is touched.
struct Args<'m> {
    log: super::Given<'m>,
    wait: axe_memory::Wait,
    last: Option<u64>,
    json: bool,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        Ok(Args {
            wait: crate::commands::args::wait(m)?,
            last: m.number::<u64>(&LAST)?,
            json: m.flag(&JSON),
            log: super::Given::read(m)?,
        })
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let Args {
        log,
        wait,
        last,
        json,
    } = Args::read(m)?;
    let target = log.resolve()?;
    let last = match last {
        Some(n) => n,
        // Validation guarantees the agent's value is not negative.
        None => target.run_log.as_ref().map_or(0, |mem| mem.last_n.get()),
    };
    let tail = axe_memory::log::tail(&target.path, last, wait)?;
    if !json {
        return tail.copy_to(out);
    }
    // Streamed: one entry in memory at a time, however long the array.
    out.write_all(b"[").map_err(Error::Output)?;
    for (i, record) in tail.records().enumerate() {
        if i > 0 {
            out.write_all(b",").map_err(Error::Output)?;
        }
        serde_json::to_writer(&mut *out, &record?)
            .map_err(|e| axe_base::error::Error::Output(e.into()))?;
    }
    out.write_all(b"]\n").map_err(Error::Output)?;
    Ok(())
}
