//! The tools an agent's model may call: one table, each row a tool with
//! the definition it is offered by, when it is offered, and how it runs.
//! A new tool is a module here and a row in [`ALL`].
//!
//! Whatever goes wrong in a tool comes back to the model as an error
//! result; it never ends the run. A call whose arguments do not match the
//! schema its tool was offered with is refused here, for every tool, before
//! it runs. Several calls in one reply run at once (unless the agent says
//! `parallel = false`), their results in call order.

mod call_agent;
mod notes;
mod schema;
mod tool;

use std::thread;

pub use tool::{Call, Context, NotesSeen, SubAgent, Tool};

use crate::llm::{ToolCall, ToolDef, ToolResult};

/// Every tool, in the order they are offered.
const ALL: &[Tool] = &[
    call_agent::TOOL,
    notes::RECALL,
    notes::REMEMBER,
    notes::REFLECT,
    notes::LEARN_FACT,
    notes::SEARCH,
];

/// The definitions of the tools offered in `ctx`.
pub fn offered(ctx: &Context) -> Vec<ToolDef> {
    ALL.iter().filter_map(|t| (t.offer)(ctx)).collect()
}

/// The names of the tools `agent` at `depth` is offered, for `--dry-run`.
pub fn names(
    session: &super::session::Session,
    agent: &super::prepared::Prepared,
    depth: u32,
) -> Vec<String> {
    let never = |_: &str, _: &str, _: u32, _: crate::llm::Deadline| Err(String::new());
    let seen = std::sync::Mutex::new(NotesSeen::default());
    let ctx = Context {
        session,
        agent,
        depth,
        deadline: crate::llm::Deadline::after(std::time::Duration::ZERO),
        sub_agent: &never,
        notes_seen: &seen,
    };
    offered(&ctx).into_iter().map(|t| t.name).collect()
}

/// Results for `calls`, in their order.
pub fn run(ctx: &Context, calls: &[ToolCall]) -> Vec<ToolResult> {
    // What the model had seen when it wrote this reply, for every call of
    // it, whichever runs first: a rewrite cannot build on another's result
    // it has not seen.
    let seen = ctx
        .notes_seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let seen = &seen;
    if calls.len() < 2 || !ctx.agent.parallel() {
        return calls.iter().map(|call| run_one(ctx, call, seen)).collect();
    }
    thread::scope(|scope| {
        let handles: Vec<_> = calls
            .iter()
            .map(|call| scope.spawn(move || run_one(ctx, call, seen)))
            .collect();
        handles
            .into_iter()
            .zip(calls)
            .map(|(h, call)| {
                h.join().unwrap_or_else(|_| {
                    let crashed = find(&call.name).map_or("the tool crashed", |t| t.crashed);
                    result(call, Err(crashed.to_owned()))
                })
            })
            .collect()
    })
}

fn find(name: &str) -> Option<&'static Tool> {
    ALL.iter().find(|t| t.name == name)
}

fn run_one(ctx: &Context, call: &ToolCall, seen: &NotesSeen) -> ToolResult {
    let offered = find(&call.name).and_then(|tool| Some((tool, (tool.offer)(ctx)?)));
    let outcome = match offered {
        Some((tool, def)) => schema::check(&def.parameters, &call.arguments)
            .map_err(|problems| format!("{} error: {problems}", tool.name))
            .and_then(|()| (tool.run)(ctx, &Call { call, seen })),
        None => Err(format!("Unknown tool: \"{}\"", call.name)),
    };
    result(call, outcome)
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
