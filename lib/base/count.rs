//! A count (or seconds) as an agent file writes it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A count (or seconds) in an agent file. It is read as any integer, so
/// that a negative one reaches the agent's validation and gets Go's message rather
/// than a parse error; once validated, [`Count::get`] is its value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Count(pub i64);

impl Count {
    /// `n`, as a flag gives it for this run.
    pub fn new(n: u64) -> Count {
        Count(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// The value, which validation has made sure is not negative.
    pub fn get(self) -> u64 {
        u64::try_from(self.0).unwrap_or(0)
    }

    /// The value as a size or a number of characters.
    pub fn as_usize(self) -> usize {
        usize::try_from(self.get()).unwrap_or(usize::MAX)
    }

    /// Whether the file wrote a negative number, which validation refuses.
    pub fn is_negative(self) -> bool {
        self.0 < 0
    }
}

impl std::fmt::Display for Count {
    /// As written in the file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The first of `fields` (named as in the agent file) that is negative,
/// as the agent file's error: the kinds' numbers are [`Count`]s so that
/// a negative one reaches here and gets Go's message, not a parser's.
pub fn non_negative(fields: &[(&str, Count)]) -> Result<()> {
    match fields.iter().find(|(_, value)| value.is_negative()) {
        Some((field, value)) => Err(Negative {
            field: field.to_string(),
            value: value.0,
        }
        .into()),
        None => Ok(()),
    }
}

/// A count the agent file wrote negative: the field (as the file names
/// it) and its value. Reported as an invalid agent, Go's line.
#[derive(Debug, thiserror::Error)]
#[error("{field} must be non-negative")]
pub struct Negative {
    pub field: String,
    pub value: i64,
}

impl From<Negative> for Error {
    fn from(e: Negative) -> Error {
        Error::caused(Error::AgentInvalid(e.to_string()), e)
    }
}
