//! Running an agent: its context resolved into a system prompt, the
//! conversation with its model (with sub-agents as a tool), and its memory.
//!
//! `axe-run` is a thin layer over this; a sub-agent called through the
//! `call_agent` tool goes through the same path, [`once`], so both
//! behave alike.

pub mod artifacts;
pub mod budget;
pub mod consolidate;
pub mod conversation;
mod converse;
pub mod details;
pub mod dry_run;
pub mod gc;
pub mod history;
pub mod injected;
pub mod once;
pub(crate) mod pool;
pub mod prepared;
pub mod recall;
pub mod refusal;
pub(crate) mod session;
pub mod state;
mod tools;

pub use converse::{Outcome, TextSink};
pub use prepared::Prepared;
pub use session::Session;
