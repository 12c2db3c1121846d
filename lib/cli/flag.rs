//! Options and positional arguments as data: what the parser, `--help`,
//! the man pages and the completions are generated from.

/// A positional argument.
pub struct Arg {
    /// Shown as `<NAME>`.
    pub name: &'static str,
    /// What errors call it: `agent name` in "agent name is required".
    pub noun: &'static str,
    pub help: &'static str,
    pub complete: Complete,
    /// Takes every remaining word (`PROMPT...`); only the last may.
    pub many: bool,
}

/// An option.
pub struct Flag {
    /// Without the dashes.
    pub long: &'static str,
    pub short: Option<char>,
    /// The value's name for a flag that takes one (`--last <N>`); `None`
    /// for a switch.
    pub value: Option<&'static str>,
    /// One line for `--help`.
    pub help: &'static str,
    pub complete: Complete,
    /// What kind of value it takes, for shells with typed arguments.
    pub kind: Kind,
}

/// The kind of a flag's value: Nushell declares an `int` flag so that
/// `--last $n` with `let n = 2` is no type error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// A whole number: a count.
    Int,
    /// Any number: seconds, a temperature.
    Number,
}

/// What a value completes to in a shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Complete {
    Nothing,
    /// Names of agent files in the agents directory.
    Agent,
    File,
    Dir,
    /// `provider/` prefixes.
    Model,
}

/// `-h`/`--help`, which every command has.
pub const HELP: Flag = Flag::switch("help", "Print help").short('h');

/// `-V`/`--version`, which every command has.
pub const VERSION: Flag = Flag::switch("version", "Print version").short('V');

impl Flag {
    /// A switch: `--long`.
    pub const fn switch(long: &'static str, help: &'static str) -> Flag {
        Flag {
            long,
            short: None,
            value: None,
            help,
            complete: Complete::Nothing,
            kind: Kind::Text,
        }
    }

    /// A flag with a value: `--long <VALUE>`.
    pub const fn with_value(long: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag {
            value: Some(value),
            ..Flag::switch(long, help)
        }
    }

    pub const fn short(self, short: char) -> Flag {
        Flag {
            short: Some(short),
            ..self
        }
    }

    pub const fn completes(self, complete: Complete) -> Flag {
        Flag { complete, ..self }
    }

    /// Takes a whole number.
    pub const fn int(self) -> Flag {
        Flag {
            kind: Kind::Int,
            ..self
        }
    }

    /// Takes a number, fractions allowed.
    pub const fn number(self) -> Flag {
        Flag {
            kind: Kind::Number,
            ..self
        }
    }
}
