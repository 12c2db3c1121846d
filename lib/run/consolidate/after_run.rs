//! The automatic consolidation after a run, when it is due.

use std::time::Duration;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use axe_agent::{AgentConfig, Agents};
use axe_base::error::Result;
use axe_base::report::Report;
use axe_memory::Wait;
use axe_memory::notes::Workspace;
use axe_memory::notes::entries;
use axe_memory::notes::history;

use super::{Options, consolidate};

/// Runs the automatic consolidation after a successful run of the agent
/// `name` (its settings `cfg`) when `[notes] consolidate_every` asks for
/// one and it is due: the last one is older than that, and at least
/// `consolidate_min_entries` entries are new. It never fails the run:
/// trouble is a warning. A MEMORY.md whose lock someone holds (a write
/// under way, another consolidation) skips it until the next run; it
/// runs under a deadline of its own, the agent's `timeout`. With
/// `verbose` it says what it did, or why not; without `log` (the
/// command's `--no-log`) its calls are not recorded in the ledger.
pub fn after_run(
    agents: &Agents,
    name: &str,
    cfg: &AgentConfig,
    (verbose, log): (bool, bool),
    report: &dyn Report,
) {
    let say = |line: String| {
        if verbose {
            report.note(format_args!("[notes] consolidation: {line}"));
        }
    };
    match due(agents, name, cfg) {
        Ok(Due::Off) => {}
        Ok(Due::Not(why)) => say(format!("not due ({why})")),
        Ok(Due::Busy) => say("skipped: MEMORY.md is locked by another writer".to_owned()),
        Ok(Due::Yes(new)) => {
            let opts = Options {
                // A command's --no-log keeps every call it makes out of
                // the ledger, this one too.
                log,
                dry_run: false,
                verbose: false,
                timeout: match cfg.timeout.get() {
                    0 => AUTO_TIMEOUT,
                    seconds => Duration::from_secs(seconds),
                },
                wait: Some(Wait::For(AUTO_WAIT)),
            };
            match consolidate(agents.clone(), name, cfg.clone(), &opts) {
                Ok(done) if done.conflicts.is_empty() => say(format!(
                    "ran over {} of {new} new entries, {} file(s) changed",
                    done.entries.len(),
                    done.files.len()
                )),
                Ok(_) => report.note(format_args!(
                    "Warning: the consolidation of \"{name}\" lost a rewrite to a concurrent one; its entries wait for the next"
                )),
                Err(e) => report.note(format_args!(
                    "Warning: the consolidation of \"{name}\" failed: {e}"
                )),
            }
        }
        Err(e) => report.note(format_args!(
            "Warning: cannot tell whether \"{name}\" is due a consolidation: {e}"
        )),
    }
}

/// How long an automatic consolidation may take when the agent sets no
/// `timeout`.
const AUTO_TIMEOUT: Duration = Duration::from_secs(120);

/// How long its notes writes wait for a lock: briefly, since whoever holds
/// one is writing the notes now and the next run can consolidate.
const AUTO_WAIT: Duration = Duration::from_secs(5);

/// Whether an automatic consolidation is due.
enum Due {
    /// `consolidate_every` is not set (or the agent keeps no notes).
    Off,
    Not(String),
    Busy,
    /// Due, with this many new entries.
    Yes(usize),
}

fn due(agents: &Agents, name: &str, cfg: &AgentConfig) -> Result<Due> {
    let Some(every) = cfg
        .memory
        .notes
        .consolidate_every()?
        .filter(|_| cfg.memory.notes.enabled)
    else {
        return Ok(Due::Off);
    };
    let ws = Workspace::of(agents.dirs(), &cfg.memory.notes)?;
    let records = history::list(&ws, name)?;
    // The period first: within it no daily log need be read at all.
    if let Some(last) = last_done(&records) {
        let seconds = i64::try_from(every).unwrap_or(i64::MAX);
        // A period past the calendar's end: never due again.
        let next = last.checked_add(time::Duration::seconds(seconds));
        if next.is_none_or(|next| OffsetDateTime::now_utc() < next) {
            return Ok(Due::Not(format!(
                "the last one was at {}, less than consolidate_every ({}) ago",
                last.format(&Rfc3339).unwrap_or_default(),
                cfg.memory.notes.consolidate_every.trim()
            )));
        }
    }
    let consolidated = history::consolidated(&records);
    let new = entries::all(&ws, name)?
        .iter()
        .filter(|e| !consolidated.contains(&e.id))
        .count();
    let min = cfg.memory.notes.consolidate_min_entries.as_usize().max(1);
    if new < min {
        return Ok(Due::Not(format!(
            "{new} new entries, fewer than consolidate_min_entries ({min})"
        )));
    }
    let memory = ws.memory(name);
    if let Some((dir, file)) = ws.file(&memory, false)? {
        let probe = axe_memory::lock::open_locked(
            &dir,
            &file,
            axe_base::beneath::Open::Read,
            axe_memory::lock::Mode::Exclusive,
            Wait::For(Duration::ZERO),
        );
        if probe.is_err() {
            return Ok(Due::Busy);
        }
    }
    Ok(Due::Yes(new))
}

/// When the last finished consolidation of `records` started.
fn last_done(records: &[history::Stored]) -> Option<OffsetDateTime> {
    records
        .iter()
        .rev()
        .find(|s| s.record.done)
        .and_then(|s| OffsetDateTime::parse(&s.record.at, &Rfc3339).ok())
}
