//! `axe-mem-path`: which file holds an agent's run log.

use std::io::Write;

use serde::Serialize;

use super::{Base, FILE, USAGE};
use crate::commands::args::AGENT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};

pub const COMMAND: Command = Command {
    name: "axe-mem-path",
    about: "Print the file that holds an agent's memory log",
    usage: USAGE,
    args: &[AGENT],
    flags: &[FILE, JSON],
    rules: &[super::NOT_BOTH, super::ONE],
    description: "\
The path is the agent's memory.path when its file sets one, else
$XDG_DATA_HOME/axe/memory/<AGENT>.md (default ~/.local/share/axe/memory):
the file axe-run reads and appends to. The file need not exist yet.",
    run: Run::Action(run),
};

const JSON: Flag = Flag::switch("json", "Print {agent, path, exists} as JSON");

#[derive(Serialize)]
struct Json {
    #[serde(flatten)]
    base: Base,
    exists: bool,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let target = super::resolve(m)?;
    if m.flag(&JSON) {
        let exists = target.path.exists();
        return axe_cli::write_json(
            out,
            &Json {
                base: target.base(),
                exists,
            },
        );
    }
    out.write_all(target.path.as_os_str().as_encoded_bytes())
        .map_err(Error::Output)?;
    out.write_all(b"\n").map_err(Error::Output)?;
    Ok(())
}
