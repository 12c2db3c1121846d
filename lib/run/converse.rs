//! The conversation loop: a reply with tool calls gets their results (see
//! `tools`) and another turn, up to 50 turns. A sub-agent called through
//! `call_agent` is run by the `sub_agent` the caller passes in (`once`'s),
//! through this same loop, bounded by the caller's
//! `sub_agents_config.timeout` inside the run's own deadline; one that
//! runs the token budget out ends its caller's conversation over budget
//! once that turn's tools are done.

use std::io;

use super::prepared::Prepared;
use super::session::Session;
use super::tools::{self, SubAgent};
use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_llm::{CallOptions, Conversation, Deadline, Message, Reply, Role, Usage};
use axe_memory::secrets::Redaction;

/// Turns before a conversation is given up.
const MAX_TURNS: usize = 50;

/// Where streamed text goes.
pub type TextSink<'a> = &'a mut dyn FnMut(&str) -> io::Result<()>;

/// How a conversation ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The last reply: the one without tool calls, or when the budget ran
    /// out the last one there was (the partial answer).
    pub reply: Reply,
    /// Summed over this agent's turns (sub-agents' own calls not
    /// included; the session sums the whole tree).
    pub usage: Usage,
    /// Tool calls the model made, over all turns.
    pub tool_calls: u64,
    /// Whether the model was offered tools, so the turns could loop.
    pub tools_offered: bool,
    /// Calls made again under `[retry]`, over all turns (sub-agents' own
    /// not included).
    pub retry_attempts: u64,
    /// `(used, max)` when the run's token budget ran out before the model
    /// was done (no further call was made, no tool run), or its last
    /// reply took the count past the budget.
    pub exceeded: Option<(u64, u64)>,
    /// The whole conversation: `start`, then every turn, the last reply
    /// included (tool calls the budget stopped are left out, and a reply
    /// that was nothing else, so the list can be sent again).
    pub messages: Vec<Message>,
    /// The secrets the memory tools' writes took out.
    pub redacted: Vec<Redaction>,
}

/// Talks with `agent`'s model from `start` (the first user message, or a
/// conversation to go on with) until a reply has no tool calls or the
/// run's token budget runs out. `on_text`, when given, receives the text
/// of every turn as it arrives; `sub` runs a sub-agent the model calls.
pub fn converse(
    session: &Session,
    agent: &Prepared,
    start: Vec<Message>,
    depth: u32,
    deadline: Deadline,
    mut on_text: Option<TextSink>,
    sub: &SubAgent,
) -> Result<Outcome> {
    let endpoint = session.endpoint_for(agent.provider, &agent.model)?;
    if session.verbose && depth == 0 && endpoint.is_whole() {
        session.report().note(format_args!(
            "Endpoint: {} (the base URL is a whole endpoint URL: used as it is)",
            endpoint.url()
        ));
    }
    let mut sources = tools::Sources::new(session, agent, depth, deadline, sub);
    // Its MCP servers run while it talks, and stop with `sources` however
    // the conversation ends.
    sources.connect()?;
    // Offered and routed once for the whole conversation.
    let offered = sources.tools();
    let mut conversation = request(agent, start, offered.defs().into_iter().cloned().collect());
    // The loop's progress lines are the top-level agent's alone, as in Go.
    let trace = session.verbose && depth == 0 && !conversation.tools.is_empty();
    let mut outcome = Outcome::new(agent, !conversation.tools.is_empty());
    let mut shown_before = false;
    for turn in 1..=MAX_TURNS {
        if let Some(exceeded) = session.over_budget() {
            outcome.exceeded = Some(exceeded);
            return Ok(outcome.ended(conversation, &sources));
        }
        if trace {
            let pending: usize = conversation
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| m.tool_results.len())
                .sum();
            session.report().note(format_args!(
                "[turn {turn}] Sending request ({} messages, {pending} tool calls pending)",
                conversation.messages.len()
            ));
        }
        let call = Call {
            session,
            agent,
            endpoint: &endpoint,
            deadline,
        };
        let reply = call.send(
            &conversation,
            &mut on_text,
            &mut shown_before,
            &mut outcome.retry_attempts,
        )?;
        outcome.usage.add(&reply.usage);
        session.spend(&reply.usage);
        if trace {
            session.report().note(format_args!(
                "[turn {turn}] Received response: {} ({} tool calls)",
                reply.stop_reason,
                reply.tool_calls.len()
            ));
        }
        let done = reply.tool_calls.is_empty() || conversation.tools.is_empty();
        // Tools run only while the budget lasts; a last reply that took
        // the count past it ends a run that was not within it either.
        let exceeded = if done {
            session.overshot()
        } else {
            session.over_budget()
        };
        if done || exceeded.is_some() {
            // A reply that was only the tool calls the budget stopped
            // leaves nothing to keep: an empty assistant message would be
            // refused when the list is sent again.
            if done || !reply.content.is_empty() {
                conversation
                    .messages
                    .push(assistant(reply.content.clone(), Vec::new()));
            }
            outcome.reply = reply;
            outcome.exceeded = exceeded;
            return Ok(outcome.ended(conversation, &sources));
        }
        outcome.tool_calls += reply.tool_calls.len() as u64;
        let results = tools::run(&sources, &offered, &reply.tool_calls, turn - 1);
        // The partial answer, should the budget run out before the next.
        outcome.reply = reply.clone();
        conversation
            .messages
            .push(assistant(reply.content, reply.tool_calls));
        conversation.messages.push(Message {
            role: Role::Tool,
            content: String::new(),
            tool_calls: Vec::new(),
            tool_results: results,
        });
        // A sub-agent that ran the budget out ends this conversation too,
        // whichever turn it is: over budget, not out of turns.
        if let Some(spent) = sources.budget_spent() {
            outcome.exceeded = session.over_budget().or(Some(spent));
            return Ok(outcome.ended(conversation, &sources));
        }
    }
    let who = if depth == 0 { "agent" } else { "sub-agent" };
    Err(Error::Agent(format!(
        "{who} exceeded maximum conversation turns ({MAX_TURNS})"
    )))
}

/// The request the conversation sends each turn, from `start` with the
/// `tools` offered.
fn request(agent: &Prepared, start: Vec<Message>, tools: Vec<axe_llm::ToolDef>) -> Conversation {
    Conversation {
        model: None,
        system: agent.system.clone(),
        messages: start,
        tools,
        temperature: agent.temperature,
        max_tokens: agent.max_tokens(),
        response_format: agent.cfg.params.response_format(),
        cache: agent.cfg.params.cache,
        system_stable: Some(agent.system_stable),
    }
}

impl Outcome {
    /// Nothing said yet: no reply, no usage.
    fn new(agent: &Prepared, tools_offered: bool) -> Outcome {
        Outcome {
            reply: Reply {
                model: agent.model.clone(),
                ..Reply::default()
            },
            usage: Usage::default(),
            tool_calls: 0,
            tools_offered,
            retry_attempts: 0,
            exceeded: None,
            messages: Vec::new(),
            redacted: Vec::new(),
        }
    }

    /// The outcome of a conversation that ends here, with its messages and
    /// what its memory tools took out.
    fn ended(mut self, conversation: Conversation, sources: &tools::Sources) -> Outcome {
        self.messages = conversation.messages;
        self.redacted = redacted(sources);
        self
    }
}

/// One turn's call to the model: where it goes and for whom.
struct Call<'a> {
    session: &'a Session,
    agent: &'a Prepared,
    endpoint: &'a axe_llm::Endpoint,
    deadline: Deadline,
}

impl Call<'_> {
    /// Sends `conversation` (through the ledger) and gives back the
    /// model's reply, streaming its text to `on_text`, set apart from an
    /// earlier turn's (`shown_before`), and counting its calls made again
    /// in `retries`.
    fn send(
        &self,
        conversation: &Conversation,
        on_text: &mut Option<TextSink>,
        shown_before: &mut bool,
        retries: &mut u64,
    ) -> Result<Reply> {
        let session = self.session;
        let options = CallOptions {
            deadline: self.deadline,
            retry: self.agent.cfg.retry.policy(),
            stream: on_text.is_some(),
            client: session.client.clone(),
        };
        let mut shown_now = false;
        let earlier = *shown_before;
        let mut show = |text: &str| -> io::Result<()> {
            let Some(out) = on_text.as_mut() else {
                return Ok(());
            };
            // Text of an earlier turn stays on screen: set this turn apart.
            if earlier && !shown_now {
                out("\n\n")?;
            }
            shown_now = true;
            out(text)
        };
        let mut on_retry = |retry: &axe_llm::Retry| {
            *retries += 1;
            if session.verbose {
                session.report().note(format_args!("{retry}"));
            }
        };
        let caller = axe_ledger::Caller {
            agent: Some(&self.agent.name),
            conversation: session.conversation.as_deref(),
        };
        let reply = session.ledger.complete(
            caller,
            self.endpoint,
            &self.agent.model,
            conversation,
            &options,
            &mut show,
            &mut on_retry,
        );
        *shown_before |= shown_now;
        reply
    }
}

/// [`converse`] for an agent that calls no sub-agent (its `sub_agents`
/// emptied): a consolidation, whose only tools are its notes'.
pub fn alone(
    session: &Session,
    agent: &Prepared,
    start: Vec<Message>,
    deadline: Deadline,
) -> Result<Outcome> {
    let never = |_: &str, _: &str, _: u32, _: Deadline, _: &[String]| {
        Err(super::tools::SubAgentError::Run(Error::Agent(
            "a consolidation calls no sub-agent".to_owned(),
        )))
    };
    converse(session, agent, start, 0, deadline, None, &never)
}

fn assistant(content: String, tool_calls: Vec<axe_llm::ToolCall>) -> Message {
    Message {
        role: Role::Assistant,
        content,
        tool_calls,
        tool_results: Vec::new(),
    }
}

/// What the memory tools' writes took out, so far.
fn redacted(sources: &tools::Sources) -> Vec<Redaction> {
    std::mem::take(&mut sources.memory.ctx().redacted.lock().recover())
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::once;
    use crate::prepared::Overrides;
    use axe_agent::{AgentConfig, Agents};
    use axe_base::dirs::Dirs;
    use axe_base::report::Collected;
    use axe_memory::Wait;

    /// Answers one request as Ollama does, with `reply`.
    fn one_reply(reply: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let lower = line.to_ascii_lowercase();
                if let Some(n) = lower.strip_prefix("content-length:") {
                    length = n.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            reader.read_exact(&mut vec![0; length]).unwrap();
            let mut stream = stream;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                reply.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(reply.as_bytes()).unwrap();
        });
        url
    }

    /// A conversation is a library call: with `-v`, its turn lines go to
    /// the session's reporter, which here collects them.
    #[test]
    fn a_verbose_conversation_says_its_turns_to_the_sessions_reporter() {
        let tmp = tempfile::tempdir().unwrap();
        let url = one_reply(
            r#"{"model":"m","message":{"role":"assistant","content":"done"},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2}"#,
        );
        let config =
            axe_agent::config::parse(&format!("[providers.ollama]\nbase_url = \"{url}\"\n"))
                .unwrap();
        let report = Arc::new(Collected::default());
        let dirs = Dirs::given(Some(tmp.path()), Some(tmp.path())).unwrap();
        let agents = Agents::new(dirs, None).reporting_to(report.clone());
        let cfg = AgentConfig {
            name: "a".into(),
            model: "ollama/m".into(),
            workdir: tmp.path().display().to_string(),
            tools: vec!["read_file".into()],
            ..AgentConfig::default()
        };
        let parts = (tmp.path().to_owned(), agents, Wait::default());
        let session = Session::new(config, parts, &cfg, true);
        let agent = once::prepare(&session, "a", cfg, &Overrides::default()).unwrap();
        let never = |_: &str, _: &str, _: u32, _: Deadline, _: &[String]| {
            Err(super::tools::SubAgentError::Run(
                Error::Agent(String::new()),
            ))
        };
        let deadline = Deadline::after(Duration::from_secs(30));
        let start = vec![Message::user("hi")];
        let outcome = converse(&session, &agent, start, 0, deadline, None, &never).unwrap();
        assert_eq!(outcome.reply.content, "done");
        assert_eq!(
            report.lines(),
            [
                "[turn 1] Sending request (1 messages, 0 tool calls pending)",
                "[turn 1] Received response: stop (0 tool calls)",
            ]
        );
    }
}
