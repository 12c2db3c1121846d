//! `--wait SECONDS`: how long a memory tool waits for another process's
//! lock on a file before giving up (exit 5, nothing written).

use std::time::Duration;

use crate::cli::{Flag, Matches};
use crate::error::{Error, Result};
use crate::memory;

pub const WAIT: Flag = Flag::with_value(
    "wait",
    "SECONDS",
    "Wait this long at most for another process's lock on a memory file; 0: not at all [default: 30]",
)
.number();

/// Reads `--wait` and makes it this process's lock wait.
pub fn apply(m: &Matches) -> Result<()> {
    let wait = match m.number::<f64>(&WAIT)? {
        None => memory::DEFAULT_WAIT,
        Some(0.0) => Duration::ZERO,
        Some(s) => {
            crate::timeout::from_seconds(s).map_err(|why| Error::Usage(format!("--wait {why}")))?
        }
    };
    memory::wait_for(wait);
    Ok(())
}
