//! Structured state around a run (issue 13's run integration): the
//! Session Memory block added to the user message before the call (the
//! user message, not the system prompt, as agentium decided: it is about
//! this iteration, and the system prompt stays stable), then the answer's
//! signal lines and the run's outcome recorded as an iteration. As with
//! the run log, trouble with the state is a warning, never a failed run.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::prepared::Prepared;
use crate::memory::block::Block;
use crate::memory::state::{self, Outcome, Rejected, Signal};

/// The user message with the agent's Session Memory block after it, and
/// the block (empty when there is none or it is off); warnings in `warn`.
pub fn with_context(
    agent: &Prepared,
    user: &str,
    task: &str,
    warn: &mut dyn FnMut(String),
) -> (String, String) {
    let Some(path) = &agent.state else {
        return (user.to_owned(), String::new());
    };
    let budget = agent.cfg.state.context_budget.as_usize();
    match state::read(path).and_then(|bytes| {
        let view = state::view(path, &bytes)?;
        Ok(state::build(&view, Some(task), Block::new(budget)).text)
    }) {
        Ok(block) => {
            if block.is_empty() {
                (user.to_owned(), block)
            } else {
                (format!("{user}\n\n{block}"), block)
            }
        }
        Err(e) => {
            warn(format!("failed to load state for \"{}\": {e}", agent.name));
            (user.to_owned(), String::new())
        }
    }
}

/// What a run's answer said to its state.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Recorded {
    pub recorded: Vec<Signal>,
    pub rejected: Vec<Rejected>,
}

/// Records the run's outcome on `task`: with `Ok(answer)`, its signals and
/// a success; with `Err(error)`, a failure. `None` when the agent keeps no
/// state; rejected signal lines and failures to save go to `warn`.
pub fn record(
    agent: &Prepared,
    task: &str,
    phase: Option<&str>,
    outcome: Result<&str, &str>,
    warn: &mut dyn FnMut(String),
) -> Option<Recorded> {
    let path = agent.state.as_ref()?;
    let parsed = outcome.map(state::parse).unwrap_or_default();
    let at = OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_default();
    let done = Outcome {
        success: outcome.is_ok(),
        error: outcome.err(),
        at,
        ..Outcome::default()
    };
    let saved = state::update(path, agent.cfg.state.max_entries.as_usize(), |s| {
        s.apply(&parsed.signals, task, phase);
        s.record(task, phase, &done);
    });
    if let Err(e) = saved {
        warn(format!("failed to save state for \"{}\": {e}", agent.name));
    }
    for r in &parsed.rejected {
        warn(format!(
            "state signal of \"{}\" not recorded, line {}: {}: {}",
            agent.name, r.line, r.reason, r.text
        ));
    }
    Some(Recorded {
        recorded: parsed.signals,
        rejected: parsed.rejected,
    })
}
