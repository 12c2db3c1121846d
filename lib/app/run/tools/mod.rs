//! The tools of a conversation: its own (`call_agent`, which needs the
//! conversation to run a sub-agent), the memory tools of [`axe_tools`]
//! over the agent's memory, the built-in tools of [`axe_tools::builtin`] its file
//! gives it, and those of its MCP servers (`mcp.rs`), which the others'
//! names win over. A call goes to the first source that has its name, an
//! arm each in [`run_one`]; a new source of tools is one more arm there
//! and in [`offered`]. Several calls in one reply run at once (unless the
//! agent says `parallel = false`), as many as the run's pool spares
//! (`max_parallel`, see `run::pool`), their results in call order; whatever
//! goes wrong comes back to the model as an error result and never ends
//! the run.

mod call_agent;
mod context;
mod mcp;

use std::time::{Duration, Instant};

pub use context::{Context, SubAgent, act, memory};
pub use mcp::Servers;

use super::details::{self, Detail};
use super::prepared::Prepared;
use super::session::Session;
use axe_base::error::Result;
use axe_llm::{Deadline, ToolCall, ToolDef, ToolResult};
use axe_tools::NotesSeen;
use axe_tools::builtin::BUILTIN;

/// The definitions of the tools offered in `ctx`: the conversation's own
/// (`call_agent`) first, then the memory tools, then the built-in ones.
pub fn offered(ctx: &Context) -> Vec<ToolDef> {
    let mut defs: Vec<ToolDef> = call_agent::offer(ctx).into_iter().collect();
    defs.extend(axe_tools::offered(axe_tools::MEMORY, &ctx.memory));
    defs.extend(axe_tools::offered(BUILTIN, &ctx.act));
    defs.extend(ctx.mcp.offered());
    defs
}

/// Starts the agent's MCP servers for `ctx`, whose other tools keep their
/// names; they stop when `ctx` goes.
pub fn connect(ctx: &mut Context) -> Result<()> {
    let servers = &ctx.agent.cfg.mcp_servers;
    if servers.is_empty() {
        return Ok(());
    }
    let taken: Vec<String> = offered(ctx).into_iter().map(|t| t.name).collect();
    let (workdir, verbose) = (&ctx.agent.workdir, ctx.session.verbose);
    let pool = &ctx.session.pool;
    ctx.mcp = Servers::start(servers, workdir, &taken, ctx.deadline, verbose, pool)?;
    Ok(())
}

/// The names of the tools `agent` at `depth` is offered, for `--dry-run`.
pub fn names(session: &Session, agent: &Prepared, depth: u32) -> Vec<String> {
    let never = |_: &str, _: &str, _: u32, _: Deadline, _: &[String]| Err(String::new());
    let deadline = Deadline::after(Duration::ZERO);
    let ctx = Context {
        session,
        agent,
        depth,
        deadline,
        sub_agent: &never,
        memory: memory(session, agent, None),
        act: act(session, agent, deadline),
        mcp: Servers::default(),
    };
    offered(&ctx).into_iter().map(|t| t.name).collect()
}

/// The names of the memory tools `agent` is offered (the notes tools),
/// for `--dry-run`'s notes section.
pub fn memory_names(session: &Session, agent: &Prepared) -> Vec<String> {
    let memory = memory(session, agent, None);
    axe_tools::offered(axe_tools::MEMORY, &memory)
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// Results for `calls` of turn `turn` (from 0), in their order. The
/// top-level agent's calls are kept in the session for `--json`.
pub fn run(ctx: &Context, calls: &[ToolCall], turn: usize) -> Vec<ToolResult> {
    // What the model had seen when it wrote this reply, for every call of
    // it, whichever runs first: a rewrite cannot build on another's result
    // it has not seen.
    let seen = ctx
        .memory
        .seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let seen = &seen;
    let crashed = |call: &ToolCall| {
        (
            result(call, Err(crashed(&call.name).to_owned())),
            Duration::ZERO,
        )
    };
    let ran: Vec<(ToolResult, Duration)> = if ctx.agent.parallel() {
        // As many at once as the run's pool spares, this thread included.
        (ctx.session.pool).each(calls, |call| run_one(ctx, call, seen), crashed)
    } else {
        calls.iter().map(|call| run_one(ctx, call, seen)).collect()
    };
    if ctx.depth == 0 {
        let mut kept = ctx
            .session
            .details
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (call, (result, took)) in calls.iter().zip(&ran) {
            kept.push(Detail::of(call, result, turn, *took));
        }
    }
    ran.into_iter().map(|(result, _)| result).collect()
}

/// What the model is told when the tool `name` panicked.
fn crashed(name: &str) -> &'static str {
    if name == call_agent::NAME {
        return call_agent::CRASHED;
    }
    axe_tools::find(axe_tools::MEMORY, name)
        .map(|t| t.crashed)
        .or_else(|| axe_tools::find(BUILTIN, name).map(|t| t.crashed))
        .unwrap_or("the tool crashed")
}

fn run_one(ctx: &Context, call: &ToolCall, seen: &NotesSeen) -> (ToolResult, Duration) {
    let started = Instant::now();
    let own = (call.name == call_agent::NAME)
        .then(|| call_agent::offer(ctx))
        .flatten()
        .map(|def| axe_tools::checked(&def, call, seen, |c| call_agent::run(ctx, c)));
    let outcome = own
        .or_else(|| {
            axe_tools::call(axe_tools::MEMORY, &ctx.memory, call, seen)
                .map(|r| r.map(|reply| reply.text))
        })
        .or_else(|| {
            axe_tools::call(BUILTIN, &ctx.act, call, seen).map(|r| r.map(|reply| reply.text))
        })
        .or_else(|| ctx.mcp.call(call, seen, ctx.deadline))
        .unwrap_or_else(|| Err(format!("Unknown tool: \"{}\"", call.name)));
    let result = result(call, outcome);
    let took = started.elapsed();
    if ctx.session.verbose {
        details::say(call, &result, took, &ctx.session.shown_secrets());
    }
    (result, took)
}

fn result(call: &ToolCall, outcome: Result<String, String>) -> ToolResult {
    let (content, is_error) = match outcome {
        Ok(content) => (content, false),
        Err(content) => (content, true),
    };
    ToolResult {
        call_id: call.id.clone(),
        content,
        is_error,
    }
}
