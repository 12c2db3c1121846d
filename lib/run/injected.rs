//! The memory that goes after the task in the user message: with a
//! `[context] budget`, one block of every kind the agent keeps
//! (`memory::shared_block`); else, with `[state]`, the Session Memory block.
//! It goes into the user message, not the system prompt, as agentium
//! decided for its block: it is about this run, and the system prompt
//! stays the same from run to run. As with the run log, trouble reading
//! a kind is a warning, never a failed run.

use super::prepared::Prepared;
use axe_base::report::Report;
use axe_memory::block::Block;
use axe_memory::shared_block::{self, Assembled, Request};
use axe_memory::state::{self, Current};

/// What was added to the user message.
#[derive(Debug)]
pub enum Injected {
    /// Neither a shared budget nor a state.
    None,
    /// The Session Memory block (empty when there is nothing to say).
    State(String),
    /// The block over every kind.
    Context(Assembled),
}

impl Injected {
    fn text(&self) -> &str {
        match self {
            Injected::None => "",
            Injected::State(text) => text,
            Injected::Context(a) => &a.text,
        }
    }
}

/// The user message with the agent's memory block after it, and the
/// block; `listing` keeps what the shared block left out (for
/// `--dry-run`). Warnings go to `report`.
pub fn with_memory(
    agent: &Prepared,
    user: &str,
    now: Current,
    listing: bool,
    report: &dyn Report,
) -> (String, Injected) {
    let injected = if let Some(budget) = agent.cfg.memory.context.budget {
        let request = Request {
            dirs: &agent.dirs,
            wait: agent.wait,
            budget: budget.as_usize(),
            now,
            listing,
            today: time::OffsetDateTime::now_utc().date(),
            // Read once: the entries the run's recall loaded.
            log: agent
                .recall
                .as_ref()
                .filter(|r| r.error.is_none())
                .map(|r| r.entries.as_bytes()),
        };
        Injected::Context(shared_block::assemble(
            &agent.name,
            &agent.cfg.memory,
            &request,
            &mut |kind, e| {
                report.note(format_args!(
                    "Warning: failed to load {} for the context of \"{}\": {e}",
                    kind.name(),
                    agent.name
                ))
            },
        ))
    } else if let Some(path) = &agent.state {
        let budget = agent.cfg.memory.state.context_budget.as_usize();
        let built = state::read(path, agent.wait).and_then(|bytes| {
            let view = state::view(path, &bytes)?;
            Ok(state::build(&view, now, Block::new(budget)).text)
        });
        match built {
            Ok(block) => Injected::State(block),
            Err(e) => {
                report.note(format_args!(
                    "Warning: failed to load state for \"{}\": {e}",
                    agent.name
                ));
                Injected::State(String::new())
            }
        }
    } else {
        Injected::None
    };
    let sent = match injected.text() {
        "" => user.to_owned(),
        block => format!("{user}\n\n{block}"),
    };
    (sent, injected)
}
