//! Memory around a run, as the Go `axe` kept it: the entries loaded into the prompt
//! before the call, and the entry recorded after a successful one.
//!
//! Memory is best effort here: every failure becomes a warning and the run
//! goes on, unlike in `axe-gc`, where it is a hard error.

use std::path::PathBuf;

use serde::Serialize;
use time::OffsetDateTime;

use axe_base::dirs::Dirs;
use axe_memory::Wait;
use axe_memory::secrets::{Kind, Secrets};
use axe_memory::settings::LogConfig;

/// What was loaded for one agent.
#[derive(Debug, Clone, Default)]
pub struct Recall {
    /// The log; `None` when its path could not be determined.
    pub path: Option<PathBuf>,
    /// The loaded entries, as they are in the log.
    pub entries: String,
    /// How many entries `entries` holds.
    pub loaded: u64,
    /// Why loading failed, if it did (shown by `--dry-run`).
    pub error: Option<String>,
    /// Lines for stderr, without their `Warning: ` prefix.
    pub warnings: Vec<String>,
}

/// Loads the last `last_n` entries of `agent`'s log and checks its size
/// against `max_entries`.
pub fn load(dirs: &Dirs, wait: Wait, agent: &str, config: &LogConfig) -> Recall {
    let mut recall = Recall::default();
    let failed = |e: &dyn std::fmt::Display| format!("failed to load memory for \"{agent}\": {e}");
    let path = match axe_memory::log::file_path(dirs, agent, &config.path) {
        Ok(p) => p,
        Err(e) => {
            recall.error = Some(e.to_string());
            recall.warnings.push(failed(&e));
            return recall;
        }
    };
    match axe_memory::log::load(&path, config.last_n.get(), wait) {
        Ok(bytes) => {
            recall.loaded = axe_memory::log::count_entries(&bytes);
            recall.entries = String::from_utf8_lossy(&bytes).into_owned();
        }
        Err(e) => {
            recall.error = Some(e.to_string());
            recall.warnings.push(failed(&e));
        }
    }
    // Counting reads the whole log, so only when there is a limit to check.
    // The limit only warns, as in Go; Go's advice was `axe gc` alone, a
    // model call, where trimming needs none.
    if config.max_entries.get() > 0 {
        match axe_memory::log::count(&path, wait) {
            Ok(c) if c.entries >= config.max_entries.get() => recall.warnings.push(format!(
                "agent \"{agent}\" memory has {} entries (max_entries: {}); runs only warn, nothing is trimmed. \
                 Run 'axe mem trim {agent}' to keep the last {} (no model call), or 'axe gc {agent}' to have the model review it first.",
                c.entries,
                config.max_entries,
                config.trim_target().unwrap_or(config.max_entries.get())
            )),
            Ok(_) => {}
            Err(e) if recall.error.is_none() => recall.warnings.push(failed(&e)),
            Err(_) => {}
        }
    }
    recall.path = Some(path);
    recall
}

/// What the run log kept of a run: whether it cut the answer and the
/// task to their 1,000 characters (Go's rule), for `-v` and `--json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// The answer (`axe-mem-append`'s name for the result's cut).
    pub truncated: bool,
    pub task_truncated: bool,
    /// The entry's time, its header: what a conversation notes so its
    /// next turn leaves the entry out.
    #[serde(skip)]
    pub timestamp: String,
}

impl Cut {
    /// The `-v` line's text, when something was cut.
    pub fn line(&self) -> Option<String> {
        let what = match (self.task_truncated, self.truncated) {
            (true, true) => "task and answer",
            (true, false) => "task",
            (false, true) => "answer",
            (false, false) => return None,
        };
        Some(format!(
            "{what} cut to {} characters in the run log",
            axe_memory::log::RESULT_LIMIT
        ))
    }
}

/// The run log's entry that could not be saved: whose, and why (the
/// memory's typed error). Its line is the warning a run prints.
#[derive(Debug, thiserror::Error)]
#[error("failed to save memory for \"{agent}\": {source}")]
pub struct NotSaved {
    pub agent: String,
    pub source: axe_base::error::Error,
}

/// Appends the entry for a successful run, through `secrets`, and says
/// what they took out and what the length limit cut; the error is the
/// warning.
pub fn record(
    (dirs, wait): (&Dirs, Wait),
    agent: &str,
    config: &LogConfig,
    task: &str,
    result: &str,
    secrets: &Secrets,
) -> Result<(Vec<Kind>, Cut), NotSaved> {
    let fail = |source| NotSaved {
        agent: agent.to_owned(),
        source,
    };
    let path = axe_memory::log::file_path(dirs, agent, &config.path).map_err(fail)?;
    let appended = axe_memory::log::append(
        &path,
        task.as_bytes(),
        result.as_bytes(),
        OffsetDateTime::now_utc(),
        secrets,
        wait,
    )
    .map_err(fail)?;
    let cut = Cut {
        truncated: appended.truncated,
        task_truncated: appended.task_truncated,
        timestamp: appended.timestamp,
    };
    Ok((appended.redacted, cut))
}
