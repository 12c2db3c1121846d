//! The flags and positionals of one command line, read through the flag
//! constants the command's table is made of.

use std::ffi::{OsStr, OsString};
use std::str::FromStr;

use super::error::UsageError;
use super::flag::Flag;
use axe_base::error::Result;

/// The flags and positionals of one command line.
pub struct Matches {
    /// The command's name and flag table, to check what is read.
    command: &'static str,
    table: &'static [Flag],
    pub(super) flags: Vec<(&'static str, Option<OsString>)>,
    pub(super) args: Vec<OsString>,
}

impl Matches {
    pub(super) fn new(command: &'static str, table: &'static [Flag]) -> Matches {
        Matches {
            command,
            table,
            flags: Vec::new(),
            args: Vec::new(),
        }
    }

    /// The name of `flag`, which must be one of this command's: flags are
    /// read through the constants their tables are made of, so a typo is a
    /// compile error and a flag read by the wrong command fails here.
    fn known(&self, flag: &Flag) -> &'static str {
        debug_assert!(
            self.table.iter().any(|f| f.long == flag.long),
            "{} has no flag --{}",
            self.command,
            flag.long
        );
        flag.long
    }

    /// Whether `flag`, a switch or one with a value, was given.
    pub fn given(&self, flag: &Flag) -> bool {
        self.flags.iter().any(|(l, _)| *l == flag.long)
    }

    /// Whether the switch `flag` was given.
    pub fn flag(&self, flag: &Flag) -> bool {
        let long = self.known(flag);
        self.flags.iter().any(|(l, _)| *l == long)
    }

    /// The value of `flag`; when given more than once, the last wins.
    pub fn value(&self, flag: &Flag) -> Option<&OsStr> {
        let long = self.known(flag);
        self.flags
            .iter()
            .rev()
            .find(|(l, _)| *l == long)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Every value of a flag that may be given more than once, in order.
    pub fn values(&self, flag: &Flag) -> Vec<&OsStr> {
        let long = self.known(flag);
        self.flags
            .iter()
            .filter(|(l, _)| *l == long)
            .filter_map(|(_, v)| v.as_deref())
            .collect()
    }

    /// The value of `flag` as UTF-8 text.
    pub fn string(&self, flag: &Flag) -> Result<Option<&str>> {
        self.value(flag)
            .map(|v| {
                v.to_str()
                    .ok_or_else(|| UsageError::NotUtf8(flag.long).into())
            })
            .transpose()
    }

    /// The value of `flag` as a number.
    pub fn number<T: FromStr>(&self, flag: &Flag) -> Result<Option<T>> {
        self.string(flag)?
            .map(|s| {
                s.trim().parse().map_err(|_| {
                    UsageError::InvalidNumber {
                        flag: flag.long,
                        value: s.to_owned(),
                    }
                    .into()
                })
            })
            .transpose()
    }

    /// Positional arguments in order.
    pub fn args(&self) -> &[OsString] {
        &self.args
    }
}
