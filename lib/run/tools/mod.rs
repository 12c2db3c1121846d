//! The tools of a conversation, from four sources built once when it
//! starts ([`Sources`]): its own (`call_agent`, which needs the
//! conversation to run a sub-agent), the memory tools of [`axe_tools`]
//! over the agent's memory, the built-in tools of [`axe_tools::builtin`]
//! its file gives it, and those of its MCP servers (`mcp.rs`), which the
//! others' names win over. Each is an [`axe_tools::ToolSource`]; a call
//! goes to its source through the one [`Tools`] dispatch, and a new source
//! of tools is one more field of [`Sources`]. Several calls in one reply
//! run at once (unless the agent says `parallel = false`), as many as the
//! run's pool spares (`max_parallel`, see `run::pool`), their results in
//! call order; whatever goes wrong comes back to the model as an error
//! result and never ends the run.

mod call_agent;
mod mcp;
mod views;

use std::time::{Duration, Instant};

pub use call_agent::{SubAgent, SubAgentError};
pub use mcp::Servers;
pub use views::{act, memory};

use super::details::{self, Detail};
use super::prepared::Prepared;
use super::session::Session;
use axe_base::error::Result;
use axe_base::lock::Recover;
use axe_llm::{Deadline, ToolCall, ToolResult};
use axe_tools::builtin::Act;
use axe_tools::{MemoryTools, Table, ToolError, ToolSource, Tools};
use call_agent::CallAgent;

/// Where a conversation's tools come from, each source with what it
/// offers worked out once, when the conversation starts.
pub struct Sources<'a> {
    pub session: &'a Session,
    pub agent: &'a Prepared,
    pub depth: u32,
    own: CallAgent<'a>,
    /// The agent's memory, for the memory tools, with what they have read
    /// in this conversation.
    pub memory: MemoryTools,
    /// What the built-in tools the agent was given work on.
    builtin: Table<Act>,
    /// The agent's MCP servers, once [`Sources::connect`] started them.
    mcp: Servers,
}

impl<'a> Sources<'a> {
    /// The sources of `agent`'s tools at `depth`, until `deadline`; `sub`
    /// runs a sub-agent. No MCP server is started yet.
    pub fn new(
        session: &'a Session,
        agent: &'a Prepared,
        depth: u32,
        deadline: Deadline,
        sub: &'a SubAgent<'a>,
    ) -> Sources<'a> {
        Sources {
            session,
            agent,
            depth,
            own: CallAgent::new(session, agent, depth, deadline, sub),
            memory: axe_tools::memory_tools(memory(session, agent, Some(deadline))),
            builtin: axe_tools::builtin::tools(act(session, agent, deadline)),
            mcp: Servers::none(deadline),
        }
    }

    /// Starts the agent's MCP servers, whose tools the others' names win
    /// over; they stop when `self` goes.
    pub fn connect(&mut self) -> Result<()> {
        let servers = &self.agent.cfg.mcp_servers;
        if servers.is_empty() {
            return Ok(());
        }
        let taken: Vec<String> = self.tools().defs().iter().map(|t| t.name.clone()).collect();
        let (workdir, deadline) = (&self.agent.workdir, self.own.deadline);
        let agent = &self.agent.name;
        self.mcp = Servers::start(servers, agent, workdir, &taken, deadline, self.session)?;
        Ok(())
    }

    /// `(used, max)` when a sub-agent this conversation called ran the
    /// run's token budget out.
    pub fn budget_spent(&self) -> Option<(u64, u64)> {
        self.own.budget_spent()
    }

    /// Every tool offered, in order: `call_agent`, the memory tools, the
    /// built-in ones, the MCP servers'.
    pub fn tools(&self) -> Tools<'_> {
        let sources: Vec<&dyn ToolSource> = vec![&self.own, &self.memory, &self.builtin, &self.mcp];
        Tools::new(sources, |_| true)
    }
}

/// The names of the tools `agent` at `depth` is offered, for `--dry-run`.
pub fn names(session: &Session, agent: &Prepared, depth: u32) -> Vec<String> {
    let never = |_: &str, _: &str, _: u32, _: Deadline, _: &[String]| {
        Err(SubAgentError::Run(axe_base::error::Error::Agent(
            String::new(),
        )))
    };
    let deadline = Deadline::after(Duration::ZERO);
    let sources = Sources::new(session, agent, depth, deadline, &never);
    let tools = sources.tools();
    tools.defs().iter().map(|t| t.name.clone()).collect()
}

/// The names of the memory tools `agent` is offered (the notes tools),
/// for `--dry-run`'s notes section.
pub fn memory_names(session: &Session, agent: &Prepared) -> Vec<String> {
    let memory = axe_tools::memory_tools(memory(session, agent, None));
    memory
        .offered()
        .iter()
        .map(|t| t.def.name.clone())
        .collect()
}

/// Results for `calls` of turn `turn` (from 0) with `tools`, those of
/// `sources`, in their order. The top-level agent's calls are kept in the
/// session for `--json`.
pub fn run(sources: &Sources, tools: &Tools, calls: &[ToolCall], turn: usize) -> Vec<ToolResult> {
    // What the model had seen when it wrote this reply is what every call
    // of it starts from, whichever runs first: a rewrite cannot build on
    // another's result it has not seen.
    tools.reply_came();
    let session = sources.session;
    let crashed = |call: &ToolCall| {
        let said = ToolError::Said(tools.crashed(&call.name));
        (result(call, Err(said)), Duration::ZERO, false)
    };
    let ran: Vec<(ToolResult, Duration, bool)> = if sources.agent.parallel() {
        // As many at once as the run's pool spares, this thread included.
        (session.pool).each(calls, |call| run_one(session, tools, call), crashed)
    } else {
        calls
            .iter()
            .map(|call| run_one(session, tools, call))
            .collect()
    };
    if sources.depth == 0 {
        let mut kept = session.details.lock().recover();
        for (call, (result, took, conflict)) in calls.iter().zip(&ran) {
            kept.push(Detail::of(call, result, *conflict, turn, *took));
        }
    }
    ran.into_iter().map(|(result, ..)| result).collect()
}

/// A call's result, how long it took, and whether it was refused as a
/// conflict (see `ToolError::is_conflict`).
fn run_one(session: &Session, tools: &Tools, call: &ToolCall) -> (ToolResult, Duration, bool) {
    let started = Instant::now();
    let outcome = tools
        .call(call)
        .map(|r| r.map(|reply| reply.text))
        .unwrap_or_else(|| Err(format!("Unknown tool: \"{}\"", call.name).into()));
    let conflict = outcome.as_ref().is_err_and(ToolError::is_conflict);
    let result = result(call, outcome);
    let took = started.elapsed();
    if session.verbose {
        details::say(
            session.report(),
            call,
            &result,
            took,
            &session.shown_secrets(),
        );
    }
    (result, took, conflict)
}

/// The model is told a tool's error as its line; its causes stay here.
fn result(call: &ToolCall, outcome: std::result::Result<String, ToolError>) -> ToolResult {
    let (content, is_error) = match outcome {
        Ok(content) => (content, false),
        Err(e) => (e.to_string(), true),
    };
    ToolResult {
        call_id: call.id.clone(),
        content,
        is_error,
    }
}
