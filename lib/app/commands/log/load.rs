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

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let wait = crate::commands::args::wait(m)?;
    let target = super::resolve(m)?;
    let last = match m.number::<u64>(&LAST)? {
        Some(n) => n,
        // Validation guarantees the agent's value is not negative.
        None => target.memory.as_ref().map_or(0, |mem| mem.last_n.get()),
    };
    let tail = axe_memory::log::tail(&target.path, last, wait)?;
    if !m.flag(&JSON) {
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
