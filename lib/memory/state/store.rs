//! The state file: read whole, changed under its lock, replaced atomically.

use std::io::{self, Read, Write};
use std::path::Path;

use serde::Deserialize;

use super::data::{State, VERSION};
use super::redact::redact;
use super::view::View;
use crate::error::{InvalidText, MemoryError};
use crate::lock::{Mode, Wait, create_locked, open_locked};
use crate::replace::replace;
use crate::secrets::{Kind, Secrets};
use axe_base::beneath::{Dir, Open};
use axe_base::error::{Error, Result};

/// What pruning on save dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pruned {
    pub decisions: usize,
    pub errors: usize,
}

/// The state at `path`; a missing file is an empty state. A file that is
/// not a state is an error naming it and the position, never an empty
/// state that the next save would write over it.
pub fn load(path: &Path, wait: Wait) -> Result<State> {
    let text = read(path, wait)?;
    if blank(&text) {
        return Ok(State {
            version: VERSION,
            ..State::default()
        });
    }
    parse(path, &text)
}

/// The bytes of the state file at `path`, read under its shared lock, for
/// [`view`]; a missing file is none.
pub fn read(path: &Path, wait: Wait) -> Result<Vec<u8>> {
    let fail = |e: io::Error| crate::error::io_error("failed to read state", "open", path, e);
    let Some((dir, name)) = Dir::holding(path, false).map_err(fail)? else {
        return Ok(Vec::new());
    };
    let Some(mut file) = open_locked(&dir, &name, Open::Read, Mode::Shared, wait).map_err(fail)?
    else {
        return Ok(Vec::new());
    };
    read_whole(&mut file)
        .map_err(|e| crate::error::io_error("failed to read state", "read", path, e))
}

/// The largest state file read: 50 times a state of 10,000 items. A state
/// prunes itself to `max_entries`, so a larger one is not a state axe
/// wrote; it is refused rather than read into memory whole.
pub const MAX_BYTES: u64 = 64 << 20;

/// The whole of an open state file, when it is within [`MAX_BYTES`].
fn read_whole(file: &mut std::fs::File) -> io::Result<Vec<u8>> {
    let mut text = Vec::new();
    // One byte more than the cap tells a larger file, whatever its
    // metadata says.
    file.take(MAX_BYTES + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_BYTES {
        return Err(io::Error::other(format!(
            "larger than the limit of {} MiB for a state file",
            MAX_BYTES >> 20
        )));
    }
    Ok(text)
}

/// What the context block shows of the state file at `path` whose bytes
/// are `text` (from [`read`]); checked as [`load`] checks it.
pub fn view<'a>(path: &Path, text: &'a [u8]) -> Result<View<'a>> {
    parse(path, text)
}

/// An empty (or missing) file: an empty state.
fn blank(text: &[u8]) -> bool {
    text.iter().all(u8::is_ascii_whitespace)
}

pub(super) fn parse<'a, T: Deserialize<'a> + Default>(path: &Path, text: &'a [u8]) -> Result<T> {
    if blank(text) {
        return Ok(T::default());
    }
    let invalid = |line: usize, column: usize, source: InvalidText| {
        Error::from(MemoryError::InvalidState {
            path: path.to_path_buf(),
            line,
            column,
            source,
        })
    };
    // Checked whole first: one pass, where serde_json would check each
    // string on its own (a fifth of the time of a large state).
    let text = std::str::from_utf8(text).map_err(|e| {
        let before = &text[..e.valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
        invalid(line, column, InvalidText::Utf8(e))
    })?;
    serde_json::from_str(text).map_err(|e| invalid(e.line(), e.column(), InvalidText::Json(e)))
}

/// What a save wrote.
#[derive(Debug)]
pub struct Saved {
    pub state: State,
    pub pruned: Pruned,
    /// The secrets taken out before the save.
    pub redacted: Vec<Kind>,
}

/// Changes the state at `path` with `change`, holding its lock from the
/// read to the replace, so concurrent changes never lose each other; then
/// keeps at most `max_entries` decisions and errors (0: no limit),
/// dropping the oldest decisions and resolved errors first, and takes out
/// what `secrets` finds.
pub fn update(
    path: &Path,
    max_entries: usize,
    secrets: &Secrets,
    wait: Wait,
    change: impl FnOnce(&mut State),
) -> Result<Saved> {
    let fail = |op: &'static str, e: io::Error| {
        crate::error::io_error("failed to save state", op, path, e)
    };
    let (dir, name) = Dir::holding(path, true)
        .map_err(|e| fail("mkdir", e))?
        .ok_or_else(|| fail("mkdir", io::ErrorKind::NotFound.into()))?;
    let (mut file, created) =
        create_locked(&dir, &name, Open::Update, wait).map_err(|e| fail("open", e))?;
    let saved = (|| {
        let text = read_whole(&mut file).map_err(|e| fail("read", e))?;
        let mut state: State = parse(path, &text)?;
        state.version = state.version.max(VERSION);
        change(&mut state);
        let pruned = prune(&mut state, max_entries);
        let redacted = redact(&mut state, secrets);
        let mut json = serde_json::to_vec_pretty(&state).expect("a state serialises");
        json.push(b'\n');
        replace(&file, &dir, &name, |tmp, _| tmp.write_all(&json))
            .map_err(|e| fail("replace", e))?;
        Ok(Saved {
            state,
            pruned,
            redacted,
        })
    })();
    if saved.is_err() && created {
        // A save that failed leaves no new empty state behind; we still
        // hold its lock.
        let _ = dir.remove(&name);
    }
    saved
}

/// Drops the oldest decisions, then the oldest resolved errors, until at
/// most `max` remain together; unresolved errors and tasks are kept.
fn prune(state: &mut State, max: usize) -> Pruned {
    let excess = (state.decisions.len() + state.errors.len()).saturating_sub(max);
    if max == 0 || excess == 0 {
        return Pruned::default();
    }
    // Oldest decisions go first, then the oldest resolved errors; unresolved
    // errors are never dropped, even if that leaves the state over `max`.
    let decisions = excess.min(state.decisions.len());
    state.decisions.drain(..decisions);
    let mut left = excess - decisions;
    let before = state.errors.len();
    state.errors.retain(|e| {
        if left > 0 && e.resolved {
            left -= 1;
            return false;
        }
        true
    });
    Pruned {
        decisions,
        errors: before - state.errors.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::data::{Decision, ErrorRecord};

    #[test]
    fn pruning_keeps_unresolved_errors() {
        let mut s = State {
            decisions: (0..5)
                .map(|i| Decision {
                    iteration: i,
                    ..Decision::default()
                })
                .collect(),
            errors: vec![
                ErrorRecord {
                    resolved: true,
                    ..ErrorRecord::default()
                },
                ErrorRecord::default(),
                ErrorRecord::default(),
            ],
            ..State::default()
        };
        assert_eq!(
            prune(&mut s, 4),
            Pruned {
                decisions: 4,
                errors: 0
            }
        );
        assert_eq!(s.decisions[0].iteration, 4);
        assert_eq!(
            prune(&mut s, 1),
            Pruned {
                decisions: 1,
                errors: 1
            }
        );
        assert_eq!(s.errors.len(), 2, "unresolved errors stay");
    }

    #[test]
    fn unknown_fields_survive_and_corruption_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, r#"{"version": 9, "iteration": 2, "future": [1], "tasks": {"t": {"id": "t", "phase": "x", "extra": true}}}"#).unwrap();
        let state = update(&path, 100, &Secrets::off(), Wait::default(), |s| {
            s.key_facts.push("f".into())
        })
        .unwrap()
        .state;
        assert_eq!(state.version, 9);
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(saved["future"], serde_json::json!([1]));
        assert_eq!(saved["tasks"]["t"]["extra"], true);
        std::fs::write(&path, "{\"iteration\": 2,\n \"tasks\": [").unwrap();
        let err = load(&path, Wait::default()).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "state file {} is not a valid state: line 2",
                path.display()
            )),
            "{err}"
        );
        assert!(update(&path, 100, &Secrets::off(), Wait::default(), |_| ()).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"iteration\": 2,\n \"tasks\": [",
            "never reset"
        );
    }
}
