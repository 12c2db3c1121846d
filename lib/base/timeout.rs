//! Timeouts: one rule for every `--timeout` flag and every timeout in an
//! agent file, so `axe-llm`, `axe-run` and `axe-gc` take the same values
//! and none of them can reach a duration the clock cannot add.

use std::fmt;
use std::time::Duration;

/// The longest timeout: a day. Anything longer is a typo, and keeping
/// every deadline within it keeps the clock arithmetic far from overflow.
pub const MAX_SECONDS: u64 = 86_400;

/// Why a number of seconds is no timeout; its `Display` follows the
/// flag's name (`--timeout must be ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OutOfRange {
    /// Zero, negative or not a number.
    #[error("must be a positive number of seconds")]
    NotPositive,
    /// Over [`MAX_SECONDS`] (infinity too).
    #[error("cannot exceed {MAX_SECONDS} seconds (a day)")]
    OverADay,
}

/// `seconds` (fractions allowed) as a timeout, or why it cannot be one.
pub fn from_seconds(seconds: f64) -> Result<Duration, OutOfRange> {
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(OutOfRange::NotPositive);
    }
    if seconds > MAX_SECONDS as f64 {
        return Err(OutOfRange::OverADay);
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A timeout as people write it: `120`, or `0.5` when it has a fraction.
/// As JSON it is a whole number when it is one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seconds(pub Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.as_secs_f64())
    }
}

impl serde::Serialize for Seconds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.subsec_nanos() == 0 {
            s.serialize_u64(self.0.as_secs())
        } else {
            s.serialize_f64(self.0.as_secs_f64())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert_eq!(from_seconds(0.5), Ok(Duration::from_millis(500)));
        assert_eq!(from_seconds(86_400.0), Ok(Duration::from_secs(86_400)));
        for bad in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY] {
            assert_eq!(from_seconds(bad), Err(OutOfRange::NotPositive), "{bad}");
        }
        for big in [86_400.5, 1e20, f64::INFINITY, u64::MAX as f64] {
            assert_eq!(from_seconds(big), Err(OutOfRange::OverADay), "{big}");
            let why = from_seconds(big).unwrap_err().to_string();
            assert_eq!(why, "cannot exceed 86400 seconds (a day)");
        }
    }

    #[test]
    fn shown_as_written() {
        let s = |d| Seconds(d).to_string();
        assert_eq!(s(Duration::from_secs(120)), "120");
        assert_eq!(s(Duration::from_millis(500)), "0.5");
        let json = |d| serde_json::to_string(&Seconds(d)).unwrap();
        assert_eq!(json(Duration::from_secs(120)), "120");
        assert_eq!(json(Duration::from_millis(1500)), "1.5");
    }
}
