//! `axe-mem-count`: how many entries an agent's run log holds.

use std::io::Write;

use serde::Serialize;

use super::{Base, FILE, USAGE};
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};

pub const COMMAND: Command = Command {
    name: "axe-mem-count",
    about: "Count the entries in an agent's memory log",
    usage: USAGE,
    args: &[AGENT],
    flags: &[FILE, WAIT, JSON],
    rules: &[super::NOT_BOTH, super::ONE],
    description: "\
An entry is a line that starts with \"## \". A missing log has 0 entries.
The count streams the file in constant memory.",
    run: Run::Action(run),
};

const JSON: Flag = Flag::switch("json", "Print {agent, path, entries, bytes} as JSON");

#[derive(Serialize)]
struct Json {
    #[serde(flatten)]
    base: Base,
    entries: u64,
    bytes: u64,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let wait = crate::commands::args::wait(m)?;
    let target = super::resolve(m)?;
    let counted = axe_memory::log::count(&target.path, wait)?;
    if m.flag(&JSON) {
        return axe_cli::write_json(
            out,
            &Json {
                base: target.base(),
                entries: counted.entries,
                bytes: counted.bytes,
            },
        );
    }
    writeln!(out, "{}", counted.entries).map_err(Error::Output)?;
    Ok(())
}
