//! When to call again after a failed attempt, and how long to wait first:
//! one policy for `axe-llm --retries` and an agent's `[retry]` section.

use std::time::Duration;

/// How the wait grows from one retry to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    /// `initial`, twice that, four times..., each give or take a quarter
    /// so that clients that failed together do not retry together.
    Exponential,
    /// `initial`, twice that, three times...
    Linear,
    /// `initial` every time.
    Fixed,
}

impl Backoff {
    /// The names an agent file may use, in the order error messages list
    /// them.
    pub const NAMES: [&'static str; 3] = ["exponential", "linear", "fixed"];

    /// Its name in an agent file.
    pub fn name(self) -> &'static str {
        match self {
            Backoff::Exponential => "exponential",
            Backoff::Linear => "linear",
            Backoff::Fixed => "fixed",
        }
    }

    /// The backoff called `name` (empty: the default, exponential).
    pub fn parse(name: &str) -> Option<Backoff> {
        match name {
            "" | "exponential" => Some(Backoff::Exponential),
            "linear" => Some(Backoff::Linear),
            "fixed" => Some(Backoff::Fixed),
            _ => None,
        }
    }
}

/// How many times to call again, and how long to wait before each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Further attempts after the first; 0: none.
    pub max_retries: u32,
    pub backoff: Backoff,
    /// The first wait.
    pub initial_delay: Duration,
    /// No wait is longer, jitter included (a server's `Retry-After` is
    /// honoured as it is).
    pub max_delay: Duration,
}

/// Go's defaults: exponential from 500 ms, at most 30 s.
pub const DEFAULT_INITIAL_DELAY: Duration = Duration::from_millis(500);
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(30);

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy::times(0)
    }
}

impl RetryPolicy {
    /// `n` retries with the default backoff (`axe-llm --retries N`).
    pub fn times(n: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries: n,
            backoff: Backoff::Exponential,
            initial_delay: DEFAULT_INITIAL_DELAY,
            max_delay: DEFAULT_MAX_DELAY,
        }
    }

    /// The wait before retry `attempt` (0: the first retry).
    pub fn delay(&self, attempt: u32) -> Duration {
        let initial = self.initial_delay;
        let wait = match self.backoff {
            Backoff::Exponential => {
                jitter(initial.saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX)))
            }
            Backoff::Linear => initial.saturating_mul(attempt.saturating_add(1)),
            Backoff::Fixed => initial,
        };
        wait.min(self.max_delay)
    }
}

/// `wait` give or take a quarter. The jitter comes from the clock: no
/// random number crate for this.
fn jitter(wait: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let factor = 0.75 + f64::from(nanos % 1000) / 2000.0;
    // A huge wait times a factor can overflow a Duration: it is capped
    // by `max_delay` anyway.
    Duration::try_from_secs_f64(wait.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn exponential_grows_with_jitter_and_is_capped() {
        let p = RetryPolicy::times(3);
        let b0 = p.delay(0);
        assert!(b0 >= ms(375) && b0 <= ms(625), "{b0:?}");
        let b3 = p.delay(3);
        assert!(b3 >= ms(3000) && b3 <= ms(5000), "{b3:?}");
        assert!(p.delay(20) <= ms(30_000));
        assert!(p.delay(u32::MAX) <= ms(30_000));
    }

    #[test]
    fn linear_and_fixed_are_exact() {
        let mut p = RetryPolicy {
            max_retries: 5,
            backoff: Backoff::Linear,
            initial_delay: ms(100),
            max_delay: ms(250),
        };
        let waits: Vec<_> = (0..4).map(|a| p.delay(a)).collect();
        assert_eq!(waits, [ms(100), ms(200), ms(250), ms(250)]);
        p.backoff = Backoff::Fixed;
        assert_eq!((p.delay(0), p.delay(9)), (ms(100), ms(100)));
        assert_eq!(p.delay(u32::MAX), ms(100));
    }

    #[test]
    fn names() {
        assert_eq!(Backoff::parse(""), Some(Backoff::Exponential));
        assert_eq!(Backoff::parse("linear"), Some(Backoff::Linear));
        assert_eq!(Backoff::parse("fixed"), Some(Backoff::Fixed));
        assert_eq!(Backoff::parse("Fixed"), None);
    }
}
