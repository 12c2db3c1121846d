//! `axe-config path|init`: where axe's configuration lives, and its
//! skeleton.

use std::io::Write;

use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Flag, Matches, Run};

pub const COMMAND: Command = Command {
    name: "axe-config",
    about: "Manage axe configuration",
    usage: &["<COMMAND> [OPTIONS]"],
    args: &[],
    flags: &[],
    rules: &[],
    description: "\
The config directory is $XDG_CONFIG_HOME/axe when XDG_CONFIG_HOME is set
and not empty, else ~/.config/axe (on macOS ~/Library/Application
Support/axe). It holds agents/, skills/ and config.toml.",
    run: Run::Subcommands(&[PATH, INIT]),
};

const PATH: Command = Command {
    name: "axe-config path",
    about: "Print the configuration directory path",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[PATH_JSON],
    rules: &[],
    description: "Prints the path whether or not the directory exists; nothing is created.",
    run: Run::Action(path),
};

const PATH_JSON: Flag = Flag::switch("json", "Print {config_dir} as JSON");

const INIT: Command = Command {
    name: "axe-config init",
    about: "Initialize the configuration directory",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[INIT_JSON],
    rules: &[],
    description: "\
Creates agents/, skills/sample/SKILL.md and a commented config.toml
(mode 0600, since API keys go there), then prints the config directory.
Files that already exist are left as they are, so running it again is safe.",
    run: Run::Action(init),
};

const INIT_JSON: Flag = Flag::switch("json", "Print {config_dir, created: [paths]} as JSON");

fn path(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let dir = Dirs::from_env().config()?;
    if m.flag(&PATH_JSON) {
        return axe_cli::write_json(
            out,
            &serde_json::json!({ "config_dir": dir.to_string_lossy() }),
        );
    }
    writeln!(out, "{}", dir.display()).map_err(Error::Output)?;
    Ok(())
}

fn init(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let done = axe_agent::init::config(&Dirs::from_env())?;
    if m.flag(&INIT_JSON) {
        let created: Vec<_> = done.created.iter().map(|p| p.to_string_lossy()).collect();
        return axe_cli::write_json(
            out,
            &serde_json::json!({
                "config_dir": done.config_dir.to_string_lossy(),
                "created": created,
            }),
        );
    }
    writeln!(out, "{}", done.config_dir.display()).map_err(Error::Output)?;
    Ok(())
}
