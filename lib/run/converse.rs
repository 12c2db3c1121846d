//! The conversation loop: a reply with tool calls gets their results (see
//! `tools`) and another turn, up to 50 turns. A sub-agent called through
//! `call_agent` is run by the `sub_agent` the caller passes in (`once`'s),
//! through this same loop, bounded by the caller's
//! `sub_agents_config.timeout` inside the run's own deadline.

use std::io;

use super::prepared::Prepared;
use super::session::Session;
use super::tools::{self, SubAgent};
use crate::error::{Error, Result};
use crate::llm::{self, CallOptions, Conversation, Deadline, Message, Reply, Role};
use crate::stderr::note;

/// Turns before a conversation is given up.
const MAX_TURNS: usize = 50;

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
    /// Whether the model was offered tools, so the turns could loop.
    pub tools_offered: bool,
    /// Calls made again under `[retry]`, over all turns (sub-agents' own
    /// not included).
    pub retry_attempts: u64,
}

/// Talks with `agent`'s model from `user` until a reply has no tool calls.
/// `on_text`, when given, receives the text of every turn as it arrives;
/// `sub` runs a sub-agent the model calls.
pub fn converse(
    session: &Session,
    agent: &Prepared,
    user: &str,
    depth: u32,
    deadline: Deadline,
    mut on_text: Option<TextSink>,
    sub: &SubAgent,
) -> Result<Outcome> {
    let endpoint = session.endpoint(agent.provider)?;
    let ctx = tools::Context {
        session,
        agent,
        depth,
        deadline,
        sub_agent: sub,
        memory: tools::memory(session, agent),
        act: tools::act(session, agent, deadline),
    };
    let tools = tools::offered(&ctx);
    // The loop's progress lines are the top-level agent's alone, as in Go.
    let trace = session.verbose && depth == 0 && !tools.is_empty();
    let mut conversation = Conversation {
        model: None,
        system: agent.system.clone(),
        messages: vec![Message::user(user)],
        tools,
        temperature: agent.temperature,
        max_tokens: agent.max_tokens(),
    };
    let (mut input_tokens, mut output_tokens, mut tool_calls) = (None, None, 0);
    let mut shown_before = false;
    let mut retry_attempts = 0;
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
            retry: agent.cfg.retry.policy(),
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
        let mut on_retry = |retry: &llm::Retry| {
            retry_attempts += 1;
            if session.verbose {
                note(format_args!("{retry}"));
            }
        };
        let reply = llm::complete_observed(
            &endpoint,
            &agent.model,
            &conversation,
            &options,
            &mut show,
            &mut on_retry,
        )?;
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
                tools_offered: !conversation.tools.is_empty(),
                retry_attempts,
            });
        }
        tool_calls += reply.tool_calls.len() as u64;
        let results = tools::run(&ctx, &reply.tool_calls, turn - 1);
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
