//! The command line, read against a [`Command`]'s flag table.
//!
//! Parsing only sorts the words into flags and positionals; it does no I/O
//! and knows nothing of what a flag means. `--help` and `--version` stop it
//! at once, before anything else is looked at.

use std::ffi::{OsStr, OsString};
use std::str::FromStr;

use super::spec::Command;
use crate::error::{Error, Result};

/// What the command line asked for.
pub enum Parsed {
    Help,
    Version,
    Run(Matches),
}

/// The flags and positionals of one command line.
pub struct Matches {
    command: &'static Command,
    flags: Vec<(&'static str, Option<OsString>)>,
    args: Vec<OsString>,
}

pub fn parse(command: &'static Command, words: Vec<OsString>) -> Result<Parsed> {
    use lexopt::Arg;
    let mut parser = lexopt::Parser::from_args(words);
    let mut m = Matches {
        command,
        flags: Vec::new(),
        args: Vec::new(),
    };
    while let Some(arg) = parser.next().map_err(usage)? {
        let flag = match arg {
            Arg::Short(c) => command
                .all_flags()
                .find(|f| f.short == Some(c))
                .ok_or_else(|| Error::Usage(format!("unrecognized flag -{c}")))?,
            Arg::Long(name) => command
                .flag(name)
                .ok_or_else(|| unrecognized(command, name))?,
            Arg::Value(v) => {
                let variadic = command.args.last().is_some_and(|a| a.many);
                if m.args.len() >= command.args.len() && !variadic {
                    return Err(Error::Usage(format!(
                        "unexpected argument \"{}\"",
                        v.to_string_lossy()
                    )));
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
                    .map_err(|_| Error::Usage(format!("missing value for flag --{}", flag.long)))?,
            )
        } else {
            if parser.optional_value().is_some() {
                return Err(Error::Usage(format!(
                    "flag --{} does not take a value",
                    flag.long
                )));
            }
            None
        };
        m.flags.push((flag.long, value));
    }
    Ok(Parsed::Run(m))
}

fn usage(e: lexopt::Error) -> Error {
    Error::Usage(e.to_string())
}

/// `unrecognized flag --jsn (did you mean --json?)`.
fn unrecognized(command: &Command, name: &str) -> Error {
    let closest = closest(name, command.all_flags().map(|f| f.long))
        .filter(|long| edit_distance(name, long) <= 2.max(long.len() / 3));
    match closest {
        Some(long) => Error::Usage(format!(
            "unrecognized flag --{name} (did you mean --{long}?)"
        )),
        None => Error::Usage(format!("unrecognized flag --{name}")),
    }
}

/// The candidate nearest to `typed` by edit distance; the first of equals.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .enumerate()
        .min_by_key(|&(i, c)| (edit_distance(typed, c), i))
        .map(|(_, c)| c)
}

/// Levenshtein distance, for suggestions among a handful of short names.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diag = above;
        }
    }
    row[b.len()]
}

impl Matches {
    fn known(&self, long: &str) {
        debug_assert!(
            self.command.flag(long).is_some(),
            "{} has no flag --{long}",
            self.command.name
        );
    }

    /// Whether the switch `--long` was given.
    pub fn flag(&self, long: &str) -> bool {
        self.known(long);
        self.flags.iter().any(|(l, _)| *l == long)
    }

    /// The value of `--long`; when given more than once, the last wins.
    pub fn value(&self, long: &str) -> Option<&OsStr> {
        self.known(long);
        self.flags
            .iter()
            .rev()
            .find(|(l, _)| *l == long)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The value of `--long` as UTF-8 text.
    pub fn string(&self, long: &str) -> Result<Option<&str>> {
        self.value(long)
            .map(|v| {
                v.to_str().ok_or_else(|| {
                    Error::Usage(format!("error parsing flag --{long}: not valid UTF-8"))
                })
            })
            .transpose()
    }

    /// The value of `--long` as a number.
    pub fn number<T: FromStr>(&self, long: &str) -> Result<Option<T>> {
        self.string(long)?
            .map(|s| {
                s.trim().parse().map_err(|_| {
                    Error::Usage(format!(
                        "error parsing flag --{long}: invalid number \"{s}\""
                    ))
                })
            })
            .transpose()
    }

    /// Positional arguments in order.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("json", "json"), 0);
        assert_eq!(edit_distance("jsn", "json"), 1);
        assert_eq!(edit_distance("lats", "last"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
