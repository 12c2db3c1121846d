//! What can be wrong with a command line, typed: each failure holds what
//! was typed and, where there is one, the error beneath it. It reaches
//! the toolkit's one [`Error`] as a usage error ([`Error::Usage`]'s line
//! and exit code, through [`Error::caused`]), so the one exit-code table
//! still decides; the line is Go's (cobra's) wording.

use std::fmt;

use axe_base::error::Error;

#[derive(Debug)]
pub enum UsageError {
    /// `-x`, which the command has no flag for.
    UnknownShort(char),
    /// `--name`, with the flag nearest to it when one is near.
    UnknownLong {
        name: String,
        near: Option<&'static str>,
    },
    /// A word past the arguments the command takes.
    UnexpectedArgument(String),
    /// A flag that takes a value, given none.
    MissingValue(&'static str),
    /// `--flag=value` for a switch.
    TakesNoValue(&'static str),
    /// A number flag given `inf` or `NaN`.
    NotFinite(&'static str),
    /// A number flag given what is no number.
    InvalidNumber { flag: &'static str, value: String },
    /// A flag's value that is not UTF-8.
    NotUtf8(&'static str),
    /// A word where a subcommand was expected, and the one nearest to it.
    UnknownSubcommand {
        word: String,
        command: &'static str,
        near: &'static str,
    },
    /// What the command-line reader itself refused.
    Read(lexopt::Error),
    /// A rule between flags and arguments broken (`--json` with
    /// `--quiet`, a missing argument): its message and, for a missing
    /// argument, how the command is used.
    Rule {
        message: String,
        usage: Option<String>,
    },
    /// `--completions` for a shell there is no script for.
    UnknownShell {
        shell: String,
        /// The shells there are scripts for.
        expected: &'static [&'static str],
    },
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownShort(c) => write!(f, "unrecognized flag -{c}"),
            UsageError::UnknownLong { name, near: None } => {
                write!(f, "unrecognized flag --{name}")
            }
            UsageError::UnknownLong {
                name,
                near: Some(long),
            } => write!(f, "unrecognized flag --{name} (did you mean --{long}?)"),
            UsageError::UnexpectedArgument(word) => write!(f, "unexpected argument \"{word}\""),
            UsageError::MissingValue(long) => write!(f, "missing value for flag --{long}"),
            UsageError::TakesNoValue(long) => write!(f, "flag --{long} does not take a value"),
            UsageError::NotFinite(long) => write!(f, "--{long} must be a finite number"),
            UsageError::InvalidNumber { flag, value } => {
                write!(f, "error parsing flag --{flag}: invalid number \"{value}\"")
            }
            UsageError::NotUtf8(long) => write!(f, "error parsing flag --{long}: not valid UTF-8"),
            UsageError::UnknownSubcommand {
                word,
                command,
                near,
            } => write!(
                f,
                "unrecognized subcommand \"{word}\" for {command} (did you mean \"{near}\"?)"
            ),
            UsageError::Read(e) => e.fmt(f),
            UsageError::Rule {
                message,
                usage: None,
            } => f.write_str(message),
            UsageError::Rule {
                message,
                usage: Some(usage),
            } => write!(f, "{message}; usage: {usage}"),
            UsageError::UnknownShell { shell, expected } => write!(
                f,
                "error parsing flag --completions: unknown shell \"{shell}\" (expected one of {})",
                expected.join(", ")
            ),
        }
    }
}

impl std::error::Error for UsageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UsageError::Read(e) => Some(e),
            _ => None,
        }
    }
}

impl From<UsageError> for Error {
    fn from(e: UsageError) -> Error {
        Error::caused(Error::Usage(e.to_string()), e)
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    /// Each failure is its usage line, exit 1, and keeps what it was
    /// made of; the reader's own refusal is the cause.
    #[test]
    fn a_usage_error_is_its_line_exit_one_and_keeps_its_cause() {
        let e = Error::from(UsageError::InvalidNumber {
            flag: "last",
            value: "many".into(),
        });
        assert_eq!(
            e.to_string(),
            "error parsing flag --last: invalid number \"many\""
        );
        assert_eq!(e.exit_code(), 1);
        let typed = e.source().and_then(|s| s.downcast_ref::<UsageError>());
        assert!(matches!(
            typed,
            Some(UsageError::InvalidNumber { flag: "last", .. })
        ));

        // A switch given a value the command did not read.
        let mut p = lexopt::Parser::from_args(["--x=1"]);
        assert!(matches!(p.next(), Ok(Some(_))));
        let e = Error::from(UsageError::Read(p.next().unwrap_err()));
        assert_eq!(e.to_string(), "unexpected argument for option '--x': \"1\"");
        let typed = e
            .source()
            .and_then(|s| s.downcast_ref::<UsageError>())
            .unwrap();
        assert!(typed.source().is_some(), "the reader's error is its cause");
    }
}
