//! `axe`: the front door. `axe run reviewer` runs `axe-run reviewer`; the
//! small executables stay the real interface, `axe` only finds them.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;

mod dispatch;

use axe_base::error::{Error, Result};
use axe_cli::generate::Program;
use axe_cli::{Arg, Command, Complete, Flag, Matches, Run};
use dispatch::Found;

pub const COMMAND: Command = Command {
    name: "axe",
    about: "Run LLM agents from the shell and give them memory",
    usage: &["<COMMAND> [ARGS]...", "help [COMMAND]...", "[OPTIONS]"],
    args: &[Arg {
        name: "COMMAND",
        noun: "command",
        help: "A subcommand and its arguments: `axe mem load x` runs `axe-mem-load x`",
        complete: Complete::Nothing,
        many: true,
    }],
    flags: &[JSON, COMPLETIONS, MAN_PAGES],
    rules: &[],
    description: "\
`axe NAME ARGS...` runs the executable axe-NAME with ARGS, looking first in
the directory that holds axe, then along PATH; a name of several words is
joined with dashes (`axe mem load x` runs axe-mem-load). The executable
replaces axe, so its input, output and exit code are the command's own.
Any axe-NAME on PATH works, so new subcommands can be added without
changing axe. `axe help NAME` is `axe-NAME --help`; a NAME that is no
command gets the closest one, or \"no such command\" (exit 1).",
    run: Run::Action(run),
};

const JSON: Flag = Flag::switch(
    "json",
    "Print {commands: [{name, about, path}]}, the available subcommands, as JSON",
);

const COMPLETIONS: Flag = Flag::with_value(
    "completions",
    "SHELL",
    "Print the completion script for SHELL: bash, zsh, fish or nushell",
);

const MAN_PAGES: Flag = Flag::with_value(
    "man-pages",
    "DIR",
    "Write a man page for each executable into DIR and print their paths",
)
.completes(Complete::Dir);

/// What the completion and man page generators read.
pub const PROGRAM: Program = Program {
    front: &COMMAND,
    commands: super::ALL,
    providers: || axe_llm::names().collect(),
};

/// The life of `axe`: started as one of its commands (`axe-run`, by that
/// command's launcher or a link of that name), that command; else a
/// subcommand runs in its place, and anything else (help, version,
/// options) is read like any command's line.
pub fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let started_as = args.next().unwrap_or_default();
    let mut words: Vec<OsString> = args.collect();
    if let Some(command) = dispatch::own(&started_as) {
        return axe_cli::main_with(command, words);
    }
    match words.first().and_then(|w| w.to_str()) {
        Some("help" | "version") | None => {}
        // The list of subcommands is the help a user wants from `axe -h`.
        Some("-h" | "--help") => words[0] = "help".into(),
        Some(w) if !w.starts_with('-') => {
            return dispatch::run(words);
        }
        Some(_) => {}
    }
    axe_cli::main_with(&COMMAND, words)
}

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    about: &'a str,
    path: String,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    if let Some(shell) = m.string(&COMPLETIONS)? {
        let script = PROGRAM.completions(shell)?;
        out.write_all(script.as_bytes()).map_err(Error::Output)?;
        return Ok(());
    }
    if let Some(dir) = m.value(&MAN_PAGES) {
        for path in PROGRAM.write_man_pages(std::path::Path::new(dir))? {
            writeln!(out, "{}", path.display()).map_err(Error::Output)?;
        }
        return Ok(());
    }
    let args: Vec<String> = m
        .args()
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    match args.first().map(String::as_str) {
        Some("version") => out
            .write_all(axe_cli::version(&COMMAND).as_bytes())
            .map_err(Error::Output)?,
        Some("help") if args.len() > 1 => {
            let words: Vec<OsString> = args[1..].iter().map(OsString::from).collect();
            return dispatch::help(words, out);
        }
        _ if m.flag(&JSON) => {
            let found = dispatch::available();
            let listed: Vec<Listed> = found
                .iter()
                .map(|f| Listed {
                    name: &f.name,
                    about: f.about,
                    path: f.path.to_string_lossy().into_owned(),
                })
                .collect();
            #[derive(Serialize)]
            struct List<'a> {
                commands: Vec<Listed<'a>>,
            }
            axe_cli::write_json(out, &List { commands: listed })?;
        }
        _ => out
            .write_all(help(&dispatch::available()).as_bytes())
            .map_err(Error::Output)?,
    }
    Ok(())
}

/// `axe`'s help: the generated page, listing the subcommands found on
/// disk in place of the COMMAND argument.
fn help(found: &[Found]) -> String {
    let mut rows: Vec<(String, String)> = found
        .iter()
        .map(|f| {
            let about = if f.about.is_empty() {
                format!("({})", f.path.display())
            } else {
                f.about.to_owned()
            };
            (f.name.clone(), about)
        })
        .collect();
    if found.is_empty() {
        let note = "(no axe-* executables found next to axe or on PATH)";
        rows.push((note.into(), String::new()));
    }
    rows.push(("help".into(), "Print help, or a command's help".into()));
    rows.push(("version".into(), "Print version".into()));
    axe_cli::help_with_commands(&COMMAND, &rows)
}
