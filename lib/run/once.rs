//! One run of one agent, the same for `axe-run` and for a sub-agent that
//! `call_agent` starts: the agent prepared in its workdir, its memory
//! block added to the task ([`begin`]), then the conversation and
//! everything a run records, the state on success or failure and the
//! run-log entry on success, nothing when the token budget ran out
//! ([`Begun::finish`]). `axe-run` shows its
//! `--dry-run` and `-v` lines between the two steps; a sub-agent goes
//! straight on. So a new kind of memory is wired once, here, for both.
//!
//! Memory trouble is never a failed run: each problem is a warning to the
//! `report` the caller gives, which decides where it is shown.

use std::path::PathBuf;

use super::converse::{self, Outcome, TextSink};
use super::injected::{self, Injected};
use super::prepared::{Overrides, Prepared, Step};
use super::recall;
use super::session::Session;
use super::state::{self, Recorded};
use super::tools::SubAgentError;
use axe_agent::AgentConfig;
use axe_base::error::{Error, Result};
use axe_base::report::Report;
use axe_llm::{Deadline, Message};
use axe_memory::secrets::{self, Place, Redaction};
use axe_memory::state::{Current, DEFAULT_TASK};

/// Prepares the agent `name` with `cfg`, to which `given` is applied: in
/// the workdir it gives, else the agent's own `workdir`, else the current
/// directory, when that is not too wide
/// for its tools ([`axe_tools::builtin::workdir`]). The error says which step
/// failed.
pub fn prepare(
    session: &Session,
    name: &str,
    cfg: AgentConfig,
    given: &Overrides,
) -> std::result::Result<Prepared, (Option<Step>, Error)> {
    let model = axe_llm::parse_model(&cfg.model).map_err(|e| (None, e))?;
    let workdir = match &given.workdir {
        Some(dir) => dir.clone(),
        None if !cfg.workdir.is_empty() => cfg.workdir.clone().into(),
        None => {
            let dir = current_dir();
            axe_tools::builtin::workdir::unnamed(session.agents.dirs(), &dir, &cfg.tools).map_err(
                |e| {
                    (
                        Some(Step::Workdir),
                        Error::caused(Error::Config(e.to_string()), e),
                    )
                },
            )?;
            dir
        }
    };
    Prepared::new(name, cfg, model, workdir, session, given).map_err(|(s, e)| (Some(s), e))
}

/// The current directory, or `.` when it is gone.
pub fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// A run whose message is ready: the task with the memory block after it.
pub struct Begun<'a> {
    agent: &'a Prepared,
    /// The task as given: what the run log keeps.
    task: &'a str,
    now: Current<'a>,
    /// What is sent as the user message.
    pub sent: String,
    /// The memory block in it.
    pub injected: Injected,
}

/// Starts a run of `agent` on `task`: its recall's warnings, then the
/// memory block for the state's `now` (`listing` keeps what the shared
/// block left out, for `--dry-run` and `-v`).
pub fn begin<'a>(
    agent: &'a Prepared,
    task: &'a str,
    now: Current<'a>,
    listing: bool,
    report: &dyn Report,
) -> Begun<'a> {
    if let Some(r) = &agent.recall {
        for w in &r.warnings {
            report.note(format_args!("Warning: {w}"));
        }
    }
    let (sent, injected) = injected::with_memory(agent, task, now, listing, report);
    Begun {
        agent,
        task,
        now,
        sent,
        injected,
    }
}

/// How a run ended, what its answer said to the state, the secrets its
/// memory writes took out (the tools', the state's, the run log's), and
/// what the run log's entry cut, when one was written.
pub struct Ran {
    pub outcome: Outcome,
    pub state: Option<Recorded>,
    pub redacted: Vec<Redaction>,
    pub logged: Option<recall::Cut>,
}

impl Begun<'_> {
    /// Talks with the model at `depth` until it answers, going on from
    /// `history` (earlier turns, given with `axe-run --messages`), then
    /// records the run: its state (a failure too) and, on success, its
    /// run-log entry. A run whose token budget ran out records nothing.
    pub fn finish(
        self,
        session: &Session,
        depth: u32,
        deadline: Deadline,
        history: Vec<Message>,
        on_text: Option<TextSink>,
        report: &dyn Report,
    ) -> Result<Ran> {
        let agent = self.agent;
        let (task, phase) = (self.now.task.unwrap_or_default(), self.now.phase);
        let sub = |name: &str, user: &str, depth: u32, deadline: Deadline, hosts: &[String]| {
            sub_agent(session, name, user, depth, deadline, hosts)
        };
        let asked = history.len();
        let mut start = history;
        start.push(Message::user(self.sent));
        let conversed = converse::converse(session, agent, start, depth, deadline, on_text, &sub);
        // After the conversation: the key it resolved is known by then.
        let secrets = session.secrets(&agent.cfg);
        let mut outcome = match conversed {
            Ok(outcome) => outcome,
            Err(e) => {
                state::record(agent, task, phase, Err(&e.to_string()), &secrets, report);
                return Err(e);
            }
        };
        // The conversation given back keeps the task as given: the memory
        // block is this run's, and the next run brings its own.
        if let Some(m) = outcome.messages.get_mut(asked) {
            self.task.clone_into(&mut m.content);
        }
        // What the memory tools took out was written, budget or not.
        let mut redacted = std::mem::take(&mut outcome.redacted);
        if outcome.exceeded.is_some() {
            return Ok(Ran {
                outcome,
                state: None,
                redacted,
                logged: None,
            });
        }
        let answer = Ok(outcome.reply.content.as_str());
        let state = state::record(agent, task, phase, answer, &secrets, report);
        if let Some(s) = &state {
            redacted.extend(secrets::at(Place::State, &s.redacted));
        }
        let log = &agent.cfg.memory.log;
        let mut logged = None;
        if log.enabled {
            let content = &outcome.reply.content;
            match recall::record(
                (&agent.dirs, agent.wait),
                &agent.name,
                log,
                self.task,
                content,
                &secrets,
            ) {
                Ok((kinds, cut)) => {
                    redacted.extend(secrets::at(Place::RunLog, &kinds));
                    logged = Some(cut);
                }
                Err(w) => report.note(format_args!("Warning: {w}")),
            }
        }
        Ok(Ran {
            outcome,
            state,
            redacted,
            logged,
        })
    }
}

/// Runs the sub-agent `name` at `depth` on `user`, the way [`begin`] and
/// [`Begun::finish`] run any agent, under its own main task, and returns
/// its answer; without `allowed_hosts` of its own it has its caller's
/// (`hosts`). Its warnings are shown only with `-v`. A run that found the
/// token budget spent, or spent it, is [`SubAgentError::Budget`]: its
/// caller stops too.
fn sub_agent(
    session: &Session,
    name: &str,
    user: &str,
    depth: u32,
    deadline: Deadline,
    hosts: &[String],
) -> std::result::Result<String, SubAgentError> {
    // Spent by a call before this one: nothing of it is started, not
    // even its MCP servers, which its conversation starts before its
    // first turn would find the budget spent.
    if let Some((used, max)) = session.over_budget() {
        return Err(SubAgentError::Budget { used, max });
    }
    let mut cfg = session
        .agents
        .load(name)
        .map_err(|source| SubAgentError::Load {
            name: name.to_owned(),
            source,
        })?;
    let given = Overrides {
        allowed_hosts: hosts.to_vec(),
        ..Overrides::default()
    };
    given.apply(&mut cfg);
    let agent =
        prepare(session, name, cfg, &given).map_err(|(step, source)| SubAgentError::Prepare {
            name: name.to_owned(),
            step,
            source,
        })?;
    let report = SubAgentReport(session);
    let now = Current {
        task: Some(DEFAULT_TASK),
        phase: None,
    };
    let ran = begin(&agent, user, now, false, &report)
        .finish(session, depth, deadline, Vec::new(), None, &report)
        .map_err(SubAgentError::Run)?;
    if session.verbose {
        for line in secrets::lines(&ran.redacted) {
            session
                .report()
                .note(format_args!("[sub-agent] {name}: {line}"));
        }
    }
    if let Some((used, max)) = ran.outcome.exceeded {
        return Err(SubAgentError::Budget { used, max });
    }
    Ok(ran.outcome.reply.content)
}

/// Where a sub-agent's warnings go: its memory trouble is only worth a
/// line when asked (`-v`), marked as the sub-agent's, to the session's
/// reporter.
struct SubAgentReport<'a>(&'a Session);

impl Report for SubAgentReport<'_> {
    fn note(&self, line: std::fmt::Arguments) {
        if self.0.verbose {
            self.0.report().note(format_args!("[sub-agent] {line}"));
        }
    }
}
