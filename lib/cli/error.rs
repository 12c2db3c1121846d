//! What can be wrong with a command line, typed: each failure holds what
//! was typed and, where there is one, the error beneath it. It reaches
//! the toolkit's one [`Error`] as a usage error ([`Error::Usage`]'s line
//! and exit code, through [`Error::caused`]), so the one exit-code table
//! still decides; the line is Go's (cobra's) wording.

use axe_base::error::Error;

#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// `-x`, which the command has no flag for.
    #[error("unrecognized flag -{0}")]
    UnknownShort(char),
    /// `--name`, with the flag nearest to it when one is near.
    #[error("unrecognized flag --{name}{}", near_flag(.near))]
    UnknownLong {
        name: String,
        near: Option<&'static str>,
    },
    /// A word past the arguments the command takes.
    #[error("unexpected argument \"{0}\"")]
    UnexpectedArgument(String),
    /// A flag that takes a value, given none.
    #[error("missing value for flag --{0}")]
    MissingValue(&'static str),
    /// `--flag=value` for a switch.
    #[error("flag --{0} does not take a value")]
    TakesNoValue(&'static str),
    /// A number flag given `inf` or `NaN`.
    #[error("--{0} must be a finite number")]
    NotFinite(&'static str),
    /// A number flag given what is no number.
    #[error("error parsing flag --{flag}: invalid number \"{value}\"")]
    InvalidNumber { flag: &'static str, value: String },
    /// A flag's value that is not UTF-8.
    #[error("error parsing flag --{0}: not valid UTF-8")]
    NotUtf8(&'static str),
    /// A word where a subcommand was expected, and the one nearest to it.
    #[error("unrecognized subcommand \"{word}\" for {command} (did you mean \"{near}\"?)")]
    UnknownSubcommand {
        word: String,
        command: &'static str,
        near: &'static str,
    },
    /// What the command-line reader itself refused.
    #[error("{0}")]
    Read(#[source] lexopt::Error),
    /// A rule between flags and arguments broken (`--json` with
    /// `--quiet`, a missing argument): its message and, for a missing
    /// argument, how the command is used.
    #[error("{message}{}", usage_after(.usage))]
    Rule {
        message: String,
        usage: Option<String>,
    },
    /// `--completions` for a shell there is no script for.
    #[error(
        "error parsing flag --completions: unknown shell \"{shell}\" (expected one of {})",
        .expected.join(", ")
    )]
    UnknownShell {
        shell: String,
        /// The shells there are scripts for.
        expected: &'static [&'static str],
    },
}

/// ` (did you mean --<long>?)`, when a flag is near.
fn near_flag(near: &Option<&str>) -> String {
    near.map(|long| format!(" (did you mean --{long}?)"))
        .unwrap_or_default()
}

/// `; usage: <usage>`, for a missing argument.
fn usage_after(usage: &Option<String>) -> String {
    usage
        .as_ref()
        .map(|usage| format!("; usage: {usage}"))
        .unwrap_or_default()
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
