//! Structured state after a run: the answer's signal lines and the run's
//! outcome recorded as an iteration (the block before the call is
//! `run::injected`). As with the run log, trouble with the state is a
//! warning, never a failed run.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::prepared::Prepared;
use axe_base::report::Report;
use axe_memory::secrets::{Kind, Secrets};
use axe_memory::state::{self, Outcome, Rejected, Signal};

/// What a run's answer said to its state.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Recorded {
    pub recorded: Vec<Signal>,
    pub rejected: Vec<Rejected>,
    /// The secrets taken out of the state on its save.
    #[serde(skip)]
    pub redacted: Vec<Kind>,
}

/// Records the run's outcome on `task`: with `Ok(answer)`, its signals and
/// a success; with `Err(error)`, a failure. `None` when the agent keeps no
/// state; rejected signal lines and failures to save are warnings to `report`. The
/// save goes through `secrets`.
pub fn record(
    agent: &Prepared,
    task: &str,
    phase: Option<&str>,
    outcome: Result<&str, &str>,
    secrets: &Secrets,
    report: &dyn Report,
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
    let max = agent.cfg.memory.state.max_entries.as_usize();
    let saved = state::update(path, max, secrets, agent.wait, |s| {
        s.apply(&parsed.signals, task, phase);
        s.record(task, phase, &done);
    });
    let redacted = match saved {
        Ok(saved) => saved.redacted,
        Err(e) => {
            report.note(format_args!(
                "Warning: failed to save state for \"{}\": {e}",
                agent.name
            ));
            Vec::new()
        }
    };
    for r in &parsed.rejected {
        report.note(format_args!(
            "Warning: state signal of \"{}\" not recorded, line {}: {}: {}",
            agent.name, r.line, r.reason, r.text
        ));
    }
    Some(Recorded {
        recorded: parsed.signals,
        rejected: parsed.rejected,
        redacted,
    })
}
