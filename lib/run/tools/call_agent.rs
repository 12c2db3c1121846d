//! `call_agent`: delegating a task to a sub-agent, which runs with its own
//! files, skill and memory and returns only its final answer. Its refusals
//! and failures go back to the model as error results, worded as Go's. A
//! sub-agent that ran the run's token budget out ([`SubAgentError::Budget`])
//! is that too, and the conversation that called it ends over budget
//! ([`CallAgent::budget_spent`]). A source of one tool, offered while the
//! tree may grow.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::prepared::{Prepared, Step};
use crate::session::Session;
use axe_base::error::Error;
use axe_base::lock::Recover;
use axe_llm::{Deadline, ToolCall, ToolDef};
use axe_tools::args::Args;
use axe_tools::{Offered, Reply, ToolError, ToolSource};

/// Runs a sub-agent: `(name, user message, depth, deadline, the caller's
/// allowed_hosts)` to its answer or what went wrong.
pub type SubAgent<'a> =
    dyn Fn(&str, &str, u32, Deadline, &[String]) -> Result<String, SubAgentError> + Sync + 'a;

pub const NAME: &str = "call_agent";

axe_tools::args! {
    /// Its arguments; the agents it may name are listed in the schema.
    pub struct CallAgentArgs(list: &str) {
        agent: String = format!("Name of the sub-agent to invoke (must be one of: {list})"),
        task: String = "What you need the sub-agent to do",
        context: Option<String> = "Additional context from your conversation to pass along",
    }
}

/// Why a sub-agent gave no answer. Its `Display` is what its caller's
/// model is told, after `sub-agent "NAME" failed - `.
#[derive(Debug, thiserror::Error)]
pub enum SubAgentError {
    /// The run's token budget ran out while it worked, or before: the
    /// whole run is over budget, not only this call.
    #[error("{}", Error::Budget { used: *used, max: *max })]
    Budget { used: u64, max: u64 },
    /// Its agent file would not load.
    #[error("failed to load agent \"{name}\": {source}")]
    Load { name: String, source: Error },
    /// It could not be prepared: `step` failed (`None`: its model string).
    #[error("{} for agent \"{name}\": {source}", failed_to(*step))]
    Prepare {
        name: String,
        step: Option<Step>,
        source: Error,
    },
    /// Its run failed: shown as itself, its own cause the next.
    #[error(transparent)]
    Run(Error),
}

/// What a sub-agent's preparation failed to do: `step`, or (`None`) read
/// its model string.
fn failed_to(step: Option<Step>) -> String {
    match step {
        Some(step) => format!("failed to {step}"),
        None => "invalid model".to_owned(),
    }
}

/// `call_agent` for one conversation.
pub struct CallAgent<'a> {
    pub session: &'a Session,
    pub agent: &'a Prepared,
    pub depth: u32,
    pub deadline: Deadline,
    /// Runs a sub-agent's whole conversation. Passed in, so that tools
    /// need not import the conversation loop that calls them.
    pub sub_agent: &'a SubAgent<'a>,
    offered: Vec<Offered>,
    /// `(used, max)` once a sub-agent it ran found the run's token
    /// budget spent.
    spent: Mutex<Option<(u64, u64)>>,
}

impl<'a> CallAgent<'a> {
    pub fn new(
        session: &'a Session,
        agent: &'a Prepared,
        depth: u32,
        deadline: Deadline,
        sub_agent: &'a SubAgent<'a>,
    ) -> CallAgent<'a> {
        let agents = &agent.cfg.sub_agents;
        let offered = match agents.is_empty() || depth >= session.max_depth {
            true => Vec::new(),
            false => vec![offer(&agents.join(", "))],
        };
        CallAgent {
            session,
            agent,
            depth,
            deadline,
            sub_agent,
            offered,
            spent: Mutex::new(None),
        }
    }

    /// `(used, max)` when a sub-agent this conversation called ran the
    /// run's token budget out: the conversation ends over budget, at
    /// whatever turn, rather than go on (or give up for turns).
    pub fn budget_spent(&self) -> Option<(u64, u64)> {
        *self.spent.lock().recover()
    }
}

/// The tool, offering the sub-agents `list`.
fn offer(list: &str) -> Offered {
    Offered {
        def: ToolDef {
            name: NAME.to_owned(),
            description: format!(
                "Delegate a task to a sub-agent. The sub-agent runs independently with its own context and returns only its final result. Available agents: {list}"
            ),
            parameters: CallAgentArgs::schema(list).into(),
        },
        check: None,
        reads: false,
        output: None,
    }
}

impl ToolSource for CallAgent<'_> {
    fn offered(&self) -> &[Offered] {
        &self.offered
    }

    fn run(&self, _: usize, call: &ToolCall) -> Result<Reply, ToolError> {
        let args = CallAgentArgs::parse(&call.arguments)?;
        Ok(Reply::text(self.call(&args)?))
    }

    fn crashed(&self, _: usize) -> String {
        "call_agent error: the sub-agent crashed".into()
    }
}

impl CallAgent<'_> {
    /// Runs one `call_agent` call (its arguments' types already checked):
    /// checks the agent it names, runs the sub-agent through `sub_agent`
    /// within the caller's `sub_agents_config.timeout`.
    fn call(&self, args: &CallAgentArgs) -> Result<String, ToolError> {
        let (session, caller, depth) = (self.session, self.agent, self.depth);
        let (name, task) = (args.agent.as_str(), args.task.as_str());
        let context = args.context.as_deref().unwrap_or_default();
        if name.is_empty() {
            return Err(r#"call_agent error: "agent" argument is required"#.into());
        }
        if task.is_empty() {
            return Err(r#"call_agent error: "task" argument is required"#.into());
        }
        if !caller.cfg.sub_agents.iter().any(|a| a == name) {
            return Err(format!(
                "call_agent error: agent \"{name}\" is not in this agent's sub_agents list"
            )
            .into());
        }
        if depth >= session.max_depth {
            return Err(format!(
                "call_agent error: maximum sub-agent depth ({}) reached",
                session.max_depth
            )
            .into());
        }
        let deadline = match caller.cfg.sub_agents_config.timeout.get() {
            0 => self.deadline,
            seconds => self
                .deadline
                .min(Deadline::after(Duration::from_secs(seconds))),
        };
        let verbose = session.verbose;
        if verbose {
            let preview = match task.char_indices().nth(80) {
                Some((i, _)) => format!("{}...", &task[..i]),
                None => task.to_owned(),
            };
            session.report().note(format_args!(
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
        match (self.sub_agent)(name, &user, depth + 1, deadline, &caller.allowed_hosts) {
            Ok(content) => {
                if verbose {
                    session.report().note(format_args!(
                        "[sub-agent] \"{name}\" completed in {}ms ({} chars returned)",
                        started.elapsed().as_millis(),
                        content.len()
                    ));
                }
                Ok(content)
            }
            Err(failed) => {
                if let SubAgentError::Budget { used, max } = failed {
                    let mut spent = self.spent.lock().recover();
                    let most = spent.map_or(used, |(u, _)| u.max(used));
                    *spent = Some((most, max));
                }
                let message = failed.to_string();
                if verbose {
                    session
                        .report()
                        .note(format_args!("[sub-agent] \"{name}\" failed: {message}"));
                }
                Err(ToolError::caused(
                    format!(
                        "Error: sub-agent \"{name}\" failed - {message}. You may retry or proceed without this result."
                    ),
                    failed,
                ))
            }
        }
    }
}
