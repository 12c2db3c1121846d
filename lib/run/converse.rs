//! The conversation loop and the `call_agent` tool.
//!
//! A reply with tool calls gets their results and another turn, up to 50
//! turns. Each `call_agent` call runs a sub-agent through this same loop,
//! on its own thread when the caller runs calls in parallel, bounded by
//! the caller's `sub_agents_config.timeout` inside the run's own deadline.
//! Whatever goes wrong in a sub-agent comes back to the model as an error
//! result; it never ends the run.

use std::io;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::prepared::{self, Prepared};
use super::recall;
use super::session::Session;
use crate::agent;
use crate::error::{Error, Result};
use crate::llm::{
    self, CallOptions, Conversation, Deadline, Message, Reply, Role, ToolCall, ToolDef, ToolResult,
};
use crate::stderr::note;

/// Turns before a conversation is given up.
const MAX_TURNS: usize = 50;

const CALL_AGENT: &str = "call_agent";

/// Where streamed text goes.
pub type TextSink<'a> = &'a mut dyn FnMut(&str) -> io::Result<()>;

/// How a conversation ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The last reply, the one without tool calls.
    pub reply: Reply,
    /// Summed over this agent's turns (sub-agents' own calls not included).
    /// `None` when no turn's reply said.
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Tool calls the model made, over all turns.
    pub tool_calls: u64,
}

/// Talks with `agent`'s model from `user` until a reply has no tool calls.
/// `on_text`, when given, receives the text of every turn as it arrives.
pub fn converse(
    session: &Session,
    agent: &Prepared,
    user: &str,
    depth: u32,
    deadline: Deadline,
    mut on_text: Option<TextSink>,
) -> Result<Outcome> {
    let endpoint = session.endpoint(agent.provider)?;
    let tools = if agent.offers_tools(session, depth) {
        vec![call_agent_tool(&agent.cfg.sub_agents)]
    } else {
        Vec::new()
    };
    // The loop's progress lines are the top-level agent's alone, as in Go.
    let trace = session.verbose && depth == 0 && !tools.is_empty();
    let mut conversation = Conversation {
        model: None,
        system: agent.system.clone(),
        messages: vec![Message::user(user)],
        tools,
        temperature: agent.temperature,
        max_tokens: agent.cfg.params.max_tokens.max(0) as u64,
    };
    let (mut input_tokens, mut output_tokens, mut tool_calls) = (None, None, 0);
    let mut shown_before = false;
    for turn in 1..=MAX_TURNS {
        if trace {
            let pending: usize = conversation
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.tool_results.len())
                .sum();
            note(format_args!(
                "[turn {turn}] Sending request ({} messages, {pending} tool calls pending)",
                conversation.messages.len()
            ));
        }
        let options = CallOptions {
            deadline,
            retries: 0,
            stream: on_text.is_some(),
        };
        let mut shown_now = false;
        let mut show = |text: &str| -> io::Result<()> {
            let Some(out) = on_text.as_mut() else {
                return Ok(());
            };
            // Text of an earlier turn stays on screen: set this turn apart.
            if shown_before && !shown_now {
                out("\n\n")?;
            }
            shown_now = true;
            out(text)
        };
        let reply = llm::complete(&endpoint, &agent.model, &conversation, &options, &mut show)?;
        shown_before |= shown_now;
        input_tokens = add(input_tokens, reply.input_tokens);
        output_tokens = add(output_tokens, reply.output_tokens);
        if trace {
            note(format_args!(
                "[turn {turn}] Received response: {} ({} tool calls)",
                reply.stop_reason,
                reply.tool_calls.len()
            ));
        }
        if reply.tool_calls.is_empty() || conversation.tools.is_empty() {
            return Ok(Outcome {
                reply,
                input_tokens,
                output_tokens,
                tool_calls,
            });
        }
        tool_calls += reply.tool_calls.len() as u64;
        let results = run_tools(session, agent, &reply.tool_calls, depth, deadline);
        conversation.messages.push(Message {
            role: Role::Assistant,
            content: reply.content,
            tool_calls: reply.tool_calls,
            tool_results: Vec::new(),
        });
        conversation.messages.push(Message {
            role: Role::Tool,
            content: String::new(),
            tool_calls: Vec::new(),
            tool_results: results,
        });
    }
    let who = if depth == 0 { "agent" } else { "sub-agent" };
    Err(Error::Agent(format!(
        "{who} exceeded maximum conversation turns ({MAX_TURNS})"
    )))
}

/// Token counts summed over turns: known when any turn said.
fn add(total: Option<u64>, turn: Option<u64>) -> Option<u64> {
    match (total, turn) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

/// The `call_agent` tool, offering `agents`.
fn call_agent_tool(agents: &[String]) -> ToolDef {
    let list = agents.join(", ");
    ToolDef {
        name: CALL_AGENT.to_owned(),
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
    }
}

/// Results for `calls`, in their order.
fn run_tools(
    session: &Session,
    caller: &Prepared,
    calls: &[ToolCall],
    depth: u32,
    deadline: Deadline,
) -> Vec<ToolResult> {
    let one = |call: &ToolCall| run_tool(session, caller, call, depth, deadline);
    if calls.len() < 2 || !caller.parallel() {
        return calls.iter().map(one).collect();
    }
    thread::scope(|scope| {
        let handles: Vec<_> = calls
            .iter()
            .map(|call| scope.spawn(move || one(call)))
            .collect();
        handles
            .into_iter()
            .zip(calls)
            .map(|(h, call)| {
                h.join().unwrap_or_else(|_| {
                    error_result(call, "call_agent error: the sub-agent crashed".into())
                })
            })
            .collect()
    })
}

fn run_tool(
    session: &Session,
    caller: &Prepared,
    call: &ToolCall,
    depth: u32,
    deadline: Deadline,
) -> ToolResult {
    if call.name != CALL_AGENT {
        return error_result(call, format!("Unknown tool: \"{}\"", call.name));
    }
    let (name, task, context) = (arg(call, "agent"), arg(call, "task"), arg(call, "context"));
    if name.is_empty() {
        return error_result(
            call,
            r#"call_agent error: "agent" argument is required"#.into(),
        );
    }
    if task.is_empty() {
        return error_result(
            call,
            r#"call_agent error: "task" argument is required"#.into(),
        );
    }
    if !caller.cfg.sub_agents.contains(&name) {
        return error_result(
            call,
            format!("call_agent error: agent \"{name}\" is not in this agent's sub_agents list"),
        );
    }
    if depth >= session.max_depth {
        return error_result(
            call,
            format!(
                "call_agent error: maximum sub-agent depth ({}) reached",
                session.max_depth
            ),
        );
    }
    let deadline = match caller.cfg.sub_agents_config.timeout.get() {
        0 => deadline,
        seconds => deadline.min(Deadline::after(Duration::from_secs(seconds))),
    };
    let verbose = session.verbose;
    if verbose {
        let preview = match task.char_indices().nth(80) {
            Some((i, _)) => format!("{}...", &task[..i]),
            None => task.clone(),
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
    match sub_agent(session, &name, &user, depth + 1, deadline) {
        Ok(content) => {
            if verbose {
                note(format_args!(
                    "[sub-agent] \"{name}\" completed in {}ms ({} chars returned)",
                    started.elapsed().as_millis(),
                    content.len()
                ));
            }
            ToolResult {
                call_id: call.id.clone(),
                content,
                is_error: false,
            }
        }
        Err(message) => {
            if verbose {
                note(format_args!("[sub-agent] \"{name}\" failed: {message}"));
            }
            error_result(
                call,
                format!(
                    "Error: sub-agent \"{name}\" failed - {message}. You may retry or proceed without this result."
                ),
            )
        }
    }
}

/// Runs the sub-agent `name` at `depth` and returns its answer, recording
/// it in the sub-agent's own memory.
fn sub_agent(
    session: &Session,
    name: &str,
    user: &str,
    depth: u32,
    deadline: Deadline,
) -> Result<String, String> {
    let cfg = agent::load(name).map_err(|e| format!("failed to load agent \"{name}\": {e}"))?;
    let model = llm::parse_model(&cfg.model)
        .map_err(|e| format!("invalid model for agent \"{name}\": {e}"))?;
    let workdir = if cfg.workdir.is_empty() {
        prepared::current_dir()
    } else {
        cfg.workdir.clone().into()
    };
    let agent = Prepared::new(name, cfg, model, workdir, session.config_dir())
        .map_err(|(step, e)| format!("failed to {step} for agent \"{name}\": {e}"))?;
    let warn = |w: &str| {
        // A sub-agent's memory trouble is only worth a line when asked.
        if session.verbose {
            note(format_args!("[sub-agent] Warning: {w}"));
        }
    };
    if let Some(r) = &agent.recall {
        r.warnings.iter().for_each(|w| warn(w));
    }
    let outcome =
        converse(session, &agent, user, depth, deadline, None).map_err(|e| e.to_string())?;
    let content = outcome.reply.content;
    if agent.cfg.memory.enabled
        && let Err(w) = recall::record(name, &agent.cfg.memory, user, &content)
    {
        warn(&w);
    }
    Ok(content)
}

/// A string argument of a tool call; other JSON values as their text.
fn arg(call: &ToolCall, key: &str) -> String {
    match call.arguments.get(key) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn error_result(call: &ToolCall, content: String) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        content,
        is_error: true,
    }
}
