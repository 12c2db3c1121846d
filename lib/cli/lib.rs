//! The shared runner of every executable: parse, run, print, exit.
//!
//! stdout carries results only. A failure is one line on stderr (the bare
//! message, as the Go `axe` printed it) or, with `--json`, one JSON object
//! `{"error": ..., "exit_code": ...}` there, and the process exits with the
//! error's code. A closed stdout (`| head`) ends the command quietly with 0.

mod error;
pub mod flag;
pub mod generate;
mod help;
mod matches;
mod parse;
pub mod rule;
pub mod spec;

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

pub use error::UsageError;
pub use flag::{Arg, Complete, Flag, HELP, Kind, VERSION};
pub use help::{flag_spelling, help, help_with_commands, version};
pub use matches::Matches;
pub use parse::{Parsed, parse};
pub use rule::{Item, Rule};
pub use spec::{Command, Run};

use axe_base::error::{Error, Result};

/// The whole life of one executable. `bins/*.rs` call only this.
pub fn main(command: &'static Command) -> ExitCode {
    main_with(command, std::env::args_os().skip(1).collect())
}

/// [`main`] with the command line (without the program name) given.
pub fn main_with(command: &'static Command, words: Vec<OsString>) -> ExitCode {
    axe_base::signals::survive_file_size_limit();
    // Known before parsing, so even a usage error can be reported as JSON.
    let json = parse::asks_json(command, &words);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let result = run(command, words, &mut out).and_then(|()| out.flush().map_err(Error::Output));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => fail(&e, json),
    }
}

/// Reports `e` on stderr (as JSON with `json`) and gives its exit code.
pub fn fail(e: &Error, json: bool) -> ExitCode {
    if !e.is_quiet() {
        report(e, json);
    }
    ExitCode::from(e.exit_code())
}

/// Runs `command` with the command line `words` (without the program
/// name), writing its results to `out`: what [`main_with`] does short of
/// reporting an error and exiting, for a command run inside another
/// (`axe help run`).
pub fn run(command: &'static Command, words: Vec<OsString>, out: &mut dyn Write) -> Result<()> {
    let (command, words) = select(command, words)?;
    match parse(command, words)? {
        Parsed::Help => out
            .write_all(help(command).as_bytes())
            .map_err(Error::Output)?,
        Parsed::Version => out
            .write_all(version(command).as_bytes())
            .map_err(Error::Output)?,
        Parsed::Run(m) => match command.run {
            Run::Action(action) => {
                check_rules(command, &m)?;
                action(&m, out)?
            }
            // A command of subcommands without one (`axe-agents`) shows
            // what it has, as `git remote` and cobra's groups do.
            Run::Subcommands(_) | Run::Default(_) => out
                .write_all(help(command).as_bytes())
                .map_err(Error::Output)?,
        },
    }
    Ok(())
}

/// The first of `command`'s rules that `m` breaks, as a usage error. A
/// missing argument (`axe-run` alone) also shows how the command is used,
/// on the same line: the error alone does not say where the argument goes.
fn check_rules(command: &Command, m: &Matches) -> Result<()> {
    let Some((rule, message)) = rule::first_broken(command.rules, command.args, m) else {
        return Ok(());
    };
    let usage = rule.missing_arg().map(|arg| help::usage_for(command, arg));
    Err(UsageError::Rule { message, usage }.into())
}

/// Follows subcommand words down to the command that reads the rest:
/// `axe-agents show x` is `axe-agents show` with `x`. `help` before a
/// subcommand's word asks for that subcommand's help.
fn select(
    mut command: &'static Command,
    mut words: Vec<OsString>,
) -> Result<(&'static Command, Vec<OsString>)> {
    while let Run::Subcommands(subs) | Run::Default(subs) = command.run {
        let default = match command.run {
            Run::Default(subs) => subs.first(),
            Run::Subcommands(_) | Run::Action(_) => None,
        };
        let first = words.first().map(|w| w.to_str());
        let word = match first {
            // Nothing, or flags: the default's (a command of subcommands
            // alone shows its help), except its own help and version.
            None => return Ok((default.unwrap_or(command), words)),
            Some(Some("-h" | "--help" | "-V" | "--version")) => break,
            Some(Some(w)) if w.starts_with('-') => {
                return Ok((default.unwrap_or(command), words));
            }
            Some(Some(w)) => w.to_owned(),
            // A word that is not UTF-8 names no subcommand.
            Some(None) => return Ok((default.unwrap_or(command), words)),
        };
        let named = subs.iter().any(|s| s.word() == word) || word == "help";
        if let Some(d) = default
            && !named
            && axe_base::suggest::near(&word, subs.iter().map(|s| s.word())).is_none()
        {
            return Ok((d, words));
        }
        let mut rest = words.split_off(1);
        let wants_help = word == "help";
        let word = match (wants_help, rest.first().and_then(|w| w.to_str())) {
            (true, None) => return Ok((command, vec!["--help".into()])),
            (true, Some(next)) => next.to_owned(),
            (false, _) => word,
        };
        command = subs.iter().find(|s| s.word() == word).ok_or_else(|| {
            let near =
                axe_base::suggest::closest(&word, subs.iter().map(|s| s.word())).unwrap_or("help");
            UsageError::UnknownSubcommand {
                word: word.clone(),
                command: command.name,
                near,
            }
        })?;
        if wants_help {
            rest = vec!["--help".into()];
        }
        words = rest;
    }
    Ok((command, words))
}

fn report(e: &Error, json: bool) {
    let line = if json {
        serde_json::json!({ "error": e.to_string(), "exit_code": e.exit_code() }).to_string()
    } else {
        e.to_string()
    };
    axe_base::stderr::note(format_args!("{line}"));
}

/// Serializes `value` as one line of JSON on `out`.
pub fn write_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(|e| Error::Output(e.into()))?;
    out.write_all(b"\n").map_err(Error::Output)?;
    Ok(())
}
