//! The command line, read against a [`Command`]'s flag table.
//!
//! Parsing only sorts the words into flags and positionals; it does no I/O
//! and knows nothing of what a flag means. `--help` and `--version` stop it
//! at once, before anything else is looked at.

use std::ffi::OsString;

use super::error::UsageError;
use super::flag::{Flag, Kind};
use super::matches::Matches;
use super::spec::Command;
use axe_base::error::{Error, Result};
use axe_base::suggest;

/// What the command line asked for.
pub enum Parsed {
    Help,
    Version,
    Run(Matches),
}

pub fn parse(command: &'static Command, words: Vec<OsString>) -> Result<Parsed> {
    use lexopt::Arg;
    let mut parser = lexopt::Parser::from_args(words);
    let mut m = Matches::new(command.name, command.flags);
    while let Some(arg) = parser.next().map_err(usage)? {
        let flag = match arg {
            Arg::Short(c) => command
                .all_flags()
                .find(|f| f.short == Some(c))
                .ok_or(UsageError::UnknownShort(c))?,
            Arg::Long(name) => command
                .flag(name)
                .ok_or_else(|| unrecognized(command, name))?,
            Arg::Value(v) => {
                let variadic = command.args.last().is_some_and(|a| a.many);
                if m.args.len() >= command.args.len() && !variadic {
                    return Err(UsageError::UnexpectedArgument(v.to_string_lossy().into()).into());
                }
                m.args.push(v);
                continue;
            }
        };
        match flag.long {
            "help" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            _ => {}
        }
        let value = if flag.value.is_some() {
            Some(
                parser
                    .value()
                    .map_err(|_| UsageError::MissingValue(flag.long))?,
            )
        } else {
            if parser.optional_value().is_some() {
                return Err(UsageError::TakesNoValue(flag.long).into());
            }
            None
        };
        if let Some(v) = &value {
            check_value(flag, v)?;
        }
        m.flags.push((flag.long, value));
    }
    Ok(Parsed::Run(m))
}

/// Whether `words` ask for `--json`, read as `command` reads them (so the
/// value of another flag, `--task --json`, is not a request), but without
/// stopping at the first mistake: a line that does not parse still gets
/// its error as JSON. A command of subcommands asks the one named, or any
/// of them when the name is wrong.
pub fn asks_json(command: &Command, words: &[OsString]) -> bool {
    use lexopt::Arg;
    let subs = command.subcommands();
    if !subs.is_empty() {
        let rest = words.get(1..).unwrap_or_default();
        let named = words.first().and_then(|w| w.to_str());
        return match subs.iter().find(|s| Some(s.word()) == named) {
            Some(sub) => asks_json(sub, rest),
            // A line naming none may be a default's (`axe-sync --json`).
            None => subs
                .iter()
                .any(|s| asks_json(s, rest) || asks_json(s, words)),
        };
    }
    let takes_value = |f: Option<&Flag>| f.is_some_and(|f| f.value.is_some());
    let mut parser = lexopt::Parser::from_args(words.iter().cloned());
    loop {
        match parser.next() {
            Ok(Some(Arg::Long("json"))) => return command.flag("json").is_some(),
            Ok(Some(Arg::Long(name))) if takes_value(command.flag(name)) => {
                let _ = parser.value();
            }
            Ok(Some(Arg::Short(c)))
                if takes_value(command.all_flags().find(|f| f.short == Some(c))) =>
            {
                let _ = parser.value();
            }
            Ok(Some(_)) => {}
            Ok(None) => return false,
            // A switch given a value (`--x=1`): what follows is still read.
            Err(_) => {}
        }
    }
}

/// A number flag's value must be a finite number: `inf` and `NaN` parse
/// as floats but mean nothing as a temperature or a number of seconds.
fn check_value(flag: &Flag, value: &std::ffi::OsStr) -> Result<()> {
    if flag.kind != Kind::Number {
        return Ok(());
    }
    let text = value.to_string_lossy();
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(()),
        Ok(_) => Err(UsageError::NotFinite(flag.long).into()),
        Err(_) => Err(UsageError::InvalidNumber {
            flag: flag.long,
            value: text.into_owned(),
        }
        .into()),
    }
}

fn usage(e: lexopt::Error) -> Error {
    UsageError::Read(e).into()
}

/// `unrecognized flag --jsn (did you mean --json?)`.
fn unrecognized(command: &Command, name: &str) -> Error {
    UsageError::UnknownLong {
        name: name.to_owned(),
        near: suggest::near(name, command.all_flags().map(|f| f.long)),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::flag::{Arg, Complete};
    use crate::spec::Run;

    const TEST: Command = Command {
        name: "axe-test",
        about: "a",
        usage: &["u"],
        args: &[Arg {
            name: "X",
            noun: "x",
            help: "h",
            complete: Complete::Nothing,
            many: true,
        }],
        flags: &[
            Flag::with_value("task", "TEXT", "t").short('t'),
            Flag::switch("json", "j"),
            Flag::switch("quiet", "q").short('q'),
        ],
        rules: &[],
        description: "",
        run: Run::Action(|_, _| Ok(())),
    };

    fn asks(words: &[&str]) -> bool {
        let words: Vec<OsString> = words.iter().map(OsString::from).collect();
        asks_json(&TEST, &words)
    }

    #[test]
    fn json_is_asked_for_only_as_a_flag() {
        assert!(asks(&["x", "--json"]));
        assert!(asks(&["--bogus", "--json"]));
        assert!(asks(&["--quiet=1", "--json"]));
        assert!(asks(&["--json=1"]));
        assert!(asks(&["-qzq", "--json"]));
        assert!(!asks(&["--task", "--json"]));
        assert!(!asks(&["-t", "--json"]));
        assert!(!asks(&["--task=--json"]));
        assert!(!asks(&["--", "--json"]));
        assert!(!asks(&[]));
    }
}
