//! The tools an agent's model may call: one table, each row a tool with
//! the definition it is offered by, when it is offered, and how it runs.
//! A new tool is a module here and a row in [`ALL`].
//!
//! Whatever goes wrong in a tool comes back to the model as an error
//! result; it never ends the run. Several calls in one reply run at once
//! (unless the agent says `parallel = false`), their results in call order.

mod call_agent;
mod notes;
mod tool;

use std::thread;

pub use tool::{Context, NotesSeen, Tool};

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
    if calls.len() < 2 || !ctx.agent.parallel() {
        return calls.iter().map(|call| run_one(ctx, call)).collect();
    }
    thread::scope(|scope| {
        let handles: Vec<_> = calls
            .iter()
            .map(|call| scope.spawn(move || run_one(ctx, call)))
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

fn run_one(ctx: &Context, call: &ToolCall) -> ToolResult {
    let outcome = match find(&call.name) {
        Some(tool) if (tool.offer)(ctx).is_some() => (tool.run)(ctx, call),
        _ => Err(format!("Unknown tool: \"{}\"", call.name)),
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
