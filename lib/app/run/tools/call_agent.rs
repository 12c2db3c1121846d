//! `call_agent`: delegating a task to a sub-agent, which runs with its own
//! files, skill and memory and returns only its final answer. Its refusals
//! and failures go back to the model as error results, worded as Go's.

use std::time::{Duration, Instant};

use serde_json::json;

use super::context::Context;
use axe_base::stderr::note;
use axe_llm::{Deadline, ToolDef};
use axe_tools::Call;

pub const NAME: &str = "call_agent";

/// What the model is told if a sub-agent's call panicked.
pub const CRASHED: &str = "call_agent error: the sub-agent crashed";

/// The tool, offering the agent's sub-agents, while the tree may grow.
pub fn offer(ctx: &Context) -> Option<ToolDef> {
    let agents = &ctx.agent.cfg.sub_agents;
    if agents.is_empty() || ctx.depth >= ctx.session.max_depth {
        return None;
    }
    let list = agents.join(", ");
    Some(ToolDef {
        name: NAME.to_owned(),
        description: format!(
            "Delegate a task to a sub-agent. The sub-agent runs independently with its own context and returns only its final result. Available agents: {list}"
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {
                    "type": "string",
                    "description": format!("Name of the sub-agent to invoke (must be one of: {list})"),
                },
                "task": {
                    "type": "string",
                    "description": "What you need the sub-agent to do",
                },
                "context": {
                    "type": "string",
                    "description": "Additional context from your conversation to pass along",
                },
            },
            "required": ["agent", "task"],
        }),
    })
}

/// Runs one `call_agent` call (its arguments' types already checked):
/// checks the agent it names, runs the sub-agent through `ctx.sub_agent`
/// within the caller's `sub_agents_config.timeout`.
pub fn run(ctx: &Context, call: &Call) -> Result<String, String> {
    let (session, caller, depth) = (ctx.session, ctx.agent, ctx.depth);
    let (name, task, context) = (call.str("agent"), call.str("task"), call.str("context"));
    if name.is_empty() {
        return Err(r#"call_agent error: "agent" argument is required"#.into());
    }
    if task.is_empty() {
        return Err(r#"call_agent error: "task" argument is required"#.into());
    }
    if !caller.cfg.sub_agents.iter().any(|a| a == name) {
        return Err(format!(
            "call_agent error: agent \"{name}\" is not in this agent's sub_agents list"
        ));
    }
    if depth >= session.max_depth {
        return Err(format!(
            "call_agent error: maximum sub-agent depth ({}) reached",
            session.max_depth
        ));
    }
    let deadline = match caller.cfg.sub_agents_config.timeout.get() {
        0 => ctx.deadline,
        seconds => ctx
            .deadline
            .min(Deadline::after(Duration::from_secs(seconds))),
    };
    let verbose = session.verbose;
    if verbose {
        let preview = match task.char_indices().nth(80) {
            Some((i, _)) => format!("{}...", &task[..i]),
            None => task.to_owned(),
        };
        note(format_args!(
            "[sub-agent] Calling \"{name}\" (depth {}) with task: {preview}",
            depth + 1
        ));
    }
    let started = Instant::now();
    let user = if context.trim().is_empty() {
        format!("Task: {task}")
    } else {
        format!("Task: {task}\n\nContext:\n{context}")
    };
    match (ctx.sub_agent)(name, &user, depth + 1, deadline, &caller.allowed_hosts) {
        Ok(content) => {
            if verbose {
                note(format_args!(
                    "[sub-agent] \"{name}\" completed in {}ms ({} chars returned)",
                    started.elapsed().as_millis(),
                    content.len()
                ));
            }
            Ok(content)
        }
        Err(message) => {
            if verbose {
                note(format_args!("[sub-agent] \"{name}\" failed: {message}"));
            }
            Err(format!(
                "Error: sub-agent \"{name}\" failed - {message}. You may retry or proceed without this result."
            ))
        }
    }
}
