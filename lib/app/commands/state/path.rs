//! `axe-state-path`: where an agent's structured state is kept.

use std::io::Write;

use crate::commands::args::AGENT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};

pub const COMMAND: Command = Command {
    name: "axe-state-path",
    about: "Print the file that holds an agent's structured state",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[JSON],
    rules: &[crate::commands::args::AGENT_REQUIRED],
    description: "\
Prints the agent's [state] path, else <data>/axe/state/<AGENT>.json. The
file need not exist; nothing is created.",
    run: Run::Action(run),
};

const JSON: Flag = Flag::switch("json", "Print {agent, path, exists} as JSON");

#[derive(serde::Serialize)]
struct Json<'a> {
    agent: &'a str,
    path: String,
    exists: bool,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let t = super::resolve(m)?;
    if m.flag(&JSON) {
        return axe_cli::write_json(
            out,
            &Json {
                agent: &t.agent,
                path: t.path.to_string_lossy().into_owned(),
                exists: t.path.exists(),
            },
        );
    }
    writeln!(out, "{}", t.path.display()).map_err(Error::Output)
}
