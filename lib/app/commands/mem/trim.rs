//! `axe-mem-trim`: keep only the last entries of an agent's run log.

use std::io::Write;

use serde::Serialize;

use super::{Base, FILE, USAGE};
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Item, Matches, Rule, Run};
use axe_memory::log::{self, Trim};

pub const COMMAND: Command = Command {
    name: "axe-mem-trim",
    about: "Keep only the last entries of an agent's memory log",
    usage: USAGE,
    args: &[AGENT],
    flags: &[KEEP, COUNT, FILE, WAIT, JSON],
    rules: &[
        super::NOT_BOTH,
        super::ONE,
        Rule::RequiredWith(Item::Flag(&KEEP), Item::Flag(&FILE)),
    ],
    description: "\
Drops every entry but the last N, and any text before the first entry, the
way axe-gc trims. Without --keep, N is the agent's memory.last_n when
positive, else its memory.max_entries; when both are 0 nothing is trimmed.

The kept entries are written to a new file in the same directory, synced,
and renamed over the log with the log's permissions, all under the lock
that appends take: an interrupted trim leaves the old log whole, and an
append that arrives during a trim lands in the new log.

Only the kept part is read, so trimming a 1 GB log to 10 entries is as
quick as trimming a small one. Counting the removed entries reads the rest
too, so it is asked for with --count; without it \"removed\" is null in
the JSON and the message gives the bytes removed.",
    run: Run::Action(run),
};

const KEEP: Flag = Flag::with_value(
    "keep",
    "N",
    "Keep the last N entries; 0 keeps all [default: the agent's last_n, else its max_entries]",
)
.int();

const COUNT: Flag = Flag::switch(
    "count",
    "Also count the entries removed (reads the removed part of the file)",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, path, keep, trimmed, kept, removed, removed_bytes} as JSON",
);

#[derive(Serialize)]
struct Json {
    #[serde(flatten)]
    base: Base,
    keep: u64,
    trimmed: bool,
    kept: u64,
    removed: Option<u64>,
    removed_bytes: u64,
}

/// `axe-mem-trim`'s command line, read before any file is touched.
struct Args<'m> {
    log: super::Given<'m>,
    wait: axe_memory::Wait,
    keep: Option<u64>,
    count: bool,
    json: bool,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        Ok(Args {
            wait: crate::commands::args::wait(m)?,
            keep: match m.number::<i64>(&KEEP)? {
                Some(n) if n < 0 => {
                    return Err(Error::Usage("--keep must be non-negative".to_owned()));
                }
                Some(n) => Some(n as u64),
                None => None,
            },
            count: m.flag(&COUNT),
            json: m.flag(&JSON),
            log: super::Given::read(m)?,
        })
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let args = Args::read(m)?;
    let target = args.log.resolve()?;
    let keep = match args.keep {
        Some(n) => Some(n),
        None => match &target.run_log {
            Some(mem) => mem.trim_target(),
            // Not without an agent: the rules ask for --keep with --file.
            None => None,
        },
    };
    let outcome = log::trim(&target.path, keep.unwrap_or(0), args.count, args.wait)?;
    if args.json {
        let json = match outcome {
            Trim::Within { entries } => Json {
                base: target.base(),
                keep: keep.unwrap_or(0),
                trimmed: false,
                kept: entries,
                removed: Some(0),
                removed_bytes: 0,
            },
            Trim::Trimmed {
                kept,
                removed,
                removed_bytes,
            } => Json {
                base: target.base(),
                keep: kept,
                trimmed: true,
                kept,
                removed,
                removed_bytes,
            },
        };
        return axe_cli::write_json(out, &json);
    }
    match keep {
        None => writeln!(out, "{}", log::NO_TRIM_TARGET).map_err(Error::Output)?,
        Some(keep) => writeln!(out, "{}", outcome.message(keep)).map_err(Error::Output)?,
    }
    Ok(())
}
